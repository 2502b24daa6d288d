// The cache's housekeeping: what it holds, the size cap (least recently used first, applied after a
// transport's writes), entries marked used when served, and the temporary files a killed run left.
#ifdef _WIN32
#include <io.h>
#include <process.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cache_fixture.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/cache_housekeeping.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#include "wheelfit/util/win_file_id.hpp"
#endif

using namespace wheelfit;
using namespace wheelfit::test_cache;  // the fixture, and the names it uses

namespace {

#ifdef _WIN32
// On Windows the "last used" time is the last-access time SetFileTime sets (decision 0036).
void used_ago(const fs::path& p, int seconds_ago) {
  const auto then = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now() - std::chrono::seconds(seconds_ago));
  auto fd = util::win::open(p, {.access = util::win::Access::write});
  REQUIRE(fd);
  const auto info = util::win::info(*fd);
  const bool set = info && util::win::set_times(*fd, info->modified, then);
  ::_close(*fd);
  REQUIRE(set);
}

std::int64_t used_at(const fs::path& p) {
  const auto stamp = util::win::file_stamp(p);
  REQUIRE(stamp);
  return std::chrono::floor<std::chrono::seconds>(stamp->accessed.time_since_epoch()).count();
}

/// A pid that surely ran and has ended: a child started and waited for here.
long dead_pid() {
  wchar_t cmd[] = L"cmd.exe /c exit 0";
  STARTUPINFOW si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  REQUIRE(::CreateProcessW(nullptr, cmd, nullptr, nullptr, FALSE, CREATE_NO_WINDOW, nullptr, nullptr, &si, &pi));
  ::WaitForSingleObject(pi.hProcess, INFINITE);
  ::CloseHandle(pi.hThread);
  ::CloseHandle(pi.hProcess);
  return static_cast<long>(pi.dwProcessId);
}
#else
/// Sets a file's access time ("last used") to `seconds_ago` before now.
void used_ago(const fs::path& p, int seconds_ago) {
  const auto now = std::chrono::system_clock::now() - std::chrono::seconds(seconds_ago);
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  const struct timespec times[2] = {{static_cast<time_t>(s), 0}, {0, UTIME_OMIT}};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
}

std::int64_t used_at(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_atim.tv_sec;
}
#endif

std::int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

#ifndef _WIN32
/// A pid that surely ran and has ended: a child forked and reaped here.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}
#endif

/// The name of entry `i` (0..99) as the cache names entries: a sha256 in hex, ".entry"; they sort by i.
std::string own_entry(int i) { return std::string(62, 'a') + (i < 10 ? "0" : "") + std::to_string(i) + ".entry"; }

