// Cross-checks of the built-in policy against the farm's own files in ../shared/fixtures: the
// policy is derived from them (scripts/derive_policy.py), so any drift shows up here.

#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "support/model_support.hpp"

using wheelfit::model::Combo;
using wheelfit::model::NumericVersion;
namespace pol = wheelfit::policies;
namespace fs = std::filesystem;

namespace {

using wheelfit::test::nv;

fs::path defaults_dir() { return wheelfit::test::fixtures_dir() / "cuda-wheels" / "defaults"; }

boost::json::value read_json(const fs::path& p) { return boost::json::parse(wheelfit::test::read_file(p)); }

// The scraped platform spelling -> the farm key the policy uses.
std::string farm_platform(std::string_view scraped) {
  if (scraped == "linux_x86_64") return "linux";
  return std::string(scraped);
}

// "cu128" -> "12.8", "cu130" -> "13.0".
std::string cuda_from_tag(std::string_view tag) {
  REQUIRE(tag.size() >= 4);
  REQUIRE(tag.substr(0, 2) == "cu");
  const auto digits = tag.substr(2);
  return std::string(digits.substr(0, digits.size() - 1)) + "." + std::string(digits.substr(digits.size() - 1));
}

std::string minor_of(std::string_view v) { return nv(v).truncated(2).str(); }

// section -> key -> value, from the `"key": "value"` lines of arch_policy.yml: a top-level
// `name:` line opens a section, an indented `"key": "value"` line is an entry, '#' starts a
// comment. (A hand scan rather than std::regex: GCC 12 warns inside <regex> under the sanitizer.)
std::map<std::string, std::map<std::string, std::string>> read_arch_policy_yml() {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::istringstream in(wheelfit::test::read_file(defaults_dir() / "arch_policy.yml"));
  std::string raw, current;
  auto quoted = [](std::string_view s, std::size_t& pos) -> std::optional<std::string> {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
    if (pos >= s.size() || s[pos] != '"') return std::nullopt;
    const auto close = s.find('"', pos + 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string value(s.substr(pos + 1, close - pos - 1));
    pos = close + 1;
    return value;
  };
  while (std::getline(in, raw)) {
    std::string_view line(raw);
    line = line.substr(0, line.find('#'));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.front() != ' ') {
      REQUIRE(line.back() == ':');
      current = std::string(line.substr(0, line.size() - 1));
      continue;
    }
    std::size_t pos = 0;
    auto key = quoted(line, pos);
    REQUIRE(key);
    REQUIRE(pos < line.size());
    REQUIRE(line[pos] == ':');
    ++pos;
    auto value = quoted(line, pos);
    REQUIRE(value);
    REQUIRE(pos == line.size());
    REQUIRE_FALSE(current.empty());
    out[current][*key] = *value;
  }
  return out;
}

using CellKey = std::tuple<std::string, std::string, std::string, std::string>;  // platform, cuda, torch, python

// The cells of scraped_torch_matrix.json's "combos", by torch minor, in the policy's spellings.
std::set<CellKey> scraped_cells(const boost::json::value& scraped) {
  std::set<CellKey> out;
  for (const auto& row : scraped.at("combos").as_array()) {
    const auto& o = row.as_object();
    out.emplace(farm_platform(std::string(o.at("platform").as_string())), cuda_from_tag(std::string(o.at("cuda").as_string())),
                minor_of(std::string(o.at("torch").as_string())), std::string(o.at("python").as_string()));
  }
  return out;
}

}  // namespace

