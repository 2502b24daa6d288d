#pragma once
// Running untrusted work (vendor libraries) in a forked child with a deadline, over
// util::start_forked: the child's own process group, killed whole at the deadline, abandoned
// (reaped later) when SIGKILL does not end it, and util::probe_environment() as its whole
// environment. Internal to wheelfit_cuda_detect.

#include <chrono>
#include <functional>
#include <string>

namespace wheelfit::backends::cuda::detail {

struct ChildOutcome {
  enum class Kind {
    exited,           ///< the child exited; `status` is its exit code
    signaled,         ///< the child died of signal `status`
    timed_out,        ///< the deadline passed; the child's process group was killed
    failed_to_start,  ///< fork / pipe failed; `error` says why
  };
  Kind kind = Kind::failed_to_start;
  int status = 0;
  bool abandoned = false;  ///< timed out, and SIGKILL did not end it in time: reaped later
  std::string out;         ///< what the child wrote to its result pipe (capped at 1 MiB)
  std::string error;
};

/// Forks; the child (signals at their defaults, its own process group, stdio on /dev/null, the
/// probe environment) calls `body(result_fd)` and _exits with its return value (exceptions ->
/// 70). The parent collects what is written to result_fd until the child exits or `timeout`
/// passes (then SIGKILL to the group).
ChildOutcome run_in_child(const std::function<int(int result_fd)>& body, std::chrono::milliseconds timeout);

/// "timed out after 300 ms", "crashed with signal 11 (SIGSEGV)", "exited with status 3",
/// "could not start: ..." — for notes ("<probe> probe <describe>").
std::string describe(const ChildOutcome& outcome, std::chrono::milliseconds timeout);

}  // namespace wheelfit::backends::cuda::detail
