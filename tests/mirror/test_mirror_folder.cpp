// Whose the mirror folder is (core/src/mirror/folder.cpp): a folder wheelfit made is marked, a
// user's is refused and left byte for byte, and publish removes only wheelfit's names. Issue 31
// item 2, decision 0022.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "mirror/mirror_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/util/atomic_file.hpp"

namespace {

namespace fs = std::filesystem;
using namespace wheelfit;
using namespace wheelfit::test_mirror;
using test::contains;
using test::read_file;
using test::TempDir;
using test::write_file;

constexpr const char* kMark = ".wheelfit-mirror";
const std::string kHexA(64, 'a'), kHexB(64, 'b');

bool is_mark(const fs::path& out) { return fs::is_regular_file(fs::symlink_status(out / kMark)); }

/// Writes each (path under `dir`, bytes); a path ending in '/' is a folder.
void plant(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& entries) {
  for (const auto& [rel, bytes] : entries) {
    if (rel.ends_with('/')) fs::create_directories(dir / rel);
    else write_file(dir / rel, bytes);
  }
}

/// OUT as wheelfit's first publish leaves it, with one wheel; that wheel's File.
mirror::File published_once(const fs::path& out) {
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  return a;
}

}  // namespace

TEST_CASE("a folder of the user's holding current, snapshots/ or pool/ is refused and left byte for byte",
          "[mirror][folder]") {
  struct Row {
    std::vector<std::pair<std::string, std::string>> entries;
    std::string named;  ///< the entry the error names
  };
  const std::vector<Row> rows = {
      {{{"snapshots/keep-me/notes.txt", "mine"}}, "snapshots/keep-me"},
      {{{"pool/.metadata/notes.txt", "mine"}}, "pool/.metadata/notes.txt"},
      {{{"pool/a-1.0-py3-none-any.whl", "zip"}, {"pool/.metadata/notes.txt", "mine"}}, "pool/.metadata/notes.txt"},
      {{{"pool/report.pdf", "mine"}}, "pool/report.pdf"},
      {{{"pool/.report.pdf.part", "mine"}}, "pool/.report.pdf.part"},
      {{{"current", "a file named current"}}, "current"},
      {{{"snapshots/20240101T000000Z/index.html", "mine"}}, "snapshots/20240101T000000Z"},
      {{{"snapshots/20240101T000000Z/mirror.json", "{\"generator\": \"another tool\"}"}}, "snapshots/20240101T000000Z"},
      {{{".report.pdf.part", "mine"}}, ".report.pdf.part"},
      {{{".lock", ""}, {"notes/", ""}}, "notes"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.named);
    TempDir tmp;
    plant(tmp.path(), row.entries);
    const auto before = tree_of(tmp.path());
    auto r = mirror::publish(snapshot_of(tmp.path(), {}));
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK(contains(r.error().message, tmp.path().string() + ": not a wheelfit mirror"));
    CHECK(contains(r.error().message, "it holds " + row.named));
    CHECK_FALSE(mirror::prepare(tmp.path()));
    CHECK(tree_of(tmp.path()) == before);
  }
}

TEST_CASE("prepare: a link or a folder where the mark goes is no mark", "[mirror][folder]") {
  TempDir tmp, elsewhere;
  write_file(elsewhere / "file", "x");
  SECTION("a link") { fs::create_symlink(elsewhere / "file", tmp / kMark); }
  SECTION("a folder") { fs::create_directory(tmp / kMark); }
  const auto before = tree_of(tmp.path());
  auto r = mirror::prepare(tmp.path());
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, std::string("it holds ") + kMark));
  CHECK(tree_of(tmp.path()) == before);
  CHECK(read_file(elsewhere / "file") == "x");
}

TEST_CASE("prepare: a mirror of an earlier wheelfit with a link where the mark goes is refused, never written through",
          "[mirror][folder]") {
  TempDir tmp, elsewhere;
  const fs::path out = tmp / "m";
  published_once(out);
  fs::remove(out / kMark);
  write_file(elsewhere / "file", "x");
  fs::create_symlink(elsewhere / "file", out / kMark);
  auto r = mirror::prepare(out);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, (out / kMark).string() + ": is a symlink, not a regular file"));
  CHECK(read_file(elsewhere / "file") == "x");
}

TEST_CASE("in a mirror of wheelfit's, publish removes only wheelfit's names", "[mirror][folder]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  const auto a = published_once(out);
  CHECK(is_mark(out));
  struct Row {
    std::string rel;
    bool removed;
  };
  const std::vector<Row> rows = {
      // The user's: stay, byte for byte.
      {"snapshots/keep-me/notes.txt", false},
      {"snapshots/20240101T000000Z.bak/notes.txt", false},
      {"snapshots/.tmp-notes", false},
      {"pool/.metadata/notes.txt", false},
      {"pool/.metadata/" + std::string(64, 'A') + ".metadata", false},
      {"pool/.metadata/" + std::string(63, 'a') + ".metadata", false},
      {"pool/notes.whl.metadata", false},
      {"pool/report.pdf", false},
      {".current.tmp-mine", false},
      {"notes.txt", false},
      // wheelfit's: old snapshots, leftovers of killed runs, METADATA no snapshot lists.
      {"snapshots/20200101T000000Z/index.html", true},
      {"snapshots/20200101T000000Z-2/index.html", true},
      {"snapshots/.tmp-20200101T000000Z-99999/index.html", true},
      {".current.tmp-99999", true},
      {"pool/.metadata/" + kHexA + ".metadata", true},
      {"pool/.metadata/.tmp-" + kHexB + ".metadata-99999-0", true},
      {"pool/old-1.0-py3-none-any.whl.metadata", true},
  };
  for (const auto& row : rows) write_file(out / row.rel, "bytes of " + row.rel);
  auto again = mirror::publish(snapshot_of(out, {a}));
  REQUIRE(again);
  CHECK(again->snapshots_removed == 3);
  for (const auto& row : rows) {
    CAPTURE(row.rel);
    CHECK(fs::exists(out / row.rel) == !row.removed);
    if (!row.removed) CHECK(read_file(out / row.rel) == "bytes of " + row.rel);
  }
  // The current snapshot and the one before it stay; the first of the three goes.
  const std::string second = fs::read_symlink(out / "current").filename().string();
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  CHECK(fs::exists(out / "snapshots" / second));
  CHECK(read_file(out / "snapshots/keep-me/notes.txt") == "bytes of snapshots/keep-me/notes.txt");
}

