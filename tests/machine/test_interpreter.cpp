// The target interpreter: finding it, the one query (fake interpreters: scripts that answer,
// print garbage, fail or hang), dist-info metadata, and the cache.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_python.hpp"
#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/machine/interpreter.hpp"
#include "wheelfit/util/subprocess.hpp"

namespace fs = std::filesystem;
namespace wm = wheelfit::machine;
using namespace wheelfit::test;
using wheelfit::Errc;

namespace {

// A fake interpreter with its own site-packages and cache folder.
struct InterpreterWorld {
  TempDir dir;
  fs::path python = dir / "bin" / kPythonName;
  fs::path site = dir / "site-packages";
  fs::path user_site = dir / "user-site";
  fs::path cache = dir / "cache";
  InterpreterWorld() {
    fs::create_directories(site);
    write_fake_python(python, wheelfit::test::python_answer(python.string(), {user_site.string(), site.string()}));
    wheelfit::test::write_dist_info(site, "torch-2.8.0+cu128.dist-info", "torch", "2.8.0+cu128");
    wheelfit::test::write_dist_info(site, "torchvision-0.23.0+cu128.dist-info", "torchvision", "0.23.0+cu128");
    wheelfit::test::age(site);
    wheelfit::test::age(python);
  }
  [[nodiscard]] wm::InterpreterOptions options() const {
    wm::InterpreterOptions o;
    o.python = python.string();
    o.cache_dir = cache;
    o.timeout = std::chrono::milliseconds(5000);
    return o;
  }
  [[nodiscard]] int runs() const { return wheelfit::test::script_runs(python); }
  [[nodiscard]] std::vector<fs::path> cache_files() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    return out;
  }
};

}  // namespace

TEST_CASE("find_interpreter: paths and PATH search", "[machine][interpreter][posix]") {
  TempDir dir;
  write_file(dir / "a" / "python3", "#!/bin/sh\n");  // not executable
  write_file(dir / "b" / "python3", "#!/bin/sh\n");
  wheelfit::test::make_executable(dir / "b" / "python3");
  write_file(dir / "c" / "python3", "#!/bin/sh\n");
  wheelfit::test::make_executable(dir / "c" / "python3");
  fs::create_directories(dir / "d" / "python3");  // a folder named python3
  const std::string path = (dir / "missing").string() + ":" + (dir / "d").string() + ":" + (dir / "a").string() + ":" +
                           (dir / "b").string() + ":" + (dir / "c").string();

  SECTION("the first executable file on PATH wins") {
    auto p = wm::find_interpreter("python3", path);
    REQUIRE(p);
    CHECK(*p == (dir / "b" / "python3").string());
  }
  SECTION("not on PATH: names the program and PATH") {
    auto p = wm::find_interpreter("python3.99", path);
    REQUIRE_FALSE(p);
    CHECK(p.error().is(Errc::not_found));
    CHECK(contains(p.error().message, "python3.99: not found on PATH"));
    CHECK(contains(p.error().message, "--python"));
    CHECK(contains(wm::find_interpreter("python3", "").error().message, "PATH is empty"));
  }
  SECTION("a path is used as it is, and checked") {
    CHECK(*wm::find_interpreter((dir / "c" / "python3").string(), "") == (dir / "c" / "python3").string());
    CHECK(*wm::find_interpreter((dir / "c" / "." / "python3").string(), "") == (dir / "c" / "python3").string());
    auto missing = wm::find_interpreter((dir / "nope" / "python").string(), path);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().is(Errc::not_found));
    CHECK(contains(missing.error().message, (dir / "nope" / "python").string() + ": no such file"));
    auto folder = wm::find_interpreter((dir / "d" / "python3").string(), "");
    REQUIRE_FALSE(folder);
    CHECK(contains(folder.error().message, "is a directory"));
    auto plain = wm::find_interpreter((dir / "a" / "python3").string(), "");
    REQUIRE_FALSE(plain);
    CHECK(contains(plain.error().message, "not executable"));
  }
  SECTION("a relative path is made absolute") {
    auto p = wm::find_interpreter("./python3-that-is-not-here", "");
    REQUIRE_FALSE(p);
    CHECK(contains(p.error().message, fs::current_path().string()));
  }
}

