// Unit tests of wheelfit::policies: parse_policy_json / load_policy_file (the policy format,
// including what their errors say).

#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <functional>

#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "support/model_support.hpp"

using wheelfit::Errc;
using wheelfit::model::Combo;
using wheelfit::model::NumericVersion;
namespace pol = wheelfit::policies;

namespace {

using wheelfit::test::nv;
Combo combo(std::string_view cuda, std::string_view torch) { return Combo{nv(cuda), nv(torch)}; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// parse_policy_json

namespace {

// A small, complete policy in the documented format.
constexpr const char* kMinimal = R"({
  "_comment": "test policy",
  "format": 2,
  "version": "2026-01-01",
  "backend": {"line": {"key": "cuda", "prefix": "cu", "name": "CUDA"},
              "combo_labels": ["cu{line:nodot}torch{torch}"], "torch_labels": ["cu{line:nodot}"],
              "torch_index": "https://example.invalid/whl/cu{line_nodot}/",
              "device": {"name": "GPU arch", "prefix": "sm ", "code_sections": [".nv_fatbin"]},
              "driver": {"rule": "same_major", "floors": {"12": {"linux": "525.60.13", "windows": "528.33"}}}},
  "arch_policy": {"linux": {"12.8": "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX"},
                  "linux_aarch64": {"13.0": "8.0;9.0+PTX;10.0;11.0;12.0+PTX"}},
  "arch_exceptions": {"12.8/2.8": "7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX"},
  "packages": {"demo-pkg": {"arch_list": "8.0", "arch_list_by_line": {"12.8": "9.0"}, "_note": "x"}},
  "pytorch_matrix": {"linux": {"12.8": {"2.8": ["3.12", "3.10"]}}},
  "torch_family": {"2.8": {"torchvision": "0.23", "torchaudio": "2.8"}},
  "pypi_line": {"linux": {"2.8": "12.8"}, "windows": {}},
  "fallback": {"x86_64": {"line": "12.8", "torch": "2.8"}}
})";

std::shared_ptr<const wheelfit::semantics::DeviceRules> cuda_rules() { return wheelfit::registry::device_rules(wheelfit::test::cuda_backend()); }

// kMinimal with `edit` applied to its JSON value.
std::string mutated(const std::function<void(boost::json::object&)>& edit) {
  auto v = boost::json::parse(kMinimal);
  edit(v.as_object());
  return boost::json::serialize(v);
}

boost::json::object& at(boost::json::object& o, std::initializer_list<const char*> path) {
  boost::json::object* cur = &o;
  for (const char* k : path) cur = &cur->at(k).as_object();
  return *cur;
}

}  // namespace

TEST_CASE("parse_policy_json reads the documented format", "[policies][parse]") {
  auto p = pol::parse_policy_json(kMinimal, "test.json", cuda_rules());
  REQUIRE(p);
  CHECK(p->source() == "test.json");
  CHECK(p->version() == "2026-01-01");
  CHECK(p->arch_list("demo_pkg", combo("12.8", "2.8"), "linux")->list == "9.0");
  CHECK(p->arch_list("demo-pkg", combo("12.8", "2.8"), "linux_aarch64").has_value() == false);
  CHECK(p->arch_list("other", combo("12.8", "2.8"), "linux")->provenance == "exception 12.8/2.8");
  CHECK(p->arch_list("other", combo("13.0", "2.8"), "linux_aarch64")->list == "8.0;9.0+PTX;10.0;11.0;12.0+PTX");
  CHECK(p->pytorch_shipped(combo("12.8", "2.8"), nv("3.10"), "linux"));
  CHECK_FALSE(p->pytorch_shipped(combo("12.8", "2.8"), nv("3.11"), "linux"));
  REQUIRE(p->shipped_cells().size() == 2);
  CHECK(p->shipped_cells()[0].python == nv("3.10"));  // sorted
  CHECK(p->torch_index_url(nv("12.8")) == "https://example.invalid/whl/cu128/");
  CHECK_FALSE(p->torch_family(nv("2.9")));
  CHECK_FALSE(p->pypi_line(nv("2.8"), "windows"));
  CHECK_FALSE(p->min_driver(13));

  // Unknown top-level sections are ignored (a newer file may carry more); "_" keys are comments.
  auto extra = mutated([](auto& o) { o["future_section"] = boost::json::array{1, 2}; });
  CHECK(pol::parse_policy_json(extra, "x.json", cuda_rules()));
  // Keys are canonicalised: "12.08" is 12.8.
  auto padded = mutated([](auto& o) {
    at(o, {"arch_policy", "linux"}).erase("12.8");
    at(o, {"arch_policy", "linux"})["12.08"] = "8.0";
  });
  auto pp = pol::parse_policy_json(padded, "x.json", cuda_rules());
  REQUIRE(pp);
  CHECK(pp->platform_arch_list(combo("12.8", "2.9"), "linux")->list == "8.0");
}

