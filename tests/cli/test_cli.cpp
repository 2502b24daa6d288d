// The wheelfit executable end to end: arguments, exit codes, outputs, files.
#include <catch2/catch.hpp>


#include <boost/json.hpp>
#include <cstdlib>
#include <set>
#include <filesystem>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;

namespace {


// Runs the built wheelfit with `args` and a clean override environment.
CliRun run_wheelfit_cli(const std::vector<std::string>& args, const std::string& env = "") {
  return wheelfit::test::run_program("env -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA "
                                     "-u CONDA_OVERRIDE_GLIBC -u WHEELFIT_PLUGIN_PATH " + env,
                                     wheelfit::test::built_wheelfit(), args);
}

// A small local index and config in a temp dir.
struct CliWorld : OneWheelProject {
  fs::path machine = dir / "machine.toml";
  CliWorld() {
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n[dependencies]\nnumpy = \"*\"\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "driver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
  }
  std::vector<std::string> resolve_args() const {
    return {"resolve", config.string(), "--index", index.string(), "--machine", machine.string()};
  }
};

}  // namespace

TEST_CASE("wheelfit usage errors exit 2 and name the problem", "[cli]") {
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  auto row = GENERATE(values<Row>({
      {{}, "usage:"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"resolve"}, "give at least one comfy-env.toml"},
      {{"resolve", "x.toml", "--index"}, "--index: missing value"},
      {{"resolve", "x.toml", "--bogus"}, "unknown option --bogus"},
      {{"resolve", "/nonexistent/comfy-env.toml"}, "/nonexistent/comfy-env.toml"},
  }));
  CAPTURE(row.args);
  auto r = run_wheelfit_cli(row.args);
  CHECK(r.code == 2);
  CHECK_THAT(r.out + r.err, Catch::Contains(row.message));
}

TEST_CASE("wheelfit resolve resolves, reports and writes pixi.toml", "[cli]") {
  CliWorld w;
  auto out = w.dir / "pixi.toml";
  auto args = w.resolve_args();
  args.insert(args.end(), {"-o", out.string()});
  auto r = run_wheelfit_cli(args);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("resolved: cu12.8/torch2.8 via tier 1 (bootstrap)"));
  REQUIRE(fs::exists(out));
  CHECK_THAT(read_file(out), Catch::Contains("#sha256=" + std::string(64, 'a')));
}

TEST_CASE("wheelfit resolve --json prints exactly one JSON object", "[cli]") {
  CliWorld w;
  auto args = w.resolve_args();
  args.push_back("--json");
  auto r = run_wheelfit_cli(args);
  CHECK(r.code == 0);
  boost::json::value v = boost::json::parse(r.out);  // throws on anything but one JSON value
  CHECK(v.as_object().at("tier").as_string() == "bootstrap");
  CHECK(v.as_object().at("packages").as_array().size() == 1);
}

TEST_CASE("wheelfit resolve exits 1 when nothing fits and leaves pixi.toml untouched", "[cli]") {
  CliWorld w;
  auto out = w.dir / "pixi.toml";
  write_file(out, "precious");
  auto args = w.resolve_args();
  args.insert(args.end(), {"-o", out.string()});
  auto r = run_wheelfit_cli(args, "WHEELFIT_OVERRIDE_GPUS=6.1");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("No CUDA combo covers all required packages."));
  // torch 2.8.0+cu128 itself has no kernels for sm 6.1 (issue 32): that is the root cause.
  CHECK_THAT(r.out, Catch::Contains("root cause: torch 2.8.0+cu128 cannot run on sm 6.1"));
  CHECK(read_file(out) == "precious");
}

TEST_CASE("wheelfit resolve: bad inputs exit 2 naming the file or flag", "[cli]") {
  CliWorld w;
  SECTION("a machine profile with a number") {
    write_file(w.machine, "glibc = 2.35\n");
    auto r = run_wheelfit_cli(w.resolve_args());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--machine") && Catch::Contains("glibc"));
  }
  SECTION("torch under [cuda] packages") {
    write_file(w.config, "[cuda]\npackages = [\"torch\"]\n");
    auto r = run_wheelfit_cli(w.resolve_args());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(w.config.string()) && Catch::Contains("torch"));
  }
  SECTION("an index folder that does not exist") {
    auto args = w.resolve_args();
    args[3] = (w.dir / "missing").string();
    auto r = run_wheelfit_cli(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("missing"));
  }
  SECTION("a policy file that is not JSON") {
    write_file(w.dir / "p.json", "nope");
    auto args = w.resolve_args();
    args.insert(args.end(), {"--policy", (w.dir / "p.json").string()});
    auto r = run_wheelfit_cli(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--policy"));
  }
  SECTION("an override with a bad value") {
    auto r = run_wheelfit_cli(w.resolve_args(), "WHEELFIT_OVERRIDE_GLIBC=two");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("WHEELFIT_OVERRIDE_GLIBC"));
  }
}

