#pragma once
// Running a program, or a function in a forked child, with a deadline: how the machine probes
// start the target Python interpreter, how the CUDA plugin runs nvidia-smi and loads vendor
// libraries, and how the detect benchmark starts wheelfit and Python (so both sides of its
// comparison pay the same start cost).
//
// Every child runs in its own process group, with every signal at its default action, an empty
// signal mask and stdin from /dev/null. At its deadline the whole group gets SIGKILL; a child
// that SIGKILL does not end within kKillGrace (a process in uninterruptible sleep: a wedged
// driver call) is abandoned, never waited for: the caller gets its timeout at once and the
// child is reaped later, without blocking, by reap_abandoned() (which every start calls).
//
// Thread safety: reentrant. start_forked runs code after fork(): call it before the process
// starts threads where possible (the child must not need a lock another thread held).
//
// Windows (subprocess_win.cpp): CreateProcessW with the command line quoted for the C runtime
// (windows_command_line), CREATE_NO_WINDOW, stdin from NUL, stdout/stderr on overlapped pipes,
// the child in a Job object (KILL_ON_JOB_CLOSE) that TerminateJobObject ends whole at the
// deadline; a crash is its NTSTATUS exit code (crash_code) where Linux reports a signal. There
// is no fork: start_forked does not exist there (docs/decisions/0033-windows-probe-isolation.md).

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// How long a child may take to die after SIGKILL before it is abandoned (reaped later).
inline constexpr std::chrono::milliseconds kKillGrace{250};
/// What describe() adds to "timed out after N ms" for an abandoned child.
inline constexpr std::string_view kAbandonedNote = "; it did not end on SIGKILL and was left to be reaped later";

struct ProcessResult {
  bool timed_out = false;  ///< the deadline passed: the child's process group was killed
  bool abandoned = false;  ///< timed out and SIGKILL did not end it within kKillGrace: reaped later
  int exit_status = -1;    ///< the exit status when the child exited; -1 otherwise
  int signal = 0;          ///< the signal that ended it when it died of one (0 otherwise)
  /// Windows: the NTSTATUS exception code that ended it (0xC0000005 access violation, ...)
  /// when its exit code is one (error severity, 0xC...); exit_status is then -1. Always 0 on Linux.
  unsigned crash_code = 0;
  std::string out;         ///< its stdout (start_forked: its result pipe), at most `max_output` bytes
  std::string err;         ///< its stderr (start_forked: empty), at most `max_output` bytes
  bool truncated = false;  ///< stdout or stderr was longer than `max_output` (the rest was discarded)

  [[nodiscard]] bool exited_ok() const noexcept { return !timed_out && exit_status == 0; }
  /// It died of a signal (Linux) or of an exception (Windows).
  [[nodiscard]] bool crashed() const noexcept { return signal != 0 || crash_code != 0; }
  /// "exited with status 3", "was killed by signal 11 (Segmentation fault)", "timed out after 5000 ms"
  /// (+ "; it did not end on SIGKILL and was left to be reaped later" when abandoned); Windows:
  /// "crashed with exception 0xC0000005 (access violation)".
  [[nodiscard]] std::string describe(std::chrono::milliseconds timeout) const;
};

/// A child's environment: "NAME=value" strings; nullopt where a call takes one: this process's.
using Environment = std::optional<std::vector<std::string>>;

/// A child started by start_process or start_forked and not yet collected. wait() collects it;
/// destroying one that was not waited for kills its process group (and abandons it, as at a
/// deadline, when SIGKILL does not end it). Move-only.
class RunningProcess {
 public:
  RunningProcess(RunningProcess&& other) noexcept;
  RunningProcess& operator=(RunningProcess&& other) noexcept;
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;
  ~RunningProcess();

  /// Reads its output until it exits or the deadline (its start + timeout) passes, then SIGKILL
  /// to its process group. Call once. Errors: Errc::io_error (poll failed), or Errc::usage when
  /// called twice.
  [[nodiscard]] Expected<ProcessResult> wait();
  /// The child's process id (also its process group's); -1 once collected.
  [[nodiscard]] int pid() const noexcept { return pid_; }