TEST_CASE("parse_policy_json rejects bad files, naming the source and the JSON path", "[policies][parse]") {
  struct Row {
    const char* what;
    std::string text;
    const char* says;
    Errc code = Errc::invalid_input;
  };
  const std::vector<Row> rows = {
      {"empty", "", "policy.json: not JSON"},
      {"truncated", "{\"format\": 1,", "policy.json: not JSON"},
      {"trailing comma", "{\"format\": 1,}", "policy.json: not JSON: line 1, column 14"},
      {"second line", "{\n  \"format\": 1 x\n}", "not JSON: line 2"},
      {"comments", "// hi\n{}", "not JSON"},
      {"array", "[1, 2]", "policy.json: expected a JSON object at the top level, got an array"},
      {"string", "\"policy\"", "expected a JSON object at the top level, got a string"},
      {"no format", mutated([](auto& o) { o.erase("format"); }), "policy.json: missing key 'format'"},
      {"format string", mutated([](auto& o) { o["format"] = "1"; }), "policy.json: format: expected an integer, got a string"},
      {"format 0", mutated([](auto& o) { o["format"] = 0; }), "format: 0 is not a format number"},
      {"format 3", mutated([](auto& o) { o["format"] = 3; }), "format: format 3 is newer", Errc::unsupported},
      {"format 1", mutated([](auto& o) { o["format"] = 1; }), "format: format 1 is older", Errc::unsupported},
      {"no backend", mutated([](auto& o) { o.erase("backend"); }), "policy.json: missing key 'backend'"},
      {"backend key", mutated([](auto& o) { at(o, {"backend"})["labels"] = "x"; }), "backend: unknown key 'labels'"},
      {"line key", mutated([](auto& o) { at(o, {"backend", "line"})["key"] = "cu da"; }),
       "backend.line.key: 'cu da' is not a name"},
      {"label placeholder", mutated([](auto& o) { at(o, {"backend"})["combo_labels"] = boost::json::array{"cu{cuda}"}; }),
       "backend.combo_labels[0]: label template 'cu{cuda}': unknown placeholder {cuda}"},
      {"label no torch", mutated([](auto& o) { at(o, {"backend"})["combo_labels"] = boost::json::array{"cu{line}"}; }),
       "backend.combo_labels[0]: 'cu{line}' names no {torch}"},
      {"label two in a row", mutated([](auto& o) { at(o, {"backend"})["torch_labels"] = boost::json::array{"{line}{torch}"}; }),
       "two placeholders in a row"},
      {"label star", mutated([](auto& o) { at(o, {"backend"})["torch_labels"] = boost::json::array{"cu*{line}"}; }),
       "'*' may only end a template"},
      {"driver rule", mutated([](auto& o) { at(o, {"backend", "driver"})["rule"] = "newest"; }),
       "backend.driver.rule: 'newest' is not a driver rule"},
      {"no version", mutated([](auto& o) { o.erase("version"); }), "missing key 'version'"},
      {"version number", mutated([](auto& o) { o["version"] = 20260101; }), "policy.json: version: expected a string, got a number"},
      {"version empty", mutated([](auto& o) { o["version"] = ""; }), "policy.json: version: '' is not a version string"},
      {"version control", mutated([](auto& o) { o["version"] = "2026\n01"; }), "version: '2026"},
      {"no arch_policy", mutated([](auto& o) { o.erase("arch_policy"); }), "policy.json: missing key 'arch_policy'"},
      {"arch_policy array", mutated([](auto& o) { o["arch_policy"] = boost::json::array{}; }),
       "policy.json: arch_policy: expected an object, got an array"},
      {"platform array", mutated([](auto& o) { at(o, {"arch_policy"})["linux"] = boost::json::array{}; }),
       "policy.json: arch_policy.linux: expected an object, got an array"},
      {"platform key", mutated([](auto& o) { at(o, {"arch_policy"})["Linux X"] = boost::json::object{}; }),
       "arch_policy.Linux X: 'Linux X' is not a platform key"},
      {"bad arch list", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.8"] = "7.x;8.0"; }),
       "policy.json: arch_policy.linux.12.8: '7.x' is not an arch target"},
      {"empty arch list", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.8"] = ""; }),
       "policy.json: arch_policy.linux.12.8: arch list '' names no target"},
      {"arch list number", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.8"] = 12.8; }),
       "arch_policy.linux.12.8: expected a string, got a number"},
      {"cuda key major", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12"] = "8.0"; }),
       "policy.json: arch_policy.linux.12: '12' is not an accelerator line"},
      {"cuda key text", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["cu128"] = "8.0"; }),
       "arch_policy.linux.cu128: 'cu128' is not an accelerator line"},
      {"cuda key four parts", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.8.1.2"] = "8.0"; }),
       "'12.8.1.2' is not an accelerator line"},
      {"duplicate after canonical", mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.08"] = "8.0"; }),
       "arch_policy.linux.12.08: duplicate line 12.8"},
      {"exception key", mutated([](auto& o) { at(o, {"arch_exceptions"})["12.8-2.8"] = "8.0"; }),
       "policy.json: arch_exceptions.12.8-2.8: '12.8-2.8' is not <line>/<torch-minor>"},
      {"exception torch", mutated([](auto& o) { at(o, {"arch_exceptions"})["12.8/2.x"] = "8.0"; }),
       "arch_exceptions.12.8/2.x: '2.x' is not a torch major.minor"},
      {"exception list", mutated([](auto& o) { at(o, {"arch_exceptions"})["12.8/2.8"] = "8.0+PTZ"; }),
       "arch_exceptions.12.8/2.8: '8.0+PTZ' is not an arch target"},
      {"package name", mutated([](auto& o) { at(o, {"packages"})["Demo_Pkg"] = boost::json::object{}; }),
       "policy.json: packages.Demo_Pkg: 'Demo_Pkg' is not a PEP 503 normalised name (expected 'demo-pkg')"},
      {"package entry", mutated([](auto& o) { at(o, {"packages"})["x"] = "8.0"; }),
       "packages.x: expected an object, got a string"},
      {"package key", mutated([](auto& o) { at(o, {"packages", "demo-pkg"})["arch_lists"] = "8.0"; }),
       "policy.json: packages.demo-pkg: unknown key 'arch_lists'"},
      {"package list", mutated([](auto& o) { at(o, {"packages", "demo-pkg"})["arch_list_aarch64"] = "8"; }),
       "policy.json: packages.demo-pkg.arch_list_aarch64: '8' is not an arch target"},
      {"package by cuda", mutated([](auto& o) { at(o, {"packages", "demo-pkg", "arch_list_by_line"})["12.8"] = ""; }),
       "packages.demo-pkg.arch_list_by_line.12.8: arch list '' names no target"},
      {"package by cuda key", mutated([](auto& o) { at(o, {"packages", "demo-pkg", "arch_list_by_line"})["x"] = "8.0"; }),
       "packages.demo-pkg.arch_list_by_line.x: 'x' is not an accelerator line"},
      {"matrix cell", mutated([](auto& o) { at(o, {"pytorch_matrix", "linux", "12.8"})["2.8"] = "3.12"; }),
       "policy.json: pytorch_matrix.linux.12.8.2.8: expected an array of Python versions, got a string"},
      {"matrix python", mutated([](auto& o) {
         at(o, {"pytorch_matrix", "linux", "12.8"})["2.8"] = boost::json::array{"3.12", "three"};
       }),
       "policy.json: pytorch_matrix.linux.12.8.2.8[1]: 'three' is not a Python major.minor"},
      {"matrix python number", mutated([](auto& o) {
         at(o, {"pytorch_matrix", "linux", "12.8"})["2.8"] = boost::json::array{3.12};
       }),
       "pytorch_matrix.linux.12.8.2.8[0]: expected a string, got a number"},
      {"matrix duplicate", mutated([](auto& o) {
         at(o, {"pytorch_matrix", "linux", "12.8"})["2.8"] = boost::json::array{"3.12", "3.12"};
       }),
       "pytorch_matrix.linux.12.8.2.8[1]: duplicate Python 3.12"},
      {"matrix torch", mutated([](auto& o) { at(o, {"pytorch_matrix", "linux", "12.8"})["2.8.0"] = boost::json::array{}; }),
       "pytorch_matrix.linux.12.8.2.8.0: '2.8.0' is not a torch major.minor"},
      {"matrix cuda", mutated([](auto& o) { at(o, {"pytorch_matrix", "linux"})["cu128"] = boost::json::object{}; }),
       "pytorch_matrix.linux.cu128: 'cu128' is not an accelerator line"},
      {"family missing", mutated([](auto& o) { at(o, {"torch_family", "2.8"}).erase("torchvision"); }),
       "policy.json: torch_family.2.8: missing key 'torchvision'"},
      {"family version", mutated([](auto& o) { at(o, {"torch_family", "2.8"})["torchaudio"] = "2.8.x"; }),
       "policy.json: torch_family.2.8.torchaudio: '2.8.x' is not a major.minor version"},
      {"family array", mutated([](auto& o) { at(o, {"torch_family"})["2.9"] = boost::json::array{"0.24", "2.9"}; }),
       "torch_family.2.9: expected an object, got an array"},
      {"family key", mutated([](auto& o) { at(o, {"torch_family"})["two"] = boost::json::object{}; }),
       "torch_family.two: 'two' is not a torch major.minor"},
      {"pypi line", mutated([](auto& o) { at(o, {"pypi_line", "linux"})["2.8"] = "cu128"; }),
       "policy.json: pypi_line.linux.2.8: 'cu128' is not an accelerator line"},
      {"pypi null", mutated([](auto& o) { at(o, {"pypi_line", "linux"})["2.8"] = nullptr; }),
       "pypi_line.linux.2.8: expected a string, got null"},
      {"driver key", mutated([](auto& o) {
         boost::json::value copy = at(o, {"backend", "driver", "floors", "12"});
         at(o, {"backend", "driver", "floors"})["12.0"] = std::move(copy);
       }),
       "policy.json: backend.driver.floors.12.0: '12.0' is not a line major"},
      {"driver version", mutated([](auto& o) { at(o, {"backend", "driver", "floors", "12"})["linux"] = "525.x"; }),
       "policy.json: backend.driver.floors.12.linux: '525.x' is not a driver version"},
      {"driver missing", mutated([](auto& o) { at(o, {"backend", "driver", "floors", "12"}).erase("windows"); }),
       "backend.driver.floors.12: missing key 'windows'"},
      {"driver extra", mutated([](auto& o) { at(o, {"backend", "driver", "floors", "12"})["macos"] = "1"; }),
       "backend.driver.floors.12: unknown key 'macos'"},
      {"fallback torch", mutated([](auto& o) { at(o, {"fallback", "x86_64"})["torch"] = "2"; }),
       "policy.json: fallback.x86_64.torch: '2' is not a torch major.minor"},
      {"fallback type", mutated([](auto& o) { at(o, {"fallback"})["aarch64"] = true; }),
       "fallback.aarch64: expected an object, got a boolean"},
      {"fallback old key", mutated([](auto& o) { at(o, {"fallback", "x86_64"})["cuda"] = "12.8"; }),
       "fallback.x86_64: unknown key 'cuda'"},
      {"fallback duplicate arch", mutated([](auto& o) {
         boost::json::value copy = at(o, {"fallback", "x86_64"});
         at(o, {"fallback"})["amd64"] = std::move(copy);
       }),
       "duplicate CPU arch x86_64"},
      {"index placeholder", mutated([](auto& o) { at(o, {"backend"})["torch_index"] = "https://download.pytorch.org/whl/cu128"; }),
       "policy.json: backend.torch_index: 'https://download.pytorch.org/whl/cu128' is not an http(s) URL pattern"},
      {"index scheme", mutated([](auto& o) { at(o, {"backend"})["torch_index"] = "ftp://x/cu{line_nodot}"; }),
       "backend.torch_index: 'ftp://"},
      {"index type", mutated([](auto& o) { at(o, {"backend"})["torch_index"] = boost::json::object{}; }),
       "backend.torch_index: expected a string, got an object"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what, r.text);
    auto p = pol::parse_policy_json(r.text, "policy.json", cuda_rules());
    REQUIRE_FALSE(p);
    CHECK(p.error().is(r.code));
    CHECK_THAT(p.error().message, Catch::StartsWith("policy.json: "));
    CHECK_THAT(p.error().message, Catch::Contains(r.says));
  }
}