TEST_CASE("wheelfit resolve on a ROCm machine exits 3 with a clear message", "[cli]") {
  CliWorld w;
  auto args = w.resolve_args();
  args.erase(args.begin() + 2, args.begin() + 4);  // no --index: the backend's own is wanted
  auto r = run_wheelfit_cli(args, "WHEELFIT_OVERRIDE_TORCH=2.7.1+rocm6.3 WHEELFIT_OVERRIDE_GPU_TARGETS=gfx90a,gfx90a");
  CHECK(r.code == 3);
  CHECK_THAT(r.err, Catch::Contains("ROCm backend detected gfx90a with torch 2.7.1+rocm6.3; no ROCm wheel index is published "
                                    "yet; set one with --index URL or WHEELFIT_ROCM_WHEELS_INDEX"));
  auto bare = run_wheelfit_cli(args, "WHEELFIT_OVERRIDE_TORCH=2.7.1+rocm6.3");  // the profile names no GPU target
  CHECK(bare.code == 3);
  CHECK_THAT(bare.err, Catch::Contains("ROCm backend with torch 2.7.1+rocm6.3; no ROCm wheel index is published yet"));
}

TEST_CASE("wheelfit resolve honours COMFY_ENV_CUDA_WHEELS_INDEX and --index wins", "[cli]") {
  CliWorld w;
  auto args = w.resolve_args();
  args.erase(args.begin() + 2, args.begin() + 4);  // drop --index
  SECTION("the env var names the index") {
    auto r = run_wheelfit_cli(args, "COMFY_ENV_CUDA_WHEELS_INDEX=" + shell_quote(w.index.string()));
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("env COMFY_ENV_CUDA_WHEELS_INDEX"));
  }
  SECTION("blank means unset: the default (network) index is named") {
    // Kept on loopback: every connection goes to a proxy port where nothing listens.
    args.push_back("--no-cache");
    auto r = run_wheelfit_cli(args, "COMFY_ENV_CUDA_WHEELS_INDEX=' ' https_proxy=http://127.0.0.1:9 "
                                "WHEELFIT_RETRY_BACKOFF_MS=1 WHEELFIT_GITHUB_API=https://127.0.0.1:9");
    CHECK(r.code == 4);
    CHECK_THAT(r.err, Catch::Contains("https://comfy-forge.github.io/cuda-wheels/") && Catch::Contains("could not be read"));
  }
  SECTION("--index wins over the env var") {
    auto r = run_wheelfit_cli(w.resolve_args(), "COMFY_ENV_CUDA_WHEELS_INDEX=/nonexistent");
    CHECK(r.code == 0);
  }
}

TEST_CASE("wheelfit resolve the real geometrypack config on the farm snapshot", "[cli][fixtures]") {
  CliWorld w;
  const auto config = wheelfit::test::fixtures_dir() / "comfy-env" / "geometrypack.comfy-env.toml";
  const auto index = wheelfit::test::farm_index_dir();
  auto out = w.dir / "pixi.toml";
  auto r = run_wheelfit_cli({"resolve", config.string(), "--index", index.string(), "--machine", w.machine.string(), "--json", "-o", out.string()});
  CHECK(r.code == 0);
  auto v = boost::json::parse(r.out).as_object();
  std::set<std::string> names;
  for (const auto& p : v.at("packages").as_array()) names.insert(std::string(p.at("name").as_string()));
  CHECK(names == std::set<std::string>{"cumesh", "faithc-aot"});
  CHECK_THAT(read_file(out), Catch::Contains("[feature.geometrypack.dependencies]"));
}

TEST_CASE("wheelfit escapes control characters in what it prints: errors and warnings", "[cli][escape]") {
  TempDir dir;
  const std::string evil = "evil\x1b[2J\rname";
  write_file(dir / "m.toml", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ngpus = [\"9.0\"]\n");
  // A plugin folder that does not exist (a warning naming it) and a config that does not (the error).
  const auto r = run_wheelfit_cli({"resolve", (dir / (evil + ".toml")).string(), "--machine", (dir / "m.toml").string()},
                                  "WHEELFIT_PLUGIN_PATH=" + shell_quote((dir / evil).string()));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("warning: ") && Catch::Contains("wheelfit: "));
  CHECK_THAT(r.err, Catch::Contains("evil\\x1b[2J\\x0dname"));
  for (unsigned char c : r.err) CHECK((c >= 0x20 || c == '\n'));  // nothing raw reaches the terminal
}