TEST_CASE("a mirror an earlier wheelfit made (no mark, its mirror.json) is served on, and marked", "[mirror][folder]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  const auto a = published_once(out);
  fs::remove(out / kMark);
  write_file(out / "notes.txt", "mine");
  SECTION("its mirror.json says wheelfit made it") {
    REQUIRE(mirror::publish(snapshot_of(out, {a})));
    CHECK(is_mark(out));
    CHECK(read_file(out / "notes.txt") == "mine");
  }
  SECTION("a mirror.json another tool wrote is no mirror of wheelfit's") {
    const fs::path manifest = fs::canonical(out / "current") / "mirror.json";
    fs::remove(manifest);
    write_file(manifest, "{\"generator\": \"another tool\", \"files\": []}");
    const auto before = tree_of(out);
    auto r = mirror::publish(snapshot_of(out, {a}));
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "not a wheelfit mirror"));
    CHECK(tree_of(out) == before);
  }
}

TEST_CASE("what a run killed before its first publish leaves is taken for wheelfit's", "[mirror][folder]") {
  // A kill between making OUT and writing the mark, during the mark's write, or after it while
  // the first downloads arrive: the next run takes the folder (and marks it), never refuses it.
  struct Row {
    const char* state;
    std::vector<std::pair<std::string, std::string>> entries;
  };
  const std::vector<Row> rows = {
      {"made, nothing written", {}},
      {"the lock taken", {{".lock", "12345\n"}}},
      {"downloads arriving",
       {{".lock", ""},
        {"pool/.wheelfit.lock", ""},
        {"pool/.x-1.0-py3-none-any.whl.part", "half"},
        {"pool/.x-1.0-py3-none-any.whl.part.meta", "\"etag\"\n"},
        {"pool/y-1.0-py3-none-any.whl", "zip"},
        {"pool/.y-1.0-py3-none-any.whl.sha256", "digest"},
        {"pool/.tmp-.y-1.0-py3-none-any.whl.sha256-99999-0", "digest"},
        {"pool/torch-2.9.0-variants.json", "{}"},
        {"pool/.metadata/" + kHexA + ".metadata", "Name: y"},
        {"pool/.metadata/.tmp-" + kHexB + ".metadata-99999-3", "Name"}}},
      {"a first publish cut short", {{"snapshots/.tmp-20260101T000000Z-99999/index.html", "<html>"}, {".current.tmp-99999", ""}}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.state);
    TempDir tmp;
    plant(tmp.path(), row.entries);
    REQUIRE(mirror::prepare(tmp.path()));
    CHECK(is_mark(tmp.path()));
    CHECK(mirror::publish(snapshot_of(tmp.path(), {})));
  }
  SECTION("killed while the mark was written: its temporary file is left") {
    TempDir tmp;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // the write as a SIGKILL leaves it: created, half written, never renamed
      auto f = util::AtomicFile::create(tmp / kMark);
      if (f && f->write("This folder is")) std::_Exit(0);
      std::_Exit(1);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    REQUIRE(fs::directory_iterator(tmp.path()) != fs::directory_iterator());
    CHECK_FALSE(fs::exists(tmp / kMark));
    REQUIRE(mirror::prepare(tmp.path()));
    CHECK(is_mark(tmp.path()));
  }
}

TEST_CASE("processes preparing one new folder at once all take it", "[mirror][folder][concurrency]") {
  // One sees the folder the other made, with the mark's temporary file or the mark itself
  // appearing while it looks: never "not a wheelfit mirror".
  TempDir tmp;
  constexpr int kProcs = 4, kFolders = 100;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int failed = 0;
      for (int i = 0; i < kFolders; ++i) {
        auto r = mirror::prepare(tmp / ("d" + std::to_string(i)) / "out");
        if (!r) std::fprintf(stderr, "%s\n", r.error().message.c_str());  // the child cannot CHECK
        failed += r ? 0 : 1;
      }
      std::_Exit(std::min(failed, 100));
    }
    pids.push_back(pid);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  for (int i = 0; i < kFolders; ++i) {
    const fs::path out = tmp / ("d" + std::to_string(i)) / "out";
    CAPTURE(out);
    CHECK(is_mark(out));
    CHECK(tree_of(out).size() == 1);  // the mark, no temporary file left
  }
}
