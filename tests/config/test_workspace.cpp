#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

// The round-trip checks re-parse with toml++, the compiled library wheelfit::config links (its
// usage requirements are private, so say here what its target would say).
#ifndef TOML_HEADER_ONLY
#define TOML_HEADER_ONLY 0
#endif
#ifndef TOML_SHARED_LIB
#define TOML_SHARED_LIB 1
#endif
#include <toml++/toml.h>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/config/workspace.hpp"

using namespace wheelfit::config;
using namespace wheelfit::test;
using wheelfit::Errc;

namespace {

/// parse_env_config(text, file) for check_refusals.
auto parsing_as(std::string file) {
  return [file = std::move(file)](const std::string& text) { return parse_env_config(text, file); };
}

std::vector<std::string> names_of(const wheelfit::config::Env& env) {
  std::vector<std::string> out;
  for (const auto& p : env.packages) out.push_back(p.name);
  return out;
}

}  // namespace

TEST_CASE("parse_env_config reads python, [cuda] packages and [workspace] channels", "[config]") {
  const auto env = parse_env_config(R"(
python = "3.12"

[workspace]
channels = ["conda-forge", "pozzettiandrea"]

[cuda]
packages = ["Flash_Attn", "cumesh", "sageattention"]

[dependencies]
numpy = "*"
)",
                                    "cfg/demo.comfy-env.toml");
  REQUIRE(env);
  CHECK(env->file == "cfg/demo.comfy-env.toml");
  CHECK(env->name == "demo");
  REQUIRE(env->python);
  CHECK(env->python->str() == "3.12");
  REQUIRE(env->packages.size() == 3);
  CHECK(env->packages[0].requested == "Flash_Attn");
  CHECK(env->packages[0].name == "flash-attn");
  CHECK(names_of(*env) == std::vector<std::string>{"flash-attn", "cumesh", "sageattention"});
  CHECK(env->channels == std::vector<std::string>{"conda-forge", "pozzettiandrea"});
  CHECK(env->warnings.empty());
}

TEST_CASE("parse_env_config accepts a config with nothing wheelfit reads", "[config]") {
  SECTION("empty text") {
    const auto env = parse_env_config("", "empty.toml");
    REQUIRE(env);
    CHECK_FALSE(env->python);
    CHECK(env->packages.empty());
    CHECK(env->channels.empty());
    CHECK(env->passthrough_toml.empty());
  }
  SECTION("[cuda] without packages, empty packages") {
    for (const std::string text : {"[cuda]\n", "[cuda]\npackages = []\n"}) {
      CAPTURE(text);
      const auto env = parse_env_config(text, "c.toml");
      REQUIRE(env);
      CHECK(env->packages.empty());
      CHECK(env->warnings.empty());
    }
  }
}

TEST_CASE("parse_env_config: TOML syntax errors name the file, line and column", "[config]") {
  const auto env = parse_env_config("python = \"3.12\"\n[cuda\npackages = []\n", "broken.comfy-env.toml");
  REQUIRE_FALSE(env);
  CAPTURE(env.error().message);
  CHECK(env.error().is(Errc::invalid_input));
  CHECK(contains(env.error().message, "broken.comfy-env.toml:2:"));
  CHECK(contains(env.error().message, "TOML syntax error"));
}

TEST_CASE("parse_env_config: a dotted key too deep for toml++ is refused, naming its line", "[config]") {
  std::string deep = "python = \"3.12\"\n";
  for (int i = 0; i < 50000; ++i) deep += "a.";
  deep += "b = 1\n";
  const auto env = parse_env_config(deep, "deep.comfy-env.toml");  // a stack overflow in toml++ before
  REQUIRE_FALSE(env);
  CHECK(env.error().is(Errc::invalid_input));
  CHECK(contains(env.error().message, "deep.comfy-env.toml:2: more than 1000 dotted key parts"));
  // Dots in strings and comments are no key's.
  const auto fine = parse_env_config("python = \"3.12\" # " + std::string(5000, '.') + "\nx = \"" + std::string(5000, '.') + "\"\n",
                                     "dots.comfy-env.toml");
  CHECK(fine);
}

