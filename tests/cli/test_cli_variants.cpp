// Variant wheels (PEP 825) through the CLI: a local variant index of real wheel files (each with
// its *.dist-info/variant.json) and its vpkg-1.0-variants.json; `resolve --json` reports the
// variant and the machine's supported properties (the CUDA plugin's native provider), pylock.toml
// locks the variants file, `explain` judges a variant wheel from its own variant.json, and
// `mirror` publishes the variants file beside the wheels, in the union and the machine's view.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <map>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit::test;

namespace {

const std::string cv_variants = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
 "default-priorities": {"namespace": ["nvidia"]},
 "variants": {"sm90": {"nvidia": {"sm_arch": ["90_real"]}}, "sm100": {"nvidia": {"sm_arch": ["100_real"]}},
              "t28": {"abi_dependency": {"torch": ["2.8"]}}, "null": {}}})";

// Each label's properties as cv_variants gives them: what its wheel's own variant.json says
// unless a test gives it others.
const std::map<std::string, std::string> cv_properties{{"sm90", R"({"nvidia": {"sm_arch": ["90_real"]}})"},
                                                       {"sm100", R"({"nvidia": {"sm_arch": ["100_real"]}})"},
                                                       {"t28", R"({"abi_dependency": {"torch": ["2.8"]}})"},
                                                       {"null", "{}"}};

std::string cv_sha256(const fs::path& p) { return run_program("", "sha256sum", {p.string()}).out.substr(0, 64); }

// A variant index: vpkg 1.0 as sm90, sm100 and null variants (or `labels`) and the variants file;
// an H100 profile. `own`: a label's properties in its wheel's variant.json, where they are not
// the index's.
struct VariantIndex {
  TempDir dir;
  fs::path index = dir / "index";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "h100.toml";
  explicit VariantIndex(const std::vector<std::string>& labels = {"sm90", "sm100", "null"},
                        const std::map<std::string, std::string>& own = {}) {
    std::string links;
    for (const std::string& label : labels) {
      const std::string file = "vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-" + label + ".whl";
      // Its own variant.json: the one label's entry.
      const auto given = own.find(label);
      const std::string variant_json = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["nvidia"]}, "variants": {")" + label + R"(": )" +
                                       (given != own.end() ? given->second : cv_properties.at(label)) + "}}";
      write_file(index / "vpkg" / file, build_zip({{"vpkg/__init__.py", "", false},
                                                      {"vpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: vpkg\nVersion: 1.0\n"},
                                                      {"vpkg-1.0.dist-info/variant.json", variant_json}}));
      links += "<a href=\"" + file + "#sha256=" + cv_sha256(index / "vpkg" / file) + "\">" + file + "</a><br>\n";
    }
    write_file(index / "vpkg" / "vpkg-1.0-variants.json", cv_variants);
    links += "<a href=\"vpkg-1.0-variants.json#sha256=" + cv_sha256(index / "vpkg" / "vpkg-1.0-variants.json") +
             "\">vpkg-1.0-variants.json</a><br>\n";
    write_file(index / "vpkg" / "index.html", "<!DOCTYPE html><html><body>\n" + links + "</body></html>\n");
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"vpkg\"]\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "driver_version = \"580.65.06\"\ndriver_line = \"13.0\"\ngpus = [\"9.0\"]\n");
  }
  [[nodiscard]] std::vector<std::string> args(const char* command, std::vector<std::string> more) const {
    std::vector<std::string> out{command, config.string(), "--index", index.string(), "--machine", machine.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
};

CliRun cv_run(const std::vector<std::string>& args) {
  return run_program("env -u WHEELFIT_OVERRIDE_PYTHON -u WHEELFIT_OVERRIDE_GPUS " + clean_network_env(), built_wheelfit(), args);
}

}  // namespace

TEST_CASE("wheelfit resolve picks the machine's variant and reports it", "[cli][variants]") {
  VariantIndex v;
  const auto r = cv_run(v.args("resolve", {"--json"}));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto o = json::parse(r.out).as_object();
  const auto& pkg = o.at("packages").as_array().at(0).as_object();
  CHECK(pkg.at("filename").as_string() == "vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-sm90.whl");
  CHECK(pkg.at("variant").at("label").as_string() == "sm90");
  CHECK(pkg.at("variant").at("properties").as_array().at(0).as_string() == "nvidia :: sm_arch :: 90_real");
  // The CUDA plugin's native provider, from the profile's driver line and GPU.
  const auto& props = o.at("machine").at("variant_properties").as_object();
  CHECK(props.at("nvidia").at("sm_arch").as_array().at(0).as_string() == "90_real");
  CHECK(props.at("nvidia").at("cuda_version_lower_bound").as_array().at(0).as_string() == "13.0");
  CHECK(props.at("abi_dependency").at("torch").as_array().back().as_string() == "2.8.0");

  // The human report names the variant.
  const auto text = cv_run(v.args("resolve", {}));
  CHECK_THAT(text.out, Catch::Contains("variant: sm90 (nvidia :: sm_arch :: 90_real)"));

  // pylock.toml locks the variants file (PEP 825's [packages.variants-json]).
  const auto lock = v.dir / "pylock.toml";
  REQUIRE(cv_run(v.args("resolve", {"-o", lock.string()})).code == 0);
  const std::string locked = read_file(lock);
  CHECK_THAT(locked, Catch::Contains("[packages.variants-json]"));
  CHECK_THAT(locked, Catch::Contains(cv_sha256(v.index / "vpkg" / "vpkg-1.0-variants.json")));
}

