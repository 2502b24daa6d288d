// POSIX (subprocess_win.cpp is the Windows one; subprocess_common.cpp what both share).
#ifndef _WIN32
#include "wheelfit/util/subprocess.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wheelfit/util/text.hpp"

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

int real_kill(int pid, int sig) { return ::kill(pid, sig); }
std::atomic<detail::SignalFunction> g_signal{&real_kill};

// Children abandoned at their deadline (SIGKILL did not end them in time), reaped later.
std::mutex g_abandoned_mu;
std::vector<pid_t> g_abandoned;

// Collects `pid` if it has ended, without blocking. True when it is gone (reaped here, or by
// someone else: ECHILD, as when the host process ignores SIGCHLD; `status` then stays 0).
bool try_reap(pid_t pid, int& status) noexcept {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      status = 0;
      return true;
    }
    return false;
  }
}

// Blocks until `pid` has ended or `deadline` passed, when the kernel offers pidfd_open (5.3+);
// returns at once otherwise (the caller polls).
void wait_exit(pid_t pid, Clock::time_point deadline) noexcept {
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return;
  for (;;) {
    const int left = remaining_ms(deadline);
    if (left <= 0) break;
    pollfd p{pidfd, POLLIN, 0};
    if (::poll(&p, 1, std::min(left, 600'000)) < 0 && errno == EINTR) continue;
    break;
  }
  ::close(pidfd);
#else
  (void)pid;
  (void)deadline;
#endif
}

// Collects `pid` by `deadline`: on its pidfd where the kernel has them (no sleeping), else by
// polling waitpid with a short backoff. False when it is still running at the deadline.
bool reap_by(pid_t pid, Clock::time_point deadline, int& status) noexcept {
  wait_exit(pid, deadline);
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    if (try_reap(pid, status)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

// SIGKILL to the child's process group (and to the child, in case it left it), then collects it
// within kKillGrace. A child that does not end by then is abandoned: reap_abandoned() collects it
// later, without blocking. True when it was collected.
bool kill_and_collect(pid_t pid, int& status) noexcept {
  const auto signal_fn = g_signal.load();
  signal_fn(-pid, SIGKILL);
  signal_fn(pid, SIGKILL);
  if (reap_by(pid, Clock::now() + kKillGrace, status)) return true;
  try {
    const std::lock_guard lock(g_abandoned_mu);
    g_abandoned.push_back(pid);
  } catch (...) {  // no memory for the list: it stays a zombie until this process exits
  }
  return false;
}

// In a forked child, before anything else: no inherited handler (a sanitizer's, an embedding
// interpreter's) may turn a crash into something else; a group of its own so that a timeout
// kills whatever it starts. Async-signal-safe.
void reset_child() noexcept {
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
}

// "NAME=value" pointers for exec / environ, null-terminated.
std::vector<char*> env_pointers(const std::vector<std::string>& env) {
  std::vector<char*> out;
  out.reserve(env.size() + 1);
  for (const auto& s : env) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

namespace detail {
SignalFunction set_signal_function(SignalFunction fn) noexcept { return g_signal.exchange(fn ? fn : &real_kill); }
}  // namespace detail

std::size_t reap_abandoned() noexcept {
  const std::lock_guard lock(g_abandoned_mu);
  std::erase_if(g_abandoned, [](pid_t pid) {
    int status = 0;
    return try_reap(pid, status);
  });
  return g_abandoned.size();
}

Expected<RunningProcess> start_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                       std::size_t max_output, const Environment& environment) {
  reap_abandoned();
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
  std::vector<char*> envp;
  if (environment) envp = env_pointers(*environment);

  pid_t pid = -1;
  const auto started = Clock::now();
  const int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, args.data(), environment ? envp.data() : environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  out.write.reset();
  err.write.reset();
  if (rc != 0) return unexpected(spawn_error(path, rc));

  RunningProcess p;
  p.pid_ = pid;
  p.native_.out = out.read.release();
  p.native_.err = err.read.release();
  p.path_ = path;
  p.deadline_ = started + timeout;
  p.max_output_ = max_output;
  return p;
}

Expected<RunningProcess> start_forked(const std::function<int(int)>& body, std::chrono::milliseconds timeout,
                                      std::size_t max_output, const Environment& environment) {
  reap_abandoned();
  Pipe result;
  if (!make_pipe(result)) return unexpected(Errc::io_error, "child process: cannot create a pipe: " + errno_text(errno));
  std::vector<char*> envp;  // built here: the child only assigns a pointer
  if (environment) envp = env_pointers(*environment);
  const auto started = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return unexpected(Errc::io_error, "child process: fork failed: " + errno_text(errno));
  if (pid == 0) {
    reset_child();
    ::close(result.read.get());
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    if (environment) environ = envp.data();
    int rc = 70;
    try {
      rc = body(result.write.get());
    } catch (...) {
      rc = 70;
    }
    ::_exit(rc);
  }
  ::setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  result.write.reset();

  RunningProcess p;
  p.pid_ = pid;
  p.native_.out = result.read.release();
  p.path_ = "child process";
  p.deadline_ = started + timeout;
  p.max_output_ = max_output;
  return p;
}

void RunningProcess::abandon() noexcept {
  if (native_.out >= 0) ::close(native_.out);
  if (native_.err >= 0) ::close(native_.err);
  native_.out = native_.err = -1;
  if (pid_ > 0) {
    int status = 0;
    kill_and_collect(pid_, status);
  }
  pid_ = -1;
}

Expected<ProcessResult> RunningProcess::wait() {
  if (pid_ <= 0) return unexpected(Errc::usage, path_ + ": this process was already collected");
  Fd out(std::exchange(native_.out, -1)), err(std::exchange(native_.err, -1));
  const pid_t pid = std::exchange(pid_, -1);
  ProcessResult result;
  int status = 0;

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
      kill_and_collect(pid, status);
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

  // The pipes closed (the child is exiting): collect it, still within the deadline. At the
  // deadline its group is killed; one that SIGKILL does not end is abandoned, not waited for.
  const bool reaped = !result.timed_out && reap_by(pid, deadline_, status);
  if (!reaped) {
    result.timed_out = true;
    result.abandoned = !kill_and_collect(pid, status);
  }
  if (result.timed_out) return result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace wheelfit::util
#endif  // !_WIN32
