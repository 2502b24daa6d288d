// util/atomic_file: a write replaces the file whole or leaves it (and its folder) as it was; an
// existing file's mode and a symbolic link are kept when asked; a signal mid-write and a killed
// writer's leftovers leave no temporary file.
#include <catch2/catch.hpp>

#ifndef _WIN32
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#endif
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/util/atomic_file.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("write_file_atomic replaces an existing file with the pieces, whole", "[util][atomic]") {
  const std::string large(1 << 20, 'x');
  struct Row {
    const char* name;
    std::string_view a, b, c;
    std::string content;
  };
  const std::vector<Row> rows = {
      {"empty pieces", "", "", "", ""},
      {"one piece", "new", "", "", "new"},
      {"several pieces", "head\n", "", "body", "head\nbody"},
      {"a large piece", large, "", "!", large + "!"},
  };
  for (const auto& r : rows) {
    for (const bool durable : {true, false}) {
      CAPTURE(r.name, durable);
      test::TempDir dir;
      const auto target = dir / "out.txt";
      test::write_file(target, "an older and longer content");
      REQUIRE(util::write_file_atomic(target, {r.a, r.b, r.c}, {.durable = durable}));
      CHECK(test::read_file(target) == r.content);
      CHECK(names_in(dir.path()) == std::vector<std::string>{"out.txt"});
    }
  }
  SECTION("no pieces at all make an empty file") {
    test::TempDir dir;
    test::write_file(dir / "out.txt", "old");
    REQUIRE(util::write_file_atomic(dir / "out.txt", {}));
    CHECK(test::read_file(dir / "out.txt").empty());
  }
}

