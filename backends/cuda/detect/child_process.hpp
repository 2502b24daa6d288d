#pragma once
// Running untrusted work (vendor libraries) in a forked child with a deadline, over
// util::start_forked: the child's own process group, killed whole at the deadline, abandoned
// (reaped later) when SIGKILL does not end it, and util::probe_environment() as its whole
// environment. Internal to wheelfit_cuda_detect.
//
// Windows has no fork: the probe runs in wheelfit-probe.exe (probe_program()), a small program
// shipped beside wheelfit.exe and wheelfit.dll, started with util::start_process in a Job object
// that is ended whole at the deadline; it prints the same JSON answer on stdout
// (docs/decisions/0033-windows-probe-isolation.md).

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::backends::cuda::detail {

struct ChildOutcome {
  enum class Kind {
    exited,           ///< the child exited; `status` is its exit code
    signaled,         ///< the child died of signal `status` (Windows: of exception `crash_code`)
    timed_out,        ///< the deadline passed; the child's process group was killed
    failed_to_start,  ///< fork / pipe failed; `error` says why
  };
  Kind kind = Kind::failed_to_start;
  int status = 0;
  bool abandoned = false;  ///< timed out, and SIGKILL did not end it in time: reaped later
  unsigned crash_code = 0; ///< Windows: the NTSTATUS the probe program died of (0xC0000005)
  std::string out;         ///< what the child wrote to its result pipe (capped at 1 MiB)
  std::string error;
};

#ifndef _WIN32
/// Forks; the child (signals at their defaults, its own process group, stdio on /dev/null, the
/// probe environment) calls `body(result_fd)` and _exits with its return value (exceptions ->
/// 70). The parent collects what is written to result_fd until the child exits or `timeout`
/// passes (then SIGKILL to the group).
ChildOutcome run_in_child(const std::function<int(int result_fd)>& body, std::chrono::milliseconds timeout);
#else
/// The probe program: WHEELFIT_PROBE_PROGRAM when set, else wheelfit-probe.exe in the folder of
/// the module holding this code (the CUDA plugin, wheelfit.dll, a test executable), in that
/// folder's parent (plugins\ lies beside wheelfit.exe), or beside this process's executable.
/// Errc::not_found naming the folders looked in.
Expected<std::string> probe_program();
/// Runs `wheelfit-probe.exe <probe> <library>` with the probe environment and a deadline, in a
/// Job object; `out` is its stdout.
ChildOutcome run_probe_program(std::string_view probe, const std::string& library, std::chrono::milliseconds timeout);
/// The probe program's side: loads `library` for `probe` ("nvml" or "cuda") and returns the
/// JSON answer; exit status 2 with an error answer for an unknown probe.
int probe_program_main(std::string_view probe, const std::string& library, std::string& answer);
#endif

/// "timed out after 300 ms", "crashed with signal 11 (SIGSEGV)", "exited with status 3",
/// (Windows: "crashed with exception 0xC0000005 (access violation)"),
/// "could not start: ..." — for notes ("<probe> probe <describe>").
std::string describe(const ChildOutcome& outcome, std::chrono::milliseconds timeout);

}  // namespace wheelfit::backends::cuda::detail
