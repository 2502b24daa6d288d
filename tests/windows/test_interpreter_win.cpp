// The target interpreter on Windows: PATH (';') with PATHEXT, an environment folder (a venv's
// Scripts\python.exe, conda's python.exe), the py launcher, and torch read from the
// environment's Lib\site-packages. Fake interpreters are copies of
// wheelfit_test_child.exe (tests/machine/fake_python.hpp).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "machine/fake_python.hpp"
#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/machine/detect.hpp"
#include "wheelfit/machine/interpreter.hpp"

namespace fs = std::filesystem;
namespace wm = wheelfit::machine;
using wheelfit::Errc;
using wheelfit::test::TempDir;
using wheelfit::test::write_fake_python;
using wheelfit::test::write_file;

namespace {

constexpr auto kPythonTimeout = std::chrono::milliseconds(60000);  // wine starts processes slowly

wm::Getenv env_from(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view n) -> std::optional<std::string> {
    auto it = vars.find(std::string(n));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// A venv as `python -m venv` makes it on Windows: Scripts\python.exe, Lib\site-packages.
struct Venv {
  TempDir dir;
  fs::path root = dir / "venv";
  fs::path python = root / "Scripts" / "python.exe";
  fs::path site = root / "Lib" / "site-packages";
  Venv() {
    fs::create_directories(site);
    write_fake_python(python, wheelfit::test::python_answer(python.string(), {site.string()}));
    wheelfit::test::write_dist_info(site, "torch-2.8.0+cu128.dist-info", "torch", "2.8.0+cu128");
  }
};

}  // namespace

TEST_CASE("find_interpreter on Windows: PATH with ';' and PATHEXT", "[windows][interpreter]") {
  TempDir dir;
  fs::create_directories(dir / "a" / "python.exe");            // a folder named python.exe
  write_file(dir / "b" / "python.exe", "");                      // an empty Store alias stub
  write_file(dir / "c" / "python.bat", "@echo off\n");           // not startable without cmd.exe
  write_fake_python(dir / "d" / "python.exe", "{}");
  write_fake_python(dir / "e" / "python.exe", "{}");
  const std::string path = (dir / "missing").string() + ";;" + (dir / "a").string() + ";" + (dir / "b").string() + ";" +
                           (dir / "c").string() + ";" + (dir / "d").string() + ";" + (dir / "e").string();
  SECTION("the first startable python.exe wins") {
    auto p = wm::find_interpreter("python", path);
    REQUIRE(p);
    CHECK(*p == (dir / "d" / "python.exe").string());
    CHECK(*wm::find_interpreter("python.exe", path) == (dir / "d" / "python.exe").string());
  }
  SECTION("not on PATH: names the program and PATH") {
    auto p = wm::find_interpreter("python3.99", path);
    REQUIRE_FALSE(p);
    CHECK(p.error().is(Errc::not_found));
    CHECK_THAT(p.error().message, Catch::Contains("python3.99: not found on PATH (PATH=" + path + ")"));
  }
}

TEST_CASE("find_interpreter on Windows: a path, or an environment folder", "[windows][interpreter]") {
  Venv venv;
  TempDir dir;
  const fs::path conda = dir / "conda-env";
  write_fake_python(conda / "python.exe", "{}");
  write_file(dir / "notes.txt", "x");
  fs::create_directories(dir / "empty");
  struct Row {
    std::string given;
    std::optional<std::string> found;  // nullopt: refused
    std::string message_part;
  };
  const std::vector<Row> rows = {
      {venv.python.string(), venv.python.string(), ""},
      {venv.root.string(), venv.python.string(), ""},          // a venv: Scripts\python.exe
      {conda.string(), (conda / "python.exe").string(), ""},    // conda: python.exe at the root
      {(dir / "empty").string(), std::nullopt, "is a directory, not a Python interpreter"},
      {(dir / "notes.txt").string(), std::nullopt, "not executable"},
      {(dir / "nope" / "python.exe").string(), std::nullopt, "no such file"},
      {"", std::nullopt, "an empty interpreter path"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.given);
    wheelfit::test::check_outcome(wm::find_interpreter(row.given, ""), row.found, row.message_part);
  }
}

TEST_CASE("find_interpreter on Windows: the py launcher names the interpreter", "[windows][interpreter]") {
  Venv venv;
  TempDir dir;
  // A fake py.exe that answers sys.executable with the venv's interpreter.
  write_fake_python(dir / "launcher" / "py.exe", venv.python.string());
  const std::string path = (dir / "launcher").string();
  for (const std::string spec : {"py", "py -3", "py -3.12"}) {
    CAPTURE(spec);
    auto p = wm::find_interpreter(spec, path);
    REQUIRE(p);
    CHECK(*p == venv.python.string());
  }
  SECTION("python not on PATH: the launcher is asked") {
    auto p = wm::find_interpreter("python", path);
    REQUIRE(p);
    CHECK(*p == venv.python.string());
  }
  SECTION("a launcher naming a file that is not there") {
    write_fake_python(dir / "launcher" / "py.exe", (dir / "gone" / "python.exe").string());
    auto p = wm::find_interpreter("py -3", path);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("no such file"));
  }
}

TEST_CASE("detect_machine on Windows: python and torch from a venv's Lib\\site-packages", "[windows][interpreter]") {
  Venv venv;
  wm::DetectOptions o;
  o.python = venv.root.string();  // --python <the environment folder>
  o.getenv = env_from({{"PATH", ""}, {"XDG_CACHE_HOME", (venv.dir / "cache").string()}});
  o.host = true;
  o.python_timeout = kPythonTimeout;
  auto d = wm::detect_machine(o, [] { return wm::BackendPayloads{}; });
  REQUIRE(d);
  CHECK(d->machine.python == wheelfit::model::NumericVersion::parse("3.12").value());
  REQUIRE(d->machine.torch);
  CHECK(d->machine.torch->str() == "2.8.0+cu128");
  CHECK(d->machine.os == wheelfit::model::Os::windows);
  CHECK(fs::exists(venv.dir / "cache" / "wheelfit" / "interpreters"));
  // Asked once: the second detection is answered from the cache.
  REQUIRE(wm::detect_machine(o, [] { return wm::BackendPayloads{}; }));
  CHECK(wheelfit::test::script_runs(venv.python) == 1);
}
