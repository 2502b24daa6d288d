// The resolver on variant wheels (PEP 825): a mixed page of variant, null and non-variant
// wheels; the highest version with a compatible wheel; variant order before tags; an unreadable
// or unknown-format variants file (null still compatible); the failed property named per
// candidate; abi_dependency :: torch from the combo's torch; torch listed from a variant index on
// a machine no CUDA variant serves (issue 32, item 8: the CPU-only build, or every candidate's
// failing property).
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;

namespace {

const std::string vs_tags = "cp312-cp312-manylinux_2_28_x86_64";
std::string vs_wheel(const std::string& version, const std::string& label = "") {
  return "vpkg-" + version + "-" + vs_tags + (label.empty() ? "" : "-" + label) + ".whl";
}

const std::string vs_variants_1_0 = R"({
  "$schema": "https://packaging.python.org/en/latest/_static/peps/825/v0.1.1.json",
  "default-priorities": {"namespace": ["nvidia", "abi_dependency"]},
  "variants": {
    "sm90": {"nvidia": {"sm_arch": ["90_real"], "cuda_version_lower_bound": ["12.8"]}},
    "sm80": {"nvidia": {"sm_arch": ["80_virtual"]}},
    "sm100": {"nvidia": {"sm_arch": ["100_real", "120_real"]}},
    "t28": {"abi_dependency": {"torch": ["2.8"]}},
    "t29": {"abi_dependency": {"torch": ["2.9"]}},
    "null": {}
  }
})";

// The reference H100 machine, told what NVIDIA's provider would say of it (so that the test does
// not depend on the CUDA plugin's own provider).
machine::Machine vs_machine() {
  return test::h100_with({{"variant_properties",
                           R"({"nvidia": {"sm_arch": ["90_real", "90_virtual", "80_virtual"],
                                          "cuda_version_lower_bound": ["13.0", "12.9", "12.8", "12.0"]}})"}});
}

// A snapshot of `project`'s page listing `files`, with the `version` variants file `variants`
// (parsed, or its parse error as the file's problem).
index::IndexSnapshot vs_snapshot(const std::vector<std::string>& files, const std::string& variants = vs_variants_1_0,
                                 const std::string& version = "1.0", const std::string& project = "vpkg") {
  std::vector<test::Anchor> anchors;
  for (const auto& f : files) anchors.push_back({f});
  anchors.push_back({project + "-" + version + "-variants.json"});
  auto snap = test::snapshot({{project, anchors}});
  auto& page = snap.projects.at(project);
  index::VariantsDoc doc;
  doc.filename = project + "-" + version + "-variants.json";
  doc.url = snap.base_url + "files/" + doc.filename;
  doc.version = *model::Version::parse(version);
  if (auto parsed = model::parse_variants_json(variants, doc.url)) doc.file = std::make_shared<const model::VariantsFile>(std::move(*parsed));
  else doc.problem = parsed.error().message;
  page.variants.push_back(std::move(doc));
  return snap;
}

resolve::Resolution vs_run(const index::IndexSnapshot& snap, const machine::Machine& m = vs_machine()) {
  const auto ws = test::workspace({"vpkg"});
  auto r = resolve::resolve({ws, m, test::cuda_policy(), snap, "cuda"});
  INFO((r ? "" : r.error().message));
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::string vs_pick(const resolve::Resolution& r) {
  if (r.picks.empty()) return "";
  return r.picks.front().filename;
}

}  // namespace