// ---------------------------------------------------------------------------------------------
// load_policy_file

TEST_CASE("load_policy_file reads a file and says why it cannot", "[policies][parse]") {
  wheelfit::test::TempDir dir;

  SECTION("the shipped data file, copied elsewhere") {
    const auto text = wheelfit::test::read_file(wheelfit::test::source_dir() / "backends" / "cuda" / "data" / "policy.json");
    const auto path = (dir / "newer-policy.json").string();
    wheelfit::test::write_file(path, text);
    auto p = pol::load_policy_file(path, cuda_rules());
    REQUIRE(p);
    CHECK(p->source() == path);
    CHECK(p->version() == wheelfit::test::cuda_policy().version());
    CHECK(p->shipped_cells().size() == wheelfit::test::cuda_policy().shipped_cells().size());
    CHECK(p->arch_list("sageattention", combo("12.8", "2.8"), "linux")->list == "8.0;8.6;8.9;9.0;12.0+PTX");
  }
  SECTION("a missing file") {
    const auto path = (dir / "absent.json").string();
    auto p = pol::load_policy_file(path, cuda_rules());
    REQUIRE_FALSE(p);
    CHECK(p.error().is(Errc::not_found));
    CHECK_THAT(p.error().message, Catch::Contains(path));
  }
  SECTION("a directory") {
    auto p = pol::load_policy_file(dir.path().string(), cuda_rules());
    REQUIRE_FALSE(p);
    CHECK(p.error().is(Errc::io_error));
    CHECK_THAT(p.error().message, Catch::Contains(dir.path().string()));
  }
  SECTION("a bad file names its path and the JSON path") {
    const auto path = (dir / "bad.json").string();
    wheelfit::test::write_file(path, mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.8"] = "7.x"; }));
    auto p = pol::load_policy_file(path, cuda_rules());
    REQUIRE_FALSE(p);
    CHECK(p.error().is(Errc::invalid_input));
    CHECK_THAT(p.error().message, Catch::StartsWith(path + ": arch_policy.linux.12.8: '7.x'"));
  }
  SECTION("not JSON") {
    const auto path = (dir / "garbage.json").string();
    wheelfit::test::write_file(path, "arch_policy:\n  \"12.8\": \"7.5\"\n");
    auto p = pol::load_policy_file(path, cuda_rules());
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::StartsWith(path + ": not JSON: line 1"));
  }
}