TEST_CASE("parse_interpreter_answer reads the query's JSON", "[machine][interpreter]") {
  SECTION("a full answer") {
    auto i = wm::parse_interpreter_answer(
        wheelfit::test::python_answer("/usr/bin/python3", {"/a", "/b"}, "3, 13, 1", true, "t", "aarch64") + "\n", "py");
    REQUIRE(i);
    CHECK(i->executable == "/usr/bin/python3");
    CHECK(i->implementation == "cpython");
    CHECK(i->version == std::vector<int>{3, 13, 1});
    CHECK(i->gil_disabled);
    CHECK(i->abiflags == "t");
    CHECK(i->machine == "aarch64");
    CHECK(i->site_dirs == std::vector<std::string>{"/a", "/b"});
    CHECK(i->python_fact() == "3.13t");
  }
  SECTION("python_fact: abiflags alone also marks free-threading") {
    auto i = wm::parse_interpreter_answer(wheelfit::test::python_answer("/p", {}, "3, 14, 0", false, "t"), "py");
    REQUIRE(i);
    CHECK(i->python_fact() == "3.14t");
    auto j = wm::parse_interpreter_answer(wheelfit::test::python_answer("/p", {}, "3, 9, 18", false, ""), "py");
    CHECK(j->python_fact() == "3.9");
  }
  SECTION("refused answers name the interpreter") {
    check_refusals([](const std::string& text) { return wm::parse_interpreter_answer(text, "/opt/py/bin/python"); },
                   {"/opt/py/bin/python"}, {
        {"", {"printed no JSON answer to wheelfit's query (no output)"}},
        {"Python 2.7.18\n", {"(it printed 'Python 2.7.18')"}},
        {"[1, 2]", {"printed no JSON"}},
        {"{\"version\": [3, 12, 0]}", {"not wheelfit's query answer"}},
        {R"({"wheelfit_query": 1, "executable": "/p"})", {"no string \"implementation\""}},
        {R"({"wheelfit_query": 1, "executable": "/p", "implementation": "cpython", "abiflags": "", "machine": "x",
            "prefix": "/", "venv_config": "", "version": "3.12", "gil_disabled": false, "site_dirs": []})",
         {"no \"version\""}},
        {R"({"wheelfit_query": 1, "executable": "/p", "implementation": "cpython", "abiflags": "", "machine": "x",
            "prefix": "/", "venv_config": "", "version": [3, 12], "gil_disabled": 0, "site_dirs": []})",
         {"gil_disabled"}},
        {R"({"wheelfit_query": 1, "executable": "/p", "implementation": "cpython", "abiflags": "", "machine": "x",
            "prefix": "/", "venv_config": "", "version": [3, 12], "gil_disabled": false, "site_dirs": [1]})",
         {"site_dirs"}},
    });
  }
}

