// Two real `wheelfit download` / `wheelfit mirror` processes on one folder, and one killed
// mid-write, against a loopback server that sends a 4 MiB wheel in two halves (the second only
// when the test opens its gate) and ignores Range (every answer is a 200 from byte 0): the
// server that turned a second run's resume into a truncation of the first run's part (issue 20
// item 1). Each run must end with a file whose bytes are its published sha256.
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/deliver/download.hpp"

extern char** environ;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace wheelfit::test;
using wheelfit::testing::Conn;
using wheelfit::testing::TestServer;

namespace {

std::string replace_all_concurrent(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

/// Waits up to `limit` for `ready()`; whether it became true.
template <class F>
bool wait_until(F&& ready, std::chrono::milliseconds limit = 30s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

/// A wheelfit process running in the background, its stdout and stderr in files.
struct Child {
  pid_t pid = -1;
  fs::path out, err;
  [[nodiscard]] std::string stderr_text() const { return fs::exists(err) ? read_file(err) : std::string(); }
};

Child spawn_wheelfit(const std::vector<std::string>& args, const fs::path& logs, const std::string& name) {
  Child c;
  c.out = logs / (name + ".out");
  c.err = logs / (name + ".err");
  // `exec env ... wheelfit`: the pid is wheelfit's own, for the kill.
  std::string cmd = "exec env -u WHEELFIT_OVERRIDE_PYTHON -u WHEELFIT_OVERRIDE_GPUS " + clean_network_env() + " " +
                    shell_quote(built_wheelfit().string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(c.out.string()) + " 2>" + shell_quote(c.err.string());
  std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"), cmd.data(), nullptr};
  REQUIRE(::posix_spawnp(&c.pid, "sh", nullptr, nullptr, argv.data(), environ) == 0);
  return c;
}

/// Its exit code, or -1 when it did not exit within `limit` (then killed) or ended by a signal.
int finish(Child& c, std::chrono::seconds limit = 90s) {
  int status = 0;
  const bool ended = wait_until([&] { return ::waitpid(c.pid, &status, WNOHANG) == c.pid; }, limit);
  if (!ended) {
    ::kill(c.pid, SIGKILL);
    ::waitpid(c.pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A farm of one package (cc_torch) whose one wheel for the machine is 4 MiB, served from a
/// loopback server that ignores Range and holds the second half of each answer until open().
struct GatedFarm {
  TempDir dir;
  fs::path index = dir / "farm";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "h100.toml";
  std::string body, sha, filename;
  std::atomic<bool> gate{false}, half_sent{false};
  std::atomic<int> gets{0};
  mutable std::mutex mu;
  std::vector<std::string> ranges;  ///< the Range header of each wheel request ("" when none)
  TestServer server{[this](Conn& c) { answer(c); }};

  GatedFarm() {
    const auto gen = run_program("", fs::path(WHEELFIT_BINARY_DIR) / "scripts/farmgen/wheelfit-farmgen",
                                 {"--out", index.string(), "--with-files", "--only", "cc_torch", "--base-url",
                                  "http://127.0.0.1:" + std::to_string(server.port())});
    REQUIRE(gen.code == 0);
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"cc_torch\"]\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\n"
                        "torch = \"2.8.0+cu128\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
    // The machine's wheel, made 4 MiB (a real wheel still: mirror reads its METADATA), and its
    // new digest written wherever the farm published the old one.
    fs::path wheel;
    for (const auto& e : fs::recursive_directory_iterator(index / "releases")) {
      const auto n = e.path().filename().string();
      if (n.find("cu128torch2.8-cp312-cp312") != std::string::npos && n.find("x86_64") != std::string::npos) wheel = e.path();
    }
    REQUIRE_FALSE(wheel.empty());
    filename = wheel.filename().string();
    const std::string old_sha = *wheelfit::deliver::sha256_file(wheel);
    body = build_zip({{"cc_torch-0.0.0+cu128torch2.8.dist-info/METADATA",
                       "Metadata-Version: 2.1\nName: cc_torch\nVersion: 0.0.0+cu128torch2.8\n"},
                      {"cc_torch/blob.bin", random_bytes(4u << 20, 7), false}});
    write_file(wheel, body);
    sha = *wheelfit::deliver::sha256_file(wheel);
    for (const auto& e : fs::recursive_directory_iterator(index)) {
      if (!e.is_regular_file() || e.path().extension() == ".whl") continue;
      const std::string text = read_file(e.path());
      if (text.find(old_sha) != std::string::npos) write_file(e.path(), replace_all_concurrent(text, old_sha, sha));
    }
  }

  /// Every wheel request: a 200 from byte 0 whatever its Range says, the first half at once, the
  /// rest once the gate is open.
  void answer(Conn& c) {
    while (auto r = c.read_request()) {
      if (!r->target.ends_with(".whl")) {
        c.write(wheelfit::testing::http_response(404, "not here"));
        continue;
      }
      ++gets;
      {
        const std::lock_guard lock(mu);
        ranges.push_back(r->header("range").value_or(""));
      }
      const std::size_t half = body.size() / 2;
      const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                               "\r\nETag: \"big\"\r\nContent-Type: application/octet-stream\r\n\r\n";
      if (!c.write(head + body.substr(0, half))) return;
      half_sent = true;
      if (!wait_until([&] { return gate.load(); }, 60s)) return;
      if (!c.write(std::string_view(body).substr(half))) return;
    }
  }

  [[nodiscard]] std::vector<std::string> common(const std::string& command, const std::string& flag, const fs::path& where) const {
    return {command, config.string(), "--index", index.string(), "--machine", machine.string(), flag, where.string()};
  }
  /// The first run, started and left mid-body (the server holds its second half).
  Child start_mid_body(const std::vector<std::string>& args, const fs::path& logs) {
    Child c = spawn_wheelfit(args, logs, "first");
    REQUIRE(wait_until([&] { return half_sent.load(); }));
    return c;
  }
  /// Waits until `second` says it waits (fixed) or has asked for the wheel itself (the defect).
  void until_waiting_or_asking(const Child& second) const {
    REQUIRE(wait_until([&] { return contains(second.stderr_text(), "waiting for") || gets.load() > 1; }));
  }
  [[nodiscard]] std::vector<std::string> seen_ranges() const {
    const std::lock_guard lock(mu);
    return ranges;
  }
};

/// A first run of `command` into a fresh folder (`flag` names it) on a gated farm, held mid-body.
struct HeldFirstRun {
  GatedFarm f;
  TempDir logs, dir;
  std::vector<std::string> args;
  Child first;
  HeldFirstRun(const char* command, const char* flag)
      : args(f.common(command, flag, dir.path())), first(f.start_mid_body(args, logs.path())) {}
  /// Waits until `second` waits for the first (or asks for the file), opens the gate, and checks
  /// that both runs succeed.
  void release_both(Child& second) {
    f.until_waiting_or_asking(second);
    f.gate = true;
    CHECK(finish(first) == 0);
    CHECK(finish(second) == 0);
  }
};

std::vector<std::string> plus_concurrent(std::vector<std::string> args, std::initializer_list<const char*> more) {
  for (const char* m : more) args.emplace_back(m);
  return args;
}

}  // namespace

TEST_CASE("wheelfit download: a second run on the folder waits for the first, never writes its part",
          "[cli][deliver][concurrency]") {
  HeldFirstRun run("download", "-d");
  auto& [f, logs, d, args, first] = run;

  SECTION("without --no-wait: it says so and waits, then finds the file in place") {
    Child second = spawn_wheelfit(args, logs.path(), "second");
    // The fixed run waits and says so; a run without the lock would ask for the file instead.
    run.release_both(second);
    const std::string waited = second.stderr_text();
    INFO(waited);
    CHECK(contains(waited, "waiting for another wheelfit run (process " + std::to_string(first.pid) + ")"));
    CHECK(contains(waited, (d.path() / ".wheelfit.lock").string()));
    CHECK(f.gets.load() == 1);  // the second found the file in place
    CHECK(contains(read_file(second.out), "already there"));
  }
  SECTION("with --no-wait: exit 2 at once, naming the lock and its holder") {
    Child second = spawn_wheelfit(plus_concurrent(args, {"--no-wait"}), logs.path(), "second");
    const int code = finish(second);
    f.gate = true;
    CHECK(finish(first) == 0);
    CHECK(code == 2);
    const std::string refused = second.stderr_text();
    INFO(refused);
    CHECK(contains(refused, (d.path() / ".wheelfit.lock").string()));
    CHECK(contains(refused, "process " + std::to_string(first.pid)));
    CHECK(f.gets.load() == 1);
  }
  // Whatever the second did, the first's file is whole: its bytes are its published digest.
  CHECK(*wheelfit::deliver::sha256_file(d / f.filename) == f.sha);
  CHECK_FALSE(fs::exists(d / ("." + f.filename + ".part")));
  CHECK(contains(read_file(first.out), "sha256 verified"));
}

TEST_CASE("wheelfit mirror: a second run on --out waits; the served wheel is its page's digest",
          "[cli][mirror][concurrency]") {
  HeldFirstRun run("mirror", "--out");
  auto& [f, logs, out, args, first] = run;
  Child second = spawn_wheelfit(args, logs.path(), "second");
  run.release_both(second);
  INFO(second.stderr_text());
  CHECK(contains(second.stderr_text(), (out.path() / ".lock").string()));
  CHECK(f.gets.load() == 1);
  const fs::path served = out.path() / "current" / "files" / f.filename;
  CHECK(*wheelfit::deliver::sha256_file(served) == f.sha);
  CHECK(contains(read_file(out.path() / "current" / "cc-torch" / "index.html"), "#sha256=" + f.sha));
}

TEST_CASE("wheelfit download: a run killed mid-body leaves a part the next run restarts from a server that ignores Range",
          "[cli][deliver][concurrency]") {
  HeldFirstRun run("download", "-d");
  auto& [f, logs, d, args, first] = run;
  const fs::path part = d / ("." + f.filename + ".part");
  REQUIRE(wait_until([&] { return fs::exists(part) && fs::file_size(part) > 0; }));
  ::kill(first.pid, SIGKILL);
  CHECK(finish(first) == -1);
  f.gate = true;
  Child second = spawn_wheelfit(args, logs.path(), "second");
  CHECK(finish(second) == 0);
  INFO(second.stderr_text());
  const auto ranges = f.seen_ranges();
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[1].starts_with("bytes="));  // it asked to continue; the 200 restarted it from zero
  CHECK(*wheelfit::deliver::sha256_file(d / f.filename) == f.sha);
  CHECK_FALSE(fs::exists(part));
}

TEST_CASE("wheelfit mirror: a run killed mid-body leaves a folder the next run takes as its own; a user's files in it stay",
          "[cli][mirror][concurrency][folder]") {
  HeldFirstRun run("mirror", "--out");
  auto& [f, logs, out, args, first] = run;
  ::kill(first.pid, SIGKILL);  // mid-body, from a server that ignores Range
  CHECK(finish(first) == -1);
  CHECK(fs::is_regular_file(out.path() / ".wheelfit-mirror"));  // marked before anything else was written
  write_file(out.path() / "snapshots" / "keep-me" / "notes.txt", "mine\n");
  write_file(out.path() / "pool" / ".metadata" / "notes.txt", "mine too\n");
  f.gate = true;
  Child second = spawn_wheelfit(args, logs.path(), "second");
  CHECK(finish(second) == 0);
  INFO(second.stderr_text());
  CHECK(*wheelfit::deliver::sha256_file(out.path() / "current" / "files" / f.filename) == f.sha);
  CHECK(read_file(out.path() / "snapshots" / "keep-me" / "notes.txt") == "mine\n");
  CHECK(read_file(out.path() / "pool" / ".metadata" / "notes.txt") == "mine too\n");
}
