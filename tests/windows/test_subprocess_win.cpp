// util/subprocess on Windows: CreateProcessW with the C runtime's quoting, the pipes (no deadlock
// on large output), the environment given, the Job object that ends the whole tree at the
// deadline, and crash codes reported as exceptions. The child is wheelfit_test_child.exe
// (tests/windows/helpers). No timed assertions: deadlines only bound hangs.
#include <windows.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/windows_text.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace util = wheelfit::util;
using wheelfit::Errc;
using wheelfit::test::TempDir;

namespace {

const std::string kChild = fs::absolute(WHEELFIT_TEST_CHILD).string();
constexpr auto kTimeout = 60s;  // generous: wine starts processes slowly; only hangs use kShort
constexpr auto kShort = 1500ms;

util::ProcessResult run(std::vector<std::string> args, std::chrono::milliseconds timeout = kTimeout,
                        std::size_t max_output = 1024 * 1024, const util::Environment& env = std::nullopt) {
  args.insert(args.begin(), kChild);
  auto r = util::run_process(args, timeout, max_output, env);
  REQUIRE(r);
  return *r;
}

// Whether the process with this id has ended (or never existed).
bool ended(DWORD pid) {
  HANDLE h = ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, pid);
  if (!h) return true;
  const bool done = ::WaitForSingleObject(h, 5000) == WAIT_OBJECT_0;
  ::CloseHandle(h);
  return done;
}

}  // namespace

TEST_CASE("start_process on Windows: every argument arrives as given", "[windows][subprocess]") {
  const std::vector<std::string> args = {"plain", "two words", "", "a\"quote", "trailing\\", "trail space\\",
                                         "\\\\server\\share\\", "a\\\\\"b", "tab\there", "Jürgen ü 日本", "\"\"",
                                         "-c", "import sys; print('x')"};
  std::vector<std::string> argv = {"args"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run(argv);
  CHECK(r.exit_status == 0);
  std::string expected;
  for (const auto& a : args) expected += "<" + a + ">\n";
  CHECK(r.out == expected);
}

TEST_CASE("start_process on Windows: a program in a folder with spaces and non-ASCII letters", "[windows][subprocess]") {
  TempDir dir;
  const fs::path folder = dir.path() / fs::path(util::win::widen("Jürgen Müller"));
  fs::create_directories(folder);
  const fs::path copy = folder / L"wheelfit_test_child.exe";
  fs::copy_file(fs::path(util::win::widen(kChild)), copy);
  auto r = util::run_process({util::win::narrow(copy.native()), "args", "ok"}, kTimeout);
  REQUIRE(r);
  CHECK(r->exit_status == 0);
  CHECK(r->out == "<ok>\n");
}

TEST_CASE("start_process on Windows: exit statuses, stdout and stderr apart", "[windows][subprocess]") {
  for (int status : {0, 1, 3, 255}) {
    auto r = run({"exit", std::to_string(status)});
    CHECK(r.exit_status == status);
    CHECK_FALSE(r.timed_out);
    CHECK(r.crash_code == 0);
    CHECK(r.describe(kTimeout) == "exited with status " + std::to_string(status));
  }
  auto unknown = run({"no-such-mode"});
  CHECK(unknown.exit_status == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err == "wheelfit_test_child: unknown mode no-such-mode\n");
}

TEST_CASE("start_process on Windows: megabytes on both pipes, no deadlock; max_output truncates", "[windows][subprocess]") {
  const std::size_t n = 4 * 1024 * 1024;
  auto all = run({"bytes", std::to_string(n)}, kTimeout, n);
  CHECK(all.exit_status == 0);
  CHECK(all.out.size() == n);
  CHECK(all.err.size() == n);
  CHECK_FALSE(all.truncated);
  auto capped = run({"bytes", std::to_string(n)}, kTimeout, 1000);
  CHECK(capped.exit_status == 0);
  CHECK(capped.out.size() == 1000);
  CHECK(capped.err.size() == 1000);
  CHECK(capped.truncated);
}

TEST_CASE("start_process on Windows: the environment given is the child's whole environment", "[windows][subprocess]") {
  wheelfit::test::ScopedEnv secret("WHEELFIT_TEST_SECRET", "ghp_TOPSECRET");
  CHECK(run({"env", "WHEELFIT_TEST_SECRET"}).out == "ghp_TOPSECRET");  // inherited without an environment
  auto probe = util::probe_environment();
  CHECK(run({"env", "WHEELFIT_TEST_SECRET"}, kTimeout, 4096, probe).out == "<unset>");
  CHECK_FALSE(run({"env", "SystemRoot"}, kTimeout, 4096, probe).out.empty());
  probe.push_back("WHEELFIT_GIVEN=Jürgen");
  CHECK(run({"env", "WHEELFIT_GIVEN"}, kTimeout, 4096, probe).out == "Jürgen");
}

TEST_CASE("start_process on Windows: a crash is its exception code", "[windows][subprocess]") {
  auto r = run({"crash"});
  CHECK_FALSE(r.timed_out);
  CHECK(r.crashed());
  CHECK(r.crash_code == 0xC0000005u);
  CHECK(r.exit_status == -1);
  CHECK(r.describe(kTimeout) == "crashed with exception 0xC0000005 (access violation)");
}

TEST_CASE("start_process on Windows: at the deadline the whole process tree is ended", "[windows][subprocess]") {
  TempDir dir;
  const fs::path pid_file = dir.path() / "grandchild.pid";
  auto started = util::start_process({kChild, "tree", pid_file.string()}, kShort);
  REQUIRE(started);
  auto r = started->wait();
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK_FALSE(r->abandoned);
  CHECK(r->describe(kShort) == "timed out after 1500 ms");
  // The grandchild wrote its id before the deadline (wine: if it got that far), and is gone.
  std::error_code ec;
  if (fs::exists(pid_file, ec)) {
    const DWORD grandchild = static_cast<DWORD>(std::stoul(wheelfit::test::read_file(pid_file)));
    CHECK(ended(grandchild));
  }
  CHECK(util::reap_abandoned() == 0);
}

TEST_CASE("start_process on Windows: a child dropped without wait() is ended", "[windows][subprocess]") {
  DWORD pid = 0;
  {
    auto started = util::start_process({kChild, "hang"}, kTimeout);
    REQUIRE(started);
    pid = static_cast<DWORD>(started->pid());
    CHECK(pid > 0);
  }
  CHECK(ended(pid));
}

TEST_CASE("start_process on Windows: what cannot be started is named", "[windows][subprocess]") {
  TempDir dir;
  struct Case {
    std::string program;
    Errc code;
    std::string message_part;
  };
  wheelfit::test::write_file(dir / "notes.txt", "not a program");
  const std::vector<Case> cases = {
      {(dir / "absent.exe").string(), Errc::not_found, "no such file"},
      {dir.path().string(), Errc::usage, "is a directory"},
      {(dir / "notes.txt").string(), Errc::usage, "not a program this system can run"},
      {"", Errc::usage, "no program given"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.program);
    auto r = util::start_process({c.program}, kTimeout);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == c.code);
    CHECK_THAT(r.error().message, Catch::Contains(c.message_part));
  }
  auto nul = util::start_process({kChild, std::string("a\0b", 3)}, kTimeout);
  REQUIRE_FALSE(nul);
  CHECK_THAT(nul.error().message, Catch::Contains("NUL character"));
}

TEST_CASE("wait() twice is a usage error", "[windows][subprocess]") {
  auto started = util::start_process({kChild, "exit", "0"}, kTimeout);
  REQUIRE(started);
  REQUIRE(started->wait());
  auto again = started->wait();
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::usage);
}