TEST_CASE("query_interpreter runs the interpreter once, with a timeout", "[machine][interpreter][posix]") {
  TempDir dir;
  const fs::path py = dir / "python";
  SECTION("an answer") {
    write_fake_python(py, wheelfit::test::python_answer(py.string(), {"/s"}));
    auto i = wm::query_interpreter(py.string(), std::chrono::milliseconds(5000));
    REQUIRE(i);
    CHECK(i->site_dirs == std::vector<std::string>{"/s"});
    CHECK(wheelfit::test::script_runs(py) == 1);
  }
  SECTION("garbage") {
    wheelfit::test::write_script(py, "echo 'hello there'");
    auto i = wm::query_interpreter(py.string(), std::chrono::milliseconds(5000));
    REQUIRE_FALSE(i);
    CHECK(contains(i.error().message, py.string() + ": printed no JSON"));
    CHECK(contains(i.error().message, "hello there"));
  }
  SECTION("a failure: the status and stderr's last line") {
    wheelfit::test::write_script(py, "echo 'Traceback' >&2\necho 'AttributeError: nope' >&2\nexit 1");
    auto i = wm::query_interpreter(py.string(), std::chrono::milliseconds(5000));
    REQUIRE_FALSE(i);
    CHECK(contains(i.error().message, py.string()));
    CHECK(contains(i.error().message, "exited with status 1: AttributeError: nope"));
  }
  SECTION("a hang: killed at the deadline, with its children") {
    wheelfit::test::write_script(py, "sleep 30 &\nsleep 30\n");
    const auto start = std::chrono::steady_clock::now();
    auto i = wm::query_interpreter(py.string(), std::chrono::milliseconds(300));
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(i);
    CHECK(contains(i.error().message, py.string() + ": the interpreter query timed out after 300 ms"));
    CHECK(took < std::chrono::seconds(3));
  }
  SECTION("not executable") {
    write_file(py, "#!/bin/sh\n");
    auto i = wm::query_interpreter(py.string(), std::chrono::milliseconds(5000));
    REQUIRE_FALSE(i);
    CHECK(i.error().is(Errc::usage));
    CHECK(contains(i.error().message, py.string() + ": not executable"));
  }
  SECTION("not there") {
    auto i = wm::query_interpreter((dir / "nope").string(), std::chrono::milliseconds(5000));
    REQUIRE_FALSE(i);
    CHECK(i.error().is(Errc::not_found));
  }
}

TEST_CASE("run_process: status, signals, output caps", "[machine][interpreter][posix]") {
  TempDir dir;
  const fs::path sh = dir / "s";
  wheelfit::test::write_script(sh, "echo out; echo err >&2; exit 3");
  auto r = wheelfit::util::run_process({sh.string()}, std::chrono::milliseconds(5000));
  REQUIRE(r);
  CHECK(r->exit_status == 3);
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK(r->describe(std::chrono::milliseconds(1)) == "exited with status 3");
  wheelfit::test::write_script(sh, "kill -9 $$");
  r = wheelfit::util::run_process({sh.string()}, std::chrono::milliseconds(5000));
  REQUIRE(r);
  CHECK(r->signal == 9);
  CHECK(contains(r->describe(std::chrono::milliseconds(1)), "killed by signal 9"));
  wheelfit::test::write_script(sh, "head -c 100000 /dev/zero");
  r = wheelfit::util::run_process({sh.string()}, std::chrono::milliseconds(5000), 1000);
  REQUIRE(r);
  CHECK(r->out.size() == 1000);
  CHECK(r->truncated);
  CHECK(r->exited_ok());
  CHECK_FALSE(wheelfit::util::run_process({}, std::chrono::milliseconds(1)));
}

TEST_CASE("metadata_field reads RFC 822 headers", "[machine][interpreter]") {
  SECTION("the header's value, whatever its case and spacing") {
    const TextCase rows[] = {
        {"Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0+cu128\n\nbody", "2.8.0+cu128"},
        {"Name: torch\r\nversion:   2.7.1+rocm6.3  \r\n\r\n", "2.7.1+rocm6.3"},
        {"Name: torch\nSummary: a\n  continued Version: 9\nVersion: 2.5.1\n", "2.5.1"},
    };
    check_each(rows, [](std::string_view text) {
      auto v = wm::metadata_field(text, "Version");
      REQUIRE(v);
      return *v;
    });
  }
  SECTION("no such header before the body: not_found") {
    for (const std::string text : {"Name: torch\n\nVersion: 2.5.1\n", "", "Versions: 1\n"}) {
      CAPTURE(text);
      auto v = wm::metadata_field(text, "Version");
      REQUIRE_FALSE(v);
      CHECK(v.error().is(Errc::not_found));
    }
  }
}

