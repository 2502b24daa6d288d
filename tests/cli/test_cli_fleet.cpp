// `wheelfit resolve` for a fleet: --machine given several times, --machines DIR; one machine
// keeps the single output; -o and --python do not go with several machines.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;

namespace {

CliRun run_wheelfit_cli_fleet(const std::vector<std::string>& args) {
  return run_program("env -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA -u CONDA_OVERRIDE_GLIBC "
                     "-u WHEELFIT_PLUGIN_PATH -u WHEELFIT_OVERRIDE_PYTHON -u WHEELFIT_OVERRIDE_GPUS",
                     built_wheelfit(), args);
}

// A one-package index, a config, and two profiles in machines/: an H100 (resolves) and a
// GTX 1080 (sm 6.1: the cu128 wheel does not cover it).
struct Fleet : OneWheelProject {
  fs::path machines = dir / "machines";
  Fleet() {
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
    const std::string common = "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\n"
                               "torch = \"2.8.0+cu128\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\n";
    write_file(machines / "h100.toml", common + "gpus = [\"9.0\"]\n");
    write_file(machines / "gtx1080.toml", common + "gpus = [\"6.1\"]\n");
    write_file(machines / "notes.txt", "not a profile\n");
  }
  [[nodiscard]] std::vector<std::string> args(std::vector<std::string> more) const {
    std::vector<std::string> out{"resolve", config.string(), "--index", index.string(), "--no-fallback"};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
};

}  // namespace

TEST_CASE("wheelfit resolve --machine twice: a report per machine and the summary", "[cli][fleet]") {
  const Fleet f;
  const auto r = run_wheelfit_cli_fleet(f.args({"--machine", (f.machines / "h100.toml").string(), "--machine",
                                      (f.machines / "gtx1080.toml").string()}));
  INFO(r.out << r.err);
  CHECK(r.code == 1);  // the worst machine's: the GTX 1080 is unresolved
  CHECK_THAT(r.out, Catch::StartsWith("== h100 ==\n"));
  CHECK_THAT(r.out, Catch::Contains("\n== gtx1080 ==\n"));
  CHECK_THAT(r.out, Catch::EndsWith("summary:\n"
                                    "machine  combo            tier       status\n"
                                    "h100     cu12.8/torch2.8  bootstrap  resolved\n"
                                    "gtx1080  -                -          unresolved\n"));
}

TEST_CASE("wheelfit resolve --machines DIR: every profile, sorted; --json", "[cli][fleet]") {
  const Fleet f;
  const auto dir = run_wheelfit_cli_fleet(f.args({"--machines", f.machines.string(), "--json"}));
  INFO(dir.out << dir.err);
  CHECK(dir.code == 1);
  const auto doc = boost::json::parse(dir.out).as_object();
  const auto& machines = doc.at("machines").as_array();
  REQUIRE(machines.size() == 2);
  CHECK(machines[0].at("name").as_string() == "gtx1080");
  CHECK(machines[1].at("name").as_string() == "h100");
  CHECK(machines[1].at("combo").as_object() == boost::json::object{{"cuda", "12.8"}, {"torch", "2.8"}});
  CHECK(doc.at("summary").as_array()[1].at("status").as_string() == "resolved");

  // The same fleet given file by file prints the same.
  const auto files = run_wheelfit_cli_fleet(f.args({"--machine", (f.machines / "gtx1080.toml").string(), "--machine",
                                          (f.machines / "h100.toml").string(), "--json"}));
  CHECK(files.out == dir.out);
}

TEST_CASE("wheelfit resolve: one machine of a folder is the single output", "[cli][fleet]") {
  const Fleet f;
  const TempDir one;
  fs::copy_file(f.machines / "h100.toml", one / "h100.toml");
  for (const bool json : {false, true}) {
    CAPTURE(json);
    auto a = f.args({"--machines", one.path().string()});
    auto b = f.args({"--machine", (one / "h100.toml").string()});  // the same file: provenance names it
    if (json) a.push_back("--json"), b.push_back("--json");
    const auto by_dir = run_wheelfit_cli_fleet(a);
    const auto by_file = run_wheelfit_cli_fleet(b);
    CHECK(by_dir.code == 0);
    CHECK(by_dir.out == by_file.out);
    CHECK_THAT(by_dir.out, !Catch::Contains("summary"));
  }
}

TEST_CASE("wheelfit resolve --machines DIR: a profile that does not load is its row; the others resolve", "[cli][fleet]") {
  // Issue 20 item 9: the row is `bad input` with its reason; the fleet's exit code is the worst row's (2).
  const Fleet f;
  write_file(f.machines / "broken.toml", "glibc = 2.35\n");  // a number, not a version string
  const auto text = run_wheelfit_cli_fleet(f.args({"--machines", f.machines.string()}));
  INFO(text.out << text.err);
  CHECK(text.code == 2);
  CHECK_THAT(text.out, Catch::StartsWith("== broken ==\nwheelfit: --machines: " + (f.machines / "broken.toml").string()));
  CHECK_THAT(text.out, Catch::Contains("\n== h100 ==\n"));
  CHECK_THAT(text.out, Catch::EndsWith("summary:\n"
                                       "machine  combo            tier       status\n"
                                       "broken   -                -          bad input\n"
                                       "gtx1080  -                -          unresolved\n"
                                       "h100     cu12.8/torch2.8  bootstrap  resolved\n"));

  const auto json = run_wheelfit_cli_fleet(f.args({"--machines", f.machines.string(), "--json"}));
  INFO(json.out << json.err);
  CHECK(json.code == 2);
  const auto doc = boost::json::parse(json.out).as_object();
  std::vector<std::string> statuses;
  for (const auto& row : doc.at("summary").as_array()) statuses.emplace_back(row.at("status").as_string());
  CHECK(statuses == std::vector<std::string>{"bad input", "unresolved", "resolved"});
  const auto& broken = doc.at("machines").as_array().at(0).as_object();
  CHECK(broken.at("name").as_string() == "broken");
  CHECK_THAT(std::string(broken.at("error").at("message").as_string()), Catch::Contains("broken.toml"));

  SECTION("alone in its folder, it is the error, as a single --machine is") {
    const TempDir one;
    write_file(one / "broken.toml", "glibc = 2.35\n");
    const auto r = run_wheelfit_cli_fleet(f.args({"--machines", one.path().string()}));
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("broken.toml"));
  }
}

