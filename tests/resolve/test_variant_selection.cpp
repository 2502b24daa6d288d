// The resolver on variant wheels (PEP 825): a mixed page of variant, null and non-variant
// wheels; the highest version with a compatible wheel; variant order before tags; an unreadable
// or unknown-format variants file (null still compatible); the failed property named per
// candidate; abi_dependency :: torch from the combo's torch.
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

// A snapshot of vpkg's page listing `files`, with the 1.0 variants file `variants` (unless empty)
// read as `problem` says (empty: read and parsed).
index::IndexSnapshot vs_snapshot(const std::vector<std::string>& files, const std::string& variants = vs_variants_1_0,
                                 const std::string& version = "1.0") {
  std::vector<test::Anchor> anchors;
  for (const auto& f : files) anchors.push_back({f});
  anchors.push_back({"vpkg-" + version + "-variants.json"});
  auto snap = test::snapshot({{"vpkg", anchors}});
  auto& page = snap.projects.at("vpkg");
  index::VariantsDoc doc;
  doc.filename = "vpkg-" + version + "-variants.json";
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