#ifndef _WIN32  // modes, symbolic links, fork and signals: Linux-only
TEST_CASE("write_file_atomic creates a missing file with the given mode", "[util][atomic][posix]") {
  test::TempDir dir;
  const auto target = dir / "fresh";
  const ::mode_t old_mask = ::umask(022);
  const auto w = util::write_file_atomic(target, {"x"}, {.durable = false, .mode = 0600});
  ::umask(old_mask);
  REQUIRE(w);
  CHECK(test::read_file(target) == "x");
  CHECK((fs::status(target).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
}
#endif

TEST_CASE("write_file_atomic failures name the path and leave no temporary file", "[util][atomic]") {
  test::TempDir dir;
  SECTION("a missing folder") {
    const auto target = dir / "nope" / "out.txt";
    const auto w = util::write_file_atomic(target, {"new"});
    REQUIRE_FALSE(w);
    CHECK(w.error().is(Errc::io_error));
#ifdef _WIN32
    CHECK_THAT(w.error().message, Catch::Contains(target.string()) && Catch::Contains("(error 3)"));  // ERROR_PATH_NOT_FOUND
#else
    CHECK_THAT(w.error().message, Catch::Contains(target.string()) && Catch::Contains("No such file or directory"));
#endif
    CHECK(names_in(dir.path()).empty());
  }
  SECTION("a folder where the file should be: the rename fails, the folder stays") {
    const auto target = dir / "taken";
    fs::create_directory(target);
    test::write_file(target / "inside", "kept");
    const auto w = util::write_file_atomic(target, {"new"}, {.durable = false});
    REQUIRE_FALSE(w);
    CHECK_THAT(w.error().message, Catch::Contains(target.string()) && Catch::Contains("rename failed"));
    CHECK(names_in(dir.path()) == std::vector<std::string>{"taken"});
    CHECK(test::read_file(target / "inside") == "kept");
  }
}

#ifndef _WIN32  // modes, symbolic links, fork and signals: Linux-only
TEST_CASE("write_file_atomic keeps an existing file's mode when asked, else gives the new mode", "[util][atomic][posix]") {
  struct Row {
    const char* what;
    bool keep;
    ::mode_t before, after;
  };
  const std::vector<Row> rows = {
      {"kept: private", true, 0600, 0600},
      {"kept: group-readable", true, 0640, 0640},
      {"kept: executable", true, 0755, 0755},
      {"not kept: the mode given", false, 0600, 0644},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    test::TempDir dir;
    const auto target = dir / "pixi.toml";
    test::write_file(target, "old");
    ::chmod(target.c_str(), r.before);
    const ::mode_t old_mask = ::umask(022);
    const auto w = util::write_file_atomic(target, {"new"}, {.durable = false, .keep_mode = r.keep});
    ::umask(old_mask);
    REQUIRE(w);
    struct stat st {};
    REQUIRE(::stat(target.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == r.after);
    CHECK(test::read_file(target) == "new");
  }
}
#endif

#ifndef _WIN32  // modes, symbolic links, fork and signals: Linux-only
TEST_CASE("write_file_atomic writes through symbolic links when asked; the link stays a link", "[util][atomic][posix]") {
  test::TempDir dir;
  fs::create_directory(dir / "real");
  test::write_file(dir / "real" / "pixi.toml", "old");
  struct Row {
    const char* what;
    fs::path link, to;  // `link` -> `to` (as written in the link)
    fs::path written;   // the file that gets the content
  };
  const std::vector<Row> rows = {
      {"an absolute link", dir / "abs.toml", dir / "real" / "pixi.toml", dir / "real" / "pixi.toml"},
      {"a relative link", dir / "rel.toml", "real/pixi.toml", dir / "real" / "pixi.toml"},
      {"a link to a link", dir / "chain.toml", "rel.toml", dir / "real" / "pixi.toml"},
      {"a dangling link: its target is created", dir / "dangling.toml", "real/new.toml", dir / "real" / "new.toml"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    fs::create_symlink(r.to, r.link);
    const auto w = util::write_file_atomic(r.link, {r.what}, {.durable = true, .through_symlinks = true});
    REQUIRE(w);
    CHECK(fs::is_symlink(r.link));
    CHECK(fs::read_symlink(r.link) == r.to);
    CHECK(test::read_file(r.written) == r.what);
    for (const auto& name : names_in(dir / "real")) CHECK(name.rfind(".tmp-", 0) != 0);
  }
  SECTION("without through_symlinks the link itself is replaced by a file") {
    fs::create_symlink(dir / "real" / "pixi.toml", dir / "plain.toml");
    REQUIRE(util::write_file_atomic(dir / "plain.toml", {"mine"}, {.durable = false}));
    CHECK_FALSE(fs::is_symlink(dir / "plain.toml"));
    CHECK(test::read_file(dir / "plain.toml") == "mine");
  }
  SECTION("a link loop is an error, and nothing is written") {
    fs::create_symlink("loop-b", dir / "loop-a");
    fs::create_symlink("loop-a", dir / "loop-b");
    const auto w = util::write_file_atomic(dir / "loop-a", {"x"}, {.through_symlinks = true});
    REQUIRE_FALSE(w);
    CHECK_THAT(w.error().message, Catch::Contains("too many symbolic links"));
  }
}
#endif

TEST_CASE("AtomicFile: uncommitted, its temporary file goes and the target stays", "[util][atomic]") {
  test::TempDir dir;
  const auto target = dir / "out.txt";
  test::write_file(target, "old");
  {
    auto f = util::AtomicFile::create(target, {.durable = false});
    REQUIRE(f);
    REQUIRE(f->write("half"));
    CHECK(fs::exists(f->temp_path()));
    CHECK(util::temp_file_writer(f->temp_path().filename().string(), "out.txt") == ::getpid());
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"out.txt"});
  CHECK(test::read_file(target) == "old");
}

TEST_CASE("temp_file_writer reads the writer's pid from a temporary file's name", "[util][atomic]") {
  struct Row {
    std::string name;
    std::optional<std::string> target;
    std::optional<long> writer;
  };
  const std::vector<Row> rows = {
      {".tmp-pixi.toml-1234-0", "pixi.toml", 1234},
      {".tmp-pixi.toml-1234-17", std::nullopt, 1234},
      {".tmp-my-file-name-99-3", "my-file-name", 99},
      {".tmp-abc.entry-5-6", std::nullopt, 5},
      {".tmp-probe", std::nullopt, 0},               // a temporary name without a writer
      {".tmp-x-y", std::nullopt, 0},
      {".tmp-pixi.toml-12a-0", std::nullopt, 0},
      {".tmp-pixi.toml-1234-0", "other.toml", std::nullopt},  // another target's
      {".tmp-pixi.toml.bak-1-0", "pixi.toml", std::nullopt},
      {".tmp-pixi.toml-x-1234-0", "pixi.toml", std::nullopt},
      {".tmp-pixi.toml-1234", "pixi.toml", std::nullopt},
      {"pixi.toml", std::nullopt, std::nullopt},
      {"tmp-pixi.toml-1-0", std::nullopt, std::nullopt},
      {".tmp-pixi.toml-12345678901-0", "pixi.toml", std::nullopt},  // not a pid
  };
  for (const auto& r : rows) {
    CAPTURE(r.name, r.target.value_or("<any>"));
    const auto target = r.target ? std::optional<std::string_view>(*r.target) : std::nullopt;
    CHECK(util::temp_file_writer(r.name, target) == r.writer);
  }
}

#ifndef _WIN32  // modes, symbolic links, fork and signals: Linux-only
TEST_CASE("remove_stale_temp_files removes what dead writers left, never a write in flight", "[util][atomic][posix]") {
  test::TempDir dir;
  // A pid that surely ran and ended: a child reaped here.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  int status = 0;
  REQUIRE(::waitpid(dead, &status, 0) == dead);
  const std::string dead_pid = std::to_string(dead), live_pid = std::to_string(::getppid());
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(2);
  struct Row {
    std::string name;
    bool old;
    bool removed_for_target;  // with target "pixi.toml"
    bool removed_for_any;     // with no target
  };
  const std::vector<Row> rows = {
      {".tmp-pixi.toml-" + dead_pid + "-0", false, true, true},
      {".tmp-pixi.toml-" + live_pid + "-0", false, false, false},  // its writer still runs
      {".tmp-pixi.toml-" + live_pid + "-1", true, true, true},     // but an hour old: nobody writes that long
      {".tmp-pixi.toml-" + std::to_string(::getpid()) + "-9", false, false, false},  // ours: in flight
      {".tmp-other.toml-" + dead_pid + "-0", false, false, true},
      {".tmp-probe", false, false, false},
      {".tmp-probe2", true, false, true},
      {"pixi.toml", true, false, false},
      {"notes-" + dead_pid + "-0", true, false, false},
  };
  for (const bool any : {false, true}) {
    CAPTURE(any);
    for (const auto& r : rows) {
      test::write_file(dir / r.name, "x");
      if (r.old) fs::last_write_time(dir / r.name, old_time);
    }
    const auto removed = util::remove_stale_temp_files(dir.path(), any ? std::nullopt : std::optional<std::string_view>("pixi.toml"));
    std::size_t expected = 0;
    for (const auto& r : rows) {
      CAPTURE(r.name);
      const bool gone = any ? r.removed_for_any : r.removed_for_target;
      expected += gone ? 1 : 0;
      CHECK(fs::exists(dir / r.name) == !gone);
    }
    CHECK(removed == expected);
    for (const auto& e : fs::directory_iterator(dir.path())) fs::remove(e.path());
  }
}
#endif

#ifndef _WIN32  // modes, symbolic links, fork and signals: Linux-only
TEST_CASE("SIGINT and SIGTERM mid-write leave no temporary file; the target stays whole", "[util][atomic][posix]") {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(sig);
    test::TempDir dir;
    const auto target = dir / "pixi.toml";
    test::write_file(target, "old");
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // no Catch2 here: report by exit status only
      ::signal(sig, SIG_DFL);
      util::remove_temp_files_on_signal();
      auto f = util::AtomicFile::create(target, {.durable = false});
      if (!f || !f->write("half of the new")) ::_exit(3);
      (void)!::write(ready[1], "r", 1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char got = 0;
    REQUIRE(::read(ready[0], &got, 1) == 1);
    ::close(ready[0]);
    CHECK(names_in(dir.path()).size() == 2);  // the temporary file is there, mid-write
    ::kill(child, sig);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));  // the signal still ends the process, as it would have
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);
    CHECK(names_in(dir.path()) == std::vector<std::string>{"pixi.toml"});
    CHECK(test::read_file(target) == "old");
  }
}
#endif