TEST_CASE("find_distributions reads dist-info and egg-info metadata", "[machine][interpreter]") {
  TempDir dir;
  const fs::path first = dir / "first", second = dir / "second";
  wheelfit::test::write_dist_info(second, "torch-2.8.0+cu128.dist-info", "torch", "2.8.0+cu128");
  wheelfit::test::write_dist_info(second, "torchvision-0.23.0+cu128.dist-info", "torchvision", "0.23.0+cu128");
  wheelfit::test::write_dist_info(second, "torchaudio-2.8.0+cu128.dist-info", "torchaudio", "2.8.0+cu128");
  wheelfit::test::write_dist_info(second, "torch_geometric-2.6.1.dist-info", "torch_geometric", "2.6.1");
  std::vector<std::string> notes;

  SECTION("every name, with its METADATA path") {
    auto found = wm::find_distributions({first.string(), second.string()}, {"torch", "torchvision", "torchaudio"}, notes);
    REQUIRE(found.size() == 3);
    CHECK(found.at("torch").version == "2.8.0+cu128");
    CHECK(found.at("torch").metadata == (second / "torch-2.8.0+cu128.dist-info" / "METADATA").string());
    CHECK(found.at("torchvision").version == "0.23.0+cu128");
    CHECK(found.at("torchaudio").version == "2.8.0+cu128");
    CHECK(notes.empty());
  }
  SECTION("the first folder wins, as imports do") {
    wheelfit::test::write_dist_info(first, "torch-2.7.1+rocm6.3.dist-info", "torch", "2.7.1+rocm6.3");
    auto found = wm::find_distributions({first.string(), second.string()}, {"torch"}, notes);
    CHECK(found.at("torch").version == "2.7.1+rocm6.3");
  }
  SECTION("names are PEP 503 normalised on both sides") {
    wheelfit::test::write_dist_info(first, "Torch-2.6.0.dist-info", "Torch", "2.6.0");
    auto found = wm::find_distributions({first.string()}, {"TORCH", "torch-geometric"}, notes);
    CHECK(found.at("torch").version == "2.6.0");
    CHECK(found.count("torch-geometric") == 0);  // only looked for in `first`
    found = wm::find_distributions({second.string()}, {"Torch.Geometric"}, notes);
    CHECK(found.at("torch-geometric").version == "2.6.1");
  }
  SECTION("egg-info folders and files") {
    write_file(first / "torch-2.9.0a0+git1234-py3.12.egg-info" / "PKG-INFO", "Name: torch\nVersion: 2.9.0a0+git1234\n");
    write_file(first / "torchaudio-2.9.0.egg-info", "Name: torchaudio\nVersion: 2.9.0\n");
    auto found = wm::find_distributions({first.string()}, {"torch", "torchaudio"}, notes);
    CHECK(found.at("torch").version == "2.9.0a0+git1234");
    CHECK(found.at("torchaudio").version == "2.9.0");
  }
  SECTION("a broken install: two dist-infos, or no METADATA, is noted") {
    wheelfit::test::write_dist_info(first, "torch-2.7.0.dist-info", "torch", "2.7.0");
    wheelfit::test::write_dist_info(first, "torch-2.8.0.dist-info", "torch", "2.8.0");
    fs::create_directories(first / "torchvision-0.22.0.dist-info");
    auto found = wm::find_distributions({first.string(), second.string()}, {"torch", "torchvision"}, notes);
    CHECK(found.at("torch").version == "2.7.0");
    CHECK(found.at("torchvision").version == "0.23.0+cu128");  // the next folder
    CHECK(any_contains(notes, "2 torch distributions"));
    CHECK(any_contains(notes, "torchvision-0.22.0.dist-info"));
  }
  SECTION("missing folders and absent packages are not errors") {
    auto found = wm::find_distributions({(dir / "nope").string()}, {"torch"}, notes);
    CHECK(found.empty());
    CHECK(notes.empty());
  }
}

