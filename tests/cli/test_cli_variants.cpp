// Variant wheels (PEP 825) through the CLI: a local variant index of real wheel files (each with
// its *.dist-info/variant.json) and its vpkg-1.0-variants.json; `resolve --json` reports the
// variant and the machine's supported properties (the CUDA plugin's native provider), pylock.toml
// inlines the variant metadata, `explain` judges a variant wheel from its own variant.json, and
// `mirror` publishes the variants file beside the wheels, in the union and the machine's view;
// torch listed from a variant index on a machine with no GPU, and on one no torch variant serves.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <toml++/toml.h>
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

// A project page in `folder` (PEP 503) linking `files` there, each with its sha256.
void cv_write_page(const fs::path& folder, const std::vector<std::string>& files) {
  std::string links;
  for (const auto& file : files) {
    links += "<a href=\"" + file + "#sha256=" + cv_sha256(folder / file) + "\">" + file + "</a><br>\n";
  }
  write_file(folder / "index.html", "<!DOCTYPE html><html><body>\n" + links + "</body></html>\n");
}

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
    std::vector<std::string> files;
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
      files.push_back(file);
    }
    write_file(index / "vpkg" / "vpkg-1.0-variants.json", cv_variants);
    files.push_back("vpkg-1.0-variants.json");
    cv_write_page(index / "vpkg", files);
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

// `lock`'s [packages.variants-json], read back with toml++: cv_variants inlined with its $schema,
// only `label`'s entry (its sm_arch `sm`), and no pointer to the file (PEP 817's url and hashes).
void cv_check_inlined(const fs::path& lock, const std::string& label, const std::string& sm) {
  const auto doc = toml::parse(read_file(lock));
  const auto* inlined = doc["packages"][0]["variants-json"].as_table();
  REQUIRE(inlined != nullptr);
  const auto file = json::parse(cv_variants).as_object();
  CHECK((*inlined)["$schema"].value<std::string>() == std::string(file.at("$schema").as_string()));
  const auto* namespaces = (*inlined)["default-priorities"]["namespace"].as_array();
  REQUIRE(namespaces != nullptr);
  REQUIRE(namespaces->size() == 1);
  CHECK(namespaces->get(0)->value<std::string>() == "nvidia");
  const auto* variants = (*inlined)["variants"].as_table();
  REQUIRE(variants != nullptr);
  CHECK(variants->size() == 1);
  const auto* arch = (*variants)[label]["nvidia"]["sm_arch"].as_array();
  REQUIRE(arch != nullptr);
  REQUIRE(arch->size() == 1);
  CHECK(arch->get(0)->value<std::string>() == sm);
  for (const char* pointer : {"url", "path", "hashes"}) CHECK_FALSE(inlined->contains(pointer));
}

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

  // pylock.toml inlines the variant metadata (PEP 825's [packages.variants-json]; issue 32, item 8c).
  const auto lock = v.dir / "pylock.toml";
  REQUIRE(cv_run(v.args("resolve", {"-o", lock.string()})).code == 0);
  cv_check_inlined(lock, "sm90", "90_real");
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
  // The machine's view links it too, and its pylock.toml inlines it.
  bool in_view = false;
  for (const auto& e : fs::directory_iterator(current / "machines")) {
    in_view = read_file(e.path() / "vpkg" / "index.html").find("vpkg-1.0-variants.json") != std::string::npos;
    cv_check_inlined(e.path() / "pylock.toml", "sm90", "90_real");
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

namespace {

const std::string cv_torch_variants = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
 "default-priorities": {"namespace": ["nvidia"]},
 "variants": {"cuda12.8": {"nvidia": {"sm_arch": ["70_real", "75_real", "80_real", "86_real", "90_real", "100_real", "120_real"],
                                      "cuda_version_lower_bound": ["12.8"]}},
              "cuda13.0": {"nvidia": {"sm_arch": ["75_real", "80_real", "86_real", "90_real", "100_real", "120_real"],
                                      "cuda_version_lower_bound": ["13.0"]}},
              "null": {}, "0": {}}})";