TEST_CASE("wheelfit resolve: a FIFO as a profile, a config or an entry of --machines is refused, never read", "[cli][fleet]") {
  // Issue 20 item 7: each read would block forever (test::Fifo lets a blocked reader go, so the
  // bug shows as a wrong answer here rather than a hang).
  const Fleet f;
  const TempDir tmp;
  const Fifo fifo(tmp / "fifo.toml");
  SECTION("--machine FIFO") {
    const auto r = run_wheelfit_cli_fleet(f.args({"--machine", fifo.string()}));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--machine: " + fifo.string() + ": is a FIFO, not a regular file"));
  }
  SECTION("a FIFO as the comfy-env.toml") {
    const auto r = run_wheelfit_cli_fleet({"resolve", fifo.string(), "--index", f.index.string(), "--machine",
                                           (f.machines / "h100.toml").string()});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(fifo.string() + ": is a FIFO, not a regular file"));
  }
  SECTION("a FIFO in --machines DIR is skipped with a warning naming it") {
    const Fifo in_dir(f.machines / "zz.toml");
    const auto r = run_wheelfit_cli_fleet(f.args({"--machines", f.machines.string()}));
    INFO(r.out << r.err);
    CHECK(r.code == 1);  // the two real machines: the GTX 1080 is unresolved
    CHECK_THAT(r.err, Catch::Contains(in_dir.string() + ": is a FIFO, not a regular file; skipped"));
    CHECK_THAT(r.out, !Catch::Contains("zz"));
  }
}

TEST_CASE("wheelfit resolve: fleet usage errors exit 2 and say why", "[cli][fleet]") {
  const Fleet f;
  const TempDir empty;
  struct Row {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Row> rows = {
      {{"--machines", f.machines.string(), "-o", (f.dir / "pixi.toml").string()}, "a manifest is per machine"},
      {{"--machines", f.machines.string(), "--python", "/usr/bin/python3"}, "it does not go with --machines"},
      {{"--machines", empty.path().string()}, "no machine profile"},
      {{"--machines", (f.dir / "none").string()}, "no such directory"},
      {{"--machine", (f.machines / "h100.toml").string(), "--machine", (f.machines / "h100.toml").string()},
       "two machines are named 'h100'"},
      {{"--index", f.index.string()}, "--index: given twice"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.message);
    const auto r = run_wheelfit_cli_fleet(f.args(row.args));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(row.message));
  }
  CHECK_FALSE(fs::exists(f.dir / "pixi.toml"));
}
