#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "machine/machine_profiles.hpp"
#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/machine/machine.hpp"
#include "support/model_support.hpp"

using namespace wheelfit::machine;
using namespace wheelfit::test;
using wheelfit::Errc;
using wheelfit::model::NumericVersion;
using wheelfit::model::Os;

namespace {

using wheelfit::test::nv;

using Strings = std::vector<std::string>;

// The fact an (old or new) key name sets: cuda_driver is driver_line, gpu_targets is gpus.
std::string fact_of(const std::string& key) {
  if (key == "cuda_driver") return "driver_line";
  if (key == "gpu_targets") return "gpus";
  return key;
}

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("profile_keys lists the flat keys in order", "[machine]") {
  std::vector<std::string> keys;
  for (auto k : wheelfit::machine::profile_keys()) keys.emplace_back(k);
  CHECK(keys == std::vector<std::string>{"os", "cpu_arch", "glibc", "python", "torch", "backend", "driver_version",
                                         "driver_line", "gpus", "variant_properties"});
}

TEST_CASE("parse_machine_profile: a dotted key too deep for toml++ is refused, naming its line", "[machine]") {
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "a.";
  deep += "b = 1\n";
  const auto m = parse_machine_profile(deep, "deep.toml");  // a stack overflow in toml++ before
  REQUIRE_FALSE(m);
  CHECK(m.error().is(Errc::invalid_input));
  CHECK_THAT(m.error().message, Catch::Contains("deep.toml:1: more than 1000 dotted key parts"));
}

TEST_CASE("parse_machine_profile reads a TOML profile", "[machine]") {
  const auto m = parse_machine_profile(kFullToml, "fleet.toml");
  REQUIRE(m);
  CHECK(m->os == Os::linux_);
  CHECK(m->cpu_arch == "x86_64");
  CHECK(m->glibc == nv("2.35"));
  CHECK(m->python == nv("3.12"));
  CHECK_FALSE(m->python_free_threaded);
  REQUIRE(m->torch);
  CHECK(m->torch->str() == "2.8.0+cu128");
  CHECK(m->backend == "cuda");
  CHECK(m->driver_version == nv("580.65.06"));
  CHECK(m->driver_line == nv("13.0"));
  CHECK(m->gpus == Strings{"9.0", "sm_86"});  // kept as written: the backend canonicalises
  CHECK(m->provenance.size() == 9);
  for (const auto& [key, source] : m->provenance) {
    CAPTURE(key);
    CHECK(source == "profile fleet.toml");
  }
}

TEST_CASE("parse_machine_profile reads a JSON profile", "[machine]") {
  const auto m = parse_machine_profile(
      R"(  {"os": "linux", "cpu_arch": "arm64", "python": "3.13t", "gpus": [], "provenance": {"os": "host uname"}})",
      "m.json");
  REQUIRE(m);
  CHECK(m->os == Os::linux_);
  CHECK(m->cpu_arch == "aarch64");
  CHECK(m->python == nv("3.13"));
  CHECK(m->python_free_threaded);
  REQUIRE(m->gpus);
  CHECK(m->gpus->empty());
  CHECK_FALSE(m->glibc);
  CHECK_FALSE(m->torch);
  CHECK(m->provenance.at("os") == "profile m.json");
  CHECK(m->provenance.count("glibc") == 0);
}

TEST_CASE("parse_machine_profile reads the keys of earlier profiles as the facts they name now", "[machine]") {
  struct Case {
    std::string text;
    std::optional<std::string> driver_line;
    std::optional<Strings> gpus;
  };
  const std::vector<Case> cases = {
      {"cuda_driver = \"12.8\"\n", "12.8", std::nullopt},
      {"{\"cuda_driver\": \"12.8\"}", "12.8", std::nullopt},
      {"gpu_targets = [\"gfx90a\", \"GFX942\"]\n", std::nullopt, Strings{"gfx90a", "gfx942"}},
      {"{\"gpu_targets\": [\"gfx90a:xnack-\"]}", std::nullopt, Strings{"gfx90a:xnack-"}},
      {"gpu_targets = []\n", std::nullopt, Strings{}},
      {"cuda_driver = \"13.0\"\ngpu_targets = [\"sm_90\"]\n", "13.0", Strings{"sm_90"}},
      {"{\"cuda_driver\": \"13.0\", \"gpu_targets\": [\"9.0\", \"8.6\"]}", "13.0", Strings{"9.0", "8.6"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const auto m = parse_machine_profile(c.text, "old.x");
    REQUIRE(m);
    if (c.driver_line) {
      CHECK(m->driver_line == nv(*c.driver_line));
      CHECK(m->provenance.at("driver_line") == "profile old.x");
    } else {
      CHECK_FALSE(m->driver_line);
    }
    CHECK(m->gpus == c.gpus);
    if (c.gpus) CHECK(m->provenance.at("gpus") == "profile old.x");
    CHECK(m->provenance.count("cuda_driver") == 0);
    CHECK(m->provenance.count("gpu_targets") == 0);
    // to_json writes the new names only.
    const std::string json = wheelfit::machine::to_json(*m);
    CAPTURE(json);
    CHECK_FALSE(contains(json, "cuda_driver"));
    CHECK_FALSE(contains(json, "gpu_targets"));
  }
}

TEST_CASE("parse_machine_profile keeps device targets as written, lower case", "[machine]") {
  struct Case {
    std::string text;
    Strings gpus;
  };
  const std::vector<Case> cases = {
      {"gpus = [\"sm_90\"]\n", {"sm_90"}},
      {"gpus = [\"SM_90\", \" 8.6 \"]\n", {"sm_90", "8.6"}},
      {"gpus = [\"9.0\", \"9.0\"]\n", {"9.0", "9.0"}},  // one per GPU: duplicates stay
      {"gpus = [\"9\", \"x\", \"sm_9\", \"9.0.1\", \"sm_90a\"]\n", {"9", "x", "sm_9", "9.0.1", "sm_90a"}},  // the backend judges
      {"gpus = [\"gfx90a:xnack-\", \"gfx90a:sramecc+:xnack-\"]\n", {"gfx90a:xnack-", "gfx90a:sramecc+:xnack-"}},
      {"{\"gpus\": [\"GFX1100\", \"compute_90\"]}", {"gfx1100", "compute_90"}},
      {"gpus = [\"" + std::string(64, 'a') + "\"]\n", {std::string(64, 'a')}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const auto m = parse_machine_profile(c.text, "t.x");
    REQUIRE(m);
    CHECK(m->gpus == c.gpus);
  }
}

TEST_CASE("parse_machine_profile: an empty profile knows nothing", "[machine]") {
  for (const std::string text : {"", "# nothing\n", "{}", "  \n{ }\n"}) {
    CAPTURE(text);
    const auto m = parse_machine_profile(text, "empty");
    REQUIRE(m);
    CHECK(*m == Machine{});
  }
}

TEST_CASE("parse_machine_profile refuses bad profiles", "[machine]") {
  check_refusals([](const std::string& text) { return parse_machine_profile(text, "prof.x"); }, {"prof.x"}, {
      // syntax
      {"os = \"linux\n", {"prof.x:1:", "TOML syntax error"}},
      {"{\"os\": \"linux\"} trailing", {"prof.x:1:", "JSON syntax error"}},
      {"{\"os\": \"linux\"}}", {"JSON syntax error"}},
      {"{\"os\": \"linux\",\n \"glibc\": }", {"prof.x:2:", "JSON syntax error"}},
      {"{\"os\": \"linux\"", {"JSON syntax error"}},
      // numbers: quote them
      {"glibc = 2.35\n", {"prof.x:1:", "glibc = 2.35 is a number", "quote it", "glibc = \"2.35\""}},
      {"python = 3.10\n", {"python = 3.10 is a number", "quote it", "3.10 would read as 3.1"}},
      {"driver_version = 580\n", {"quote it"}},
      {"{\"glibc\": 2.35}", {"\"glibc\": 2.35 is a number", "quote it"}},
      {"{\"cuda_driver\": 13}", {"quote it"}},
      {"gpus = [9.0]\n", {"gpus[0]", "quote it"}},
      {"{\"gpus\": [8.6]}", {"gpus[0]", "quote it"}},
      // other types
      {"os = true\n", {"os must be a string"}},
      {"{\"os\": null}", {"\"os\" must be a string"}},
      {"[os]\nname = \"linux\"\n", {"os must be a string"}},
      {"glibc = \"\"\n", {"glibc is empty", "leave the key out"}},
      {"{\"torch\": \" \"}", {"\"torch\" is empty"}},
      {"[1, 2]", {"TOML syntax error"}},
      // gpus
      {"gpus = \"9.0\"\n", {"gpus must be an array of strings"}},
      {"{\"gpus\": \"9.0\"}", {"\"gpus\" must be an array of strings"}},
      {"gpus = [\"x y\"]\n", {"gpus[0]", "'x y' is not a device target"}},
      {"gpus = [\"9.0\", \"9;0\"]\n", {"gpus[1]", "'9;0' is not a device target"}},
      {"gpus = [\"sm/90\"]\n", {"gpus[0]", "not a device target"}},
      {"gpus = [\"gfx90a*\"]\n", {"gpus[0]", "not a device target"}},
      {"gpus = [\"9.0, 8.6\"]\n", {"gpus[0]", "not a device target"}},
      {"gpus = [\"" + std::string(65, 'a') + "\"]\n", {"gpus[0]", "not a device target"}},
      {"gpus = [\"\"]\n", {"gpus[0]", "not a device target"}},
      {"{\"gpus\": [\"\"]}", {"gpus[0]", "not a device target"}},
      {"{\"gpus\": [\"  \"]}", {"gpus[0]", "not a device target"}},
      {"{\"gpus\": [\"9.0\", null]}", {"gpus[1] must be a string such as"}},
      // gpu_targets
      {"gpu_targets = \"gfx90a\"\n", {"gpu_targets must be an array of strings", "[\"<target>\", ...]"}},
      {"{\"gpu_targets\": \"gfx90a\"}", {"\"gpu_targets\" must be an array of strings"}},
      {"gpu_targets = [\"gfx90a\", \"gfx 942\"]\n", {"gpu_targets[1]", "'gfx 942' is not a device target"}},
      {"{\"gpu_targets\": [90010]}", {"gpu_targets[0]", "quote it"}},
      {"{\"gpu_targets\": [true]}", {"gpu_targets[0] must be a string such as", "\"<target>\""}},
      {"{\"gpu_targets\": [\"\"]}", {"gpu_targets[0]", "not a device target"}},
      {"{\"cuda_driver\": \"\"}", {"\"cuda_driver\" is empty"}},
      {"cuda_driver = \"13.x\"\n", {"cuda_driver = '13.x'"}},  // named as written
      // one fact under both its names (toml++ walks a table in key order, not file order, so the
      // TOML rows check only what every order says)
      {"gpus = [\"9.0\"]\ngpu_targets = [\"gfx90a\"]\n", {"prof.x:", "gpus", "old name"}},
      {"gpu_targets = [\"gfx90a\"]\ngpus = [\"gfx90a\"]\n", {"prof.x:", "gpus", "old name"}},
      {"gpus = []\ngpu_targets = []\n", {"gpus", "old name"}},
      {"{\"gpus\": [\"9.0\"], \"gpu_targets\": [\"9.0\"]}", {"both gpus and gpu_targets (its old name)", "keep gpus"}},
      {"gpus = [\"9.0\", \"none\"]\n", {"'none' means no GPU only as the whole value"}},
      {"{\"gpu_targets\": [], \"gpus\": []}", {"gpus", "old name"}},
      {"driver_line = \"13.0\"\ncuda_driver = \"13.0\"\n", {"driver_line", "old name"}},
      {"{\"cuda_driver\": \"12.8\", \"driver_line\": \"13.0\"}", {"driver_line", "old name"}},
      // unknown keys
      {"os = \"linux\"\ncolour = \"blue\"\n", {"prof.x:2:", "unknown key 'colour'"}},
      {"{\"Glibc\": \"2.35\"}", {"unknown key 'Glibc'"}},
      {"gpu = [\"9.0\"]\n", {"unknown key 'gpu'",
                                "known keys: os, cpu_arch, glibc, python, torch, backend, driver_version, driver_line, gpus, variant_properties;"}},
      // bad values
      {"python = \"3.12.1\"\n", {"python = '3.12.1'", "major.minor"}},
      {"python = \"3\"\n", {"python = '3'", "major.minor"}},
      {"python = \"3.12tt\"\n", {"python"}},
      {"os = \"beos\"\n", {"os = 'beos'", "linux, windows or macos"}},
      {"cpu_arch = \"x86 64\"\n", {"cpu_arch = 'x86 64'"}},
      {"backend = \"Bad Name\"\n", {"backend = 'Bad Name'", "backend name", "[a-z0-9_-]"}},
      {"backend = \"cu/da\"\n", {"backend = 'cu/da'", "backend name"}},
      {"{\"backend\": \"rocm6.3\"}", {"backend = 'rocm6.3'"}},
      {"{\"backend\": [\"cuda\"]}", {"\"backend\" must be a string"}},
      {"driver_line = \"13.0.x\"\n", {"driver_line = '13.0.x'"}},
      {"glibc = \"2.x\"\n", {"glibc = '2.x'"}},
      {"driver_version = \"580.65.\"\n", {"driver_version"}},
      {"torch = \"two\"\n", {"torch = 'two'"}},
  });
}

TEST_CASE("parse_machine_profile refuses text over 1 MiB", "[machine]") {
  const std::string big(1024u * 1024u + 1u, ' ');
  const auto m = parse_machine_profile(big, "big.toml");
  REQUIRE_FALSE(m);
  CHECK(m.error().is(Errc::too_large));
}

TEST_CASE("set_fact parses each key's text form", "[machine]") {
  SECTION("accepted values") {
    struct Case {
      std::string key, value, shown;  // shown: the fact as to_json writes it
    };
    const std::vector<Case> cases = {
        {"os", "Linux", "\"os\":\"linux\""},
        {"os", "win32", "\"os\":\"windows\""},
        {"os", "darwin", "\"os\":\"macos\""},
        {"cpu_arch", "x86_64", "\"cpu_arch\":\"x86_64\""},
        {"cpu_arch", "AMD64", "\"cpu_arch\":\"x86_64\""},
        {"cpu_arch", "aarch64", "\"cpu_arch\":\"aarch64\""},
        {"cpu_arch", "arm64", "\"cpu_arch\":\"aarch64\""},
        {"cpu_arch", "ppc64le", "\"cpu_arch\":\"ppc64le\""},
        {"glibc", " 2.35 ", "\"glibc\":\"2.35\""},
        {"python", "3.12", "\"python\":\"3.12\""},
        {"python", "3.13t", "\"python\":\"3.13t\""},
        {"torch", "2.8.0+cu128", "\"torch\":\"2.8.0+cu128\""},
        {"backend", "ROCm", "\"backend\":\"rocm\""},
        {"backend", "cpu", "\"backend\":\"cpu\""},
        {"backend", "xpu", "\"backend\":\"xpu\""},
        {"backend", " XPU ", "\"backend\":\"xpu\""},
        {"backend", "metal", "\"backend\":\"metal\""},
        {"backend", "my_backend-2", "\"backend\":\"my_backend-2\""},
        {"driver_version", "580.65.06", "\"driver_version\":\"580.65.06\""},
        {"driver_line", "13.0", "\"driver_line\":\"13.0\""},
        {"cuda_driver", "12.8", "\"driver_line\":\"12.8\""},
        {"gpus", "9.0", "\"gpus\":[\"9.0\"]"},
        {"gpus", "9.0, 8.6", "\"gpus\":[\"9.0\",\"8.6\"]"},
        {"gpus", "sm_90,sm86 , 12.0", "\"gpus\":[\"sm_90\",\"sm86\",\"12.0\"]"},
        {"gpus", "SM_100", "\"gpus\":[\"sm_100\"]"},
        {"gpus", "9", "\"gpus\":[\"9\"]"},  // the backend's grammar judges it, not the machine
        {"gpus", "compute_90", "\"gpus\":[\"compute_90\"]"},
        {"gpus", "none", "\"gpus\":[]"},
        {"gpus", " None ", "\"gpus\":[]"},
        {"gpus", "gfx90a:sramecc+:xnack-", "\"gpus\":[\"gfx90a:sramecc+:xnack-\"]"},
        {"gpu_targets", "gfx90a", "\"gpus\":[\"gfx90a\"]"},
        {"gpu_targets", "GFX942, gfx1100 ,gfx90a:xnack-", "\"gpus\":[\"gfx942\",\"gfx1100\",\"gfx90a:xnack-\"]"},
        {"gpu_targets", "-gfx90a", "\"gpus\":[\"-gfx90a\"]"},
        {"gpu_targets", "none", "\"gpus\":[]"},
    };
    for (const auto& [key, value, shown] : cases) {
      CAPTURE(key, value);
      Machine m;
      REQUIRE(set_fact(m, key, value, "test"));
      CHECK(m.provenance.at(fact_of(key)) == "test");
      CHECK(m.provenance.size() == 1);
      const std::string json = wheelfit::machine::to_json(m);
      CAPTURE(json);
      CHECK(contains(json, shown));
    }
  }
  SECTION("refused values name the origin, the key and the value, and change nothing") {
    struct Case {
      std::string key, value;
    };
    const std::vector<Case> cases = {
        {"os", "plan9"},      {"cpu_arch", "x86-64!"}, {"glibc", "2..35"},  {"glibc", "v2.35"},
        {"python", "3"},      {"python", "3.12.1"},    {"python", "3.12t1"}, {"python", "t"},
        {"torch", "2.8.0+"},  {"backend", "Bad Name"}, {"backend", "cu/da"},  {"backend", "rocm6.3"},
        {"backend", "cuda!"}, {"backend", std::string(65, 'b')},               {"driver_version", "-1"},
        {"driver_line", "x"}, {"driver_line", "13.0."}, {"cuda_driver", "x"},
        {"gpus", "9 0"},      {"gpus", "9.0;8.6"},     {"gpus", "9.0,,8.6"}, {"gpus", "9.0,"},
        {"gpus", ",9.0"},     {"gpus", "sm/90"},       {"gpus", "gfx90a*"},  {"gpus", std::string(65, '9')},
        {"gpu_targets", "gfx 90a"}, {"gpu_targets", "gfx90a,,gfx942"}, {"gpu_targets", "gfx90a;gfx942"},
    };
    for (const auto& [key, value] : cases) {
      CAPTURE(key, value);
      Machine m;
      REQUIRE(set_fact(m, "os", "linux", "before"));
      const Machine before = m;
      const auto r = set_fact(m, key, value, "env WHEELFIT_OVERRIDE_X");
      // the key named as the caller wrote it
      check_error(r, Errc::invalid_input, {"env WHEELFIT_OVERRIDE_X", key, value});
      CHECK(m == before);
    }
  }
  SECTION("unknown keys are refused") {
    Machine m;
    const auto r = set_fact(m, "gpu", "9.0", "test");
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "unknown key 'gpu'"));
    CHECK(m == Machine{});
  }
  // Each of `facts` set from "a", then each of `clearing` from "b".
  using Facts = std::vector<std::pair<std::string, std::string>>;
  const auto set_then_clear = [](const Facts& facts, const Facts& clearing) {
    Machine m;
    for (const auto& [key, value] : facts) REQUIRE(set_fact(m, key, value, "a"));
    for (const auto& [key, value] : clearing) REQUIRE(set_fact(m, key, value, "b"));
    return m;
  };
  SECTION("an empty value clears the fact and its provenance") {
    const Machine m = set_then_clear({{"python", "3.13t"}, {"gpus", "8.6"}}, {{"python", ""}, {"gpus", "  "}});
    CHECK_FALSE(m.python);
    CHECK_FALSE(m.python_free_threaded);
    CHECK_FALSE(m.gpus);
    CHECK(m.provenance.empty());
  }
  SECTION("an old name clears the fact it names") {
    const Machine m =
        set_then_clear({{"gpus", "gfx90a"}, {"driver_line", "13.0"}}, {{"gpu_targets", ""}, {"cuda_driver", " "}});
    CHECK_FALSE(m.gpus);
    CHECK_FALSE(m.driver_line);
    CHECK(m.provenance.empty());
  }
  SECTION("an old name replaces the fact set under the new one") {
    Machine m;
    REQUIRE(set_fact(m, "gpus", "9.0", "a"));
    REQUIRE(set_fact(m, "gpu_targets", "gfx90a", "b"));
    CHECK(m.gpus == Strings{"gfx90a"});
    CHECK(m.provenance.at("gpus") == "b");
    CHECK(m.provenance.count("gpu_targets") == 0);
  }
}

TEST_CASE("apply_env_overrides: each WHEELFIT_OVERRIDE_<KEY>", "[machine]") {
  struct Case {
    std::string var, value, key;
  };
  const std::vector<Case> cases = {
      {"WHEELFIT_OVERRIDE_OS", "windows", "os"},
      {"WHEELFIT_OVERRIDE_CPU_ARCH", "arm64", "cpu_arch"},
      {"WHEELFIT_OVERRIDE_GLIBC", "2.28", "glibc"},
      {"WHEELFIT_OVERRIDE_PYTHON", "3.11", "python"},
      {"WHEELFIT_OVERRIDE_TORCH", "2.9.1+cu130", "torch"},
      {"WHEELFIT_OVERRIDE_BACKEND", "cpu", "backend"},
      {"WHEELFIT_OVERRIDE_BACKEND", "xpu", "backend"},
      {"WHEELFIT_OVERRIDE_DRIVER_VERSION", "575.51.03", "driver_version"},
      {"WHEELFIT_OVERRIDE_DRIVER_LINE", "12.9", "driver_line"},
      {"WHEELFIT_OVERRIDE_GPUS", "9.0, 8.6", "gpus"},
      {"WHEELFIT_OVERRIDE_GPUS", "sm_90", "gpus"},
      {"WHEELFIT_OVERRIDE_GPUS", "none", "gpus"},
      // earlier names, read as the fact they name now
      {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "12.9", "driver_line"},
      {"CONDA_OVERRIDE_CUDA", "12.4", "driver_line"},
      {"WHEELFIT_OVERRIDE_GPU_TARGETS", "gfx90a, gfx942", "gpus"},
      {"CONDA_OVERRIDE_GLIBC", "2.17", "glibc"},
  };
  for (const auto& [var, value, key] : cases) {
    CAPTURE(var, value);
    auto m = parse_machine_profile(kFullToml, "fleet.toml");
    REQUIRE(m);
    const Machine before = *m;
    REQUIRE(apply_env_overrides(*m, env_of({{var, value}})));
    CHECK(m->provenance.at(key) == "env " + var);

    Machine expected = before;
    REQUIRE(set_fact(expected, key, value, "env " + var));
    CHECK(*m == expected);
    CHECK(*m != before);

    // An empty value makes the fact absent.
    auto cleared = before;
    REQUIRE(apply_env_overrides(cleared, env_of({{var, ""}})));
    CHECK(cleared.provenance.count(key) == 0);
    CHECK(wheelfit::machine::to_json(cleared).find("\"" + key + "\":") == std::string::npos);
    CHECK(cleared.provenance.size() == before.provenance.size() - before.provenance.count(key));
  }
}

TEST_CASE("apply_env_overrides: GPUS forms, CONDA_* mapping and precedence", "[machine]") {
  SECTION("GPUS comma-separated with spaces") {
    Machine m;
    REQUIRE(apply_env_overrides(m, env_of({{"WHEELFIT_OVERRIDE_GPUS", "9.0, SM_86,gfx90a:xnack-"}})));
    CHECK(m.gpus == Strings{"9.0", "sm_86", "gfx90a:xnack-"});
  }
  SECTION("GPUS empty is absent, not an empty list") {
    Machine m;
    REQUIRE(set_fact(m, "gpus", "8.0", "file"));
    REQUIRE(apply_env_overrides(m, env_of({{"WHEELFIT_OVERRIDE_GPUS", ""}})));
    CHECK_FALSE(m.gpus);
  }
  SECTION("CONDA_OVERRIDE_CUDA -> driver_line, CONDA_OVERRIDE_GLIBC -> glibc") {
    Machine m;
    REQUIRE(apply_env_overrides(m, env_of({{"CONDA_OVERRIDE_CUDA", "12.4"}, {"CONDA_OVERRIDE_GLIBC", "2.17"}})));
    CHECK(m.driver_line == nv("12.4"));
    CHECK(m.glibc == nv("2.17"));
    CHECK(m.provenance.at("driver_line") == "env CONDA_OVERRIDE_CUDA");
    CHECK(m.provenance.at("glibc") == "env CONDA_OVERRIDE_GLIBC");
  }
  SECTION("override_aliases lists the other variables in the order they are read") {
    CHECK(wheelfit::machine::override_aliases("driver_line") ==
          Strings{"WHEELFIT_OVERRIDE_CUDA_DRIVER", "CONDA_OVERRIDE_CUDA"});
    CHECK(wheelfit::machine::override_aliases("gpus") == Strings{"WHEELFIT_OVERRIDE_GPU_TARGETS"});
    CHECK(wheelfit::machine::override_aliases("glibc") == Strings{"CONDA_OVERRIDE_GLIBC"});
    CHECK(wheelfit::machine::override_aliases("os").empty());
    CHECK(wheelfit::machine::override_aliases("cuda_driver").empty());
  }
  SECTION("precedence of the driver_line and gpus names") {
    struct Case {
      std::map<std::string, std::string> vars;
      std::string key;                    // driver_line or gpus
      std::optional<std::string> shown;   // expected in to_json, or nullopt: absent
      std::string provenance;             // expected, when present
    };
    const std::vector<Case> cases = {
        {{}, "driver_line", "\"driver_line\":\"13.0\"", "profile fleet.toml"},
        {{{"CONDA_OVERRIDE_CUDA", "12.4"}}, "driver_line", "\"driver_line\":\"12.4\"", "env CONDA_OVERRIDE_CUDA"},
        {{{"WHEELFIT_OVERRIDE_CUDA_DRIVER", "12.9"}, {"CONDA_OVERRIDE_CUDA", "12.4"}},
         "driver_line", "\"driver_line\":\"12.9\"", "env WHEELFIT_OVERRIDE_CUDA_DRIVER"},
        {{{"WHEELFIT_OVERRIDE_DRIVER_LINE", "13.1"}, {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "12.9"}, {"CONDA_OVERRIDE_CUDA", "12.4"}},
         "driver_line", "\"driver_line\":\"13.1\"", "env WHEELFIT_OVERRIDE_DRIVER_LINE"},
        {{{"WHEELFIT_OVERRIDE_DRIVER_LINE", ""}, {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "12.9"}}, "driver_line", std::nullopt, ""},
        {{{"WHEELFIT_OVERRIDE_CUDA_DRIVER", ""}, {"CONDA_OVERRIDE_CUDA", "12.4"}}, "driver_line", std::nullopt, ""},
        {{}, "gpus", "\"gpus\":[\"9.0\",\"sm_86\"]", "profile fleet.toml"},
        {{{"WHEELFIT_OVERRIDE_GPU_TARGETS", "gfx90a"}}, "gpus", "\"gpus\":[\"gfx90a\"]", "env WHEELFIT_OVERRIDE_GPU_TARGETS"},
        {{{"WHEELFIT_OVERRIDE_GPUS", "8.0"}, {"WHEELFIT_OVERRIDE_GPU_TARGETS", "gfx90a"}},
         "gpus", "\"gpus\":[\"8.0\"]", "env WHEELFIT_OVERRIDE_GPUS"},
        {{{"WHEELFIT_OVERRIDE_GPUS", ""}, {"WHEELFIT_OVERRIDE_GPU_TARGETS", "gfx90a"}}, "gpus", std::nullopt, ""},
        {{{"WHEELFIT_OVERRIDE_GPU_TARGETS", "none"}}, "gpus", "\"gpus\":[]", "env WHEELFIT_OVERRIDE_GPU_TARGETS"},
    };
    for (const auto& c : cases) {
      std::string vars;
      for (const auto& [k, v] : c.vars) vars += k + "='" + v + "' ";
      CAPTURE(vars, c.key);
      auto m = parse_machine_profile(kFullToml, "fleet.toml");
      REQUIRE(m);
      REQUIRE(apply_env_overrides(*m, env_of(c.vars)));
      const std::string json = wheelfit::machine::to_json(*m);
      CAPTURE(json);
      if (c.shown) {
        CHECK(contains(json, *c.shown));
        CHECK(m->provenance.at(c.key) == c.provenance);
      } else {
        CHECK_FALSE(contains(json, "\"" + c.key + "\":"));
        CHECK(m->provenance.count(c.key) == 0);
      }
      CHECK(m->provenance.count("cuda_driver") == 0);
      CHECK(m->provenance.count("gpu_targets") == 0);
    }
  }
  SECTION("precedence: WHEELFIT_OVERRIDE_* > CONDA_OVERRIDE_* > file") {
    struct Case {
      std::map<std::string, std::string> vars;
      std::optional<std::string> glibc;  // expected
      std::string provenance;            // expected, when glibc is set
    };
    const std::vector<Case> cases = {
        {{}, "2.35", "profile fleet.toml"},
        {{{"CONDA_OVERRIDE_GLIBC", "2.31"}}, "2.31", "env CONDA_OVERRIDE_GLIBC"},
        {{{"WHEELFIT_OVERRIDE_GLIBC", "2.39"}}, "2.39", "env WHEELFIT_OVERRIDE_GLIBC"},
        {{{"WHEELFIT_OVERRIDE_GLIBC", "2.39"}, {"CONDA_OVERRIDE_GLIBC", "2.31"}}, "2.39", "env WHEELFIT_OVERRIDE_GLIBC"},
        {{{"WHEELFIT_OVERRIDE_GLIBC", ""}, {"CONDA_OVERRIDE_GLIBC", "2.31"}}, std::nullopt, ""},
        {{{"CONDA_OVERRIDE_GLIBC", ""}}, std::nullopt, ""},
        {{{"WHEELFIT_OVERRIDE_GLIBC", "2.40"}, {"CONDA_OVERRIDE_GLIBC", ""}}, "2.40", "env WHEELFIT_OVERRIDE_GLIBC"},
    };
    for (const auto& c : cases) {
      std::string vars;
      for (const auto& [k, v] : c.vars) vars += k + "='" + v + "' ";
      CAPTURE(vars);
      auto m = parse_machine_profile(kFullToml, "fleet.toml");
      REQUIRE(m);
      REQUIRE(apply_env_overrides(*m, env_of(c.vars)));
      if (c.glibc) {
        CHECK(m->glibc == nv(*c.glibc));
        CHECK(m->provenance.at("glibc") == c.provenance);
      } else {
        CHECK_FALSE(m->glibc);
        CHECK(m->provenance.count("glibc") == 0);
      }
    }
  }
  SECTION("CONDA_OVERRIDE_CUDA loses to WHEELFIT_OVERRIDE_CUDA_DRIVER") {
    Machine m;
    REQUIRE(apply_env_overrides(
        m, env_of({{"CONDA_OVERRIDE_CUDA", "12.4"}, {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "13.0"}})));
    CHECK(m.driver_line == nv("13.0"));
    CHECK(m.provenance.at("driver_line") == "env WHEELFIT_OVERRIDE_CUDA_DRIVER");
  }
  SECTION("a bad override names the variable and changes nothing") {
    struct Case {
      std::string var, value;
    };
    const std::vector<Case> cases = {
        {"WHEELFIT_OVERRIDE_GPUS", "9 0"},       {"WHEELFIT_OVERRIDE_GPUS", "9.0;8.6"},
        {"WHEELFIT_OVERRIDE_GPUS", "9.0,,8.6"},  {"WHEELFIT_OVERRIDE_GPU_TARGETS", "gfx90a;gfx942"},
        {"WHEELFIT_OVERRIDE_PYTHON", "3.12.1"},  {"WHEELFIT_OVERRIDE_BACKEND", "Bad Name"},
        {"WHEELFIT_OVERRIDE_DRIVER_LINE", "13.x"}, {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "x"},
        {"CONDA_OVERRIDE_CUDA", "twelve"},       {"CONDA_OVERRIDE_GLIBC", "2.x"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.var, c.value);
      auto m = parse_machine_profile(kFullToml, "fleet.toml");
      REQUIRE(m);
      const Machine before = *m;
      // An earlier, valid override must not stick when a later one fails.
      const auto r = apply_env_overrides(*m, env_of({{"WHEELFIT_OVERRIDE_OS", "windows"}, {c.var, c.value}}));
      REQUIRE_FALSE(r);
      CAPTURE(r.error().message);
      CHECK(contains(r.error().message, c.var));
      CHECK(contains(r.error().message, c.value));
      CHECK(*m == before);
    }
  }
}

TEST_CASE("parse_machine_profile quotes numbers as written", "[machine]") {
  check_refusals([](const std::string& text) { return parse_machine_profile(text, "n"); }, {}, {
      {"python = 3.10\n", {"quote it: python = \"3.10\""}},
      {"python   =   3.10   # comment\n", {"quote it: python = \"3.10\""}},
      {"# é\nglibc = 2.30\n", {"quote it: glibc = \"2.30\""}},
      {"{\"python\": 3.10}", {"quote it: \"python\": \"3.10\""}},
      {"{\"provenance\": {\"python\": \"x\"},\n \"python\" :\n 3.10}", {"quote it: \"python\": \"3.10\""}},
      {"gpus = [\"8.6\", 9.0]\n", {"gpus[1] = 9.0 is a number; quote it: \"9.0\""}},
      {"{\"gpus\": [9.0]}", {"gpus[0] = 9.0 is a number; quote it: \"9.0\""}},
  });
}

TEST_CASE("parse_machine_profile ignores the informational keys detect --json writes", "[machine]") {
  const auto m = parse_machine_profile(
      R"({"os": "linux", "gpu_targets": ["gfx90a"], "provenance": {"os": "host uname"},)"
      R"( "notes": ["cuda: NVML: libnvidia-ml.so.1 not found"], "interpreter": {"path": "/usr/bin/python3"},)"
      R"( "devices": [{"index": 0, "target": "gfx90a"}]})",
      "detect.json");
  REQUIRE(m);
  CHECK(m->os == Os::linux_);
  CHECK(m->gpus == Strings{"gfx90a"});
  CHECK(m->provenance.at("gpus") == "profile detect.json");
  CHECK(m->provenance.size() == 2);
  const auto t = parse_machine_profile("os = \"linux\"\nnotes = [\"x\"]\n[interpreter]\npath = \"/p\"\n", "d.toml");
  REQUIRE(t);
  CHECK(t->os == Os::linux_);
  const auto bad = parse_machine_profile(R"({"note": []})", "d.json");
  REQUIRE_FALSE(bad);
  CHECK(contains(bad.error().message, "ignored: provenance, notes, interpreter, devices"));
}
