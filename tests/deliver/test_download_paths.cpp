// deliver::download and lock_folder against what is already at the paths they write: links,
// FIFOs, folders and hard links refused, never followed; a part another process holds or
// overwrites; leftover parts removed. Issue 20 items 1, 6, 16.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <thread>

#include "deliver/download_support.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;
using namespace wheelfit::test_deliver;
using deliver::Delivered;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

/// What a hostile or stale folder holds at a path download writes.
enum class Planted { symlink, dangling_symlink, fifo, folder, hard_link };

const char* planted_name(Planted p) {
  switch (p) {
    case Planted::symlink: return "a symbolic link to another file";
    case Planted::dangling_symlink: return "a dangling symbolic link";
    case Planted::fifo: return "a FIFO";
    case Planted::folder: return "a folder";
    case Planted::hard_link: return "a hard link to another file";
  }
  return "?";
}

/// Plants `what` at `at`; the file it leads to (when any) is `victim`, holding "precious".
void plant(Planted what, const fs::path& at, const fs::path& victim) {
  test::write_file(victim, "precious");
  switch (what) {
    case Planted::symlink: fs::create_symlink(victim, at); break;
    case Planted::dangling_symlink: fs::create_symlink(victim.string() + ".new", at); break;
    case Planted::fifo: REQUIRE(::mkfifo(at.c_str(), 0644) == 0); break;
    case Planted::folder: fs::create_directory(at); break;
    case Planted::hard_link: fs::create_hard_link(victim, at); break;
  }
}

}  // namespace

TEST_CASE("download: a link, FIFO, folder or hard link at a part's path is refused, never followed", "[deliver][download][links]") {
  const Planted what = GENERATE(Planted::symlink, Planted::dangling_symlink, Planted::fifo, Planted::folder, Planted::hard_link);
  CAPTURE(planted_name(what));
  const Served file{random_bytes(20000, 21)};
  TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TempDir dir, elsewhere;
  const fs::path part = dir / ("." + kName + ".part");
  const fs::path victim = elsewhere / "victim";
  plant(what, part, victim);
  auto t = make();
  auto got = download_one(*t, server, file, dir.path());
  const Delivered& d = got.at(0);
  REQUIRE(d.status == Delivered::Status::failed);
  REQUIRE(d.error);
  INFO(d.error->message);
  CHECK(contains(d.error->message, part.string()));
  CHECK(contains(d.error->message, "remove it"));
  CHECK(slurp(victim) == "precious");
  CHECK_FALSE(fs::exists(victim.string() + ".new"));
  CHECK_FALSE(fs::exists(dir / kName));
  CHECK(server.requests().empty());
}

TEST_CASE("download: a link, FIFO or folder at a final name is refused, never replaced", "[deliver][download][links]") {
  const Planted what = GENERATE(Planted::symlink, Planted::fifo, Planted::folder);
  CAPTURE(planted_name(what));
  const Served file{random_bytes(20000, 22)};
  TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TempDir dir, elsewhere;
  const fs::path final_name = dir / kName;
  plant(what, final_name, elsewhere / "victim");
  auto t = make();
  auto got = download_one(*t, server, file, dir.path());
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  INFO(got[0].error->message);
  CHECK(contains(got[0].error->message, final_name.string()));
  CHECK(contains(got[0].error->message, "replaces only regular files"));
  CHECK(slurp(elsewhere / "victim") == "precious");
  CHECK(fs::symlink_status(final_name).type() == (what == Planted::symlink ? fs::file_type::symlink
                                                  : what == Planted::fifo  ? fs::file_type::fifo
                                                                           : fs::file_type::directory));
}

