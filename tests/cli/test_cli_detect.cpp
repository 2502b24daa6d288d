// `wheelfit detect` end to end, and `wheelfit resolve` detecting when no --machine is given. Each
// run gets a clean environment (env -i): a fake python3 first on PATH, an empty fake sysroot (or
// a fake KFD topology), the NVIDIA probes pointed at files that do not exist, a private cache.
#include <catch2/catch.hpp>


#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "inspect/binary_writer.hpp"
#include "machine/fake_python.hpp"
#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;

namespace {

using CliDetectRun = CliRun;

// A machine to detect, and a small index and config to resolve against.
struct CliDetectWorld : OneWheelProject {
  fs::path bin = dir / "bin";
  fs::path python = bin / "python3";
  fs::path site = dir / "site-packages";
  fs::path sysroot = dir / "root";
  std::map<std::string, std::string> env;
  fs::path exe = wheelfit::test::built_wheelfit();  ///< what run() runs

  CliDetectWorld() {
    fs::create_directories(site);
    fs::create_directories(sysroot);
    write_fake_python(python, wheelfit::test::python_answer(python.string(), {site.string()}));
    write_file(config, "[cuda]\npackages = [\"pkg\"]\n");
    env = {{"PATH", bin.string() + ":/usr/bin:/bin"},
           {"HOME", (dir / "home").string()},
           {"XDG_CACHE_HOME", (dir / "cache").string()},
           {"WHEELFIT_SYSROOT", sysroot.string()},
           {"WHEELFIT_NVML_LIBRARY", (dir / "no-libnvidia-ml.so.1").string()},
           {"WHEELFIT_CUDA_LIBRARY", (dir / "no-libcuda.so.1").string()},
           {"WHEELFIT_NVIDIA_SMI", (dir / "no-nvidia-smi").string()},
           // the host facts, so that the resolve below is the same on every build machine
           {"WHEELFIT_OVERRIDE_OS", "linux"},
           {"WHEELFIT_OVERRIDE_CPU_ARCH", "x86_64"},
           {"WHEELFIT_OVERRIDE_GLIBC", "2.35"}};
  }
  void torch(const std::string& version) const {
    wheelfit::test::write_dist_info(site, "torch-" + version + ".dist-info", "torch", version);
  }
  void amd_gpu(const std::string& node, unsigned gfx_target_version) const {
    write_file(sysroot / "sys/class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 16\ngfx_target_version 0\n");
    write_file(sysroot / "sys/class/kfd/kfd/topology/nodes" / node / "properties",
               "simd_count 440\ngfx_target_version " + std::to_string(gfx_target_version) + "\n");
  }