TEST_CASE("variant selection: the best compatible variant, then null, then the non-variant wheel", "[resolve][variants]") {
  struct Row {
    const char* what;
    std::vector<std::string> files;
    std::string pick;
  };
  const Row rows[] = {
      {"a compatible variant before null and the non-variant wheel",
       {vs_wheel("1.0"), vs_wheel("1.0", "null"), vs_wheel("1.0", "sm100"), vs_wheel("1.0", "sm90")}, vs_wheel("1.0", "sm90")},
      {"sm_arch 90_real ranks before 80_virtual (PTX), whatever the file order",
       {vs_wheel("1.0", "sm80"), vs_wheel("1.0", "sm90")}, vs_wheel("1.0", "sm90")},
      {"no compatible variant: null", {vs_wheel("1.0"), vs_wheel("1.0", "null"), vs_wheel("1.0", "sm100")}, vs_wheel("1.0", "null")},
      {"no variant, no null: the non-variant wheel", {vs_wheel("1.0"), vs_wheel("1.0", "sm100")}, vs_wheel("1.0")},
      {"the highest version with a compatible wheel wins", {vs_wheel("0.9"), vs_wheel("1.0", "sm100")}, vs_wheel("0.9")},
      {"abi_dependency :: torch: the machine's torch 2.8", {vs_wheel("1.0", "t29"), vs_wheel("1.0", "t28")}, vs_wheel("1.0", "t28")},
      {"a label the file does not list is not compatible", {vs_wheel("1.0", "sm91"), vs_wheel("0.9")}, vs_wheel("0.9")},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto r = vs_run(vs_snapshot(row.files));
    CHECK(vs_pick(r) == row.pick);
  }
}

TEST_CASE("variant picks carry their label and properties; the machine's supported values are reported", "[resolve][variants]") {
  const auto r = vs_run(vs_snapshot({vs_wheel("1.0", "sm90")}));
  REQUIRE(r.picks.size() == 1);
  const auto& p = r.picks.front();
  CHECK(p.variant_label == "sm90");
  CHECK(p.variant_properties ==
        std::vector<std::string>{"nvidia :: sm_arch :: 90_real", "nvidia :: cuda_version_lower_bound :: 12.8"});
  CHECK(p.variants_url == "https://example.test/simple/files/vpkg-1.0-variants.json");
  const auto* sm = model::find_values(r.variants.properties, "nvidia", "sm_arch");
  REQUIRE(sm != nullptr);
  CHECK(sm->front() == "90_real");
  CHECK(*model::find_values(r.variants.properties, "abi_dependency", "torch") == std::vector<std::string>{"2", "2.8", "2.8.0"});
}

TEST_CASE("an unresolved variant package names the property that failed, per candidate", "[resolve][variants]") {
  const auto r = vs_run(vs_snapshot({vs_wheel("1.0", "sm100")}));
  REQUIRE_FALSE(r.ok());
  const auto* unresolved = r.unresolved_tier();
  REQUIRE(unresolved != nullptr);
  REQUIRE(unresolved->size() == 1);
  const auto& cands = unresolved->front().candidates;
  REQUIRE(cands.size() == 1);
  REQUIRE(cands[0].failed.size() == 1);
  CHECK(cands[0].failed[0].demand == resolve::Demand::variant);
  CHECK(cands[0].failed[0].wheel == "nvidia :: sm_arch :: 100_real, 120_real");
  CHECK(cands[0].failed[0].machine.find("supports 90_real, 90_virtual, 80_virtual") != std::string::npos);
}

TEST_CASE("an unreadable or unknown-format variants file: variant wheels incompatible, null still fits", "[resolve][variants]") {
  const std::string unknown = R"({"$schema": "https://x/peps/825/v2.0.0.json", "default-priorities": {"namespace": []}, "variants": {}})";
  const auto r = vs_run(vs_snapshot({vs_wheel("1.0", "sm90"), vs_wheel("1.0", "null")}, unknown));
  CHECK(vs_pick(r) == vs_wheel("1.0", "null"));

  // Without null: unresolved, the reason naming the file's version.
  const auto r2 = vs_run(vs_snapshot({vs_wheel("1.0", "sm90")}, unknown));
  REQUIRE_FALSE(r2.ok());
  const auto& failed = r2.unresolved_tier()->front().candidates.at(0).failed;
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].machine.find("format version 2.0.0 is not one this wheelfit reads") != std::string::npos);

  // No variants file linked for the version at all.
  auto snap = test::snapshot({{"vpkg", {{vs_wheel("1.0", "sm90")}, {vs_wheel("1.0", "null")}}}});
  const auto r3 = vs_run(snap);
  CHECK(vs_pick(r3) == vs_wheel("1.0", "null"));
}

