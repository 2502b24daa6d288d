// The executable's outputs and cache housekeeping end to end: `-o` keeps the file's mode and
// writes through a symbolic link; `wheelfit cache info|prune|clean`; and a run killed with SIGKILL
// mid-run, then run again (docs/network-faults.md M04), against a small index on loopback.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "wheelfit/util/subprocess.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
namespace wt = wheelfit::test;
namespace testnet = wheelfit::testing;

namespace {

const std::string kWheelTags = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";

/// The environment every run here gets, whole: nothing of the caller's (no proxy, token, index,
/// plugin folder), quick retries.
std::vector<std::string> clean_env(const wt::TempDir& home) {
  return {"PATH=/usr/bin:/bin", "HOME=" + home.path().string(), "WHEELFIT_RETRY_BACKOFF_MS=5"};
}

wheelfit::test::CliRun run_wheelfit_cli_housekeeping(const std::vector<std::string>& args, const wt::TempDir& home) {
  std::vector<std::string> argv{wheelfit::test::built_wheelfit().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = wheelfit::util::run_process(argv, 120s, 1 << 22, clean_env(home));
  REQUIRE(r);
  return {r->timed_out ? -1 : r->exit_status, r->out, r->err};
}

/// A small index served on loopback: packages "pkg" and "other", one wheel each, fresh for 10
/// minutes (a later run serves them from its cache). A page can be held back (its request blocks
/// until released), to catch a run in the middle.
struct Index {
  std::mutex mu;
  std::condition_variable cv;
  std::string held;  ///< the page target held back ("" = none)
  bool holding = false;
  std::map<std::string, std::string> pages;
  std::unique_ptr<testnet::TestServer> server;

  Index() {
    for (const std::string name : {"pkg", "other"}) {
      const std::string file = name + "-1.0+cu128torch2.8-" + kWheelTags;
      const std::string href = "https://example.test/dl/" + name + "-1.0%2Bcu128torch2.8-" + kWheelTags + "#sha256=" +
                               std::string(64, name == "pkg" ? 'a' : 'b');
      pages["/" + name + "/"] = "<html><body><a href=\"" + href + "\">" + file + "</a></body></html>";
    }
    server = std::make_unique<testnet::TestServer>(wheelfit::testing::serve([this](const testnet::HttpRequest& r) {
      std::unique_lock lock(mu);
      if (!held.empty() && r.target == held) {
        holding = true;
        cv.notify_all();
        cv.wait_for(lock, 30s, [&] { return held.empty(); });
      }
      const auto it = pages.find(r.target);
      if (it == pages.end()) return testnet::http_response(404, "not found");
      return testnet::http_response(200, it->second, {{"Content-Type", "text/html"}, {"Cache-Control", "max-age=600"}});
    }));
  }
  ~Index() { release(); }
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;
  void hold(const std::string& target) {
    const std::lock_guard lock(mu);
    held = target;
    holding = false;
  }
  bool wait_holding(std::chrono::seconds limit) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, [&] { return holding; });
  }
  void release() {
    const std::lock_guard lock(mu);
    held.clear();
    cv.notify_all();
  }
};

/// A project resolving "pkg" and "other" on an H100 machine.
struct Project {
  wt::TempDir dir;
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "machine.toml";
  fs::path cache = dir / "cache";
  Project() {
    wt::write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\", \"other\"]\n");
    wt::write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\n"
                        "torch = \"2.8.0+cu128\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
  }
  std::vector<std::string> resolve(const std::string& index, const fs::path& out) const {
    return {"resolve", config.string(), "--index", index, "--machine", machine.string(), "--cache-dir", cache.string(),
            "-o", out.string()};
  }
};

std::vector<std::string> temp_files_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(".tmp-", 0) == 0) out.push_back(e.path().string());
  }
  return out;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("wheelfit resolve -o keeps the file's mode and writes through a symbolic link", "[cli][housekeeping]") {
  Index index;
  Project p;
  fs::create_directories(p.dir / "shared");
  const fs::path real = p.dir / "shared" / "pixi.toml";
  wt::write_file(real, "old\n");
  ::chmod(real.c_str(), 0640);
  const fs::path link = p.dir / "proj" / "pixi.toml";
  fs::create_symlink("../shared/pixi.toml", link);
  auto r = run_wheelfit_cli_housekeeping(p.resolve(index.server->url("/"), link), p.dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == "../shared/pixi.toml");
  CHECK_THAT(wt::read_file(real), Catch::Contains("#sha256=" + std::string(64, 'a')));
  CHECK(mode_of(real) == 0640);
  CHECK(temp_files_in(p.dir.path()).empty());
}

