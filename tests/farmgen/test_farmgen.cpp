// The farm generator (scripts/farmgen): the grid it writes, the farm's naming and layout, the
// torch-free aliases, packages.json, determinism, the atomic write, and resolves against it.
// Expected counts are computed here from Policy::shipped_cells() with the grid rules written out
// again, never taken from the generator's own helpers. --backend rocm: test_farmgen_rocm.cpp.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <map>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "farmgen/farm_support.hpp"
#include "support/backend_support.hpp"
#include "farmgen.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

using test::farm_support::Farm;
using test::farm_support::parse_page;
namespace {

const semantics::Policy& cuda_pol() { return test::cuda_policy(); }

model::NumericVersion nv(const char* text) { return model::NumericVersion::parse(text).value(); }

// --- the grid, computed independently -----------------------------------------------------------

struct Cell {
  std::string cuda, torch, python, platform;  // "12.8", "2.8", "3.12", "linux"
  auto key() const { return std::tie(cuda, torch, python, platform); }
  friend bool operator<(const Cell& a, const Cell& b) { return a.key() < b.key(); }
  friend bool operator==(const Cell& a, const Cell& b) { return a.key() == b.key(); }
};

std::string mm(const model::NumericVersion& v) { return std::to_string(v.major()) + "." + std::to_string(v.minor()); }

std::vector<Cell> expected_grid() {
  const std::set<std::string> lines{"12.4", "12.6", "12.8", "12.9", "13.0", "13.2"};
  const std::set<std::string> platforms{"linux", "windows", "linux_aarch64"};
  std::vector<Cell> out;
  for (const auto& c : cuda_pol().shipped_cells()) {
    if (c.python.major() < 3 || (c.python.major() == 3 && c.python.minor() < 10)) continue;
    if (!lines.count(mm(c.combo.line)) || !platforms.count(c.platform)) continue;
    if (!cuda_pol().platform_arch_list(c.combo, c.platform)) continue;
    out.push_back({mm(c.combo.line), mm(c.combo.torch), mm(c.python), c.platform});
  }
  return out;
}

bool version_less(const std::string& a, const std::string& b) { return nv(a.c_str()) < nv(b.c_str()); }

// The cells a package is built for, from its own rules.
std::vector<Cell> expected_cells(const farmgen::FarmPackage& p) {
  std::vector<Cell> out;
  for (const auto& c : expected_grid()) {
    if (std::find(p.platforms.begin(), p.platforms.end(), c.platform) == p.platforms.end()) continue;
    if (p.min_pytorch && version_less(c.torch, mm(*p.min_pytorch))) continue;
    if (!p.own_combinations.empty()) {
      bool listed = false;
      for (const auto& oc : p.own_combinations)
        for (const auto& py : oc.pythons)
          listed = listed || (mm(oc.line) == c.cuda && mm(oc.torch) == c.torch && mm(py) == c.python);
      if (!listed) continue;
    }
    out.push_back(c);
  }
  return out;
}

const farmgen::FarmPackage& builtin(const std::string& index_name) {
  for (const auto& p : farmgen::builtin_packages())
    if (p.index_name == index_name) return p;
  FAIL("no built-in package " << index_name);
  throw;  // unreachable
}

// --- one generated farm, shared by the read-only checks ----------------------------------------

const Farm& farm() {
  static const Farm f(cuda_pol());
  return f;
}

// The farm platform key a wheel's first platform tag means.
std::string platform_of(const model::WheelName& w) {
  REQUIRE(!w.platforms.empty());
  const auto& t = w.platforms.front();
  REQUIRE(t.os.has_value());
  auto key = model::farm_platform(*t.os, t.cpu_arch);
  REQUIRE(key.has_value());
  return *key;
}

struct ParsedAnchor {
  model::WheelName text_wheel, href_wheel;
  model::Combo combo;
  std::string python, platform;
};

ParsedAnchor parse_anchor(const index::Link& link) {
  auto tw = model::WheelName::parse(link.text);
  INFO(link.text);
  REQUIRE(tw.has_value());
  auto hw = model::WheelName::parse(link.filename);
  REQUIRE(hw.has_value());
  auto combo = wheelfit::test::cuda_policy().parse_combo_label(tw->version.local());
  REQUIRE(combo.has_value());
  REQUIRE(tw->python_tags.size() == 1);
  auto py = model::parse_python_tag(tw->python_tags[0]);
  REQUIRE(py.version.has_value());
  return {*tw, *hw, *combo, mm(*py.version), platform_of(*tw)};
}

machine::Machine gh200_no_torch() {
  return test::make_machine({{"os", "linux"},
                             {"cpu_arch", "aarch64"},
                             {"glibc", "2.35"},
                             {"python", "3.12"},
                             {"backend", "cuda"},
                             {"driver_version", "580.65.06"},
                             {"driver_line", "13.0"},
                             {"gpus", "9.0"}});
}

// Packages whose (combo, python, platform) cell exists and whose arch list covers the GPU.
std::vector<std::string> eligible(const model::Combo& combo, const std::string& python, const std::string& platform,
                                  const model::NumericVersion& gpu, std::vector<std::string>* excluded = nullptr) {
  std::vector<std::string> out;
  for (const auto& p : farmgen::builtin_packages()) {
    if (!p.own_combinations.empty()) {  // packages with their own grid are set aside
      if (excluded) excluded->push_back(p.index_name);
      continue;
    }
    const auto cells = expected_cells(p);
    const bool built = std::any_of(cells.begin(), cells.end(), [&](const Cell& c) {
      return c.cuda == mm(combo.line) && c.torch == mm(combo.torch) && c.python == python && c.platform == platform;
    });
    const auto archs = cuda_pol().arch_list(p.index_name, combo, platform);
    const bool covered = archs && cuda_pol().rules()->match(archs->list, gpu.str()).value().covers();
    if (built && covered) out.push_back(p.index_name);
    else if (excluded) excluded->push_back(p.index_name);
  }
  return out;
}

resolve::Resolution resolve_on(const fs::path& dir, const std::vector<std::string>& names, const machine::Machine& m) {
  auto transport = transports::make_file_transport();
  const auto snap = index::read_index(*transport, transports::to_url(dir.string(), true), names);
  auto r = resolve::resolve({test::workspace(names), m, cuda_pol(), snap, "cuda"});
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::map<std::string, std::string> all_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).generic_string()] = test::read_file(e.path());
  return out;
}

}  // namespace

