// The CUDA backend's native variant provider (the `nvidia` namespace, cuda_variants.hpp): NVIDIA's
// provider's value lists, checked against replay cases of wheelnext/nvidia-variant-provider2
// (tests/data/variants/nvidia-provider2-replay.json, its source in tests/data/variants/README.md),
// the facts JSON's edge cases, and the descriptor's C function.

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "support/variant_answer.hpp"
#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/backends/cuda_variants.hpp"

namespace cuda = wheelfit::backends::cuda;
using wheelfit::model::NumericVersion;
using wheelfit::test::StringLists;
using wheelfit::test::VariantAnswer;

namespace {

VariantAnswer nvidia_answer(std::string_view facts) {
  return wheelfit::test::read_variant_answer(cuda::variant_properties_json(facts), "nvidia");
}

std::vector<std::string> feature_names(const VariantAnswer& a) {
  std::vector<std::string> out;
  for (const auto& f : a.features) out.push_back(f.first);
  return out;
}

const std::vector<std::string> kSm90 = {"90_real", "90_virtual"};
const std::vector<std::string> kSm86 = {"86_real", "85_real", "84_real", "83_real", "82_real",
                                        "81_real", "80_real", "80_virtual"};

/// One replay case as the facts wheelfit's detection gives: NVML's CUDA driver version decoded
/// as the provider does (divided by 1000; the remainder divided by 10), or its override.
std::string replay_facts(const boost::json::object& c) {
  boost::json::object facts;
  const auto& env = c.at("environment").as_object();
  if (const auto* forced = env.if_contains("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION")) {
    facts["driver_line"] = *forced;
  } else if (const auto& v = c.at("driver_v2"); !v.is_null()) {
    const auto n = v.to_number<std::int64_t>();
    facts["driver_line"] = std::to_string(n / 1000) + "." + std::to_string(n % 1000 / 10);
  }
  boost::json::array gpus;
  if (const auto* forced = env.if_contains("NV_VARIANT_PROVIDER_FORCE_SM_ARCH")) {
    gpus.emplace_back(*forced);
  } else {
    for (const auto& cap : c.at("capabilities").as_array()) {
      gpus.emplace_back(std::to_string(cap.as_array()[0].as_int64()) + "." + std::to_string(cap.as_array()[1].as_int64()));
    }
  }
  facts["gpus"] = std::move(gpus);
  return boost::json::serialize(facts);
}

}  // namespace

TEST_CASE("nvidia variants match nvidia-variant-provider2's replay cases", "[variants][cuda]") {
  const auto doc = boost::json::parse(wheelfit::test::read_file(wheelfit::test::source_dir() /
                                                                "tests/data/variants/nvidia-provider2-replay.json"));
  const auto& cases = doc.at("cases").as_array();
  REQUIRE(cases.size() >= 6);
  for (const auto& item : cases) {
    const auto& c = item.as_object();
    const std::string facts = replay_facts(c);
    CAPTURE(c.at("id").as_string().c_str(), facts);
    const auto a = nvidia_answer(facts);
    REQUIRE(a.error.empty());
    StringLists expected;
    for (const auto& config : c.at("supported_configs").as_array()) {
      expected.emplace_back(std::string(config.at("name").as_string()), wheelfit::test::json_strings(config.at("values")));
    }
    CHECK(a.features == expected);
  }
}

