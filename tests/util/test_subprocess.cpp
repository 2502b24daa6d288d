// util/subprocess: the probe environment, the process group killed at the deadline, and a child
// that SIGKILL cannot end abandoned (reaped later) instead of waited for. No GPU: the children
// are shell scripts and forked functions the tests write. On Windows only the probe environment
// applies here (no fork, no signals): tests/windows/test_subprocess_win.cpp has the rest there.
#include <catch2/catch.hpp>

#ifndef _WIN32
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifndef _WIN32
#include "support/process_support.hpp"
#endif
#include "support/test_support.hpp"
#include "wheelfit/util/subprocess.hpp"

using namespace wheelfit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using test::ScopedEnv;
using test::TempDir;
#ifndef _WIN32
using test::ended;
using test::ends_within;
using test::reap_all;
using test::UnkillableChildren;

namespace {

using Clock = std::chrono::steady_clock;

fs::path script(const TempDir& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  test::write_file(p, "#!/bin/sh\n" + body + "\n");
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

}  // namespace
#endif

TEST_CASE("probe_environment: the allow-list and WHEELFIT_PROBE_ENV, never anything else", "[util][subprocess]") {
  ScopedEnv token("GITHUB_TOKEN", "ghp_TOPSECRET");
  ScopedEnv proxy("https_proxy", "http://user:TOPSECRET@proxy.test:3128");
  ScopedEnv home("HOME", "/home/probe");
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "1");
  ScopedEnv extra_a("WHEELFIT_EXTRA_A", "a");
  ScopedEnv extra_b("WHEELFIT_EXTRA_B", "b");
  struct Row {
    const char* what;
    std::optional<std::string> probe_env;
    std::vector<std::string> present, absent;
  };
  auto row = GENERATE(values<Row>({
      {"the fixed list", std::nullopt, {"HOME=/home/probe", "CUDA_VISIBLE_DEVICES=1"},
       {"GITHUB_TOKEN=ghp_TOPSECRET", "WHEELFIT_EXTRA_A=a"}},
      {"names added by WHEELFIT_PROBE_ENV, spaces trimmed", " WHEELFIT_EXTRA_A , WHEELFIT_EXTRA_B",
       {"WHEELFIT_EXTRA_A=a", "WHEELFIT_EXTRA_B=b", "HOME=/home/probe"}, {"GITHUB_TOKEN=ghp_TOPSECRET"}},
      {"what is not a variable name is ignored", "WHEELFIT EXTRA A,=x,1ABC,,WHEELFIT_EXTRA_B=z",
       {"HOME=/home/probe"}, {"WHEELFIT_EXTRA_A=a", "WHEELFIT_EXTRA_B=b"}},
      {"an unset name adds nothing", "WHEELFIT_NOT_SET_ANYWHERE", {"HOME=/home/probe"}, {"WHEELFIT_NOT_SET_ANYWHERE="}},
      {"a name listed twice appears once", "HOME,HOME", {"HOME=/home/probe"}, {}},
  }));
  CAPTURE(row.what);
  ScopedEnv probe_env("WHEELFIT_PROBE_ENV", row.probe_env);
  const auto env = util::probe_environment();
  for (const auto& p : row.present) CHECK(std::count(env.begin(), env.end(), p) == 1);
  for (const auto& a : row.absent) {
    CAPTURE(a);
    CHECK(std::none_of(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(a, 0) == 0; }));
  }
  for (const auto& e : env) {
    CAPTURE(e);
    CHECK_FALSE(test::contains(e, "TOPSECRET"));
  }
}

#ifndef _WIN32
TEST_CASE("start_process and start_forked: the environment given is the child's whole environment", "[util][subprocess][posix]") {
  TempDir dir;
  ScopedEnv token("GITHUB_TOKEN", "ghp_TOPSECRET");
  const fs::path env_script = script(dir, "env.sh", "/usr/bin/env");
  SECTION("a program: the list given, nothing else") {
    auto r = util::run_process({env_script.string()}, 5000ms, 1 << 20, std::vector<std::string>{"PATH=/usr/bin:/bin", "A=1"});
    REQUIRE(r);
    REQUIRE(r->exited_ok());
    auto got = lines(r->out);
    std::sort(got.begin(), got.end());
    got.erase(std::remove(got.begin(), got.end(), "PWD=" + fs::current_path().string()), got.end());  // a shell may add it
    CHECK(got == std::vector<std::string>{"A=1", "PATH=/usr/bin:/bin"});
  }
  SECTION("a program: no list inherits this process's environment") {
    auto r = util::run_process({env_script.string()}, 5000ms);
    REQUIRE(r);
    CHECK(test::contains(r->out, "GITHUB_TOKEN=ghp_TOPSECRET"));
  }
  SECTION("a forked function sees only the list; its exit code, a throw, a crash") {
    auto child = util::start_forked(
        [](int fd) {
          const char* secret = std::getenv("GITHUB_TOKEN");
          const char* a = std::getenv("A");
          const std::string said = std::string(secret ? secret : "-") + " " + (a ? a : "-");
          return ::write(fd, said.data(), said.size()) == static_cast<ssize_t>(said.size()) ? 7 : 1;
        },
        5000ms, 1 << 20, std::vector<std::string>{"A=1"});
    REQUIRE(child);
    auto r = child->wait();
    REQUIRE(r);
    CHECK(r->out == "- 1");
    CHECK(r->exit_status == 7);
    CHECK(r->describe(1ms) == "exited with status 7");

    auto thrower = util::start_forked([](int) -> int { throw std::runtime_error("x"); }, 5000ms);
    REQUIRE(thrower);
    auto t = thrower->wait();
    REQUIRE(t);
    CHECK(t->exit_status == 70);

    auto crasher = util::start_forked([](int) { return ::raise(SIGSEGV); }, 5000ms);
    REQUIRE(crasher);
    auto c = crasher->wait();
    REQUIRE(c);
    CHECK(c->signal == SIGSEGV);
  }
}

