#include "wheelfit/util/subprocess.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace wheelfit::util {
namespace {

using Clock = std::chrono::steady_clock;

// Closes a descriptor once, on destruction or on request.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int* out() noexcept { return &fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  *p.read.out() = fds[0];
  *p.write.out() = fds[1];
  return true;
}

std::string errno_text(int e) { return std::strerror(e); }

Error spawn_error(const std::string& path, int e) {
  switch (e) {
    case ENOENT:
    case ENOTDIR: return Error(Errc::not_found, path + ": no such file");
    case EACCES:
    case EPERM: {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Error(Errc::usage, path + ": is a directory");
      return Error(Errc::usage, path + ": not executable (permission denied)");
    }
    case ENOEXEC: return Error(Errc::usage, path + ": not a program this system can run (exec format error)");
    default: return Error(Errc::io_error, path + ": cannot start: " + errno_text(e));
  }
}

// The remaining time until `deadline` in whole milliseconds, rounded up, at least 0.
int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000'000));
}

// Kills the child's process group and reaps the child.
void kill_and_reap(pid_t pid, int& status) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // in case it left its group
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::string ProcessResult::describe(std::chrono::milliseconds timeout) const {
  if (timed_out) return "timed out after " + std::to_string(timeout.count()) + " ms";
  if (signal != 0) return "was killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exited with status " + std::to_string(exit_status);
}

Expected<RunningProcess> start_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                       std::size_t max_output) {
  if (argv.empty() || argv[0].empty()) return unexpected(Errc::usage, "start_process: no program given");
  const std::string& path = argv[0];

  Pipe out, err;
  if (!make_pipe(out) || !make_pipe(err)) return unexpected(Errc::io_error, path + ": cannot create pipes: " + errno_text(errno));

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  ::posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  sigset_t all, none;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                                       POSIX_SPAWN_SETSIGMASK));

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  const auto started = Clock::now();
  const int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  out.write.reset();
  err.write.reset();
  if (rc != 0) return unexpected(spawn_error(path, rc));

  RunningProcess p;
  p.pid_ = pid;
  p.out_ = out.read.release();
  p.err_ = err.read.release();
  p.path_ = path;
  p.deadline_ = started + timeout;
  p.max_output_ = max_output;
  return p;
}

RunningProcess::RunningProcess(RunningProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      out_(std::exchange(other.out_, -1)),
      err_(std::exchange(other.err_, -1)),
      path_(std::move(other.path_)),
      deadline_(other.deadline_),
      max_output_(other.max_output_) {}

RunningProcess& RunningProcess::operator=(RunningProcess&& other) noexcept {
  if (this != &other) {
    abandon();
    pid_ = std::exchange(other.pid_, -1);
    out_ = std::exchange(other.out_, -1);
    err_ = std::exchange(other.err_, -1);
    path_ = std::move(other.path_);
    deadline_ = other.deadline_;
    max_output_ = other.max_output_;
  }
  return *this;
}

RunningProcess::~RunningProcess() { abandon(); }

void RunningProcess::abandon() noexcept {
  if (out_ >= 0) ::close(out_);
  if (err_ >= 0) ::close(err_);
  out_ = err_ = -1;
  if (pid_ > 0) {
    int status = 0;
    kill_and_reap(pid_, status);
  }
  pid_ = -1;
}

Expected<ProcessResult> RunningProcess::wait() {
  if (pid_ <= 0) return unexpected(Errc::usage, path_ + ": this process was already collected");
  Fd out(std::exchange(out_, -1)), err(std::exchange(err_, -1));
  const pid_t pid = std::exchange(pid_, -1);
  ProcessResult result;
  int status = 0;
  bool reaped = false;

  // Read both pipes until they close or the deadline passes.
  std::string* sinks[2] = {&result.out, &result.err};
  Fd* fds[2] = {&out, &err};
  char buf[16 * 1024];
  while (fds[0]->get() >= 0 || fds[1]->get() >= 0) {
    const int left = remaining_ms(deadline_);
    if (left == 0) {
      result.timed_out = true;
      break;
    }
    pollfd pfd[2];
    nfds_t n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (fds[i]->get() < 0) continue;
      pfd[n] = {fds[i]->get(), POLLIN, 0};
      which[n++] = i;
    }
    const int ready = ::poll(pfd, n, left);
    if (ready < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      kill_and_reap(pid, status);
      return unexpected(Errc::io_error, path_ + ": poll failed: " + errno_text(e));
    }
    for (nfds_t k = 0; k < n; ++k) {
      if (pfd[k].revents == 0) continue;
      const int i = which[k];
      const ssize_t got = ::read(fds[i]->get(), buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        fds[i]->reset();
        continue;
      }
      std::string& sink = *sinks[i];
      const std::size_t room = max_output_ > sink.size() ? max_output_ - sink.size() : 0;
      const auto take = std::min(room, static_cast<std::size_t>(got));
      sink.append(buf, take);
      if (take < static_cast<std::size_t>(got)) result.truncated = true;
    }
  }

  // The pipes closed (or time is up): wait for the exit, still within the deadline.
  if (!result.timed_out) {
    auto pause = std::chrono::microseconds(50);
    while (true) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        reaped = true;
        break;
      }
      if (r < 0 && errno != EINTR) break;
      if (Clock::now() >= deadline_) {
        result.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(5000));
    }
  }
  if (!reaped) kill_and_reap(pid, status);
  if (result.timed_out) return result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                    std::size_t max_output) {
  auto p = start_process(argv, timeout, max_output);
  if (!p) return p.error();
  return p->wait();
}

}  // namespace wheelfit::util