TEST_CASE("wheelfit cache info|prune|clean", "[cli][housekeeping]") {
  Index index;
  Project p;
  REQUIRE(run_wheelfit_cli_housekeeping(p.resolve(index.server->url("/"), p.dir / "pixi.toml"), p.dir).code == 0);
  const std::string dir = p.cache.string();
  auto info = run_wheelfit_cli_housekeeping({"cache", "info", "--cache-dir", dir, "--json"}, p.dir);
  INFO(info.err);
  REQUIRE(info.code == 0);
  auto v = json::parse(info.out).as_object();
  CHECK(v.at("action") == "info");
  CHECK(v.at("dir") == dir.c_str());
  CHECK(v.at("entries").as_int64() >= 2);  // the two pages (and packages.json's 404 is not stored)
  CHECK(v.at("max_size").as_int64() == std::int64_t{1} << 30);
  const auto bytes = v.at("bytes").as_int64();
  CHECK(bytes > 0);

  auto human = run_wheelfit_cli_housekeeping({"cache", "info", "--cache-dir", dir}, p.dir);
  CHECK_THAT(human.out, Catch::Contains("cache: " + dir) && Catch::Contains("least recently used removed first"));

  auto prune = run_wheelfit_cli_housekeeping({"cache", "prune", "--cache-dir", dir, "--cache-max-size", std::to_string(bytes - 1) + "B", "--json"}, p.dir);
  REQUIRE(prune.code == 0);
  auto pv = json::parse(prune.out).as_object();
  CHECK(pv.at("removed").at("entries").as_int64() >= 1);
  CHECK(pv.at("bytes").as_int64() < bytes);

  auto clean = run_wheelfit_cli_housekeeping({"cache", "clean", "--cache-dir", dir}, p.dir);
  REQUIRE(clean.code == 0);
  CHECK_THAT(clean.out, Catch::Contains("removed: every wheelfit file: "));
  CHECK(fs::is_empty(p.cache / "v2"));

  SECTION("usage errors exit 2 and name the problem") {
    struct Row {
      std::vector<std::string> args;
      std::string says;
    };
    const std::vector<Row> rows = {
        {{"cache"}, "cache: give one of info, prune, clean"},
        {{"cache", "info", "prune"}, "cache: give one of info, prune, clean"},
        {{"cache", "tidy"}, "unknown action 'tidy'"},
        {{"cache", "prune", "--cache-max-size", "-1G"}, "--cache-max-size: '-1G' is not a size"},
        {{"cache", "prune", "--cache-max-size", "1X"}, "unknown unit 'X'"},
        {{"cache", "info", "--bogus"}, "unknown option --bogus"},
        {{"resolve", p.config.string(), "--cache-max-size", "lots"}, "--cache-max-size: 'lots' is not a size"},
        {{"resolve", p.config.string(), "--cache-max-size", "1G", "--no-cache"}, "--cache-max-size does not go with --no-cache"},
    };
    for (const auto& row : rows) {
      CAPTURE(row.args);
      auto bad = run_wheelfit_cli_housekeeping(row.args, p.dir);
      CHECK(bad.code == 2);
      CHECK_THAT(bad.err, Catch::Contains(row.says));
    }
  }
}

TEST_CASE("wheelfit cache refuses a folder that holds no wheelfit cache and keeps other programs' files",
          "[cli][housekeeping][cache]") {
  wt::TempDir home;
  const fs::path dot_cache = home / ".cache", project = home / "project";
  const std::vector<fs::path> files = {dot_cache / "pip" / "http" / "entry", dot_cache / "wheelfit" / "interpreters" / "python.json",
                                       dot_cache / "wheelfit" / "http" / "v2" / (std::string(64, 'e') + ".entry"),
                                       project / "pyproject.toml", project / "src" / "main.py"};
  for (const auto& f : files) wt::write_file(f, "kept");
  struct Row {
    const char* what;
    fs::path dir;
  };
  const std::vector<Row> rows = {
      {"~/.cache", dot_cache},
      {"~/.cache/wheelfit (one level above the cache)", dot_cache / "wheelfit"},
      {"a project folder", project},
  };
  for (const auto& row : rows) {
    for (const std::string action : {"info", "prune", "clean"}) {
      for (const bool as_json : {false, true}) {
        CAPTURE(row.what, action, as_json);
        std::vector<std::string> args{"cache", action, "--cache-dir", row.dir.string()};
        if (as_json) args.emplace_back("--json");
        auto r = run_wheelfit_cli_housekeeping(args, home);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Catch::Contains(row.dir.string() + " holds no wheelfit cache"));
        if (as_json) CHECK(json::parse(r.out).at("error").at("exit_code").as_int64() == 2);
        else CHECK(r.out.empty());
      }
    }
  }
  for (const auto& f : files) CHECK(wt::read_file(f) == "kept");

  SECTION("the cache itself: its entries go, other programs' files beside them stay") {
    const fs::path cache = dot_cache / "wheelfit" / "http";
    wt::write_file(cache / "notes.txt", "kept");
    wt::write_file(cache / "v2" / "notes.entry", "kept");
    auto r = run_wheelfit_cli_housekeeping({"cache", "clean", "--cache-dir", cache.string(), "--json"}, home);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out).at("removed").at("entries").as_int64() == 1);
    CHECK_FALSE(fs::exists(cache / "v2" / (std::string(64, 'e') + ".entry")));
    CHECK(wt::read_file(cache / "notes.txt") == "kept");
    CHECK(wt::read_file(cache / "v2" / "notes.entry") == "kept");
  }
}