TEST_CASE("the built-in matrix is exactly the scraped PyTorch matrix, by torch minor", "[policies][fixtures]") {
  const auto data = read_json(defaults_dir() / "scraped_torch_matrix.json");
  const std::set<CellKey> expected = scraped_cells(data);
  REQUIRE(data.at("combos").as_array().size() == 514);

  std::set<CellKey> actual;
  for (const auto& c : wheelfit::test::cuda_policy().shipped_cells()) {
    actual.emplace(c.platform, c.combo.line.str(), c.combo.torch.str(), c.python.str());
  }
  CHECK(actual.size() == wheelfit::test::cuda_policy().shipped_cells().size());  // no duplicates
  std::vector<CellKey> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(), std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  for (const auto& [pl, cu, to, py] : missing) FAIL_CHECK("not in the policy: " << pl << " cu" << cu << " torch" << to << " py" << py);
  for (const auto& [pl, cu, to, py] : extra) FAIL_CHECK("not in the fixture: " << pl << " cu" << cu << " torch" << to << " py" << py);
  CHECK(actual == expected);

  // And every cell answers true through the query.
  for (const auto& [pl, cu, to, py] : expected) {
    CAPTURE(pl, cu, to, py);
    CHECK(wheelfit::test::cuda_policy().pytorch_shipped(Combo{nv(cu), nv(to)}, nv(py), pl));
  }
}

TEST_CASE("the grid's phantom cells are not shipped per the policy", "[policies][fixtures]") {
  // phantom_combos.json is patch-level: the grid pins one patch per (cuda, minor) and lists the
  // cells where PyTorch never published THAT patch. The policy is minor-level (a minor counts
  // as shipped when any patch shipped), so a phantom is shipped per the policy exactly when the
  // scraped matrix has another patch of the same minor there. In this data that is the five
  // cu129 / torch 2.9 / windows cells (grid pins 2.9.1, PyTorch shipped only 2.9.0 there).
  const std::set<CellKey> minors = scraped_cells(read_json(defaults_dir() / "scraped_torch_matrix.json"));
  const auto data = read_json(defaults_dir() / "phantom_combos.json");
  const auto& combos = data.at("combos").as_array();
  REQUIRE(combos.size() == 47);
  std::set<CellKey> shipped_by_minor;
  for (const auto& row : combos) {
    const auto& a = row.as_array();
    REQUIRE(a.size() == 4);
    const std::string cuda = cuda_from_tag("cu" + std::string(a[0].as_string()));
    const std::string torch = minor_of(std::string(a[1].as_string()));
    const std::string py_digits(a[2].as_string());
    const std::string python = py_digits.substr(0, 1) + "." + py_digits.substr(1);
    const std::string platform = farm_platform(std::string(a[3].as_string()));
    CAPTURE(cuda, torch, python, platform);
    const bool shipped = wheelfit::test::cuda_policy().pytorch_shipped(Combo{nv(cuda), nv(torch)}, nv(python), platform);
    const CellKey key{platform, cuda, torch, python};
    CHECK(shipped == (minors.count(key) == 1));
    if (shipped) shipped_by_minor.insert(key);
  }
  CHECK(shipped_by_minor == std::set<CellKey>{{"windows", "12.9", "2.9", "3.10"},
                                              {"windows", "12.9", "2.9", "3.11"},
                                              {"windows", "12.9", "2.9", "3.12"},
                                              {"windows", "12.9", "2.9", "3.13"},
                                              {"windows", "12.9", "2.9", "3.14"}});
}

TEST_CASE("every arch_policy row and exception equals arch_policy.yml", "[policies][fixtures]") {
  const auto yml = read_arch_policy_yml();
  REQUIRE(yml.count("arch_policy"));
  REQUIRE(yml.count("arch_policy_aarch64"));
  REQUIRE(yml.count("arch_exceptions"));
  const auto& p = wheelfit::test::cuda_policy();
  const Combo no_exception_torch{nv("12.8"), nv("99.0")};  // a torch minor no exception names

  // Rows: the x86 table serves linux and windows; aarch64 has its own. Exactly the yml's lines.
  const std::pair<const char*, std::vector<const char*>> tables[] = {
      {"arch_policy", {"linux", "windows"}}, {"arch_policy_aarch64", {"linux_aarch64"}}};
  for (const auto& [section, platforms] : tables) {
    for (const char* platform : platforms) {
      for (std::uint32_t major = 10; major <= 14; ++major) {
        for (std::uint32_t minor = 0; minor <= 9; ++minor) {
          const std::string cuda = std::to_string(major) + "." + std::to_string(minor);
          CAPTURE(section, platform, cuda);
          const auto got = p.platform_arch_list(Combo{nv(cuda), no_exception_torch.torch}, platform);
          const auto it = yml.at(section).find(cuda);
          REQUIRE(got.has_value() == (it != yml.at(section).end()));
          if (got) {
            CHECK(got->list == it->second);
            CHECK(got->provenance == "farm policy " + cuda + " (" + platform + ")");
          }
        }
      }
    }
  }
  CHECK_FALSE(p.platform_arch_list(Combo{nv("12.4"), nv("2.4")}, "linux_aarch64"));

  // Exceptions: on linux and windows, never on aarch64.
  REQUIRE(yml.at("arch_exceptions").size() == 6);
  for (const auto& [key, value] : yml.at("arch_exceptions")) {
    const auto slash = key.find('/');
    const Combo c{nv(key.substr(0, slash)), nv(key.substr(slash + 1))};
    for (const char* platform : {"linux", "windows"}) {
      CAPTURE(key, platform);
      const auto got = p.arch_list("no-such-package", c, platform);
      REQUIRE(got);
      CHECK(got->list == value);
      CHECK(got->provenance == "exception " + key);
    }
    CAPTURE(key);
    const auto arm = p.arch_list("no-such-package", c, "linux_aarch64");
    if (arm) {
      CHECK(arm->list == yml.at("arch_policy_aarch64").at(key.substr(0, slash)));
      CHECK_THAT(arm->provenance, Catch::StartsWith("farm policy"));
    }
  }
}