TEST_CASE("default_cache_dir follows XDG", "[machine][interpreter][posix]") {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](std::string_view n) -> std::optional<std::string> {
      auto it = vars.find(std::string(n));
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  };
  CHECK(wm::default_cache_dir(env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})) == fs::path("/x/wheelfit/interpreters"));
  CHECK(wm::default_cache_dir(env({{"XDG_CACHE_HOME", "rel"}, {"HOME", "/h"}})) == fs::path("/h/.cache/wheelfit/interpreters"));
  CHECK(wm::default_cache_dir(env({{"XDG_CACHE_HOME", ""}, {"HOME", "/h"}})) == fs::path("/h/.cache/wheelfit/interpreters"));
  CHECK_FALSE(wm::default_cache_dir(env({})));
}

TEST_CASE("inspect_interpreter caches the answer and the distributions", "[machine][interpreter]") {
  InterpreterWorld w;
  auto first = wm::inspect_interpreter(w.options());
  REQUIRE(first);
  CHECK(first->path == w.python.string());
  CHECK_FALSE(first->info_cached);
  CHECK_FALSE(first->packages_cached);
  CHECK(first->info.python_fact() == "3.12");
  CHECK(first->packages.at("torch").version == "2.8.0+cu128");
  CHECK(first->packages.at("torchvision").version == "0.23.0+cu128");
  CHECK(first->packages.count("torchaudio") == 0);
  CHECK(w.runs() == 1);
  REQUIRE(w.cache_files().size() == 1);
  CHECK(w.cache_files()[0].extension() == ".json");
  CHECK(w.cache_files()[0].stem().string().size() == 16);

  SECTION("a hit: the interpreter is not run, no metadata is read") {
    // Editing a METADATA file in place changes no site folder's mtime: the cached version shows.
    write_file(w.site / "torch-2.8.0+cu128.dist-info" / "METADATA", "Name: torch\nVersion: 9.9.9\n");
    auto again = wm::inspect_interpreter(w.options());
    REQUIRE(again);
    CHECK(again->info_cached);
    CHECK(again->packages_cached);
    CHECK(again->info == first->info);
    CHECK(again->packages.at("torch").version == "2.8.0+cu128");
    CHECK(w.runs() == 1);
  }
  SECTION("a clean hit") {
    auto again = wm::inspect_interpreter(w.options());
    REQUIRE(again);
    CHECK(again->info_cached);
    CHECK(again->packages_cached);
    CHECK(again->packages == first->packages);
    CHECK(w.runs() == 1);
    CHECK(again->notes.empty());
  }
  SECTION("a package installed: the site folder changed, the metadata is read again") {
    wheelfit::test::write_dist_info(w.site, "torchaudio-2.8.0+cu128.dist-info", "torchaudio", "2.8.0+cu128");
    auto again = wm::inspect_interpreter(w.options());
    REQUIRE(again);
    CHECK(again->info_cached);
    CHECK_FALSE(again->packages_cached);
    CHECK(again->packages.at("torchaudio").version == "2.8.0+cu128");
    CHECK(w.runs() == 1);
    auto third = wm::inspect_interpreter(w.options());
    CHECK(third->packages_cached);
    CHECK(third->packages.at("torchaudio").version == "2.8.0+cu128");
  }
  SECTION("a site folder created later (the user site) counts as a change") {
    wheelfit::test::write_dist_info(w.user_site, "torch-2.9.0.dist-info", "torch", "2.9.0");
    auto again = wm::inspect_interpreter(w.options());
    REQUIRE(again);
    CHECK(again->packages.at("torch").version == "2.9.0");
  }
  SECTION("the interpreter changed: asked again") {
    write_fake_python(w.python, wheelfit::test::python_answer(w.python.string(), {w.site.string()}, "3, 13, 0"));
    auto again = wm::inspect_interpreter(w.options());
    REQUIRE(again);
    CHECK_FALSE(again->info_cached);
    CHECK(again->info.python_fact() == "3.13");
    CHECK(w.runs() == 2);
  }
  SECTION("another package list: the distributions are read again") {
    auto opts = w.options();
    opts.packages = {"torch"};
    auto again = wm::inspect_interpreter(opts);
    REQUIRE(again);
    CHECK(again->info_cached);
    CHECK_FALSE(again->packages_cached);
    CHECK(again->packages.size() == 1);
  }
  SECTION("a corrupt entry is discarded with a note, and replaced") {
    for (const std::string& junk : std::vector<std::string>{"{not json", "[]", R"({"schema": "x"})", R"({"schema": 1, "path": 3})",
                                   R"({"schema": 1})",
                                   R"({"schema": 1, "path": ")" + w.python.string() +
                                       R"(", "info_stamps": [], "site_stamps": [], "info": {}, "names": [], "packages": [],)"
                                       R"( "package_notes": []})"}) {
      CAPTURE(junk);
      write_file(w.cache_files()[0], junk);
      auto again = wm::inspect_interpreter(w.options());
      REQUIRE(again);
      CHECK_FALSE(again->info_cached);
      CHECK(any_contains(again->notes, "discarded"));
      REQUIRE(w.cache_files().size() == 1);
      auto then = wm::inspect_interpreter(w.options());
      CHECK(then->info_cached);
    }
  }
  SECTION("another schema is replaced silently") {
    const auto file = w.cache_files()[0];
    write_file(file, R"({"schema": 999})");
    auto again = wm::inspect_interpreter(w.options());
    REQUIRE(again);
    CHECK_FALSE(again->info_cached);
    CHECK_FALSE(any_contains(again->notes, "discarded"));
    CHECK(wm::inspect_interpreter(w.options())->info_cached);
  }
  SECTION("no cache folder: asked every time") {
    auto opts = w.options();
    opts.cache_dir.reset();
    REQUIRE(wm::inspect_interpreter(opts));
    REQUIRE(wm::inspect_interpreter(opts));
    CHECK(w.runs() == 3);
  }
  SECTION("an unwritable cache folder is a note, not an error") {
    auto opts = w.options();
    write_file(w.dir / "file", "x");
    opts.cache_dir = w.dir / "file" / "sub";
    auto r = wm::inspect_interpreter(opts);
    REQUIRE(r);
    CHECK(any_contains(r->notes, "not cached"));
  }
}