TEST_CASE("a policy read without device rules keeps its lists as written", "[policies][parse]") {
  auto p = pol::parse_policy_json(kMinimal, "plain.json", nullptr);
  REQUIRE(p);
  CHECK(p->rules() == nullptr);
  CHECK(p->platform_arch_list(combo("12.8", "2.9"), "linux")->list == "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX");
  // With the rules, a list the backend cannot read is an error naming its path.
  auto bad = mutated([](auto& o) { at(o, {"arch_policy", "linux"})["12.8"] = "gfx90a"; });
  CHECK(pol::parse_policy_json(bad, "plain.json", nullptr));
  CHECK_FALSE(pol::parse_policy_json(bad, "plain.json", cuda_rules()));
}

// ---------------------------------------------------------------------------------------------
// torch_archs (optional section: platform -> torch minor -> line -> {list, source, date})

namespace {

// kMinimal with a torch_archs section holding `section` (JSON text).
std::string with_torch_archs(std::string_view section) {
  return mutated([&](auto& o) { o["torch_archs"] = boost::json::parse(section); });
}

constexpr const char* kRow = R"({"list": "7.5;9.0+ptx", "source": "pytorch v2.8.0 build_cuda.sh", "date": "2026-12-04"})";

std::string torch_archs_row(std::string_view platform, std::string_view torch, std::string_view line, std::string_view row) {
  return with_torch_archs("{\"" + std::string(platform) + "\": {\"" + std::string(torch) + "\": {\"" + std::string(line) +
                          "\": " + std::string(row) + "}}}");
}

}  // namespace

