#include "child_process.hpp"

#include <csignal>
#include <filesystem>
#include <string_view>

#include "wheelfit/util/subprocess.hpp"
#ifdef _WIN32
#include <windows.h>

#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/util/windows_text.hpp"
#endif

namespace wheelfit::backends::cuda::detail {
namespace {

constexpr std::size_t kMaxCapture = std::size_t{1} << 20;

#ifndef _WIN32
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
#endif

// The outcome of a started child (forked, or the probe program) once it was waited for.
ChildOutcome collect(Expected<util::RunningProcess> child) {
  ChildOutcome o;
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
  } else if (done->crashed()) {
    o.kind = ChildOutcome::Kind::signaled;
    o.status = done->signal;
    o.crash_code = done->crash_code;
  } else {
    o.kind = ChildOutcome::Kind::exited;
    o.status = done->exit_status;
  }
  return o;
}

}  // namespace

#ifndef _WIN32
ChildOutcome run_in_child(const std::function<int(int)>& body, std::chrono::milliseconds timeout) {
  return collect(util::start_forked(body, timeout, kMaxCapture, util::probe_environment()));
}
#else
Expected<std::string> probe_program() {
  namespace fs = std::filesystem;
  if (auto set = util::env_utf8("WHEELFIT_PROBE_PROGRAM"); set && !set->empty()) return *set;
  auto module_file = [](HMODULE m) {
    std::wstring buf(32768, L'\0');
    const DWORD n = ::GetModuleFileNameW(m, buf.data(), static_cast<DWORD>(buf.size()));
    buf.resize(n < buf.size() ? n : 0);
    return fs::path(buf);
  };
  HMODULE self = nullptr;
  ::GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                       reinterpret_cast<LPCWSTR>(&probe_program), &self);
  const fs::path here = module_file(self).parent_path();
  std::vector<fs::path> dirs{here, here.parent_path(), module_file(nullptr).parent_path()};
  std::string looked;
  for (const auto& dir : dirs) {
    if (dir.empty()) continue;
    const fs::path candidate = dir / L"wheelfit-probe.exe";
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return util::win::narrow(candidate.native());
    looked += (looked.empty() ? "" : ", ") + util::win::narrow(dir.native());
  }
  return Error(Errc::not_found, "wheelfit-probe.exe not found (looked in " + looked +
                                    "); it ships beside wheelfit.exe, or set WHEELFIT_PROBE_PROGRAM");
}

ChildOutcome run_probe_program(std::string_view probe, const std::string& library, std::chrono::milliseconds timeout) {
  auto program = probe_program();
  if (!program) {
    ChildOutcome o;
    o.error = program.error().message;
    return o;
  }
  return collect(util::start_process({*program, std::string(probe), library}, timeout, kMaxCapture,
                                     util::probe_environment()));
}
#endif

std::string describe(const ChildOutcome& o, std::chrono::milliseconds timeout) {
  switch (o.kind) {
    case ChildOutcome::Kind::timed_out:
      return "timed out after " + std::to_string(timeout.count()) + " ms" +
             std::string(o.abandoned ? util::kAbandonedNote : "");
    case ChildOutcome::Kind::signaled: {
#ifdef _WIN32
      return "crashed with " + util::detail::exception_text(o.crash_code);
#else
      std::string s = "crashed with signal " + std::to_string(o.status);
      if (auto name = signal_name(o.status); !name.empty()) s += " (" + std::string(name) + ")";
      return s;
#endif
    }
    case ChildOutcome::Kind::exited:
      return "exited with status " + std::to_string(o.status);
    case ChildOutcome::Kind::failed_to_start:
      return "could not start: " + o.error;
  }
  return "failed";
}

}  // namespace wheelfit::backends::cuda::detail