TEST_CASE("at the deadline the child's whole process group is killed", "[util][subprocess][posix]") {
  TempDir dir;
  SECTION("a program whose background child holds the pipe") {
    const fs::path p = script(dir, "fork.sh", "sleep 30 &\necho $!\nsleep 30");
    const auto start = Clock::now();
    auto r = util::run_process({p.string()}, 300ms);
    REQUIRE(r);
    CHECK(Clock::now() - start < 5s);
    CHECK(r->timed_out);
    CHECK_FALSE(r->abandoned);
    CHECK(r->describe(300ms) == "timed out after 300 ms");
    const int grandchild = std::stoi(r->out);
    CHECK(ends_within(grandchild, 2000ms));
  }
  SECTION("a forked function whose own child holds the result pipe and outlives it") {
    const auto start = Clock::now();
    auto child = util::start_forked(
        [](int fd) {
          const pid_t grandchild = ::fork();
          if (grandchild == 0) {
            for (;;) ::pause();  // holds fd, in its parent's process group
          }
          const std::string pid = std::to_string(grandchild);
          (void)!::write(fd, pid.data(), pid.size());
          return 0;  // exits at once; the grandchild keeps the pipe open
        },
        300ms);
    REQUIRE(child);
    auto r = child->wait();
    REQUIRE(r);
    CHECK(Clock::now() - start < 5s);
    CHECK(r->timed_out);
    REQUIRE_FALSE(r->out.empty());
    CHECK(ends_within(std::stoi(r->out), 2000ms));
  }
}

TEST_CASE("a child that SIGKILL does not end is abandoned at its deadline and reaped later", "[util][subprocess][posix]") {
  TempDir dir;
  const fs::path sleeper = script(dir, "sleep.sh", "exec sleep 30");
  int pid = -1;
  {
    UnkillableChildren unkillable;
    SECTION("a program") {
      auto started = util::start_process({sleeper.string()}, 200ms);
      REQUIRE(started);
      pid = started->pid();
      const auto start = Clock::now();
      auto r = started->wait();
      const auto took = Clock::now() - start;
      REQUIRE(r);
      CHECK(r->timed_out);
      CHECK(r->abandoned);
      CHECK(r->describe(200ms) == "timed out after 200 ms; it did not end on SIGKILL and was left to be reaped later");
      CHECK(took < 200ms + util::kKillGrace + 1500ms);  // the deadline, the grace, never the child's 30 s
    }
    SECTION("a forked function") {
      auto started = util::start_forked([](int) {
        for (;;) ::pause();
        return 0;
      }, 200ms);
      REQUIRE(started);
      pid = started->pid();
      auto r = started->wait();
      REQUIRE(r);
      CHECK(r->abandoned);
    }
    SECTION("a child destroyed without wait()") {
      auto started = util::start_process({sleeper.string()}, 10000ms);
      REQUIRE(started);
      pid = started->pid();
      const auto start = Clock::now();
      { auto gone = std::move(*started); }
      CHECK(Clock::now() - start < util::kKillGrace + 1500ms);
    }
    // Its group and the child were asked to die; they did not; nobody waits for them.
    const auto asked = unkillable.asked();
    CHECK(std::count(asked.begin(), asked.end(), -pid) == 1);
    CHECK(util::reap_abandoned() >= 1);
    CHECK_FALSE(ended(pid));
  }  // the real SIGKILL now
  CHECK(reap_all(5000ms) == 0);
  int status = 0;
  CHECK(::waitpid(pid, &status, WNOHANG) == -1);  // already reaped: no zombie left behind
}
#endif  // !_WIN32