TEST_CASE("farmgen: the built-in package list is the farm's", "[farmgen]") {
  const auto& list = farmgen::builtin_packages();
  REQUIRE(list.size() == 44);
  CHECK(builtin("flash-attn").name == "flash_attn");
  CHECK(builtin("flash-attn").version == "2.8.3");
  CHECK(builtin("cc-torch").version == "0.0.0");
  CHECK_FALSE(builtin("cumm").links_torch);
  CHECK(builtin("cumm").version == "0.7.11");
  CHECK(builtin("vllm").platforms == std::vector<std::string>{"linux"});
  CHECK(builtin("sageattn3").own_combinations.size() == 12);
  REQUIRE(builtin("torchao").min_pytorch.has_value());
  CHECK(*builtin("torchao").min_pytorch == nv("2.11"));
  CHECK(*builtin("natten").min_pytorch == nv("2.5"));
  for (const auto& p : list) {
    INFO(p.index_name);
    CHECK(model::normalize_name(p.name) == p.index_name);
    CHECK(p.name.find('-') == std::string::npos);
  }
}

TEST_CASE("farmgen: package list errors name the path", "[farmgen]") {
  auto bad = farmgen::parse_package_list(
      R"({"format": 1, "packages": [{"name": "a", "index_name": "a", "version": "1.0", "platforms": ["macos"]}]})",
      "list.json");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().is(Errc::invalid_input));
  CHECK_THAT(bad.error().message, Catch::Contains("list.json") && Catch::Contains("packages[0].platforms[0]"));
  auto dup = farmgen::parse_package_list(
      R"({"format": 1, "packages": [{"name": "a_b", "index_name": "a-b", "version": "1.0", "platforms": ["linux"]},
                                    {"name": "a_b", "index_name": "a-b", "version": "1.0", "platforms": ["linux"]}]})",
      "list.json");
  REQUIRE_FALSE(dup.has_value());
  CHECK_THAT(dup.error().message, Catch::Contains("packages[1].index_name"));
  auto wrong_index = farmgen::parse_package_list(
      R"({"format": 1, "packages": [{"name": "a_b", "index_name": "ab", "version": "1.0", "platforms": ["linux"]}]})",
      "list.json");
  REQUIRE_FALSE(wrong_index.has_value());
  auto fmt = farmgen::parse_package_list(R"({"format": 2, "packages": []})", "list.json");
  REQUIRE_FALSE(fmt.has_value());
  CHECK(fmt.error().is(Errc::unsupported));
  CHECK_FALSE(farmgen::parse_package_list("{", "list.json").has_value());
}

