// The parts of util/subprocess that are the same on every platform: the probe environment, the
// result's description, and the Windows command-line quoting (pure text, tested everywhere).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/user_folders.hpp"

namespace wheelfit::util {
namespace {

bool is_env_name(std::string_view s) noexcept {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

}  // namespace

const std::vector<std::string_view>& probe_environment_names() {
  static const std::vector<std::string_view> names = {
      "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "LD_LIBRARY_PATH",
      "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
      "PYENV_ROOT", "PYENV_VERSION", "PYTHONUSERBASE",
#ifdef _WIN32
      // What a Windows program needs to start at all (SystemRoot: Winsock, the CRT), the user's
      // folders (Python's site), and where the driver and Python's launcher live.
      "SystemRoot", "SystemDrive", "windir", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
      "PATHEXT", "ProgramFiles", "ProgramW6432", "ProgramData", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
#endif
  };
  return names;
}

std::vector<std::string> probe_environment() {
  std::vector<std::string> names(probe_environment_names().begin(), probe_environment_names().end());
  if (auto extra = env_utf8("WHEELFIT_PROBE_ENV")) {
    std::string_view rest = *extra;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view name = trim(rest.substr(0, comma));
      if (is_env_name(name) && std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  std::vector<std::string> out;
  for (const auto& name : names) {
    if (auto value = env_utf8(name)) out.push_back(name + "=" + *value);
  }
  return out;
}

RunningProcess::RunningProcess(RunningProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      native_(std::exchange(other.native_, {})),
      path_(std::move(other.path_)),
      deadline_(other.deadline_),
      max_output_(other.max_output_) {}

RunningProcess& RunningProcess::operator=(RunningProcess&& other) noexcept {
  if (this != &other) {
    abandon();
    pid_ = std::exchange(other.pid_, -1);
    native_ = std::exchange(other.native_, {});
    path_ = std::move(other.path_);
    deadline_ = other.deadline_;
    max_output_ = other.max_output_;
  }
  return *this;
}

RunningProcess::~RunningProcess() { abandon(); }

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                    std::size_t max_output, const Environment& environment) {
  auto p = start_process(argv, timeout, max_output, environment);
  if (!p) return p.error();
  return p->wait();
}

std::string ProcessResult::describe(std::chrono::milliseconds timeout) const {
  if (timed_out) {
    return "timed out after " + std::to_string(timeout.count()) + " ms" + std::string(abandoned ? kAbandonedNote : "");
  }
  if (crash_code != 0) return "crashed with " + detail::exception_text(crash_code);
#ifndef _WIN32
  if (signal != 0) return "was killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
#endif
  return "exited with status " + std::to_string(exit_status);
}

namespace detail {

std::string quote_windows_argument(std::string_view arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string_view::npos) return std::string(arg);
  std::string out = "\"";
  std::size_t backslashes = 0;
  for (const char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes are literal unless a quote follows: then each is doubled and the quote escaped.
    out.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');  // before the closing quote
  out += '"';
  return out;
}

Expected<std::string> windows_command_line(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return unexpected(Errc::usage, "windows_command_line: no program given");
  for (const auto& a : argv) {
    if (a.find('\0') != std::string::npos) {
      return unexpected(Errc::usage, argv[0] + ": an argument holds a NUL character, which a command line cannot carry");
    }
  }
  const std::string& program = argv[0];
  if (program.find('"') != std::string::npos) {
    return unexpected(Errc::usage, program + ": a program path cannot hold a quote");
  }
  std::string line = program.find_first_of(" \t") == std::string::npos ? program : "\"" + program + "\"";
  for (std::size_t i = 1; i < argv.size(); ++i) line += " " + quote_windows_argument(argv[i]);
  return line;
}

std::string_view exception_name(unsigned code) noexcept {
  switch (code) {
    case 0xC0000005u: return "access violation";
    case 0xC0000006u: return "in-page error";
    case 0xC000001Du: return "illegal instruction";
    case 0xC0000025u: return "noncontinuable exception";
    case 0xC000008Cu: return "array bounds exceeded";
    case 0xC000008Eu: return "float divide by zero";
    case 0xC0000094u: return "integer divide by zero";
    case 0xC0000096u: return "privileged instruction";
    case 0xC00000FDu: return "stack overflow";
    case 0xC0000135u: return "a DLL was not found";
    case 0xC0000139u: return "an entry point was not found";
    case 0xC0000142u: return "DLL initialization failed";
    case 0xC000013Au: return "ended by Ctrl+C";
    case 0xC0000374u: return "heap corruption";
    case 0xC0000409u: return "stack buffer overrun (fail fast)";
    case 0xC0000417u: return "invalid C runtime parameter";
    case 0x80000003u: return "breakpoint";
    default: return {};
  }
}

std::string exception_text(unsigned code) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08X", code);
  const auto name = exception_name(code);
  return "exception " + std::string(hex) + (name.empty() ? "" : " (" + std::string(name) + ")");
}

}  // namespace detail
}  // namespace wheelfit::util