 private:
  friend Expected<RunningProcess> start_process(const std::vector<std::string>&, std::chrono::milliseconds, std::size_t,
                                                const Environment&);
#ifndef _WIN32
  friend Expected<RunningProcess> start_forked(const std::function<int(int)>&, std::chrono::milliseconds, std::size_t,
                                               const Environment&);
#endif
  RunningProcess() = default;
  void abandon() noexcept;
  // What the system gave for the child: the read ends of its pipes (and on Windows HANDLEs of
  // the child and its Job object). Empty once moved from or collected.
  struct Native {
#ifdef _WIN32
    void* process = nullptr;
    void* job = nullptr;
    void* out = nullptr;
    void* err = nullptr;
#else
    int out = -1, err = -1;
#endif
  };
  int pid_ = -1;
  Native native_;
  std::string path_;
  std::chrono::steady_clock::time_point deadline_{};
  std::size_t max_output_ = 0;
};

/// Starts `argv[0]` (a path: there is no PATH search) with `argv`, its stdout and stderr going
/// to pipes (each kept up to `max_output` bytes), and returns at once: the caller can do other
/// work while it runs. `environment`: the child's whole environment (probe_environment() for a
/// probe); nullopt: this process's. Errors, each naming argv[0]: Errc::not_found (no such file),
/// Errc::usage (a directory, not executable, not a program the system can run, or an empty
/// argv), Errc::io_error (pipes or spawn failed otherwise).
[[nodiscard]] Expected<RunningProcess> start_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                                     std::size_t max_output = 1024 * 1024,
                                                     const Environment& environment = std::nullopt);

/// start_process, then wait.
[[nodiscard]] Expected<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                                  std::size_t max_output = 1024 * 1024,
                                                  const Environment& environment = std::nullopt);

#ifndef _WIN32
/// Forks a child that runs `body(result_fd)` with stdin, stdout and stderr on /dev/null and
/// `environment` as its whole environment (built before the fork), then _exits with what it
/// returned (70 when it threw). What it writes to result_fd is wait()'s `out`. For work that
/// must not run in this process (loading a vendor library that may hang or crash). Errors:
/// Errc::io_error (pipe or fork failed), naming the step.
[[nodiscard]] Expected<RunningProcess> start_forked(const std::function<int(int result_fd)>& body,
                                                    std::chrono::milliseconds timeout, std::size_t max_output = 1024 * 1024,
                                                    const Environment& environment = std::nullopt);
#endif

/// Collects, without blocking, the children abandoned at their deadline that have ended since.
/// Returns how many are still running. Called by every start; callable any time.
std::size_t reap_abandoned() noexcept;

/// The variables a probe child (the interpreter query, nvidia-smi, a vendor library's child)
/// inherits; nothing else of this process's environment reaches it, so no token
/// (GITHUB_TOKEN, a proxy's password, an index credential) does. docs/detection.md says why
/// each is there.
[[nodiscard]] const std::vector<std::string_view>& probe_environment_names();
/// This process's values of probe_environment_names(), plus the variables named in
/// WHEELFIT_PROBE_ENV (comma-separated names: what a driver of yours needs), as "NAME=value".
[[nodiscard]] std::vector<std::string> probe_environment();

namespace detail {
/// One argument quoted for a Windows command line so that the C runtime's parser (and
/// CommandLineToArgvW) gives it back unchanged: as is when it has no space, tab, newline or
/// quote and is not empty; else in quotes, a quote as \", backslashes doubled before a quote
/// and at the end. Pure text (UTF-8 in, UTF-8 out): compiled and tested on every platform.
[[nodiscard]] std::string quote_windows_argument(std::string_view arg);
/// argv as one command line: argv[0] (a program path: quoted when it holds a space or tab,
/// never escaped, as the runtime reads the program name) then each argument quoted.
/// Errc::usage for a program path holding a quote (no Windows file name does).
[[nodiscard]] Expected<std::string> windows_command_line(const std::vector<std::string>& argv);
/// Windows: "access violation" for 0xC0000005 and the other common crash codes; "" for others.
[[nodiscard]] std::string_view exception_name(unsigned code) noexcept;
/// "exception 0xC0000005 (access violation)"; the name left out where exception_name has none.
[[nodiscard]] std::string exception_text(unsigned code);
#ifndef _WIN32
/// Test seam: how a timed-out child's process group is signalled (default: ::kill). A test that
/// makes it do nothing stands for a child that SIGKILL cannot end. Returns the previous one.
using SignalFunction = int (*)(int pid, int signal);
SignalFunction set_signal_function(SignalFunction fn) noexcept;
#endif
}  // namespace detail

}  // namespace wheelfit::util