TEST_CASE("wheelfit resolve applies the cache's size cap after it writes", "[cli][housekeeping]") {
  Index index;
  Project p;
  auto args = p.resolve(index.server->url("/"), p.dir / "pixi.toml");
  args.insert(args.end(), {"--cache-max-size", "1"});  // one byte: no page fits
  auto r = run_wheelfit_cli_housekeeping(args, p.dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto info = run_wheelfit_cli_housekeeping({"cache", "info", "--cache-dir", p.cache.string(), "--json"}, p.dir);
  REQUIRE(info.code == 0);
  CHECK(json::parse(info.out).at("entries").as_int64() == 0);
}

TEST_CASE("M04: a run killed with SIGKILL mid-run, then run again: complete, no temporary files, nothing unverified",
          "[cli][housekeeping][network]") {
  Index index;
  Project p;
  // The answer of an undisturbed run, without a cache.
  const fs::path reference = p.dir / "reference.toml";
  auto clean_args = p.resolve(index.server->url("/"), reference);
  clean_args[6] = "--no-cache";
  clean_args.erase(clean_args.begin() + 7);
  auto clean = run_wheelfit_cli_housekeeping(clean_args, p.dir);
  INFO(clean.err);
  REQUIRE(clean.code == 0);

  const fs::path out = p.dir / "proj" / "pixi.toml";
  wt::write_file(out, "the previous manifest\n");

  // Run 1: "other" is held back, so the run is caught with "pkg" answered (and being stored).
  index.hold("/other/");
  std::vector<std::string> argv{wheelfit::test::built_wheelfit().string()};
  const auto args = p.resolve(index.server->url("/"), out);
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = wheelfit::util::start_process(argv, 60s, 1 << 20, clean_env(p.dir));
  REQUIRE(child);
  const int pid = child->pid();
  REQUIRE(index.wait_holding(30s));
  // "pkg" was answered: its entry is written while the run waits for "other".
  const auto stored = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(p.cache / "v2", ec)) {
      if (e.path().extension() == ".entry") return true;
    }
    return false;
  };
  for (int i = 0; i < 500 && !stored(); ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(stored());
  REQUIRE(::kill(pid, SIGKILL) == 0);
  auto killed = child->wait();
  REQUIRE(killed);
  CHECK(killed->signal == SIGKILL);
  index.release();
  CHECK(wt::read_file(out) == "the previous manifest\n");  // never half written, never replaced

  // What a kill in the middle of a write leaves, whatever this kill happened to hit: temporary
  // files named after the dead process beside the manifest and among the cache's entries, and an
  // entry torn by a crash before its data reached the disk.
  const std::string dead = std::to_string(pid);
  wt::write_file(out.parent_path() / (".tmp-pixi.toml-" + dead + "-0"), "half a manifest");
  fs::create_directories(p.cache / "v2");
  wt::write_file(p.cache / "v2" / (".tmp-" + std::string(64, 'd') + ".entry-" + dead + "-3"), "half an entry");
  for (const auto& e : fs::directory_iterator(p.cache / "v2")) {
    if (e.path().extension() != ".entry") continue;
    auto text = wt::read_file(e.path());
    text.back() = text.back() == 'x' ? 'y' : 'x';  // the body no longer matches its sha256
    wt::write_file(e.path(), text);
  }

  // Run 2: completes with the undisturbed answer; nothing temporary is left anywhere.
  auto again = run_wheelfit_cli_housekeeping(args, p.dir);
  INFO(again.err);
  REQUIRE(again.code == 0);
  CHECK_THAT(again.err, Catch::Contains("discarded the corrupt entry"));  // the torn entry, though fresh, was not believed
  CHECK(wt::read_file(out) == wt::read_file(reference));
  CHECK(temp_files_in(p.dir.path()).empty());
  auto info = run_wheelfit_cli_housekeeping({"cache", "info", "--cache-dir", p.cache.string(), "--json"}, p.dir);
  CHECK(json::parse(info.out).at("temp_files").as_int64() == 0);

  // Run 3, offline from the cache run 2 left: every entry verifies, and the answer is the same.
  auto offline = args;
  offline.push_back("--offline");
  auto from_cache = run_wheelfit_cli_housekeeping(offline, p.dir);
  INFO(from_cache.err);
  REQUIRE(from_cache.code == 0);
  CHECK_THAT(from_cache.err, !Catch::Contains("corrupt"));
  CHECK(wt::read_file(out) == wt::read_file(reference));
}