// A variant index serving torch 2.8.0 as `labels` (the wheels' bytes are never read by a resolve),
// a config listing torch, and a profile `machine` (TOML lines).
struct TorchIndex {
  TempDir dir;
  fs::path index = dir / "index";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "machine.toml";
  TorchIndex(const std::vector<std::string>& labels, const std::string& facts) {
    std::vector<std::string> files;
    for (const auto& label : labels) {
      files.push_back("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-" + label + ".whl");
      write_file(index / "torch" / files.back(), "torch " + label);
    }
    write_file(index / "torch" / "torch-2.8.0-variants.json", cv_torch_variants);
    files.push_back("torch-2.8.0-variants.json");
    cv_write_page(index / "torch", files);
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"torch\"]\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\n" + facts);
  }
  [[nodiscard]] CliRun resolve(std::vector<std::string> more) const {
    std::vector<std::string> args{"resolve", config.string(), "--index", index.string(), "--machine", machine.string()};
    args.insert(args.end(), more.begin(), more.end());
    return run_program("env -u WHEELFIT_OVERRIDE_PYTHON -u WHEELFIT_OVERRIDE_GPUS -u WHEELFIT_OVERRIDE_DRIVER_LINE " +
                           clean_network_env(), built_wheelfit(), args);
  }
};

}  // namespace

TEST_CASE("wheelfit resolve: torch from a variant index on a machine with no GPU is its CPU-only build", "[cli][variants]") {
  // The null variant, or a propertyless label as an older index names its CPU-only build (read as
  // torch "2.8.0+0" that "names no CUDA line" before issue 32).
  for (const std::string label : {"null", "0"}) {
    CAPTURE(label);
    TorchIndex t({"cuda12.8", "cuda13.0", label}, "gpus = []\n");  // no driver either
    const auto r = t.resolve({"--json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto o = json::parse(r.out).as_object();
    const auto& pkg = o.at("packages").as_array().at(0).as_object();
    CHECK(pkg.at("filename").as_string() == "torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-" + label + ".whl");
    CHECK(pkg.at("variant").at("label").as_string() == label);
    CHECK(pkg.at("variant").at("note").as_string() == "a CPU-only build: no properties, so no CUDA line");
    CHECK(o.at("pins").as_array().empty());
    const auto text = t.resolve({});
    CHECK(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("    variant: " + label + "; a CPU-only build: no properties, so no CUDA line\n"));
    CHECK_THAT(text.out, Catch::Contains("chosen: torch from the index is the CPU-only build of torch 2.8.0 (variant " + label));
    // Its lock inlines the label's (empty) entry.
    const auto lock = t.dir / "pylock.toml";
    REQUIRE(t.resolve({"-o", lock.string()}).code == 0);
    const auto doc = toml::parse(read_file(lock));
    const auto* variants = doc["packages"][0]["variants-json"]["variants"].as_table();
    REQUIRE(variants != nullptr);
    REQUIRE(variants->size() == 1);
    REQUIRE(variants->get_as<toml::table>(label) != nullptr);
    CHECK(variants->get_as<toml::table>(label)->empty());
  }
}

TEST_CASE("wheelfit resolve: no torch variant runs here, each candidate with its failing nvidia :: sm_arch", "[cli][variants]") {
  // A GTX 1080 (sm 6.1), CUDA 12.8 driver, no torch: the index's torch is cuda12.8 and cuda13.0 only.
  TorchIndex t({"cuda12.8", "cuda13.0"}, "driver_version = \"570.86\"\ndriver_line = \"12.8\"\ngpus = [\"6.1\"]\n");
  const std::string machine = "not supported: the cuda backend's provider supports 61_real, 60_real, 60_virtual (GPUs sm 6.1)";
  const auto r = t.resolve({"--json"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const auto o = json::parse(r.out).as_object();
  const auto& unresolved = o.at("unresolved").as_array();
  REQUIRE(unresolved.size() == 1);
  const auto& torch = unresolved.at(0).as_object();
  CHECK(torch.at("name").as_string() == "torch");
  CHECK(torch.at("status").as_string() == "no_fit");
  const auto& cands = torch.at("candidates").as_array();
  REQUIRE(cands.size() == 2);
  for (const auto& c : cands) {
    CAPTURE(c.at("filename").as_string());
    bool named = false;
    for (const auto& f : c.at("failed").as_array()) {
      named = named || (f.at("demand").as_string() == "variant" && f.at("wheel").as_string().starts_with("nvidia :: sm_arch :: ") &&
                        f.at("machine").as_string() == machine);
    }
    CHECK(named);
  }
  CHECK(o.at("tiers").at(0).at("status").as_string() == "failed");
  const auto text = t.resolve({});
  CHECK(text.code == 1);
  CHECK_THAT(text.out, Catch::Contains("why not tier 1 (bootstrap):\n  torch (cp312, env proj): no candidate fits (2 candidates"));
  CHECK_THAT(text.out, Catch::Contains("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl\n      variant: wheel nvidia :: sm_arch :: "
                                       "70_real, 75_real, 80_real, 86_real, 90_real, 100_real, 120_real; machine " + machine));
}