TEST_CASE("download: a part another process holds is left to it", "[deliver][download][concurrency]") {
  const Served file{random_bytes(20000, 23)};
  TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TempDir dir;
  const fs::path part = dir / ("." + kName + ".part");
  test::write_file(part, "theirs");
  const int theirs = ::open(part.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(theirs >= 0);
  REQUIRE(::flock(theirs, LOCK_EX | LOCK_NB) == 0);  // flock is per open file: "another process"
  auto t = make();
  auto got = download_one(*t, server, file, dir.path());
  ::close(theirs);
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  INFO(got[0].error->message);
  CHECK(contains(got[0].error->message, "another process is writing it"));
  CHECK(slurp(part) == "theirs");
  CHECK(server.requests().empty());
}

TEST_CASE("download: the bytes on disk are hashed again before the rename", "[deliver][download][concurrency]") {
  // The body streams in whole and hashes right; meanwhile something else overwrites the part's
  // first bytes (a writer that ignores the locks). What is on disk is not what was verified.
  const std::string body = random_bytes(3u << 20, 24);
  TempDir dir;
  const fs::path part = dir / ("." + kName + ".part");
  TestServer server([&](Conn& c) {
    if (!c.read_request()) return;
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    if (!c.write(head + body.substr(0, 2u << 20))) return;
    const auto until = std::chrono::steady_clock::now() + 20s;
    std::error_code ec;
    while (fs::file_size(part, ec) < (1u << 20) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    const int fd = ::open(part.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      (void)!::pwrite(fd, "XXXXXXXX", 8, 0);
      ::close(fd);
    }
    c.write(std::string_view(body).substr(2u << 20));
  });
  auto t = make();
  auto got = deliver::download(*t, {wanted(server.url("/" + kName), kName, body)}, options_for(dir.path()));
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  INFO(got[0].error->message);
  CHECK(contains(got[0].error->message, "the bytes on disk have sha256"));
  CHECK(contains(got[0].error->message, sha(body)));
  CHECK_FALSE(fs::exists(dir / kName));
  CHECK_FALSE(fs::exists(part));
}

TEST_CASE("download: parts no one will continue are removed; other files stay", "[deliver][download][leftovers]") {
  TestServer server(serve([](const HttpRequest&) { return http_response(404, "gone"); }));
  TempDir dir, elsewhere;
  // An earlier run's parts of a file this run does not want, and names that are not parts.
  test::write_file(dir / ".old-1.0-py3-none-any.whl.part", "old bytes");
  test::write_file(dir / ".old-1.0-py3-none-any.whl.part.meta", "\"v0\"\n");
  test::write_file(dir / "notes.part", "a user's file");
  test::write_file(dir / ".config", "a user's file");
  test::write_file(elsewhere / "victim", "precious");
  fs::create_symlink(elsewhere / "victim", dir / ".linked-1.0-py3-none-any.whl.part");
  auto t = make();
  auto got = deliver::download(*t, {wanted(server.url("/" + kName), kName, "x")}, options_for(dir.path()));
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  CHECK(names_in(dir.path()) ==
        std::vector<std::string>{".config", ".linked-1.0-py3-none-any.whl.part", ".wheelfit.lock", "notes.part"});
  CHECK(slurp(elsewhere / "victim") == "precious");
}

TEST_CASE("download: only the leftovers of names wheelfit downloads under are removed; a user's stay byte for byte",
          "[deliver][download][leftovers]") {
  // Issue 31 item 8: a ".X.part" is wheelfit's only when X is a wheel or a variants file name.
  struct Row {
    std::string name;
    bool removed;
  };
  const std::vector<Row> rows = {
      {".report.pdf.part", false},
      {".report.pdf.part.meta", false},
      {".notes.part", false},
      {".x.whl.part", false},                      // not a wheel name: no version and tags
      {".backup.whl.sha256", false},               // a record of no wheel name
      {".torch-2.9.0-variants.json.tar.part", false},
      {".torch-variants.json.part", false},        // no version
      {".old-1.0-py3-none-any.whl.part", true},
      {".old-1.0-py3-none-any.whl.part.meta", true},
      {".torch-2.9.0-variants.json.part", true},
      {".torch-2.9.0-variants.json.part.meta", true},
      {".gone-1.0-py3-none-any.whl.sha256", true},  // its wheel is not there
  };
  TestServer server(serve([](const HttpRequest&) { return http_response(404, "gone"); }));
  TempDir dir;
  for (const auto& row : rows) test::write_file(dir / row.name, "bytes of " + row.name);
  auto t = make();
  auto got = deliver::download(*t, {wanted(server.url("/" + kName), kName, "x")}, options_for(dir.path()));
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  for (const auto& row : rows) {
    CAPTURE(row.name);
    CHECK(fs::exists(dir / row.name) == !row.removed);
    if (!row.removed) CHECK(slurp(dir / row.name) == "bytes of " + row.name);
  }
}

TEST_CASE("is_delivered_name: wheel and variants file names only", "[deliver][download][leftovers]") {
  struct Row {
    const char* name;
    bool delivered;
  };
  const std::vector<Row> rows = {
      {"pkg-1.0-py3-none-any.whl", true},
      {"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl", true},
      {"torch-2.9.0-variants.json", true},
      {"report.pdf", false},
      {"x.whl", false},
      {"pkg-1.0.whl", false},
      {"-variants.json", false},
      {"torch-notaversion-variants.json", false},
      {"", false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    CHECK(deliver::is_delivered_name(row.name) == row.delivered);
  }
}

TEST_CASE("download: a part the disk refused is removed, not kept for a resume", "[deliver][download][leftovers]") {
  // EFBIG past RLIMIT_FSIZE stands for ENOSPC (a disk that is full stays full while the part
  // stays). In a child process: the limit and SIGXFSZ are process-wide.
  TempDir dir;
  const fs::path report = dir / "report";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const Served file{random_bytes(3u << 20, 25)};
    TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
    const fs::path out = dir / "out";
    fs::create_directories(out);
    struct rlimit limit {1u << 20, 1u << 20};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    auto t = make();
    auto got = deliver::download(*t, {wanted(server.url("/" + kName), kName, file.body)}, options_for(out));
    limit = {RLIM_INFINITY, RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::ofstream(report) << (got.at(0).error ? got[0].error->message : std::string("no error")) << "\n"
                          << (fs::exists(out / ("." + kName + ".part")) ? "part kept" : "part removed") << "\n";
    std::_Exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  const std::string text = slurp(report);
  INFO(text);
  CHECK(contains(text, "cannot write"));
  CHECK(contains(text, "part removed"));
}

TEST_CASE("lock_folder: one holder at a time; the next waits, or is told at once", "[deliver][lock][concurrency]") {
  TempDir dir;
  const fs::path folder = dir / "wheels";
  auto first = deliver::lock_folder(folder, {});
  REQUIRE(first);
  CHECK(first->path() == folder / ".wheelfit.lock");
  SECTION("wait = false: Errc::usage naming the lock and its holder") {
    auto second = deliver::lock_folder(folder, {.wait = false, .deadline = {}, .purpose = "downloading into " + folder.string()});
    REQUIRE_FALSE(second);
    CHECK(second.error().code == Errc::usage);
    CHECK(contains(second.error().message, (folder / ".wheelfit.lock").string()));
    CHECK(contains(second.error().message, "process " + std::to_string(::getpid())));
    CHECK(contains(second.error().message, "downloading into " + folder.string()));
  }
  SECTION("a deadline ends the wait") {
    auto second = deliver::lock_folder(folder, {.wait = true, .deadline = std::chrono::steady_clock::now() + 100ms, .purpose = {}});
    REQUIRE_FALSE(second);
    CHECK(second.error().code == Errc::io_error);
    CHECK(contains(second.error().message, "gave up waiting"));
  }
  SECTION("waiting: told once, then taken when the holder lets go") {
    LogCapture log;
    std::optional<util::FolderLock> held(std::move(*first));
    std::thread release([&] {
      std::this_thread::sleep_for(300ms);
      held.reset();
    });
    auto second = deliver::lock_folder(folder, {});
    release.join();
    REQUIRE(second);
    CHECK(log.find(log::Level::info, "waiting for another wheelfit run (process " + std::to_string(::getpid()) + ")").size() == 1);
  }
}

TEST_CASE("lock_folder: a link or FIFO at the lock's path is refused, never followed", "[deliver][lock][links]") {
  const Planted what = GENERATE(Planted::symlink, Planted::dangling_symlink, Planted::fifo, Planted::hard_link);
  CAPTURE(planted_name(what));
  TempDir dir, elsewhere;
  plant(what, dir / ".wheelfit.lock", elsewhere / "victim");
  auto lock = deliver::lock_folder(dir.path(), {.wait = false, .deadline = {}, .purpose = {}});
  REQUIRE_FALSE(lock);
  CHECK(contains(lock.error().message, (dir / ".wheelfit.lock").string()));
  CHECK(slurp(elsewhere / "victim") == "precious");
  CHECK_FALSE(fs::exists(elsewhere / "victim.new"));
}