TEST_CASE("wheelfit resolve names the variant property that failed", "[cli][variants]") {
  // An A100-class GPU and no null variant: sm 8.0 runs neither sm90 nor sm100.
  VariantIndex v({"sm90", "sm100"});
  const auto r = run_program("WHEELFIT_OVERRIDE_GPUS=8.0 " + clean_network_env(), built_wheelfit(), v.args("resolve", {"--json"}));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const auto o = json::parse(r.out).as_object();
  bool named = false;
  for (const auto& p : o.at("unresolved").as_array()) {
    for (const auto& c : p.at("candidates").as_array()) {
      for (const auto& f : c.at("failed").as_array()) {
        if (f.at("demand").as_string() == "variant" && f.at("wheel").as_string() == "nvidia :: sm_arch :: 100_real") {
          named = true;
          CHECK(f.at("machine").as_string() ==
                "not supported: the cuda backend's provider supports 80_real, 80_virtual (GPUs sm 8.0)");
        }
      }
    }
  }
  CHECK(named);
}

TEST_CASE("wheelfit explain judges a variant wheel by its own variant.json", "[cli][variants]") {
  VariantIndex v;
  for (const auto& [label, fits] : {std::pair{"sm90", true}, std::pair{"sm100", false}}) {
    CAPTURE(label);
    const auto whl = v.index / "vpkg" / ("vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-" + std::string(label) + ".whl");
    const auto r = cv_run({"explain", whl.string(), "--machine", v.machine.string(), "--json"});
    INFO(r.out << r.err);
    const auto o = json::parse(r.out).as_object();
    CHECK(o.at("fits").as_bool() == fits);
    const auto& demands = o.at("demands").as_array();
    REQUIRE(demands.size() == 8);
    const auto& d = demands.back().as_object();
    CHECK(d.at("demand").as_string() == "variant");
    CHECK(d.at("verdict").as_string() == (fits ? "ok" : "fails"));
  }
}

TEST_CASE("wheelfit mirror publishes the variants file beside the wheels", "[cli][variants][mirror]") {
  VariantIndex v;
  TempDir out;
  const auto r = cv_run(v.args("mirror", {"--out", out.path().string()}));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const fs::path current = out.path() / "current";
  const fs::path published = current / "files" / "vpkg-1.0-variants.json";
  REQUIRE(fs::exists(published));
  CHECK(read_file(published) == cv_variants);
  const std::string page = read_file(current / "vpkg" / "index.html");
  CHECK_THAT(page, Catch::Contains("vpkg-1.0-variants.json#sha256=" + cv_sha256(published)));
  CHECK_THAT(page, Catch::Contains("vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-sm90.whl"));
  // The machine's view links it too, and its pylock.toml locks it.
  bool in_view = false;
  for (const auto& e : fs::directory_iterator(current / "machines")) {
    in_view = read_file(e.path() / "vpkg" / "index.html").find("vpkg-1.0-variants.json") != std::string::npos;
    CHECK_THAT(read_file(e.path() / "pylock.toml"), Catch::Contains("[packages.variants-json]"));
  }
  CHECK(in_view);
  // Resolving against the mirror picks the same variant.
  const auto again = cv_run({"resolve", v.config.string(), "--index", current.string(), "--machine", v.machine.string(), "--json"});
  INFO(again.out << again.err);
  REQUIRE(again.code == 0);
  CHECK(json::parse(again.out).at("packages").at(0).at("variant").at("label").as_string() == "sm90");
}

TEST_CASE("wheelfit resolve --inspect judges a variant wheel by its own variant.json, as explain does", "[cli][variants][inspect]") {
  // The sm90 wheel's own variant.json says sm_arch 100_real (the index's file: 90_real); t28 needs
  // torch 2.8, the machine's.
  VariantIndex v({"sm90", "t28", "null"}, {{"sm90", R"({"nvidia": {"sm_arch": ["100_real"]}})"}});
  const auto sm90 = v.index / "vpkg" / "vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-sm90.whl";
  const auto pick = [](const CliRun& r) {
    return std::string(json::parse(r.out).at("packages").at(0).at("filename").as_string());
  };
  // By the index's file: sm90 (nvidia ranks before abi_dependency).
  const auto plain = cv_run(v.args("resolve", {"--json"}));
  INFO(plain.out << plain.err);
  REQUIRE(plain.code == 0);
  CHECK(pick(plain) == sm90.filename().string());
  // explain rejects sm90 by its own variant.json ...
  const auto explained = cv_run({"explain", sm90.string(), "--machine", v.machine.string(), "--json"});
  INFO(explained.out << explained.err);
  CHECK_FALSE(json::parse(explained.out).at("fits").as_bool());
  // ... and so does resolve --inspect: the next variant, t28, judged against the same torch.
  const auto inspected = cv_run(v.args("resolve", {"--json", "--inspect"}));
  INFO(inspected.out << inspected.err);
  REQUIRE(inspected.code == 0);
  CHECK(pick(inspected) == "vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-t28.whl");
  CHECK_THAT(inspected.err, Catch::Contains("its *.dist-info/variant.json gives variant sm90 the properties nvidia :: sm_arch :: "
                                            "100_real, the index's variants file nvidia :: sm_arch :: 90_real"));

  // Without another variant: unresolved, the variant demand named with where it was read.
  VariantIndex only({"sm90"}, {{"sm90", R"({"nvidia": {"sm_arch": ["100_real"]}})"}});
  const auto none = cv_run(only.args("resolve", {"--json", "--inspect"}));
  INFO(none.out << none.err);
  CHECK(none.code == 1);
  CHECK_THAT(none.out, Catch::Contains("read from its *.dist-info/variant.json"));
}