TEST_CASE("nvidia CUDA bounds follow NVIDIA's range 11.0 to 15.20", "[variants][cuda]") {
  const auto lower = cuda::cuda_lower_bound_values(NumericVersion({12, 0}));
  CHECK(std::vector<std::string>(lower.begin(), lower.begin() + 4) == std::vector<std::string>{"12.0", "12", "11.20", "11.19"});
  CHECK(lower.back() == "11");
  CHECK(lower.size() == 2 + 22);
  const auto upper = cuda::cuda_upper_bound_values(NumericVersion({12, 0}));
  CHECK(upper.front() == "15.20");
  CHECK(std::vector<std::string>(upper.end() - 3, upper.end()) == std::vector<std::string>{"12.3", "12.2", "12.1"});
  CHECK(upper.size() == 3 * 22 + 20);
  CHECK(cuda::cuda_lower_bound_values(NumericVersion({11, 0})) == std::vector<std::string>{"11.0", "11"});
  CHECK(cuda::cuda_upper_bound_values(NumericVersion({15, 20})).empty());
  // The parts beyond major.minor are not looked at (NVIDIA's packaging Version's major, minor).
  CHECK(cuda::cuda_lower_bound_values(NumericVersion({12, 8, 1})) == cuda::cuda_lower_bound_values(NumericVersion({12, 8})));

  struct Row {
    const char* line;
    std::vector<std::string> features;
    const char* note;  // a part of a note; "" when none is looked for
  };
  const Row rows[] = {
      {"12.8", {"cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"}, ""},
      {"11.0", {"cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"}, ""},
      {"15.20", {"cuda_version_lower_bound", "sm_arch"}, ""},
      {"10.2", {}, "driver_line 10.2 is outside NVIDIA's provider's range (11.0 to 15.20)"},
      {"15.21", {}, "outside NVIDIA's provider's range"},
      {"16.0", {}, "sm_arch included"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.line);
    const auto a = nvidia_answer(std::string(R"({"driver_line": ")") + row.line + R"(", "gpus": ["9.0"]})");
    REQUIRE(a.error.empty());
    CHECK(a.has_namespace);
    CHECK(feature_names(a) == row.features);
    if (*row.note) CHECK(wheelfit::test::any_contains(a.notes, row.note));
  }
}

TEST_CASE("nvidia sm_arch comes from the highest GPU; devices name what serves each GPU", "[variants][cuda]") {
  CHECK(cuda::sm_arch_values(NumericVersion({9, 0})) == kSm90);
  CHECK(cuda::sm_arch_values(NumericVersion({8, 6})) == kSm86);
  CHECK(cuda::sm_arch_values(NumericVersion({12, 0})) == std::vector<std::string>{"120_real", "120_virtual"});
  CHECK(cuda::sm_arch_values(NumericVersion({10, 3})) ==
        std::vector<std::string>{"103_real", "102_real", "101_real", "100_real", "100_virtual"});
  CHECK(cuda::sm_arch_values(NumericVersion({5, 0})) == std::vector<std::string>{"50_real", "50_virtual"});
  CHECK(cuda::sm_arch_values(NumericVersion({4, 9})).empty());

  struct Row {
    const char* gpus;
    std::vector<std::string> sm_arch;  // empty: no sm_arch feature
    StringLists devices;
    const char* note;  // a part of a note; "" when none is looked for
  };
  const Row rows[] = {
      // One GPU: NVIDIA's rule and wheelfit's agree.
      {R"(["9.0"])", kSm90, {{"9.0", kSm90}}, ""},
      // Several GPUs of different cc: NVIDIA's list serves the highest only; devices name each,
      // once, in the facts' order.
      {R"(["8.6", "9.0", "8.6"])", kSm90, {{"8.6", kSm86}, {"9.0", kSm90}},
       "sm_arch from the highest GPU (sm 9.0), as NVIDIA's provider computes it; wheelfit also requires every GPU to be served"},
      {R"(["sm_86", "8.6"])", kSm86, {{"8.6", kSm86}}, ""},
      // A GPU below sm 5.0 beside a newer one: no value serves it.
      {R"(["3.5", "8.6"])", kSm86, {{"3.5", {}}, {"8.6", kSm86}}, "the GPU sm 3.5 is below sm 5.0: no sm_arch value serves it"},
      // The highest GPU below sm 5.0: NVIDIA's provider leaves sm_arch out.
      {R"(["4.9"])", {}, {}, "the highest GPU (sm 4.9) is below sm 5.0"},
      // A cc beyond NVIDIA's catalog (majors 5-12): values by the same rule, as NVIDIA's gives them.
      {R"(["13.5"])", {"135_real", "134_real", "133_real", "132_real", "131_real", "130_real", "130_virtual"},
       {{"13.5", {"135_real", "134_real", "133_real", "132_real", "131_real", "130_real", "130_virtual"}}},
       "sm 13.5 is beyond NVIDIA's sm_arch catalog (majors 5 to 12)"},
      {"[]", {}, {}, "no GPU: sm_arch left out"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.gpus);
    const auto a = nvidia_answer(std::string(R"({"driver_line": "12.8", "gpus": )") + row.gpus + "}");
    REQUIRE(a.error.empty());
    REQUIRE(a.features.size() >= 2);
    CHECK(a.features[0].first == "cuda_version_lower_bound");
    CHECK(a.features[0].second.front() == "12.8");
    CHECK(a.features[1].first == "cuda_version_upper_bound");
    if (row.sm_arch.empty()) {
      CHECK(a.features.size() == 2);
      CHECK(a.devices.empty());
    } else {
      REQUIRE(a.features.size() == 3);
      CHECK(a.features[2] == std::pair<std::string, std::vector<std::string>>{"sm_arch", row.sm_arch});
      REQUIRE(a.devices.size() == 1);
      CHECK(a.devices[0].first == "nvidia :: sm_arch");
      CHECK(a.devices[0].second == row.devices);
    }
    if (*row.note) CHECK(wheelfit::test::any_contains(a.notes, row.note));
    if (row.devices.size() < 2) CHECK_FALSE(wheelfit::test::any_contains(a.notes, "from the highest GPU"));
  }
}

TEST_CASE("nvidia variants leave out what the facts do not know", "[variants][cuda]") {
  struct Row {
    const char* facts;
    std::vector<std::string> features;
    std::vector<const char*> notes;  // parts of notes
  };
  const Row rows[] = {
      {"{}", {}, {"driver_line (the CUDA version the driver supports) is unknown"}},
      {R"({"driver_version": "570.86.15", "gpus": ["9.0"]})", {},
       {"no nvidia property without it, sm_arch included", "driver_version 570.86.15 is known"}},
      {R"({"driver_line": null, "gpus": null})", {}, {"driver_line (the CUDA version the driver supports) is unknown"}},
      {R"({"driver_line": "12.8"})", {"cuda_version_lower_bound", "cuda_version_upper_bound"}, {"gpus are unknown: sm_arch left out"}},
      {R"({"driver_line": "12.8", "gpus": [], "future_fact": 1})", {"cuda_version_lower_bound", "cuda_version_upper_bound"},
       {"no GPU"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.facts);
    const auto a = nvidia_answer(row.facts);
    REQUIRE(a.error.empty());
    CHECK(a.has_namespace);
    CHECK(feature_names(a) == row.features);
    for (const char* note : row.notes) CHECK(wheelfit::test::any_contains(a.notes, note));
  }
}

TEST_CASE("nvidia variants refuse malformed facts, naming what is wrong", "[variants][cuda]") {
  const std::vector<wheelfit::test::Refusal> rows = {
      {"", {"the facts are not JSON"}},
      {"{\"driver_line\": ", {"the facts are not JSON"}},
      {"[]", {"the facts are an array, not a JSON object"}},
      {R"({"driver_line": 12.8})", {"the facts' \"driver_line\" is a number, not a string"}},
      {R"({"driver_version": true})", {"the facts' \"driver_version\" is a boolean, not a string"}},
      {R"({"gpus": "9.0"})", {"the facts' \"gpus\" is a string, not an array of device targets"}},
      {R"({"gpus": ["9.0", 8.6]})", {"item 2 of the facts' \"gpus\" is a number, not a device target"}},
      {R"({"driver_line": "twelve"})", {"the facts' driver_line \"twelve\" is not a CUDA version"}},
      {R"({"driver_line": "12.8", "gpus": ["9"]})", {"the facts' gpus item \"9\" is not a compute capability"}},
      {R"({"driver_line": "12.8", "gpus": ["gfx90a"]})", {"the facts' gpus item \"gfx90a\" is not a compute capability"}},
  };
  wheelfit::test::check_variant_refusals(cuda::variant_properties_json, rows);
}

TEST_CASE("the CUDA descriptor's variant_properties is the nvidia provider", "[variants][cuda]") {
  const wheelfit_backend_v2* d = cuda::descriptor();
  REQUIRE(wheelfit_backend_has(d, variant_properties));
  REQUIRE(d->variant_properties != nullptr);
  const auto a = wheelfit::test::call_variant_properties(
      *d, R"({"driver_version": "570.86.15", "driver_line": "12.8", "gpus": ["9.0", "8.6"]})", "nvidia");
  REQUIRE(a.error.empty());
  CHECK(feature_names(a) == std::vector<std::string>{"cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"});
  CHECK(a.features[2].second == kSm90);
  CHECK(a.devices.at(0).second == StringLists{{"9.0", kSm90}, {"8.6", kSm86}});
  // NULL is no facts: everything unknown, nothing supported.
  const auto none = wheelfit::test::call_variant_properties(*d, nullptr, "nvidia");
  CHECK(none.error.empty());
  CHECK(none.has_namespace);
  CHECK(none.features.empty());
  CHECK(wheelfit::test::call_variant_properties(*d, "not json", "nvidia").error.find("not JSON") != std::string::npos);
}
