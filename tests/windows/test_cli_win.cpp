// wheelfit.exe end to end on Windows (under wine here): resolves against a local index in a folder
// whose name is not ASCII (a user profile such as C:\Users\Jürgen), the paths given as arguments
// and written into the outputs as UTF-8.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <string>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;

namespace {

std::string utf8(const fs::path& p) {
  const auto text = p.u8string();
  return {text.begin(), text.end()};
}

// An index with one Windows wheel, a project and a Windows machine, under `root`.
struct WindowsWorld {
  TempDir tmp;
  fs::path root = tmp.path() / fs::path(u8"Jürgen Müller 测试");
  fs::path index = root / "index";
  fs::path config = root / "proj" / "comfy-env.toml";
  fs::path machine = root / "machine.toml";
  std::string wheel = "pkg-1.0+cu128torch2.8-cp312-cp312-win_amd64.whl";
  WindowsWorld() {
    write_file(index / "pkg" / "index.html",
               "<html><body><a href=\"https://example.test/dl/pkg-1.0%2Bcu128torch2.8-cp312-cp312-win_amd64.whl#sha256=" +
                   std::string(64, 'b') + "\">" + wheel + "</a></body></html>");
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
    write_file(machine, "os = \"windows\"\ncpu_arch = \"x86_64\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "driver_version = \"580.88\"\ncuda_driver = \"13.0\"\ngpus = [\"8.9\"]\n");
  }
};

CliRun run_wheelfit(const std::vector<std::string>& args) { return run_program(clean_network_env(), built_wheelfit(), args); }

}  // namespace

TEST_CASE("wheelfit.exe resolves a local index in a non-ASCII folder and writes pixi.toml there", "[windows][cli]") {
  WindowsWorld w;
  const fs::path out = w.root / "out" / "pixi.toml";
  fs::create_directories(out.parent_path());  // -o names a file; its folder must be there, as on Linux
  const auto r = run_wheelfit({"resolve", utf8(w.config), "--index", utf8(w.index), "--machine", utf8(w.machine),
                               "-o", utf8(out)});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("resolved: cu12.8/torch2.8 via tier 1"));
  REQUIRE(fs::exists(out));
  const std::string pixi = read_file(out);
  CHECK_THAT(pixi, Catch::Contains("win_amd64.whl#sha256=" + std::string(64, 'b')));
  // Nothing but the output itself is left in its folder (the temporary file was renamed over it).
  CHECK(std::distance(fs::directory_iterator(out.parent_path()), fs::directory_iterator{}) == 1);
}

TEST_CASE("wheelfit.exe resolve --json names the pick", "[windows][cli]") {
  WindowsWorld w;
  const auto r = run_wheelfit({"resolve", utf8(w.config), "--index", utf8(w.index), "--machine", utf8(w.machine), "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto answer = boost::json::parse(r.out).as_object();
  CHECK(answer.at("packages").as_array().size() == 1);
  CHECK_THAT(boost::json::serialize(answer), Catch::Contains(w.wheel));
}

TEST_CASE("wheelfit.exe names a missing non-ASCII path exactly, exit 2", "[windows][cli]") {
  WindowsWorld w;
  const fs::path missing = w.root / fs::path(u8"nicht-da-ü.toml");
  const auto r = run_wheelfit({"resolve", utf8(missing), "--index", utf8(w.index), "--machine", utf8(w.machine)});
  CHECK(r.code == 2);
  CHECK_THAT(r.out + r.err, Catch::Contains("nicht-da-\xc3\xbc.toml"));
}