TEST_CASE("torch_archs: a bad section names the file, the JSON path and what is wrong", "[policies][torch_archs]") {
  struct Row {
    const char* what;
    std::string text;
    const char* says;
  };
  const std::vector<Row> rows = {
      {"not an object", with_torch_archs("[]"), "policy.json: torch_archs: expected an object, got an array"},
      {"platform not an object", with_torch_archs(R"({"linux": "7.5"})"),
       "policy.json: torch_archs.linux: expected an object, got a string"},
      {"bad platform key", torch_archs_row("Linux X", "2.8", "12.8", kRow),
       "policy.json: torch_archs.Linux X: 'Linux X' is not a platform key"},
      {"bad torch key", torch_archs_row("linux", "2.x", "12.8", kRow),
       "policy.json: torch_archs.linux.2.x: '2.x' is not a torch major.minor"},
      {"torch key with a patch", torch_archs_row("linux", "2.8.0", "12.8", kRow),
       "policy.json: torch_archs.linux.2.8.0: '2.8.0' is not a torch major.minor"},
      {"bad line key", torch_archs_row("linux", "2.8", "cu128", kRow),
       "policy.json: torch_archs.linux.2.8.cu128: 'cu128' is not an accelerator line"},
      {"row not an object", torch_archs_row("linux", "2.8", "12.8", R"("7.5;9.0")"),
       "policy.json: torch_archs.linux.2.8.12.8: expected an object, got a string"},
      {"unknown key in a row",
       torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.5", "source": "s", "date": "d", "ptx": true})"),
       "policy.json: torch_archs.linux.2.8.12.8: unknown key 'ptx' (expected list, source, date)"},
      {"missing list", torch_archs_row("linux", "2.8", "12.8", R"({"source": "s", "date": "d"})"),
       "policy.json: torch_archs.linux.2.8.12.8: missing key 'list'"},
      {"missing source", torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.5", "date": "d"})"),
       "policy.json: torch_archs.linux.2.8.12.8: missing key 'source'"},
      {"missing date", torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.5", "source": "s"})"),
       "policy.json: torch_archs.linux.2.8.12.8: missing key 'date'"},
      {"empty source", torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.5", "source": "", "date": "d"})"),
       "policy.json: torch_archs.linux.2.8.12.8.source: is empty"},
      {"empty date", torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.5", "source": "s", "date": ""})"),
       "policy.json: torch_archs.linux.2.8.12.8.date: is empty"},
      {"source a number", torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.5", "source": 1, "date": "d"})"),
       "policy.json: torch_archs.linux.2.8.12.8.source: expected a string, got a number"},
      {"list the rules refuse", torch_archs_row("linux", "2.8", "12.8", R"({"list": "7.x;8.0", "source": "s", "date": "d"})"),
       "policy.json: torch_archs.linux.2.8.12.8.list: '7.x' is not an arch target"},
      {"empty list", torch_archs_row("linux", "2.8", "12.8", R"({"list": "", "source": "s", "date": "d"})"),
       "policy.json: torch_archs.linux.2.8.12.8.list: arch list '' names no target"},
      {"duplicate line after canonicalisation",
       with_torch_archs(std::string(R"({"linux": {"2.8": {"12.8": )") + kRow + R"(, "12.08": )" + kRow + "}}}"),
       "policy.json: torch_archs.linux.2.8.12.08: duplicate line 12.8"},
      {"duplicate torch after canonicalisation",
       with_torch_archs(std::string(R"({"linux": {"2.8": {"12.8": )") + kRow + R"(}, "2.08": {"12.8": )" + kRow + "}}}"),
       "policy.json: torch_archs.linux.2.08: duplicate torch minor 2.8"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what, r.text);
    auto p = pol::parse_policy_json(r.text, "policy.json", cuda_rules());
    REQUIRE_FALSE(p);
    CHECK(p.error().is(Errc::invalid_input));
    CHECK_THAT(p.error().message, Catch::Contains(r.says));
  }
}

