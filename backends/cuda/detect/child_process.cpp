#include "child_process.hpp"

#include <csignal>
#include <string_view>

#include "wheelfit/util/subprocess.hpp"

namespace wheelfit::backends::cuda::detail {
namespace {

constexpr std::size_t kMaxCapture = std::size_t{1} << 20;

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

ChildOutcome run_in_child(const std::function<int(int)>& body, std::chrono::milliseconds timeout) {
  ChildOutcome o;
  auto child = util::start_forked(body, timeout, kMaxCapture, util::probe_environment());
  if (!child) {
    o.error = child.error().message;
    return o;
  }
  auto done = child->wait();
  if (!done) {  // cannot wait properly: the child was killed, as at a timeout
    o.kind = ChildOutcome::Kind::timed_out;
    return o;
  }
  o.out = std::move(done->out);
  o.abandoned = done->abandoned;
  if (done->timed_out) {
    o.kind = ChildOutcome::Kind::timed_out;
  } else if (done->signal != 0) {
    o.kind = ChildOutcome::Kind::signaled;
    o.status = done->signal;
  } else {
    o.kind = ChildOutcome::Kind::exited;
    o.status = done->exit_status;
  }
  return o;
}

std::string describe(const ChildOutcome& o, std::chrono::milliseconds timeout) {
  switch (o.kind) {
    case ChildOutcome::Kind::timed_out:
      return "timed out after " + std::to_string(timeout.count()) + " ms" +
             std::string(o.abandoned ? util::kAbandonedNote : "");
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