TEST_CASE("every package arch override equals package_configs_summary.json", "[policies][fixtures]") {
  const auto data = read_json(wheelfit::test::fixtures_dir() / "cuda-wheels" / "derived" / "package_configs_summary.json");
  const auto& p = wheelfit::test::cuda_policy();
  const NumericVersion torch = nv("99.0");  // no exception
  std::size_t checked = 0;
  for (const auto& pkg : data.at("packages").as_array()) {
    const auto& o = pkg.as_object();
    const std::string name(o.at("index_name").as_string());
    for (const auto& [key, platform] : {std::pair{"arch_list_by_cuda", "linux"}, std::pair{"arch_list_by_cuda", "windows"},
                                        std::pair{"arch_list_by_cuda_aarch64", "linux_aarch64"}}) {
      const auto* rows = o.if_contains(key);
      if (!rows) continue;
      for (const auto& [cuda, text] : rows->as_object()) {
        CAPTURE(name, key, platform, std::string(cuda));
        const auto got = p.arch_list(name, Combo{nv(std::string(cuda)), torch}, platform);
        if (!p.platform_arch_list(Combo{nv(std::string(cuda)), torch}, platform)) {
          CHECK_FALSE(got);  // not built there at all
          continue;
        }
        REQUIRE(got);
        CHECK(got->list == *wheelfit::test::cuda_policy().rules()->parse_list(std::string(text.as_string())));
        CHECK_THAT(got->provenance, Catch::StartsWith("package " + name + ", cuda"));
        ++checked;
      }
    }
    for (const auto& [key, platform] : {std::pair{"arch_list", "linux"}, std::pair{"arch_list", "windows"},
                                        std::pair{"arch_list_aarch64", "linux_aarch64"}}) {
      const auto* text = o.if_contains(key);
      if (!text) continue;
      CAPTURE(name, key, platform);
      const auto got = p.arch_list(name, Combo{nv("13.0"), torch}, platform);
      REQUIRE(got);
      CHECK(got->list == *wheelfit::test::cuda_policy().rules()->parse_list(std::string(text->as_string())));
      ++checked;
    }
  }
  CHECK(checked > 50);
}

TEST_CASE("backends/cuda/data/policy.json on disk matches the embedded copy", "[policies][fixtures]") {
  // The raw file and the embedded copy are the same text, so a stale build shows up here too.
  const auto text = wheelfit::test::read_file(wheelfit::test::source_dir() / "backends" / "cuda" / "data" / "policy.json");
  auto from_file = pol::parse_policy_json(text, "policy.json", wheelfit::registry::device_rules(wheelfit::test::cuda_backend()));
  REQUIRE(from_file);
  CHECK(from_file->version() == wheelfit::test::cuda_policy().version());
  CHECK(from_file->shipped_cells().size() == wheelfit::test::cuda_policy().shipped_cells().size());
}