TEST_CASE("label-based wheels resolve as before beside variant support", "[resolve][variants]") {
  // A farm page (local labels, no variants file): the variant demand is never judged.
  const auto farm = "pkg-1.0+cu128torch2.8-" + vs_tags + ".manylinux_2_24_x86_64.whl";
  auto snap = test::snapshot({{"pkg", {{farm}}}});
  const auto ws = test::workspace({"pkg"});
  auto r = resolve::resolve({ws, test::h100(), test::cuda_policy(), snap, "cuda"});
  REQUIRE(r.has_value());
  REQUIRE(r->ok());
  CHECK_FALSE(r->picks.front().variant_label.has_value());
}

TEST_CASE("a package version's variant order is built once, not per variant wheel", "[resolve][variants]") {
  // 60 variant wheels of one version (each a label of the file) and null: one order for the file
  // under the tier's support, however many wheels are judged.
  std::string labels;
  std::vector<std::string> files{vs_wheel("1.0", "null")};
  for (int i = 0; i < 60; ++i) {
    const std::string label = "v" + std::to_string(i);
    labels += "\"" + label + "\": {\"nvidia\": {\"sm_arch\": [\"" + (i == 42 ? "90_real" : "100_real") + "\"]}}, ";
    files.push_back(vs_wheel("1.0", label));
  }
  const std::string variants = R"({"$schema": "https://x/peps/825/v0.1.1.json", "default-priorities": {"namespace": ["nvidia"]},
    "variants": {)" + labels + R"("null": {}}})";
  const auto snap = vs_snapshot(files, variants);
  const std::size_t before = model::VariantOrder::built();
  const auto r = vs_run(snap);
  const std::size_t built = model::VariantOrder::built() - before;
  CHECK(vs_pick(r) == vs_wheel("1.0", "v42"));
  CHECK(built == 1);
}

TEST_CASE("an over-cap variants file: its variant wheels incompatible, naming the cap; null still fits", "[resolve][variants]") {
  std::string labels;
  for (std::size_t i = 0; i <= model::kMaxVariantLabels; ++i) labels += "\"l" + std::to_string(i) + "\": {}, ";
  const std::string variants = R"({"$schema": "https://x/peps/825/v0.1.1.json", "default-priorities": {"namespace": []},
    "variants": {)" + labels + R"("null": {}}})";
  CHECK(vs_pick(vs_run(vs_snapshot({vs_wheel("1.0", "l1"), vs_wheel("1.0", "null")}, variants))) == vs_wheel("1.0", "null"));
  const auto r = vs_run(vs_snapshot({vs_wheel("1.0", "l1")}, variants));
  REQUIRE_FALSE(r.ok());
  const auto& failed = r.unresolved_tier()->front().candidates.at(0).failed;
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].demand == resolve::Demand::variant);
  CHECK_THAT(failed[0].machine, Catch::Contains("vpkg-1.0-variants.json: variants: 1026 labels, more than the 1024 a variants "
                                                "file may list"));
}

namespace {

// PyTorch's labels in PEP 825's form: two CUDA builds (neither for sm 6.x), the null variant and,
// as an older index names its CPU-only build, a propertyless label "0".
const std::string vs_torch_variants = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
  "default-priorities": {"namespace": ["nvidia"]},
  "variants": {
    "cuda12.8": {"nvidia": {"sm_arch": ["70_real", "75_real", "80_real", "86_real", "90_real", "100_real", "120_real"],
                            "cuda_version_lower_bound": ["12.8"]}},
    "cuda13.0": {"nvidia": {"sm_arch": ["75_real", "80_real", "86_real", "90_real", "100_real", "120_real"],
                            "cuda_version_lower_bound": ["13.0"]}},
    "null": {}, "0": {}}})";

std::string vs_torch_wheel(const std::string& label) { return "torch-2.8.0-" + vs_tags + "-" + label + ".whl"; }

resolve::Resolution vs_torch_run(const std::vector<std::string>& labels, const machine::Machine& m) {
  std::vector<std::string> files;
  for (const auto& l : labels) files.push_back(vs_torch_wheel(l));
  const auto ws = test::workspace({"torch"});
  auto r = resolve::resolve({ws, m, test::cuda_policy(), vs_snapshot(files, vs_torch_variants, "2.8.0", "torch"), "cuda"});
  INFO((r ? "" : r.error().message));
  REQUIRE(r.has_value());
  return std::move(*r);
}