/// A cache root with `n` entries of `size` bytes each, named own_entry(i), used i * 10 s apart (0 oldest).
struct Root {
  TempDir dir;
  fs::path root = dir / "http";
  fs::path v2 = root / "v2";
  explicit Root(int n = 0, std::size_t size = 100) {
    fs::create_directories(v2);
    for (int i = 0; i < n; ++i) {
      const auto p = v2 / own_entry(i);
      test::write_file(p, std::string(size, 'x'));
      used_ago(p, 1000 - i * 10);
    }
  }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(v2)) {
      const auto name = e.path().filename().string();
      if (name.ends_with(".entry")) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

TEST_CASE("cache_usage counts entries, their bytes, temporary files and the rest", "[transports][cache][housekeeping]") {
  SECTION("a missing cache holds nothing") {
    TempDir dir;
    auto u = transports::cache_usage(dir / "nope");
    REQUIRE(u);
    CHECK(u->entries == 0);
    CHECK(u->bytes == 0);
    CHECK(u->root == dir / "nope");
  }
  SECTION("entries, a temporary file, an old v1/; other programs' files are not counted") {
    Root r(3, 100);
    test::write_file(r.v2 / (".tmp-" + own_entry(9) + "-1-0"), std::string(7, 't'));
    test::write_file(r.root / "v1" / (std::string(64, 'b') + ".json"), std::string(11, 'm'));
    test::write_file(r.root / "notes.txt", std::string(1000, 'n'));
    test::write_file(r.v2 / "other.entry", std::string(1000, 'o'));
    test::write_file(r.root / "v1" / "a.json", std::string(1000, 'o'));
    auto u = transports::cache_usage(r.root);
    REQUIRE(u);
    CHECK(u->entries == 3);
    CHECK(u->bytes == 300);
    CHECK(u->temp_files == 1);
    CHECK(u->other_bytes == 18);
  }
  SECTION("a file where the cache should be") {
    TempDir dir;
    test::write_file(dir / "file", "x");
    auto u = transports::cache_usage(dir / "file");
    REQUIRE_FALSE(u);
    CHECK(u.error().is(Errc::io_error));
    CHECK_THAT(u.error().message, Catch::Contains((dir / "file").string()));
  }
}

TEST_CASE("prune_cache removes the least recently used entries down to the cap", "[transports][cache][housekeeping]") {
  struct Row {
    const char* what;
    std::uint64_t cap;
    std::vector<std::string> kept;
  };
  auto row = GENERATE(values<Row>({
      {"under the cap: nothing", 1000, {own_entry(0), own_entry(1), own_entry(2), own_entry(3)}},
      {"exactly the cap: nothing", 400, {own_entry(0), own_entry(1), own_entry(2), own_entry(3)}},
      {"one byte over: the oldest", 399, {own_entry(1), own_entry(2), own_entry(3)}},
      {"half: the two oldest", 250, {own_entry(2), own_entry(3)}},
      {"zero: everything", 0, {}},
  }));
  CAPTURE(row.what);
  Root r(4, 100);
  auto done = transports::prune_cache(r.root, row.cap);
  REQUIRE(done);
  CHECK(r.entries() == row.kept);
  CHECK(done->before.entries == 4);
  CHECK(done->after.entries == row.kept.size());
  CHECK(done->removed_entries == 4 - row.kept.size());
  CHECK(done->removed_bytes == 100 * (4 - row.kept.size()));
  CHECK(done->after.bytes <= row.cap);
}

TEST_CASE("prune_cache: recent use, not age, decides; ties by name", "[transports][cache][housekeeping]") {
  Root r(3, 100);
  used_ago(r.v2 / own_entry(0), 1);  // the oldest entry was just served
  REQUIRE(transports::prune_cache(r.root, 200));
  CHECK(r.entries() == std::vector<std::string>{own_entry(0), own_entry(2)});
  used_ago(r.v2 / own_entry(0), 50);
  used_ago(r.v2 / own_entry(2), 50);
  REQUIRE(transports::prune_cache(r.root, 100));
  CHECK(r.entries() == std::vector<std::string>{own_entry(2)});
}

TEST_CASE("prune_cache and clean_cache remove temporary files of dead writers, never one in flight",
          "[transports][cache][housekeeping]") {
  Root r(2, 100);
  const std::string dead = std::to_string(dead_pid());
  const std::string left = ".tmp-" + own_entry(5) + "-" + dead + "-0";
  const std::string in_flight = ".tmp-" + own_entry(6) + "-" + std::to_string(::getpid()) + "-0";
  test::write_file(r.v2 / left, "left by a killed run");
  test::write_file(r.v2 / in_flight, "being written now");
  SECTION("prune") {
    auto done = transports::prune_cache(r.root, transports::kDefaultCacheMaxSize);
    REQUIRE(done);
    CHECK(done->removed_temp_files == 1);
    CHECK(done->removed_entries == 0);
    CHECK_FALSE(fs::exists(r.v2 / left));
    CHECK(fs::exists(r.v2 / in_flight));
  }
  SECTION("clean: every entry and temporary file, an old v1/; the root and v2/ stay") {
    test::write_file(r.root / "v1" / (std::string(64, 'c') + ".body"), "x");
    auto done = transports::clean_cache(r.root);
    REQUIRE(done);
    CHECK(done->removed_entries == 2);
    CHECK(done->removed_bytes == 200);
    CHECK(done->removed_temp_files == 2);
    CHECK(fs::is_directory(r.root));
    CHECK_FALSE(fs::exists(r.root / "v1"));
    CHECK(fs::is_directory(r.v2));
    CHECK(fs::is_empty(r.v2));
    auto again = transports::clean_cache(r.root);  // cleaning an empty cache is fine
    REQUIRE(again);
    CHECK(again->removed_entries == 0);
  }
}

TEST_CASE("prune_cache and clean_cache remove own names that are not regular files, never another's",
          "[transports][cache][housekeeping][posix]") {  // FIFOs and /dev/null: Linux
  // Issue 20 item 7: a FIFO under an entry's name was kept by `cache prune` and `clean`, and every
  // later read of that entry blocked on it.
  using Action = std::function<Expected<transports::CacheCleanup>(const fs::path&)>;
  const std::vector<std::pair<std::string, Action>> actions = {
      {"prune", [](const fs::path& p) { return transports::prune_cache(p, transports::kDefaultCacheMaxSize); }},
      {"clean", [](const fs::path& p) { return transports::clean_cache(p); }},
  };
  for (const auto& [name, action] : actions) {
    CAPTURE(name);
    Root r(2, 100);
    const test::Fifo own_fifo(r.v2 / own_entry(5));
    fs::create_symlink("/dev/null", r.v2 / own_entry(6));
    const test::Fifo foreign_fifo(r.v2 / "notes.fifo");
    auto done = action(r.root);
    REQUIRE(done);
    CHECK(done->before.entries == 2);  // the strays are not counted as entries
    CHECK_FALSE(fs::exists(fs::symlink_status(own_fifo.path())));
    CHECK_FALSE(fs::exists(fs::symlink_status(r.v2 / own_entry(6))));
    CHECK(fs::is_fifo(foreign_fifo.path()));
    CHECK(fs::exists("/dev/null"));  // a link is removed, never its target
    CHECK(r.entries().size() == (name == "prune" ? 2u : 0u));
  }
}

TEST_CASE("cache housekeeping touches only wheelfit's own files", "[transports][cache][housekeeping][foreign]") {
  using Action = std::function<Expected<transports::CacheCleanup>(const fs::path&)>;
  const std::vector<std::pair<std::string, Action>> actions = {
      {"info", [](const fs::path& p) -> Expected<transports::CacheCleanup> {
         auto u = transports::cache_usage(p);
         if (!u) return u.error();
         return transports::CacheCleanup{*u, *u, 0, 0, 0};
       }},
      {"prune", [](const fs::path& p) { return transports::prune_cache(p, 0, std::chrono::seconds(0)); }},
      {"clean", [](const fs::path& p) { return transports::clean_cache(p); }},
  };
  // Files of other programs, in folders that may be given as --cache-dir; names relative to it.
  struct Row {
    const char* what;
    std::vector<std::string> files;
  };
  const std::string dead = std::to_string(dead_pid());
  const std::vector<Row> foreign = {
      {"a ~/.cache", {"pip/http/abc", "wheelfit/http/v2/" + own_entry(0), "fontconfig/x.cache-8", ".tmp-x-" + dead + "-0"}},
      {"a project folder", {"pyproject.toml", "src/pkg/__init__.py", "v3/data.entry"}},
      {"an empty folder", {}},
#ifndef _WIN32  // a symbolic link needs a privilege on Windows
      {"v2 is a link to a folder", {"elsewhere/" + own_entry(1)}},
#endif
  };
  for (const auto& [name, action] : actions) {
    for (const auto& row : foreign) {
      CAPTURE(name, row.what);
      TempDir dir;
      const fs::path folder = dir / "given";
      fs::create_directories(folder);
      for (const auto& f : row.files) test::write_file(folder / f, "someone else's");
      if (std::string_view(row.what).starts_with("v2 is a link")) fs::create_directory_symlink("elsewhere", folder / "v2");
      auto done = action(folder);
      REQUIRE_FALSE(done);
      CHECK(done.error().is(Errc::invalid_input));
      CHECK_THAT(done.error().message, Catch::Contains(folder.string()) && Catch::Contains("holds no wheelfit cache"));
      for (const auto& f : row.files) CHECK(test::read_file(folder / f) == "someone else's");
    }
    {  // a cache with other programs' files in it
      CAPTURE(name);
      Root r(2, 100);
      const std::vector<fs::path> others = {
          r.root / "notes.txt",
          r.root / "v3" / own_entry(7),
          r.v2 / "README.entry",                                   // not a sha256 key
          r.v2 / (std::string(64, 'A') + ".entry"),                // upper-case hex: not a key the cache writes
          r.v2 / (own_entry(8) + ".bak"),
          r.v2 / (".tmp-notes.txt-" + dead + "-0"),                // a temporary file, but not of an entry
          r.root / "v1" / "settings.json",
      };
      for (const auto& p : others) test::write_file(p, "someone else's");
      test::write_file(r.v2 / (".tmp-" + own_entry(9) + "-" + dead + "-0"), "left by a killed run");
      auto done = action(r.root);
      REQUIRE(done);
      CHECK(done->before.entries == 2);
      CHECK(done->before.temp_files == 1);
      CHECK(done->before.other_bytes == 20);  // the temporary file only
      for (const auto& p : others) {
        CAPTURE(p);
        CHECK(test::read_file(p) == "someone else's");
      }
      if (name != "info") {
        CHECK(done->after.entries == 0);
        CHECK(done->after.temp_files == 0);
        CHECK(fs::is_directory(r.root / "v1"));  // another program's file is in it
      }
    }
  }
}

TEST_CASE("cache: entries served are marked used, so the cap removes what is not used", "[transports][cache][housekeeping]") {
  Fixture f;
  int n = 0;
  f.state->handle([&](const Request& r) -> Expected<Response> {
    ++n;
    if (header(r, "if-none-match") == "\"v\"") return not_modified({{"cache-control", "max-age=0"}});
    return ok(std::string(1000, 'p'), {{"cache-control", r.url.ends_with("/a/") ? "max-age=600" : "max-age=0"}, {"etag", "\"v\""}});
  });
  const std::string a = "https://example.test/a/", b = "https://example.test/b/";
  REQUIRE(f.get(a));
  REQUIRE(f.get(b));
  const auto entries = f.files(".entry");
  REQUIRE(entries.size() == 2);
  for (const auto& e : entries) used_ago(e, 3600);
  SECTION("a fresh entry served from the cache") {
    auto r = f.get(a);
    REQUIRE(r);
    CHECK(r->from_cache);
  }
  SECTION("an entry revalidated with a 304 (its sidecar not rewritten)") {
    auto r = f.get(b);
    REQUIRE(r);
    CHECK(r->from_cache);
    CHECK(n == 3);
  }
  int recent = 0;
  for (const auto& e : entries) recent += now_s() - used_at(e) < 600 ? 1 : 0;
  CHECK(recent == 1);
}

TEST_CASE("cache: after a transport's writes the cap is applied, least recently used first",
          "[transports][cache][housekeeping]") {
  Fixture f;
  f.state->handle([](const Request&) -> Expected<Response> { return ok(std::string(1000, 'p'), {{"cache-control", "max-age=600"}}); });
  const auto url = [](int i) { return "https://example.test/p" + std::to_string(i) + "/"; };
  REQUIRE(f.get(url(0)));
  const auto one = f.files(".entry").front();
  const auto entry_size = fs::file_size(one);
  f.reopen(false, 2 * entry_size + entry_size / 2);  // room for two entries
  used_ago(one, 300);
  REQUIRE(f.get(url(1)));
  for (const auto& e : f.files(".entry")) {
    if (e != one) used_ago(e, 200);
  }
  REQUIRE(f.get(url(0)));  // served from the cache: p0 is now the most recently used
  REQUIRE(f.get(url(2)));  // a third entry: p1, the least recently used, goes
  CHECK(f.files(".entry").size() == 2);
  CHECK(fs::exists(one));
  CHECK(f.state->requests().size() == 3);
  auto again = f.get(url(1));
  REQUIRE(again);
  CHECK_FALSE(again->from_cache);  // it was removed
  CHECK(f.warnings.empty());
}

TEST_CASE("cache: temporary files a killed run left are removed by the next run's housekeeping",
          "[transports][cache][housekeeping]") {
  Fixture f;
  f.state->handle([](const Request&) -> Expected<Response> { return ok("page", {{"cache-control", "max-age=600"}}); });
  REQUIRE(f.get("https://example.test/a/"));
  const std::string dead = std::to_string(dead_pid());
  const fs::path left = f.v2() / (".tmp-" + own_entry(12) + "-" + dead + "-4");
  test::write_file(left, "half an entry");
  SECTION("a run that writes") { REQUIRE(f.get("https://example.test/b/")); }
  SECTION("a run served wholly from the cache") {
    auto r = f.get("https://example.test/a/");
    REQUIRE(r);
    CHECK(r->from_cache);
  }
  CHECK_FALSE(fs::exists(left));
  CHECK(f.files(".tmp").empty());
}
