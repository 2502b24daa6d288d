#pragma once
// Running a program with a deadline: how the machine probes start the target Python
// interpreter, how the CUDA plugin runs nvidia-smi, and how the detect benchmark starts wheelfit
// and Python (so both sides of its comparison pay the same start cost).
//
// Thread safety: reentrant. The child is started with posix_spawn (no fork of a big parent, no
// code of ours between fork and exec), in its own process group, with every signal at its
// default action, an empty signal mask and stdin from /dev/null; it inherits the environment.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

struct ProcessResult {
  bool timed_out = false;  ///< the deadline passed: the child's process group was killed and reaped
  int exit_status = -1;    ///< the exit status when the child exited; -1 otherwise
  int signal = 0;          ///< the signal that ended it when it died of one (0 otherwise)
  std::string out;         ///< its stdout, at most `max_output` bytes
  std::string err;         ///< its stderr, at most `max_output` bytes
  bool truncated = false;  ///< stdout or stderr was longer than `max_output` (the rest was discarded)

  [[nodiscard]] bool exited_ok() const noexcept { return !timed_out && exit_status == 0; }
  /// "exited with status 3", "was killed by signal 11 (Segmentation fault)", "timed out after 5000 ms".
  [[nodiscard]] std::string describe(std::chrono::milliseconds timeout) const;
};

/// A child started by start_process and not yet collected. wait() collects it; destroying one
/// that was not waited for kills its process group and reaps it. Move-only.
class RunningProcess {
 public:
  RunningProcess(RunningProcess&& other) noexcept;
  RunningProcess& operator=(RunningProcess&& other) noexcept;
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;
  ~RunningProcess();

  /// Reads its stdout and stderr until it exits or the deadline (its start + timeout) passes,
  /// then SIGKILL to its process group. Call once. Errors: Errc::io_error (poll failed), or
  /// Errc::usage when called twice.
  [[nodiscard]] Expected<ProcessResult> wait();

 private:
  friend Expected<RunningProcess> start_process(const std::vector<std::string>&, std::chrono::milliseconds, std::size_t);
  RunningProcess() = default;
  void abandon() noexcept;
  int pid_ = -1;
  int out_ = -1, err_ = -1;
  std::string path_;
  std::chrono::steady_clock::time_point deadline_{};
  std::size_t max_output_ = 0;
};

/// Starts `argv[0]` (a path: there is no PATH search) with `argv`, its stdout and stderr going
/// to pipes (each kept up to `max_output` bytes), and returns at once: the caller can do other
/// work while it runs. Errors, each naming argv[0]: Errc::not_found (no such file),
/// Errc::usage (a directory, not executable, not a program the system can run, or an empty
/// argv), Errc::io_error (pipes or spawn failed otherwise).
[[nodiscard]] Expected<RunningProcess> start_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                                     std::size_t max_output = 1024 * 1024);

/// start_process, then wait.
[[nodiscard]] Expected<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                                  std::size_t max_output = 1024 * 1024);

}  // namespace wheelfit::util