TEST_CASE("parse_env_config refuses a bad python", "[config]") {
  check_refusals(parsing_as("py.toml"), {"py.toml:1:", "python"}, {
      {"python = 3.12\n", {"3.10 would read as 3.1"}},
      {"python = 3.10\n", {"python = 3.10 is a TOML float"}},
      {"python = 3\n", {"must be a string"}},
      {"python = true\n", {"must be a string"}},
      {"python = \"3\"\n", {"X.Y"}},
      {"python = \"3.12.1\"\n", {"X.Y"}},
      {"python = \"\"\n", {"X.Y"}},
      {"python = \"three\"\n", {"X.Y"}},
      {"python = \" 3.12\"\n", {"X.Y"}},
      {"python = \"3.13t\"\n", {"free-threaded"}},
  });
}

TEST_CASE("parse_env_config accepts python \"X.Y\"", "[config]") {
  for (const std::string v : {"3.10", "3.12", "3.13", "3.9"}) {
    CAPTURE(v);
    const auto env = parse_env_config("python = \"" + v + "\"\n", "py.toml");
    REQUIRE(env);
    REQUIRE(env->python);
    CHECK(env->python->str() == v);
  }
}

TEST_CASE("parse_env_config refuses bad [cuda] sections", "[config]") {
  check_refusals(parsing_as("cuda.toml"), {"cuda.toml:"}, {
      {"cuda = 5\n", {"[cuda] must be a table"}},
      {"cuda = [\"flash-attn\"]\n", {"[cuda] must be a table"}},
      {"[cuda]\npackages = \"x\"\n", {"[cuda] packages must be an array"}},
      {"[cuda]\npackages = { a = 1 }\n", {"[cuda] packages must be an array"}},
      {"[cuda]\npackages = [1]\n", {"[cuda] packages[0] must be a string"}},
      {"[cuda]\npackages = [\"ok\", [\"nested\"]]\n", {"[cuda] packages[1] must be a string"}},
      {"[cuda]\npackages = [\"\"]\n", {"[cuda] packages[0]", "empty"}},
      {"[cuda]\npackages = [\"bad name\"]\n", {"[cuda] packages[0]", "'bad name'", "not a valid package name"}},
      {"[cuda]\npackages = [\"-lead\"]\n", {"not a valid package name"}},
      {"[cuda]\npackages = [\"torchvision\"]\n",
       {"the torch family is derived from the resolved combo", "remove 'torchvision' from [cuda] packages"}},
      {"[cuda]\npackages = [\"cumesh\", \"torchvision\"]\n", {"[cuda] packages[1]", "torch family"}},
      {"[cuda]\npackages = [\"TorchAudio\"]\n", {"torch family", "'TorchAudio'"}},
      {"[cuda]\npackages = [\"Torch_Vision\"]\n", {"torch family", "'Torch_Vision'"}},
      {"[cuda]\npackages = [\"flash_attn\", \"flash-attn\"]\n",
       {"[cuda] packages[1]", "'flash-attn' duplicates 'flash_attn'", "flash-attn"}},
      {"[cuda]\npackages = [\"Flash.Attn\", \"cumesh\", \"flash__attn\"]\n", {"packages[2]", "duplicates"}},
  });
}

TEST_CASE("parse_env_config: names close to the torch family are fine", "[config]") {
  const auto env = parse_env_config("[cuda]\npackages = [\"torch-scatter\", \"torchsparse\", \"torch_cluster\"]\n", "c.toml");
  REQUIRE(env);
  CHECK(names_of(*env) == std::vector<std::string>{"torch-scatter", "torchsparse", "torch-cluster"});
}

TEST_CASE("parse_env_config warns about unknown [cuda] keys", "[config]") {
  const auto env = parse_env_config("[cuda]\npackages = [\"cumesh\"]\nextra = 1\nindex = \"x\"\n", "warn.toml");
  REQUIRE(env);
  CHECK(names_of(*env) == std::vector<std::string>{"cumesh"});
  REQUIRE(env->warnings.size() == 2);
  for (const auto& w : env->warnings) {
    CAPTURE(w);
    CHECK(contains(w, "warn.toml"));
    CHECK(contains(w, "[cuda]"));
  }
  CHECK(contains(env->warnings[0] + env->warnings[1], "'extra'"));
  CHECK(contains(env->warnings[0] + env->warnings[1], "'index'"));
  CHECK_FALSE(contains(env->passthrough_toml, "extra"));
}

