#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>

namespace wheelfit::backends::cuda::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxCapture = std::size_t{1} << 20;

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() noexcept {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

bool make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.fd = fds[0];
  write_end.fd = fds[1];
  return true;
}

// In the child, right after fork: no inherited handlers (a sanitizer's, an embedding
// interpreter's) may turn a crash into something else; a group of its own so a timeout kills
// whatever it started.
void child_reset() noexcept {
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGPIPE, SIGTERM, SIGINT, SIGHUP,
                SIGALRM, SIGCHLD}) {
    ::signal(s, SIG_DFL);
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
}

void kill_group(pid_t pid) noexcept {
  if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
}

// Reaps `pid` (blocking); fills kind/status.
void reap(pid_t pid, ChildOutcome& o) {
  int st = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &st, 0);
    if (r == pid) break;
    if (r < 0 && errno == EINTR) continue;
    // ECHILD: someone else reaped it (SIGCHLD ignored by the host process). Nothing to report.
    o.kind = ChildOutcome::Kind::exited;
    o.status = 0;
    return;
  }
  if (WIFSIGNALED(st)) {
    o.kind = ChildOutcome::Kind::signaled;
    o.status = WTERMSIG(st);
  } else {
    o.kind = ChildOutcome::Kind::exited;
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
  }
}

// Blocks until `pid` has exited or `deadline` passed, when the kernel offers pidfd_open (5.3+).
// Returns at once otherwise (the caller polls).
void wait_exit(pid_t pid, Clock::time_point deadline) noexcept {
#ifdef SYS_pidfd_open
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{pidfd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, 1000 * 60 * 10)));
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  ::close(pidfd);
#else
  (void)pid;
  (void)deadline;
#endif
}

// Reads both pipes until EOF or the deadline, then waits for the exit until the deadline.
ChildOutcome collect(pid_t pid, Fd& out, Fd& err, Clock::time_point deadline) {
  ChildOutcome o;
  std::array<char, 4096> buf{};
  auto drain = [&](Fd& fd, std::string& into) {
    ssize_t n = ::read(fd.fd, buf.data(), buf.size());
    if (n > 0) {
      std::size_t room = kMaxCapture - std::min(kMaxCapture, into.size());
      into.append(buf.data(), std::min(room, static_cast<std::size_t>(n)));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      fd.reset();
    }
  };
  bool timed_out = false;
  while (out.fd >= 0 || err.fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    std::array<pollfd, 2> fds{};
    nfds_t n = 0;
    if (out.fd >= 0) fds[n++] = pollfd{out.fd, POLLIN, 0};
    if (err.fd >= 0) fds[n++] = pollfd{err.fd, POLLIN, 0};
    int r = ::poll(fds.data(), n, static_cast<int>(std::min<long long>(left, 1000 * 60 * 10)));
    if (r < 0) {
      if (errno == EINTR) continue;
      timed_out = true;  // cannot wait properly: treat as a timeout (kills and reaps the child)
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (out.fd == fds[i].fd) drain(out, o.out);
      else if (err.fd == fds[i].fd) drain(err, o.err);
    }
  }
  if (!timed_out) {
    // Output closed: the child is exiting. Wait for it until the deadline: on a pidfd where the
    // kernel has them (no sleeping), else by polling waitpid with a short backoff.
    wait_exit(pid, deadline);
    auto pause = std::chrono::microseconds(50);
    for (;;) {
      int st = 0;
      pid_t r = ::waitpid(pid, &st, WNOHANG);
      if (r == pid) {
        if (WIFSIGNALED(st)) {
          o.kind = ChildOutcome::Kind::signaled;
          o.status = WTERMSIG(st);
        } else {
          o.kind = ChildOutcome::Kind::exited;
          o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
        }
        return o;
      }
      if (r < 0 && errno != EINTR) {
        o.kind = ChildOutcome::Kind::exited;  // ECHILD: reaped elsewhere
        o.status = 0;
        return o;
      }
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(5000));
    }
  }
  kill_group(pid);
  reap(pid, o);
  o.kind = ChildOutcome::Kind::timed_out;
  return o;
}

}  // namespace

ChildOutcome run_in_child(const std::function<int(int)>& body, std::chrono::milliseconds timeout) {
  ChildOutcome failed;
  Fd rd, wr, none;
  if (!make_pipe(rd, wr)) {
    failed.error = std::string("pipe: ") + std::strerror(errno);
    return failed;
  }
  auto deadline = Clock::now() + timeout;
  pid_t pid = ::fork();
  if (pid < 0) {
    failed.error = std::string("fork: ") + std::strerror(errno);
    return failed;
  }
  if (pid == 0) {
    child_reset();
    ::close(rd.fd);
    int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    int rc = 70;
    try {
      rc = body(wr.fd);
    } catch (...) {
      rc = 70;
    }
    ::_exit(rc);
  }
  ::setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  wr.reset();
  return collect(pid, rd, none, deadline);
}


namespace {
std::string_view signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    default: return {};
  }
}
}  // namespace

std::string describe(const ChildOutcome& o, std::chrono::milliseconds timeout) {
  switch (o.kind) {
    case ChildOutcome::Kind::timed_out:
      return "timed out after " + std::to_string(timeout.count()) + " ms";
    case ChildOutcome::Kind::signaled: {
      std::string s = "crashed with signal " + std::to_string(o.status);
      if (auto name = signal_name(o.status); !name.empty()) s += " (" + std::string(name) + ")";
      return s;
    }
    case ChildOutcome::Kind::exited:
      return "exited with status " + std::to_string(o.status);
    case ChildOutcome::Kind::failed_to_start:
      return "could not start: " + o.error;
  }
  return "failed";
}

}  // namespace wheelfit::backends::cuda::detail
