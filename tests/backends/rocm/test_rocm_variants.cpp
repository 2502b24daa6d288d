// The ROCm backend's native variant provider (the `amd` namespace, rocm_variants.hpp): AMD's
// provider's gfx_arch and rocm_version (wheelnext/amd-variant-provider, plugin.py), the facts
// JSON's edge cases, and the descriptor's C function.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "support/variant_answer.hpp"
#include "wheelfit/backends/rocm_backend.hpp"
#include "wheelfit/backends/rocm_variants.hpp"

namespace rocm = wheelfit::backends::rocm;
using wheelfit::test::StringLists;
using wheelfit::test::VariantAnswer;

namespace {

VariantAnswer amd_answer(std::string_view facts) {
  return wheelfit::test::read_variant_answer(rocm::variant_properties_json(facts), "amd");
}

}  // namespace

TEST_CASE("amd variants: gfx_arch then rocm_version, as AMD's provider orders them", "[variants][rocm]") {
  struct Row {
    const char* facts;
    StringLists features;
    StringLists devices;  // "amd :: gfx_arch"
    const char* note;     // a part of a note; "" when none is looked for
  };
  const Row rows[] = {
      {R"({"driver_line": "6.4", "gpus": ["gfx90a"]})", {{"gfx_arch", {"gfx90a"}}, {"rocm_version", {"6.4"}}}, {{"gfx90a", {"gfx90a"}}}, ""},
      // AMD's sorted(set(...)): string order, each processor once; devices per target in the
      // facts' order; target features dropped from the value.
      {R"({"driver_line": "7.0", "gpus": ["gfx90a:xnack-", "gfx1100", "gfx90a:xnack-", "gfx942:sramecc+:xnack-"]})",
       {{"gfx_arch", {"gfx1100", "gfx90a", "gfx942"}}, {"rocm_version", {"7.0"}}},
       {{"gfx90a:xnack-", {"gfx90a"}}, {"gfx1100", {"gfx1100"}}, {"gfx942:sramecc+:xnack-", {"gfx942"}}},
       "gfx_arch names the processor only"},
      // The ROCm line's major.minor alone (a 3-part line is a line of its own in the policy).
      {R"({"driver_line": "6.2.4", "gpus": ["GFX1030"]})", {{"gfx_arch", {"gfx1030"}}, {"rocm_version", {"6.2"}}},
       {{"gfx1030", {"gfx1030"}}}, ""},
      {R"({"driver_line": "7", "gpus": []})", {{"rocm_version", {"7.0"}}}, {}, "no GPU: gfx_arch left out"},
      {R"({"gpus": ["gfx1100"]})", {{"gfx_arch", {"gfx1100"}}}, {{"gfx1100", {"gfx1100"}}},
       "driver_line (the ROCm line) is unknown: rocm_version left out"},
      {R"({"driver_line": "6.4"})", {{"rocm_version", {"6.4"}}}, {}, "gpus are unknown: gfx_arch left out"},
      {R"({"driver_version": "6.10.5"})", {}, {}, "driver_version 6.10.5 (the amdgpu module's) is not the ROCm line"},
      // A processor outside AMD's catalog is still reported (its rocm_agent_enumerator path does).
      {R"({"driver_line": "7.1", "gpus": ["gfx1151"]})", {{"gfx_arch", {"gfx1151"}}, {"rocm_version", {"7.1"}}},
       {{"gfx1151", {"gfx1151"}}}, "gfx1151 is not in AMD's provider's gfx_arch catalog"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.facts);
    const auto a = amd_answer(row.facts);
    REQUIRE(a.error.empty());
    CHECK(a.has_namespace);
    CHECK(a.features == row.features);
    if (row.devices.empty()) {
      CHECK(a.devices.empty());
    } else {
      REQUIRE(a.devices.size() == 1);
      CHECK(a.devices[0].first == "amd :: gfx_arch");
      CHECK(a.devices[0].second == row.devices);
    }
    if (*row.note) CHECK(wheelfit::test::any_contains(a.notes, row.note));
  }
}

TEST_CASE("amd variants refuse malformed facts, naming what is wrong", "[variants][rocm]") {
  const std::vector<wheelfit::test::Refusal> rows = {
      {"nope", {"the facts are not JSON"}},
      {R"("gfx90a")", {"the facts are a string, not a JSON object"}},
      {R"({"gpus": {"0": "gfx90a"}})", {"the facts' \"gpus\" is an object, not an array of device targets"}},
      {R"({"gpus": [null]})", {"item 1 of the facts' \"gpus\" is null, not a device target"}},
      {R"({"driver_line": "6.x"})", {"the facts' driver_line \"6.x\" is not a ROCm version"}},
      {R"({"driver_line": ""})", {"the facts' driver_line \"\" is not a ROCm version"}},
      {R"({"gpus": ["9.0"]})", {"the facts' gpus item \"9.0\" is not a gfx target"}},
      {R"({"gpus": ["gfx9-generic"]})", {"the facts' gpus item \"gfx9-generic\" is a generic processor, not a device's"}},
  };
  wheelfit::test::check_variant_refusals(rocm::variant_properties_json, rows);
}

TEST_CASE("the ROCm descriptor's variant_properties is the amd provider", "[variants][rocm]") {
  const wheelfit_backend_v2* d = rocm::descriptor();
  REQUIRE(wheelfit_backend_has(d, variant_properties));
  REQUIRE(d->variant_properties != nullptr);
  const auto a = wheelfit::test::call_variant_properties(*d, R"({"driver_line": "6.4", "gpus": ["gfx942", "gfx90a"]})", "amd");
  REQUIRE(a.error.empty());
  CHECK(a.features == StringLists{{"gfx_arch", {"gfx90a", "gfx942"}}, {"rocm_version", {"6.4"}}});
  const auto none = wheelfit::test::call_variant_properties(*d, nullptr, "amd");
  CHECK(none.error.empty());
  CHECK(none.has_namespace);
  CHECK(none.features.empty());
  CHECK_THAT(wheelfit::test::call_variant_properties(*d, "[", "amd").error, Catch::Contains("not JSON"));
}
