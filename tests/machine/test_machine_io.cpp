// Tests of a machine's facts from outside the profile text: process_env, fill_from_host, to_json
// (and back) and load_machine_profile.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "machine/machine_profiles.hpp"
#include "support/test_support.hpp"
#include "wheelfit/machine/machine.hpp"
#include "support/model_support.hpp"

using namespace wheelfit::machine;
using namespace wheelfit::test;
using wheelfit::Errc;
using wheelfit::model::Os;

TEST_CASE("process_env reads the process environment", "[machine]") {
  wheelfit::test::ScopedEnv glibc("WHEELFIT_OVERRIDE_GLIBC", "2.31");
  wheelfit::test::ScopedEnv gpus("WHEELFIT_OVERRIDE_GPUS", "sm_120, 8.9");
  wheelfit::test::ScopedEnv python("WHEELFIT_OVERRIDE_PYTHON", std::nullopt);
#ifndef _WIN32  // msvcrt's _putenv removes a variable set to "": Windows' tests cannot set one
  wheelfit::test::ScopedEnv conda("CONDA_OVERRIDE_CUDA", "");
#endif
  wheelfit::test::ScopedEnv line("WHEELFIT_OVERRIDE_DRIVER_LINE", std::nullopt);
  wheelfit::test::ScopedEnv old_line("WHEELFIT_OVERRIDE_CUDA_DRIVER", std::nullopt);
  const auto env = wheelfit::machine::process_env();
  CHECK(env("WHEELFIT_OVERRIDE_GLIBC") == std::optional<std::string>("2.31"));
  CHECK_FALSE(env("WHEELFIT_OVERRIDE_PYTHON"));
#ifndef _WIN32
  CHECK(env("CONDA_OVERRIDE_CUDA") == std::optional<std::string>(""));
#endif

  Machine m;
  REQUIRE(set_fact(m, "driver_line", "12.8", "file"));
  REQUIRE(apply_env_overrides(m, env));
  CHECK(m.glibc == nv("2.31"));
  CHECK(m.gpus == std::vector<std::string>{"sm_120", "8.9"});
#ifndef _WIN32
  CHECK_FALSE(m.driver_line);  // CONDA_OVERRIDE_CUDA="" removes it, as conda does
#endif
}

TEST_CASE("fill_from_host fills unknown facts only", "[machine]") {
  SECTION("an empty machine gets the host's os, cpu_arch and glibc") {
    Machine m;
    wheelfit::machine::fill_from_host(m);
    REQUIRE(m.os);
    REQUIRE(m.cpu_arch);
    CHECK_FALSE(m.cpu_arch->empty());
#ifdef _WIN32
    CHECK(m.os == Os::windows);
    CHECK(m.cpu_arch == "x86_64");
    CHECK(m.provenance.at("os") == "host (a Windows build)");
    CHECK(m.provenance.at("cpu_arch") == "host GetNativeSystemInfo");
#else
    CHECK(m.provenance.at("os") == "host uname");
    CHECK(m.provenance.at("cpu_arch") == "host uname");
#endif
#if defined(__linux__) && defined(__GLIBC__)
    CHECK(m.os == Os::linux_);
    REQUIRE(m.glibc);
    CHECK(m.glibc->major() == 2);
    CHECK(m.provenance.at("glibc") == "host gnu_get_libc_version()");
#endif
    CHECK_FALSE(m.python);
    CHECK_FALSE(m.gpus);
  }
  SECTION("known facts stay") {
    Machine m;
    REQUIRE(set_fact(m, "os", "linux", "profile p"));
    REQUIRE(set_fact(m, "cpu_arch", "riscv64", "profile p"));
    REQUIRE(set_fact(m, "glibc", "2.17", "profile p"));
    const Machine before = m;
    wheelfit::machine::fill_from_host(m);
    CHECK(m == before);
  }
  SECTION("no host glibc for a machine that is not Linux") {
    Machine m;
    REQUIRE(set_fact(m, "os", "windows", "profile p"));
    wheelfit::machine::fill_from_host(m);
    CHECK_FALSE(m.glibc);
  }
}