TEST_CASE("parse_env_config checks [workspace]", "[config]") {
  check_refusals(parsing_as("ws.toml"), {"ws.toml:"}, {
      {"workspace = 1\n", {"[workspace] must be a table"}},
      {"[workspace]\nchannels = \"conda-forge\"\n", {"[workspace] channels must be an array"}},
      {"[workspace]\nchannels = [\"conda-forge\", 2]\n", {"[workspace] channels[1] must be a string"}},
      {"[workspace]\nchannels = [\"\"]\n", {"[workspace] channels[0] is an empty string"}},
  });
  SECTION("other [workspace] keys warn and are dropped") {
    const auto env = parse_env_config("[workspace]\nchannels = [\"a\"]\nplatforms = [\"linux-64\"]\n", "ws.toml");
    REQUIRE(env);
    CHECK(env->channels == std::vector<std::string>{"a"});
    REQUIRE(env->warnings.size() == 1);
    CHECK(contains(env->warnings[0], "platforms"));
    CHECK(env->passthrough_toml.empty());
  }
}

TEST_CASE("parse_env_config derives the env name from the file", "[config]") {
  struct Case {
    std::string file;
    std::string name;
  };
  const std::vector<Case> cases = {
      {"geometrypack.comfy-env.toml", "geometrypack"},
      {"/a/b/geometrypack.comfy-env.toml", "geometrypack"},
      {"/nodes/ComfyUI_GeometryPack/comfy-env.toml", "comfyui-geometrypack"},
      {"nodes/My Nodes!/comfy-env.toml", "my-nodes"},
      {"envs/Foo_Bar.toml", "foo-bar"},
      {"envs/plain", "plain"},
      {"envs/__.toml", "env"},
      {"x/.hidden.toml", "env"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const auto env = parse_env_config("", c.file);
    REQUIRE(env);
    CHECK(env->name == c.name);
  }
}

TEST_CASE("parse_env_config passes the rest through as TOML that re-parses to the same table", "[config]") {
  const std::string text = R"(python = "3.11"
top = 1.5

[workspace]
channels = ["conda-forge"]

[cuda]
packages = ["cumesh"]

[dependencies]
numpy = ">=1.26"
bpy = {version = "*", channel = "pozzettiandrea"}

[target.linux-64.dependencies]
mesalib = "*"

[pypi-dependencies]
pyquadriflow = { version = ">=0.2.0", index = "https://example.org/simple/" }

[env_vars]
KMP_DUPLICATE_LIB_OK = "TRUE"
OMP_NUM_THREADS = 1
RATIO = 0.1
HUGE = 1e300
"weird key.with dots" = 'literal \ backslash'
MULTI = """
two
lines"""
when = 1979-05-27T07:32:00Z

[[tasks]]
cmd = "a"

[[tasks]]
cmd = "b"
)";
  const auto env = parse_env_config(text, "pt.toml");
  REQUIRE(env);
  CAPTURE(env->passthrough_toml);
  const toml::table reparsed = toml::parse(env->passthrough_toml);
  toml::table expected = toml::parse(text);
  expected.erase("python");
  expected.erase("cuda");
  expected.erase("workspace");
  CHECK(reparsed == expected);
  CHECK_FALSE(reparsed.contains("python"));
  CHECK_FALSE(reparsed.contains("cuda"));
  CHECK_FALSE(reparsed.contains("workspace"));
  CHECK(reparsed.contains("top"));
  CHECK(reparsed["target"]["linux-64"]["dependencies"]["mesalib"].value<std::string>() == "*");
}

TEST_CASE("parse_env_config refuses text over 4 MiB", "[config]") {
  const std::string big(4u * 1024u * 1024u + 1u, '#');
  const auto env = parse_env_config(big, "big.toml");
  REQUIRE_FALSE(env);
  CHECK(env.error().is(Errc::too_large));
  CHECK(contains(env.error().message, "big.toml"));
}

