// A profile's variant_properties (PEP 825; issue 22 item 6): TOML tables, JSON objects, the
// WHEELFIT_OVERRIDE_VARIANT_PROPERTIES variable, the round trip through to_json, and refusals.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "wheelfit/machine/machine.hpp"

using namespace wheelfit;

TEST_CASE("variant_properties in a TOML or JSON profile", "[machine][variants]") {
  const std::string toml_text =
      "os = \"linux\"\n[variant_properties.nvidia]\nsm_arch = [\"90_real\", \"90_virtual\"]\n"
      "cuda_version_lower_bound = [\"12.8\"]\n";
  auto t = machine::parse_machine_profile(toml_text, "m.toml");
  INFO((t ? "" : t.error().message));
  REQUIRE(t.has_value());
  REQUIRE(t->variant_properties.has_value());
  // TOML walks keys by name: cuda_version_lower_bound before sm_arch; values keep their order.
  CHECK(model::property_strings(*t->variant_properties) ==
        std::vector<std::string>{"nvidia :: cuda_version_lower_bound :: 12.8", "nvidia :: sm_arch :: 90_real",
                                 "nvidia :: sm_arch :: 90_virtual"});
  CHECK(t->provenance.at("variant_properties") == "profile m.toml");

  const std::string json_text = R"({"os": "linux", "variant_properties": {"nvidia": {"sm_arch": ["90_real"], "cuda_version_lower_bound": ["12.8"]}}})";
  auto j = machine::parse_machine_profile(json_text, "m.json");
  REQUIRE(j.has_value());
  CHECK(model::property_strings(*j->variant_properties) ==
        std::vector<std::string>{"nvidia :: sm_arch :: 90_real", "nvidia :: cuda_version_lower_bound :: 12.8"});

  // to_json and back keeps it.
  auto back = machine::parse_machine_profile(machine::to_json(*j), "again.json");
  REQUIRE(back.has_value());
  CHECK(machine::same_facts(*back, *j));
}

TEST_CASE("WHEELFIT_OVERRIDE_VARIANT_PROPERTIES sets the fact from JSON", "[machine][variants]") {
  machine::Machine m;
  auto env = [](std::string_view key) -> std::optional<std::string> {
    if (key == "WHEELFIT_OVERRIDE_VARIANT_PROPERTIES") return R"({"amd": {"gfx_arch": ["gfx90a"]}})";
    return std::nullopt;
  };
  REQUIRE(machine::apply_env_overrides(m, env).has_value());
  REQUIRE(m.variant_properties.has_value());
  CHECK(model::property_strings(*m.variant_properties) == std::vector<std::string>{"amd :: gfx_arch :: gfx90a"});
  CHECK(m.provenance.at("variant_properties") == "env WHEELFIT_OVERRIDE_VARIANT_PROPERTIES");
}

TEST_CASE("a bad variant_properties is refused, naming the profile and the path", "[machine][variants]") {
  const auto parse = [](const std::string& text) { return machine::parse_machine_profile(text, "bad.toml"); };
  struct Row {
    std::string text, part;
  };
  for (const Row& r : std::initializer_list<Row>{
           {"variant_properties = \"x\"\n", "variant_properties must be a table of namespaces"},
           {"[variant_properties]\nnvidia = 3\n", "nvidia: not an object"},
           {"[variant_properties.nvidia]\nsm_arch = \"90_real\"\n", "nvidia.sm_arch: not an array of strings"},
           {"[variant_properties.nvidia]\nsm_arch = [9]\n", "nvidia.sm_arch[0]: not a string"},
           {"[variant_properties.NV]\nsm_arch = [\"90_real\"]\n", "'NV' is not a variant namespace"},
           {"[variant_properties.nvidia]\nsm_arch = [\"90 real\"]\n", "'90 real' is not a variant value"},
       }) {
    CAPTURE(r.text);
    test::check_error(parse(r.text), Errc::invalid_input, {"bad.toml", r.part});
  }
  test::check_error(machine::parse_machine_profile(R"({"variant_properties": ["x"]})", "bad.json"), Errc::invalid_input,
                    {"bad.json", "variant_properties\" must be an object"});
}