TEST_CASE("torch_archs: absent is unknown everywhere; keys and lists are read canonically", "[policies][torch_archs]") {
  SECTION("a policy without the section knows no row") {
    auto p = pol::parse_policy_json(kMinimal, "policy.json", cuda_rules());
    REQUIRE(p);
    CHECK(p->torch_arch_table().empty());
    for (const char* platform : {"linux", "linux_aarch64", "windows"}) {
      CAPTURE(platform);
      CHECK_FALSE(p->torch_archs(nv("2.8.0"), nv("12.8"), platform));
    }
  }
  SECTION("'2.08' and '12.08' read as 2.8 and 12.8; the list as the backend spells it") {
    auto p = pol::parse_policy_json(torch_archs_row("windows", "2.08", "12.08", kRow), "policy.json", cuda_rules());
    REQUIRE(p);
    auto row = p->torch_archs(nv("2.8.1"), nv("12.8"), "windows");
    REQUIRE(row);
    CHECK(row->list == "7.5;9.0+PTX");
    CHECK(row->source == "pytorch v2.8.0 build_cuda.sh");
    CHECK(row->date == "2026-12-04");
    REQUIRE(p->torch_arch_table().size() == 1);
    CHECK(p->torch_arch_table().at("windows").at("2.8").count("12.8") == 1);
    // Another platform, line or torch minor is unknown, never borrowed from this row.
    CHECK_FALSE(p->torch_archs(nv("2.8"), nv("12.8"), "linux"));
    CHECK_FALSE(p->torch_archs(nv("2.8"), nv("12.6"), "windows"));
    CHECK_FALSE(p->torch_archs(nv("2.9"), nv("12.8"), "windows"));
  }
}

TEST_CASE("the shipped torch family table covers every torch minor of the arch matrix", "[policies][torch_family]") {
  const auto& policy = wheelfit::test::cuda_policy();
  struct Row {
    const char* torch;
    const char* torchvision;
    const char* torchaudio;
  };
  const std::vector<Row> rows = {
      {"2.11", "0.26", "2.11"}, {"2.12", "0.27", "2.11"}, {"2.13", "0.28", "2.11"}, {"2.14", "0.29", "2.11"}};
  for (const auto& r : rows) {
    CAPTURE(r.torch);
    auto pins = policy.torch_family(nv(r.torch));
    REQUIRE(pins);
    CHECK(pins->torchvision.str() == r.torchvision);
    CHECK(pins->torchaudio.str() == r.torchaudio);
  }
  for (const auto& [platform, by_torch] : policy.torch_arch_table()) {
    for (const auto& [torch, lines] : by_torch) {
      CAPTURE(platform, torch);
      CHECK(policy.torch_family(nv(torch)));
    }
  }
}