  // Runs the built wheelfit with `args` in this world's environment only.
  [[nodiscard]] CliDetectRun run(const std::vector<std::string>& args) const {
    std::string prefix = "env -i";
    for (const auto& [k, v] : env) prefix += " " + k + "=" + shell_quote(v);
    return wheelfit::test::run_program(prefix, exe, args);
  }
};

boost::json::object parse_object_cli_detect(const std::string& text) { return boost::json::parse(text).as_object(); }

bool any_note(const boost::json::object& o, const std::string& needle) {
  for (const auto& n : o.at("notes").as_array())
    if (std::string(n.as_string()).find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("wheelfit detect --json prints the profile with provenance and notes", "[cli][detect]") {
  CliDetectWorld w;
  w.torch("2.8.0+cu128");
  auto r = w.run({"detect", "--json"});
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  const auto o = parse_object_cli_detect(r.out);  // exactly one JSON value
  CHECK(o.at("os").as_string() == "linux");
  CHECK(o.at("python").as_string() == "3.12");
  CHECK(o.at("torch").as_string() == "2.8.0+cu128");
  CHECK(o.at("backend").as_string() == "cuda");
  CHECK_FALSE(o.contains("gpus"));  // no NVIDIA GPU found, none claimed
  const auto& prov = o.at("provenance").as_object();
  CHECK(prov.at("os").as_string() == "env WHEELFIT_OVERRIDE_OS");
  CHECK(prov.at("python").as_string() == "interpreter " + w.python.string());
  CHECK(std::string(prov.at("torch").as_string()).find("torch-2.8.0+cu128.dist-info/METADATA") != std::string::npos);
  CHECK(prov.at("backend").as_string() == "torch 2.8.0+cu128 (label +cu128)");
  CHECK(any_note(o, "cuda detection found no hardware"));
  CHECK(any_note(o, "cuda: "));
  CHECK(any_note(o, "rocm: KFD"));
  CHECK(o.at("interpreter").as_object().at("packages").as_object().at("torch").as_object().at("version") == "2.8.0+cu128");
  CHECK(o.at("interpreter").as_object().at("cached").as_bool() == false);

  SECTION("a second run answers from the cache") {
    auto again = w.run({"detect", "--json"});
    REQUIRE(again.code == 0);
    const auto a = parse_object_cli_detect(again.out);
    CHECK(a.at("provenance").as_object().at("python").as_string() == "interpreter " + w.python.string() + " (cached)");
    CHECK(a.at("interpreter").as_object().at("cached").as_bool());
    CHECK(wheelfit::test::script_runs(w.python) == 1);
  }
}

TEST_CASE("wheelfit detect --json output is a valid --machine file", "[cli][detect]") {
  CliDetectWorld w;
  w.torch("2.8.0+cu128");
  w.env["WHEELFIT_OVERRIDE_GPUS"] = "9.0";
  auto r = w.run({"detect", "--json"});
  REQUIRE(r.code == 0);
  const fs::path profile = w.dir / "machine.json";
  write_file(profile, r.out);
  w.env.erase("WHEELFIT_OVERRIDE_GPUS");
  auto resolved = w.run({"resolve", w.config.string(), "--index", w.index.string(), "--machine", profile.string(), "--json"});
  CAPTURE(resolved.err);
  CHECK(resolved.code == 0);
  const auto o = parse_object_cli_detect(resolved.out);
  CHECK(o.at("tier").as_string() == "bootstrap");
  CHECK(o.at("packages").as_array().size() == 1);
  // The profile describes that machine; the host does not fill it (the fake interpreter is not asked).
  CHECK(wheelfit::test::script_runs(w.python) == 1);
}

TEST_CASE("wheelfit detect prints one line per fact, then the notes", "[cli][detect]") {
  CliDetectWorld w;
  auto r = w.run({"detect"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("python          3.12            interpreter " + w.python.string()));
  CHECK_THAT(r.out, Catch::Contains("torch           unknown"));
  CHECK_THAT(r.out, Catch::Contains("backend         cpu             no backend found hardware (cuda, rocm)"));
  CHECK_THAT(r.out, Catch::Contains("gpus            none            no backend found a GPU (cuda, rocm)"));
  CHECK_THAT(r.out, Catch::Contains("\nnotes:\n"));
  CHECK_THAT(r.out, Catch::Contains("torch is not installed for " + w.python.string()));
}

TEST_CASE("wheelfit detect on a ROCm machine", "[cli][detect]") {
  CliDetectWorld w;
  w.torch("2.7.1+rocm6.3");
  w.amd_gpu("1", 90010);
  w.amd_gpu("2", 90010);
  write_file(w.sysroot / "sys/module/amdgpu/version", "6.8.5\n");
  auto r = w.run({"detect", "--json"});
  REQUIRE(r.code == 0);
  const auto o = parse_object_cli_detect(r.out);
  CHECK(o.at("backend").as_string() == "rocm");
  CHECK(o.at("gpus").as_array() == boost::json::array{"gfx90a", "gfx90a"});
  CHECK(o.at("driver_version").as_string() == "6.8.5");
  CHECK(o.at("devices").as_array().size() == 2);

  SECTION("resolve detects it and stops with exit 3, saying what it found") {
    auto res = w.run({"resolve", w.config.string()});
    CHECK(res.code == 3);
    CHECK_THAT(res.err, Catch::Contains("ROCm backend detected gfx90a with torch 2.7.1+rocm6.3; no ROCm wheel index is "
                                        "published yet; set one with --index URL or WHEELFIT_ROCM_WHEELS_INDEX"));
  }
  SECTION("--backend cpu overrides what was found") {
    auto c = w.run({"detect", "--json", "--backend", "cpu"});
    REQUIRE(c.code == 0);
    CHECK(parse_object_cli_detect(c.out).at("backend").as_string() == "cpu");
  }
}

TEST_CASE("wheelfit resolve without --machine detects the machine", "[cli][detect]") {
  CliDetectWorld w;
  w.torch("2.8.0+cu128");
  w.env["WHEELFIT_OVERRIDE_GPUS"] = "9.0";
  auto r = w.run({"resolve", w.config.string(), "--index", w.index.string(), "--json"});
  CAPTURE(r.err);
  CHECK(r.code == 0);
  const auto o = parse_object_cli_detect(r.out);
  CHECK(o.at("tier").as_string() == "bootstrap");
  CHECK(wheelfit::test::script_runs(w.python) == 1);
  SECTION("--python names the interpreter for resolve too") {
    auto bad = w.run({"resolve", w.config.string(), "--index", w.index.string(), "--python", (w.dir / "nope").string()});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--python: " + (w.dir / "nope").string() + ": no such file"));
  }
}

TEST_CASE("wheelfit detect: errors exit 2 and name the problem", "[cli][detect]") {
  CliDetectWorld w;
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  const fs::path missing = w.dir / "no" / "python";
  auto row = GENERATE_COPY(values<Row>({
      {{"detect", "--python", missing.string()}, "--python: " + missing.string() + ": no such file"},
      {{"detect", "--backend", "metal"}, "--backend: unknown backend 'metal' (known: cpu, cuda, rocm)"},
      {{"detect", "--backend", "Bad Name"}, "--backend: backend = 'Bad Name': must be a backend name"},
      {{"detect", "--bogus"}, "unknown option --bogus"},
      {{"detect", "extra"}, "unexpected argument 'extra'"},
  }));
  CAPTURE(row.args);
  auto r = w.run(row.args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(row.message));
  row.args.push_back("--json");
  auto j = w.run(row.args);
  CHECK(j.code == 2);
  CHECK(parse_object_cli_detect(j.out).at("error").as_object().at("exit_code").as_int64() == 2);
}

TEST_CASE("wheelfit detect: an interpreter that hangs or prints garbage", "[cli][detect]") {
  CliDetectWorld w;
  SECTION("python3 on PATH printing garbage: a note, python unknown") {
    wheelfit::test::write_script(w.python, "echo garbage");
    auto r = w.run({"detect", "--json"});
    REQUIRE(r.code == 0);
    const auto o = parse_object_cli_detect(r.out);
    CHECK_FALSE(o.contains("python"));
    CHECK(any_note(o, w.python.string() + ": printed no JSON"));
  }
  SECTION("--python that prints garbage: exit 2") {
    wheelfit::test::write_script(w.python, "echo garbage");
    auto r = w.run({"detect", "--python", w.python.string()});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(w.python.string() + ": printed no JSON"));
  }
  SECTION("a bad override: exit 2 naming it") {
    w.env["WHEELFIT_OVERRIDE_GLIBC"] = "two";
    auto r = w.run({"detect"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("WHEELFIT_OVERRIDE_GLIBC"));
  }
}

TEST_CASE("wheelfit detect without plugins still tells the rest of the machine", "[cli][detect]") {
  CliDetectWorld w;
  // A copy of wheelfit in <prefix>/bin without <prefix>/lib/wheelfit/plugins: no built-in plugin
  // folder, and WHEELFIT_PLUGIN_PATH (searched in addition to it) names a missing one.
  w.exe = w.dir / "prefix" / "bin" / "wheelfit";
  fs::create_directories(w.exe.parent_path());
  fs::copy_file(wheelfit::test::built_wheelfit(), w.exe);
  w.env["WHEELFIT_PLUGIN_PATH"] = (w.dir / "no-plugins-here").string();
  auto r = w.run({"detect", "--json"});
  REQUIRE(r.code == 0);
  const auto o = parse_object_cli_detect(r.out);
  CHECK(o.at("python").as_string() == "3.12");
  CHECK(o.at("backend").as_string() == "cpu");
  CHECK(o.at("provenance").as_object().at("backend").as_string() == "no backend detection ran");
  CHECK_FALSE(o.contains("gpus"));  // nobody looked
  CHECK(any_note(o, "no backend detection ran"));
  CHECK(any_note(o, "no-plugins-here"));
}

TEST_CASE("wheelfit resolve: --python does not go with --machine", "[cli][detect]") {
  CliDetectWorld w;
  write_file(w.dir / "m.toml", "os = \"linux\"\n");
  auto r = w.run({"resolve", w.config.string(), "--machine", (w.dir / "m.toml").string(), "--python", w.python.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("--python") && Catch::Contains("--machine"));
  CHECK(wheelfit::test::script_runs(w.python) == 0);
}

TEST_CASE("wheelfit resolve reads the detected torch's arch list from its library", "[cli][detect][torch_lib]") {
  CliDetectWorld w;
  w.torch("2.8.0+cu128");
  w.env["WHEELFIT_OVERRIDE_GPUS"] = "9.0";
  const fs::path lib = w.site / "torch" / "lib" / "libtorch_cuda.so";
  bin::LibrarySpec spec;
  spec.extra.push_back(bin::Section{".nv_fatbin", 1, bin::fatbin_container({{2, 80}, {2, 90}, {1, 90, 0x8011, 80}})});
  write_file(lib, bin::write_library(spec).bytes);

  auto r = w.run({"resolve", w.config.string(), "--index", w.index.string(), "--json"});
  CAPTURE(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Catch::Contains("torch's arch list 8.0;9.0+PTX: read from " + lib.string() + ": 2 SASS, 1 PTX entries"));
  auto d = w.run({"detect", "--json"});
  REQUIRE(d.code == 0);
  CHECK(parse_object_cli_detect(d.out).at("interpreter").as_object().at("torch_lib").as_string() == lib.parent_path().string());

  SECTION("a library that cannot be read is a warning naming it; the policy's row is used") {
    write_file(lib, "\x7f" "ELF truncated");
    auto bad = w.run({"resolve", w.config.string(), "--index", w.index.string(), "--json"});
    CHECK(bad.code == 0);
    const auto warnings = parse_object_cli_detect(bad.out).at("warnings").as_array();
    bool named = false;
    for (const auto& x : warnings) {
      const std::string text(x.as_string());
      named = named || (text.find("torch's arch list was not read from its library (") != std::string::npos &&
                        text.find(lib.string()) != std::string::npos);
    }
    CHECK(named);
  }
  SECTION("an overridden torch is not the installed one: its library is not read") {
    w.env["WHEELFIT_OVERRIDE_TORCH"] = "2.8.0+cu126";
    auto o = w.run({"resolve", w.config.string(), "--index", w.index.string(), "--json"});
    CHECK_THAT(o.err, !Catch::Contains("torch's arch list"));
  }
}