// A machine with no GPU and no NVIDIA driver, no torch installed.
machine::Machine vs_no_gpu() {
  auto m = test::h100_with({{"torch", ""}, {"driver_version", ""}, {"driver_line", ""}});
  m.gpus = std::vector<std::string>{};
  return m;
}

bool vs_pinned(const resolve::Resolution& r, const std::string& name) {
  return std::any_of(r.pins.begin(), r.pins.end(), [&](const resolve::Pin& p) { return p.name == name; });
}

}  // namespace

TEST_CASE("torch from a variant index on a machine with no GPU: the CPU-only build, resolved", "[resolve][variants]") {
  struct Row {
    const char* what;
    std::vector<std::string> labels;
    bool gpu;  // the reference H100 (CUDA 13.0 driver) instead of no GPU
    std::string pick;
    bool cpu_only;
  };
  const Row rows[] = {
      {"no GPU: the null variant", {"cuda12.8", "cuda13.0", "null"}, false, "null", true},
      {"no GPU: a propertyless label, as an older index names its CPU build", {"cuda12.8", "0"}, false, "0", true},
      {"control: an H100 takes the newest CUDA variant", {"cuda12.8", "cuda13.0", "null"}, true, "cuda13.0", false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto r = vs_torch_run(row.labels, row.gpu ? test::h100_with({{"torch", ""}}) : vs_no_gpu());
    REQUIRE(r.ok());
    REQUIRE(r.picks.size() == 1);
    const auto& p = r.picks[0];
    CHECK(p.filename == vs_torch_wheel(row.pick));
    CHECK(p.variant_label == row.pick);
    // tier 1's combo: torch 2.8 on CUDA 12.8 (PyPI's line for a build without one), or the variant's.
    CHECK(r.combo->torch.str() == "2.8");
    CHECK(r.combo->line.str() == (row.cpu_only ? "12.8" : "13.0"));
    if (row.cpu_only) {
      CHECK(p.variant_note == "a CPU-only build: no properties, so no CUDA line");
      CHECK_THAT(r.tiers.at(0).chosen, Catch::Contains("the CPU-only build of torch 2.8.0 (variant " + row.pick + ": no properties"));
      // The CUDA line's torchvision and torchaudio are builds for a CUDA torch: not pinned, said.
      CHECK(r.pins.empty());
      CHECK(std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
        return w.starts_with("not pinned: torchvision ==0.23.* from https://download.pytorch.org/whl/cu128") &&
               w.find("install CPU builds of them") != std::string::npos;
      }));
    } else {
      CHECK(p.variant_note.empty());
      CHECK(vs_pinned(r, "torchvision"));
      CHECK_FALSE(vs_pinned(r, "torch"));
    }
  }
}

TEST_CASE("torch from a variant index no variant of which runs here: its candidates, each with the failing property",
          "[resolve][variants]") {
  // A GTX 1080 (sm 6.1) with a CUDA 12.8 driver, no torch installed; the index's variants are
  // cuda12.8 and cuda13.0 only.
  const auto m = test::h100_with({{"torch", ""}, {"gpus", "6.1"}, {"driver_line", "12.8"}});
  const auto r = vs_torch_run({"cuda12.8", "cuda13.0"}, m);
  REQUIRE_FALSE(r.ok());
  const auto& t1 = r.tiers.at(0);
  CHECK(t1.tier == "bootstrap");
  CHECK(t1.status == resolve::TierOutcome::Status::failed);
  CHECK_THAT(t1.reason, Catch::Contains("no torch wheel the index serves runs on this machine"));
  const auto* unresolved = r.unresolved_tier();
  REQUIRE(unresolved != nullptr);
  REQUIRE(unresolved->size() == 1);
  const auto& torch = unresolved->front();
  CHECK(torch.name == "torch");
  REQUIRE(torch.candidates.size() == 2);
  for (const auto& c : torch.candidates) {
    CAPTURE(c.filename);
    const bool named = std::any_of(c.failed.begin(), c.failed.end(), [](const resolve::Failure& f) {
      return f.demand == resolve::Demand::variant && f.wheel.starts_with("nvidia :: sm_arch :: ") &&
             f.machine == "not supported: the cuda backend's provider supports 61_real, 60_real, 60_virtual (GPUs sm 6.1)";
    });
    CHECK(named);
  }
}