TEST_CASE("to_json writes every known fact in key order and round-trips", "[machine]") {
  SECTION("full machine") {
    auto m = parse_machine_profile(kFullToml, "fleet.toml");
    REQUIRE(m);
    REQUIRE(set_fact(*m, "python", "3.13t", "env WHEELFIT_OVERRIDE_PYTHON"));
    const std::string json = wheelfit::machine::to_json(*m);
    CAPTURE(json);
    CHECK(json ==
          R"({"os":"linux","cpu_arch":"x86_64","glibc":"2.35","python":"3.13t","torch":"2.8.0+cu128",)"
          R"("backend":"cuda","driver_version":"580.65.06","driver_line":"13.0","gpus":["9.0","sm_86"],)"
          R"("provenance":{"os":"profile fleet.toml","cpu_arch":"profile fleet.toml","glibc":"profile fleet.toml",)"
          R"("python":"env WHEELFIT_OVERRIDE_PYTHON","torch":"profile fleet.toml","backend":"profile fleet.toml",)"
          R"("driver_version":"profile fleet.toml","driver_line":"profile fleet.toml","gpus":"profile fleet.toml"}})");
    const auto back = parse_machine_profile(json, "detect.json");
    REQUIRE(back);
    CHECK(wheelfit::machine::same_facts(*back, *m));
    CHECK(back->python_free_threaded);
    CHECK(back->provenance.at("python") == "profile detect.json");
  }
  SECTION("partial machines") {
    std::vector<Machine> machines(4);
    REQUIRE(set_fact(machines[1], "gpus", "none", "x"));
    REQUIRE(set_fact(machines[2], "torch", "2.10.0.dev20250101+cu130", "x"));
    REQUIRE(set_fact(machines[2], "os", "macos", "x"));
    REQUIRE(set_fact(machines[3], "gpus", "sm_75", "x"));
    REQUIRE(set_fact(machines[3], "python", "3.9", "x"));
    machines.emplace_back();
    REQUIRE(set_fact(machines[4], "gpu_targets", "gfx90a, gfx90a, gfx1100", "x"));
    REQUIRE(set_fact(machines[4], "backend", "rocm", "x"));
    machines.emplace_back();
    REQUIRE(set_fact(machines[5], "gpu_targets", "none", "x"));
    machines.emplace_back();
    REQUIRE(set_fact(machines[6], "backend", "xpu", "x"));
    REQUIRE(set_fact(machines[6], "cuda_driver", "13.0", "x"));
    REQUIRE(set_fact(machines[6], "gpus", "gfx90a:sramecc+:xnack-, sm_90, 9.0", "x"));
    for (const auto& m : machines) {
      const std::string json = wheelfit::machine::to_json(m);
      CAPTURE(json);
      const auto back = parse_machine_profile(json, "rt.json");
      REQUIRE(back);
      CHECK(wheelfit::machine::same_facts(*back, m));
    }
    CHECK(wheelfit::machine::to_json(machines[0]) == R"({"provenance":{}})");
  }
  SECTION("the host round-trips") {
    Machine m;
    wheelfit::machine::fill_from_host(m);
    const auto back = parse_machine_profile(wheelfit::machine::to_json(m), "host.json");
    REQUIRE(back);
    CHECK(wheelfit::machine::same_facts(*back, m));
  }
}

TEST_CASE("load_machine_profile reads files", "[machine]") {
  wheelfit::test::TempDir dir;
  SECTION("TOML and JSON files") {
    wheelfit::test::write_file(dir / "m.toml", kFullToml);
    wheelfit::test::write_file(dir / "m.json", "\n{\"glibc\": \"2.39\"}\n");
    const auto t = wheelfit::machine::load_machine_profile((dir / "m.toml").string());
    REQUIRE(t);
    CHECK(t->provenance.at("glibc") == "profile " + (dir / "m.toml").string());
    const auto j = wheelfit::machine::load_machine_profile((dir / "m.json").string());
    REQUIRE(j);
    CHECK(j->glibc == nv("2.39"));
  }
  SECTION("missing file") {
    const auto path = (dir / "none.toml").string();
    const auto m = wheelfit::machine::load_machine_profile(path);
    REQUIRE_FALSE(m);
    CHECK(m.error().is(Errc::not_found));
    CHECK(contains(m.error().message, path));
  }
  SECTION("a file over 1 MiB is too_large") {
    wheelfit::test::write_file(dir / "big.toml", std::string(1024u * 1024u + 1u, '\n'));
    const auto m = wheelfit::machine::load_machine_profile((dir / "big.toml").string());
    REQUIRE_FALSE(m);
    CHECK(m.error().is(Errc::too_large));
  }
  SECTION("errors name the file") {
    wheelfit::test::write_file(dir / "bad.toml", "glibc = 2.35\n");
    const auto path = (dir / "bad.toml").string();
    const auto m = wheelfit::machine::load_machine_profile(path);
    REQUIRE_FALSE(m);
    CHECK(contains(m.error().message, path + ":1:"));
  }
}