TEST_CASE("farmgen: --packages picks the first N or adds synthetic packages", "[farmgen]") {
  const auto& list = farmgen::builtin_packages();
  const auto few = farmgen::select_packages(list, 3);
  REQUIRE(few.size() == 3);
  CHECK(few[0].index_name == list[0].index_name);
  CHECK(few[2].index_name == list[2].index_name);
  const auto more = farmgen::select_packages(list, list.size() + 2);
  REQUIRE(more.size() == list.size() + 2);
  CHECK(more[list.size()].index_name == "synthetic-pkg-1");
  CHECK(more[list.size()].name == "synthetic_pkg_1");
  CHECK(more[list.size() + 1].index_name == "synthetic-pkg-2");
  CHECK(more[list.size() + 1].links_torch);
}

TEST_CASE("farmgen: the grid is the shipped cells the farm builds", "[farmgen]") {
  const auto grid = farmgen::farm_grid(cuda_pol());
  const auto want = expected_grid();
  REQUIRE(grid.size() == want.size());
  CHECK(grid.size() > 300);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    CHECK(mm(grid[i].combo.line) == want[i].cuda);
    CHECK(mm(grid[i].combo.torch) == want[i].torch);
    CHECK(mm(grid[i].python) == want[i].python);
    CHECK(grid[i].platform == want[i].platform);
  }
  // cu12.4 never on aarch64 (no arch list there), nothing below Python 3.10.
  for (const auto& c : grid) {
    CHECK_FALSE((c.platform == "linux_aarch64" && c.combo.line == nv("12.4")));
    CHECK(c.python >= nv("3.10"));
  }
  // The policy does ship cu12.4 aarch64 cells: the arch-list rule is what drops them.
  const bool shipped_124_arm = std::any_of(cuda_pol().shipped_cells().begin(), cuda_pol().shipped_cells().end(),
                                           [](const semantics::Policy::Cell& c) {
                                             return c.platform == "linux_aarch64" && c.combo.line == nv("12.4");
                                           });
  CHECK(shipped_124_arm);
}

TEST_CASE("farmgen: file names are the farm's", "[farmgen]") {
  const auto& fa = builtin("flash-attn");
  const auto label = [](const auto& pol, const char* line, const char* torch) {
    return pol.combo_labels().front().render(model::Combo{nv(line), nv(torch)});
  };
  const auto& cuda = cuda_pol();
  CHECK(farmgen::wheel_filename(fa, label(cuda, "12.8", "2.8"), nv("3.12"), "linux") ==
        "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl");
  CHECK(farmgen::wheel_filename(fa, label(cuda, "13.0", "2.10"), nv("3.10"), "linux_aarch64") ==
        "flash_attn-2.8.3+cu130torch2.10-cp310-cp310-manylinux_2_26_aarch64.manylinux_2_28_aarch64.whl");
  CHECK(farmgen::wheel_filename(fa, label(cuda, "12.8", "2.8"), nv("3.13"), "windows") ==
        "flash_attn-2.8.3+cu128torch2.8-cp313-cp313-win_amd64.whl");
  CHECK(farmgen::wheel_filename(fa, label(wheelfit::test::rocm_policy(), "6.2.4", "2.7"), nv("3.12"), "linux") ==
        "flash_attn-2.8.3+rocm6.2.4torch2.7-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl");
}