TEST_CASE("inspect_interpreter does not cache a wrapper", "[machine][interpreter]") {
  InterpreterWorld w;
  const fs::path real = w.dir / "real-python";
  write_file(real, "#!/bin/sh\n");
  wheelfit::test::make_executable(real);
  write_fake_python(w.python, wheelfit::test::python_answer(real.string(), {w.site.string()}));
  auto r = wm::inspect_interpreter(w.options());
  REQUIRE(r);
  CHECK(any_contains(r->notes, "a wrapper, such as a pyenv shim"));
  CHECK(any_contains(r->notes, "--python " + real.string()));
  CHECK(w.cache_files().empty());
  REQUIRE(wm::inspect_interpreter(w.options()));
  CHECK(w.runs() == 2);
}

TEST_CASE("inspect_interpreter: a symlinked interpreter is not a wrapper", "[machine][interpreter][posix]") {
  InterpreterWorld w;
  const fs::path link = w.dir / "python-link";
  fs::create_symlink(w.python, link);
  write_fake_python(w.python, wheelfit::test::python_answer(link.string(), {w.site.string()}));
  auto opts = w.options();
  opts.python = link.string();
  auto r = wm::inspect_interpreter(opts);
  REQUIRE(r);
  CHECK(r->path == link.string());
  CHECK(r->notes.empty());
  CHECK(wm::inspect_interpreter(opts)->info_cached);
}

TEST_CASE("the real interpreter answers the query", "[machine][interpreter]") {
  const char* path_env = std::getenv("PATH");
  auto python = wm::find_interpreter("python3", path_env ? path_env : "");
  if (!python) {
    WARN("no python3 on PATH: the real-interpreter check is skipped");
    return;
  }
  auto info = wm::query_interpreter(*python, std::chrono::milliseconds(20000));
  REQUIRE(info);
  CHECK(info->implementation == "cpython");
  REQUIRE(info->version.size() == 3);
  CHECK(info->version[0] == 3);
  CHECK_FALSE(info->site_dirs.empty());
  CHECK_FALSE(info->machine.empty());
}