TEST_CASE("load_env_config reads files and names the path on failure", "[config]") {
  TempDir dir;
  SECTION("a missing file is not_found") {
    const auto path = (dir / "nope.toml").string();
    const auto env = load_env_config(path);
    REQUIRE_FALSE(env);
    CHECK(env.error().is(Errc::not_found));
    CHECK(contains(env.error().message, path));
  }
  SECTION("a folder is an io_error") {
    const auto env = load_env_config(dir.path().string());
    REQUIRE_FALSE(env);
    CHECK(env.error().is(Errc::io_error));
  }
  SECTION("a file over 4 MiB is too_large") {
    const auto path = dir / "big.comfy-env.toml";
    write_file(path, std::string(4u * 1024u * 1024u + 10u, '\n'));
    const auto env = load_env_config(path.string());
    REQUIRE_FALSE(env);
    CHECK(env.error().is(Errc::too_large));
    CHECK(contains(env.error().message, path.string()));
  }
  SECTION("comfy-env.toml takes its folder's name") {
    const auto path = dir / "ComfyUI-Sage" / "comfy-env.toml";
    write_file(path, "[cuda]\npackages = [\"sageattention\"]\n");
    const auto env = load_env_config(path.string());
    REQUIRE(env);
    CHECK(env->name == "comfyui-sage");
    CHECK(env->file == path.string());
    CHECK(names_of(*env) == std::vector<std::string>{"sageattention"});
  }
}

TEST_CASE("load_workspace makes env names unique and stops at the first bad file", "[config]") {
  TempDir dir;
  write_file(dir / "a" / "comfy-env.toml", "[cuda]\npackages = [\"cumesh\"]\n");
  write_file(dir / "b" / "a" / "comfy-env.toml", "python = \"3.12\"\n");
  write_file(dir / "a.comfy-env.toml", "");
  write_file(dir / "a-2.toml", "");
  write_file(dir / "bad.comfy-env.toml", "[cuda]\npackages = [\"torchvision\"]\n");

  SECTION("unique names") {
    const auto ws = load_workspace({(dir / "a" / "comfy-env.toml").string(), (dir / "b" / "a" / "comfy-env.toml").string(),
                                    (dir / "a.comfy-env.toml").string(), (dir / "a-2.toml").string()});
    REQUIRE(ws);
    REQUIRE(ws->envs.size() == 4);
    CHECK(ws->envs[0].name == "a");
    CHECK(ws->envs[1].name == "a-2");
    CHECK(ws->envs[2].name == "a-3");
    CHECK(ws->envs[3].name == "a-2-2");
    CHECK(names_of(ws->envs[0]) == std::vector<std::string>{"cumesh"});
  }
  SECTION("the first bad file fails the workspace and is named") {
    const auto bad = (dir / "bad.comfy-env.toml").string();
    const auto missing = (dir / "missing.toml").string();
    const auto ws = load_workspace({(dir / "a.comfy-env.toml").string(), bad, missing});
    REQUIRE_FALSE(ws);
    CAPTURE(ws.error().message);
    CHECK(contains(ws.error().message, bad));
    CHECK(contains(ws.error().message, "torch family"));
  }
  SECTION("a missing file fails the workspace and is named") {
    const auto missing = (dir / "missing.toml").string();
    const auto ws = load_workspace({(dir / "a.comfy-env.toml").string(), missing});
    REQUIRE_FALSE(ws);
    CHECK(ws.error().is(Errc::not_found));
    CHECK(contains(ws.error().message, missing));
  }
  SECTION("no files is a usage error") {
    const auto ws = load_workspace({});
    REQUIRE_FALSE(ws);
    CHECK(ws.error().is(Errc::usage));
  }
}

TEST_CASE("the geometrypack fixture loads", "[config][fixtures]") {
  const auto path = (wheelfit::test::fixtures_dir() / "comfy-env" / "geometrypack.comfy-env.toml").string();
  const auto env = load_env_config(path);
  REQUIRE(env);
  CHECK(env->name == "geometrypack");
  CHECK_FALSE(env->python);
  CHECK(names_of(*env) == std::vector<std::string>{"cumesh", "faithc-aot"});
  CHECK(env->channels == std::vector<std::string>{"conda-forge", "pozzettiandrea"});
  CHECK(env->warnings.empty());

  const toml::table pass = toml::parse(env->passthrough_toml);
  CHECK(pass.contains("dependencies"));
  CHECK(pass.contains("pypi-dependencies"));
  CHECK(pass.contains("target"));
  CHECK(pass.contains("env_vars"));
  CHECK_FALSE(pass.contains("cuda"));
  CHECK_FALSE(pass.contains("workspace"));
  CHECK(pass["dependencies"]["bpy"]["channel"].value<std::string>() == "pozzettiandrea");
  CHECK(pass["env_vars"]["OMP_NUM_THREADS"].value<std::int64_t>() == 1);

  toml::table expected = toml::parse_file(path);
  expected.erase("cuda");
  expected.erase("workspace");
  CHECK(pass == expected);
}