TEST_CASE("farmgen: SHA-256 is the real digest", "[farmgen]") {
  CHECK(farmgen::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // hashlib.sha256(b"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl")
  CHECK(farmgen::sha256_hex("flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl") ==
        "ce7fbd8881dcdf57f6902b79e83d007ae9c21226598e49b3f57b2aba51a3697e");
}

TEST_CASE("farmgen: every anchor is a wheel of a shipped cell, counts match the grid", "[farmgen]") {
  const auto& f = farm();
  const auto base_url = transports::to_url(f.dir.string(), true);
  std::size_t total_anchors = 0;
  std::size_t total_files = 0;
  for (const auto& p : farmgen::builtin_packages()) {
    INFO(p.index_name);
    const auto page = parse_page(f.dir / p.index_name / "index.html", base_url + p.index_name + "/");
    CHECK(page.skipped.empty());
    const auto cells = expected_cells(p);
    REQUIRE(page.links.size() == cells.size());
    std::set<Cell> seen;
    std::set<std::string> hrefs;
    for (const auto& link : page.links) {
      const auto a = parse_anchor(link);
      CHECK(a.text_wheel.name == p.index_name);
      CHECK(a.text_wheel.distribution == p.name);
      CHECK(a.text_wheel.version.public_version().str() == model::Version::parse(p.version)->str());
      CHECK(cuda_pol().pytorch_shipped(a.combo, nv(a.python.c_str()), a.platform));
      seen.insert({mm(a.combo.line), mm(a.combo.torch), a.python, a.platform});
      hrefs.insert(link.url);
      CHECK(link.url.rfind("https://github.com/Comfy-Forge/cuda-wheels/releases/download/" + p.name + "-latest/", 0) == 0);
      CHECK(link.url.find('+') == std::string::npos);
      CHECK(link.url.find("%2B") != std::string::npos);
      CHECK_FALSE(link.sha256.has_value());  // like the farm: hashes only in packages.json
      if (p.links_torch) CHECK(link.text == link.filename);
    }
    CHECK(seen == std::set<Cell>(cells.begin(), cells.end()));
    if (p.links_torch) {
      CHECK(hrefs.size() == cells.size());
    } else {
      std::set<std::tuple<std::string, std::string, std::string>> groups;
      for (const auto& c : cells) groups.insert({c.cuda, c.python, c.platform});
      CHECK(hrefs.size() == groups.size());
    }
    total_anchors += page.links.size();
    total_files += hrefs.size();
  }
  CHECK(f.stats.packages == 44);
  CHECK(f.stats.anchors == total_anchors);
  CHECK(f.stats.wheels == total_files);

  // The root lists every package; nothing else is linked.
  const auto root = parse_page(f.dir / "index.html", base_url);
  CHECK(root.links.empty());  // directory links ("cumm/") are skipped by the wheel-page parser
  CHECK(root.skipped.size() == 44);
}

TEST_CASE("farmgen: torch-free packages alias one file under every torch minor, like cumm", "[farmgen]") {
  const auto& f = farm();
  const auto base_url = transports::to_url(f.dir.string(), true);
  const auto& cumm = builtin("cumm");
  const auto page = parse_page(f.dir / "cumm" / "index.html", base_url + "cumm/");
  // The newest torch minor per (cuda, python, platform), from the grid.
  std::map<std::tuple<std::string, std::string, std::string>, std::string> newest;
  for (const auto& c : expected_cells(cumm)) {
    auto& t = newest[{c.cuda, c.python, c.platform}];
    if (t.empty() || version_less(t, c.torch)) t = c.torch;
  }
  std::size_t aliases = 0;
  for (const auto& link : page.links) {
    const auto a = parse_anchor(link);
    auto href_combo = wheelfit::test::cuda_policy().parse_combo_label(a.href_wheel.version.local());
    REQUIRE(href_combo.has_value());
    CHECK(href_combo->line == a.combo.line);
    CHECK(a.href_wheel.python_tags == a.text_wheel.python_tags);
    CHECK(platform_of(a.href_wheel) == a.platform);
    CHECK(mm(href_combo->torch) == newest.at({mm(a.combo.line), a.python, a.platform}));
    if (link.text != link.filename) ++aliases;
  }
  CHECK(aliases > 0);
  CHECK(aliases == page.links.size() - newest.size());
  // The exact shape of the real page's rows.
  const auto body = test::read_file(f.dir / "cu128" / "torch2.8" / "cumm" / "index.html");
  CHECK_THAT(body, Catch::Contains(
                       "<a href=\"https://github.com/Comfy-Forge/cuda-wheels/releases/download/cumm-latest/"
                       "cumm-0.7.11%2Bcu128torch2.11-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl\">"
                       "cumm-0.7.11+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl</a><br>\n"));
  CHECK_THAT(body, Catch::StartsWith("<!DOCTYPE html>\n<html>\n<head><title>cumm cu128/torch2.8</title></head>"));
}

TEST_CASE("farmgen: per-combo channels hold exactly that combo's anchors", "[farmgen]") {
  const auto& f = farm();
  const auto base_url = transports::to_url(f.dir.string(), true);
  std::size_t channel_anchors = 0;
  std::set<std::pair<std::string, std::string>> combos;
  for (const auto& c : expected_grid()) combos.insert({c.cuda, c.torch});
  for (const auto& [cuda, torch] : combos) {
    const std::string cu = "cu" + std::to_string(nv(cuda.c_str()).major()) + std::to_string(nv(cuda.c_str()).minor());
    const fs::path chan = f.dir / cu / ("torch" + torch);
    INFO(chan.string());
    REQUIRE(fs::is_regular_file(chan / "index.html"));
    const auto root = parse_page(chan / "index.html", base_url + cu + "/torch" + torch + "/");
    std::size_t listed = 0;
    for (const auto& p : farmgen::builtin_packages()) {
      std::size_t want = 0;
      for (const auto& c : expected_cells(p)) want += (c.cuda == cuda && c.torch == torch) ? 1 : 0;
      const fs::path page_file = chan / p.index_name / "index.html";
      CHECK(fs::exists(page_file) == (want > 0));
      if (want == 0) continue;
      ++listed;
      const auto page = parse_page(page_file, base_url + cu + "/torch" + torch + "/" + p.index_name + "/");
      REQUIRE(page.links.size() == want);
      for (const auto& link : page.links) {
        const auto a = parse_anchor(link);
        CHECK(mm(a.combo.line) == cuda);
        CHECK(mm(a.combo.torch) == torch);
      }
      channel_anchors += want;
    }
    CHECK(root.skipped.size() == listed);
  }
  CHECK(channel_anchors == f.stats.anchors);
}

TEST_CASE("farmgen: packages.json is schema 1 with the SHA-256 of each file name", "[farmgen]") {
  const auto& f = farm();
  const auto body = test::read_file(f.dir / "packages.json");
  CHECK_THAT(body, Catch::StartsWith("{\n \"schema\": 1,\n \"repo\": \"Comfy-Forge/cuda-wheels\",\n \"packages\": {\n"));
  auto pj = index::parse_packages_json(body, "packages.json");
  REQUIRE(pj.has_value());
  CHECK(pj->repo == "Comfy-Forge/cuda-wheels");
  REQUIRE(pj->packages.size() == 44);
  // The farm's descriptive fields, which wheelfit's reader skips, read here as raw JSON.
  std::map<std::string, boost::json::object> raw;
  const auto doc = boost::json::parse(body);
  for (const auto& [name, entry] : doc.at("packages").as_object()) {
    for (const auto& w : entry.at("wheels").as_array()) raw.emplace(std::string(w.at("filename").as_string()), w.as_object());
  }
  std::size_t wheels = 0;
  for (const auto& [name, entry] : pj->packages) {
    INFO(name);
    const auto& p = builtin(name);
    CHECK(entry.torch_free == !p.links_torch);
    for (const auto& w : entry.wheels) {
      const auto& r = raw.at(w.filename);
      auto field = [&](const char* key) { return std::string(r.at(key).as_string()); };
      REQUIRE(w.sha256.has_value());
      CHECK(*w.sha256 == farmgen::sha256_hex(w.filename));
      auto wn = model::WheelName::parse(w.filename);
      REQUIRE(wn.has_value());
      auto combo = wheelfit::test::cuda_policy().parse_combo_label(wn->version.local());
      REQUIRE(combo.has_value());
      CHECK(field("cuda") == mm(combo->line));  // the line under the backend's key
      CHECK(field("torch") == mm(combo->torch));
      CHECK(field("python") == wn->python_tags[0].substr(2));
      CHECK(field("platform") == platform_of(*wn));
      CHECK(index::percent_decode(w.url.substr(w.url.rfind('/') + 1)) == w.filename);
      CHECK(pj->sha256_for(w.url, w.filename) == w.sha256);
    }
    wheels += entry.wheels.size();
  }
  CHECK(wheels == f.stats.wheels);
}

TEST_CASE("farmgen: an H100 x86_64 py3.12 torch 2.8.0+cu128 machine resolves in tier 1", "[farmgen]") {
  const auto& f = farm();
  const model::Combo combo{nv("12.8"), nv("2.8")};
  std::vector<std::string> excluded;
  const auto names = eligible(combo, "3.12", "linux", nv("9.0"), &excluded);
  // Two real packages are not servable here by the farm's own facts: torchao starts at torch
  // 2.11 (min_pytorch) and nunchaku's cu12.8 arch list (7.5;8.0;8.6;8.9;12.0) has no sm_90.
  // sageattn3 and vllm carry own_combinations.
  CHECK(excluded == std::vector<std::string>{"nunchaku", "sageattn3", "torchao", "vllm"});
  REQUIRE(names.size() == 40);
  const auto r = resolve_on(f.dir, names, test::h100());
  INFO(r.tiers.front().reason);
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  CHECK(*r.combo == combo);
  REQUIRE(r.picks.size() == names.size());
  for (const auto& pick : r.picks) {
    INFO(pick.name);
    CHECK(pick.filename.find("+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl") !=
          std::string::npos);
    REQUIRE(pick.sha256.has_value());
    CHECK(*pick.sha256 == farmgen::sha256_hex(index::percent_decode(pick.url.substr(pick.url.rfind('/') + 1))));
  }
  // The torch-free pick installs the newest-torch file its anchor aliases.
  const auto cumm = std::find_if(r.picks.begin(), r.picks.end(), [](const resolve::Pick& p) { return p.name == "cumm"; });
  REQUIRE(cumm != r.picks.end());
  CHECK_THAT(cumm->url, Catch::EndsWith("/cumm-0.7.11%2Bcu128torch2.11-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"));

  // The excluded ones do not resolve here, each for its own reason.
  for (const std::string name : {"nunchaku", "torchao"}) {
    INFO(name);
    const auto one = resolve_on(f.dir, {name}, test::h100());
    CHECK_FALSE(one.ok());
    REQUIRE_FALSE(one.tiers.empty());
    CHECK(one.tiers.front().status == resolve::TierOutcome::Status::failed);
  }
}

TEST_CASE("farmgen: an aarch64 py3.12 machine without torch resolves in tier 1 to the newest combo covering all",
          "[farmgen]") {
  const auto& f = farm();
  const model::Combo fallback{nv("13.0"), nv("2.10")};
  const auto names = eligible(fallback, "3.12", "linux_aarch64", nv("9.0"));
  REQUIRE(names.size() >= 38);
  const auto r = resolve_on(f.dir, names, gh200_no_torch());
  REQUIRE(r.tiers.size() == 2);
  INFO(r.tiers[0].reason);
  REQUIRE(r.ok());
  // Not the fallback: the newest torch the farm and PyTorch's matrix offer for cp312 on aarch64
  // that covers every package, on the line closest to the driver's (CUDA 13.0).
  CHECK(*r.tier == "bootstrap");
  CHECK_THAT(r.tiers[0].chosen, Catch::Contains("no torch installed"));
  CHECK(fallback.torch < r.combo->torch);
  CHECK(r.combo->line == nv("13.0"));
  const std::string label = "+cu130torch" + r.combo->torch.str() + "-cp312-cp312-manylinux_2_26_aarch64.manylinux_2_28_aarch64.whl";
  REQUIRE(r.picks.size() == names.size());
  for (const auto& pick : r.picks) CHECK(pick.filename.find(label) != std::string::npos);
  CHECK(r.tiers[1].reason == "not needed: tier 1 covered every package");
}

// --- a ROCm farm: the same generator with the ROCm backend's policy and label grammar ----------

TEST_CASE("farmgen: output is deterministic", "[farmgen]") {
  test::TempDir tmp;
  farmgen::FarmOptions o;
  o.out = tmp / "a";
  o.packages = 46;  // the real list and two synthetic packages
  auto a = farmgen::generate_farm(o, cuda_pol());
  REQUIRE(a.has_value());
  o.out = tmp / "b";
  auto b = farmgen::generate_farm(o, cuda_pol());
  REQUIRE(b.has_value());
  CHECK(a->bytes == b->bytes);
  const auto fa = all_files(tmp / "a");
  const auto fb = all_files(tmp / "b");
  CHECK(fa.size() == a->files);
  CHECK(fa == fb);  // same names, same bytes
  CHECK(fa.count("synthetic-pkg-2/index.html") == 1);
  // The full list is byte-identical to the shared farm for the same package set.
  o.out = tmp / "c";
  o.packages = std::nullopt;
  REQUIRE(farmgen::generate_farm(o, cuda_pol()).has_value());
  CHECK(all_files(tmp / "c") == all_files(farm().dir));
}

TEST_CASE("farmgen: a bad --out is an error and nothing is left half-written", "[farmgen]") {
  test::TempDir tmp;
  farmgen::FarmOptions o;
  o.packages = 2;

  SECTION("a file") {
    test::write_file(tmp / "file", "keep me");
    o.out = tmp / "file";
    auto r = farmgen::generate_farm(o, cuda_pol());
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().is(Errc::usage));
    CHECK_THAT(r.error().message, Catch::Contains("file"));
    CHECK(test::read_file(tmp / "file") == "keep me");
  }
  SECTION("below a file") {
    test::write_file(tmp / "file", "keep me");
    o.out = tmp / "file" / "farm";
    auto r = farmgen::generate_farm(o, cuda_pol());
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("file"));
  }
  SECTION("a non-empty directory that holds no farm") {
    test::write_file(tmp / "dir" / "notes.txt", "mine");
    o.out = tmp / "dir";
    auto r = farmgen::generate_farm(o, cuda_pol());
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().is(Errc::usage));
    CHECK(test::read_file(tmp / "dir" / "notes.txt") == "mine");
  }
  SECTION("zero packages, a blank base URL") {
    o.out = tmp / "farm";
    o.packages = 0;
    CHECK_FALSE(farmgen::generate_farm(o, cuda_pol()).has_value());
    o.packages = 1;
    o.base_url = "";
    CHECK_FALSE(farmgen::generate_farm(o, cuda_pol()).has_value());
    CHECK_FALSE(fs::exists(tmp / "farm"));
  }
  SECTION("an earlier farm is replaced whole") {
    o.out = tmp / "farm";
    o.packages = 3;
    REQUIRE(farmgen::generate_farm(o, cuda_pol()).has_value());
    REQUIRE(fs::exists(tmp / "farm" / "cumesh" / "index.html"));
    o.packages = 2;
    auto r = farmgen::generate_farm(o, cuda_pol());
    REQUIRE(r.has_value());
    CHECK(r->packages == 2);
    CHECK_FALSE(fs::exists(tmp / "farm" / "cumesh"));
  }
  // No temp or old directories left beside the output.
  for (const auto& e : fs::directory_iterator(tmp.path()))
    CHECK(e.path().filename().string().find(".farmgen-") == std::string::npos);
}

TEST_CASE("farmgen: the package list agrees with the real farm snapshot", "[farmgen][fixtures]") {
  // Every package deployed in the snapshot is in the list, with the distribution name its wheels use.
  std::size_t checked = 0;
  for (const auto& e : fs::directory_iterator(test::farm_index_dir())) {
    const auto page_file = e.path() / "index.html";
    const std::string dir = e.path().filename().string();
    const bool channel = dir.size() > 2 && dir.rfind("cu", 0) == 0 &&
                         dir.find_first_not_of("0123456789", 2) == std::string::npos;  // cu128/
    if (!e.is_directory() || !fs::exists(page_file) || channel) continue;
    const auto page = parse_page(page_file, "https://example.test/" + dir + "/");
    if (page.links.empty() || !page.links.front().filename.ends_with(".whl")) continue;  // archs/, matrix/
    INFO(dir);
    const auto& p = builtin(dir);
    auto w = model::WheelName::parse(page.links.front().filename);
    REQUIRE(w.has_value());
    CHECK(w->distribution == p.name);
    ++checked;
  }
  CHECK(checked >= 38);
}
