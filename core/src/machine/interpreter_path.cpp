// Finding the target interpreter and stamping its files, per platform. POSIX: a name on PATH
// (':'), an executable regular file, realpath, stat's dev:ino:size:mtime. Windows: ';' and
// PATHEXT, python.exe in an environment folder (venv: Scripts\python.exe, conda: python.exe),
// the `py` launcher ("py", "py -3.12") asked for sys.executable, fs::canonical, and
// GetFileInformationByHandle for the stamps.
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifdef _WIN32
#include <windows.h>

#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/util/windows_text.hpp"
#else
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "interpreter_path.hpp"
#include "wheelfit/machine/interpreter.hpp"

namespace wheelfit::machine {
namespace fs = std::filesystem;

#ifndef _WIN32

std::string detail::file_stamp(const std::string& path, bool follow_links) {
  struct stat st {};
  const int r = follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (r != 0) return "missing";
  const auto ns = static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec;
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(ns);
}

std::string detail::real_path(const std::string& p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) == nullptr) return p;
  return buf;
}

Expected<std::string> find_interpreter(std::string_view python, std::string_view path_env) {
  auto check = [](const fs::path& p) -> Expected<std::string> {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return unexpected(Errc::not_found, p.string() + ": no such file");
    if (S_ISDIR(st.st_mode)) return unexpected(Errc::usage, p.string() + ": is a directory, not a Python interpreter");
    if (::access(p.c_str(), X_OK) != 0) return unexpected(Errc::usage, p.string() + ": not executable");
    return p.lexically_normal().string();
  };
  if (python.empty()) return unexpected(Errc::usage, "an empty interpreter path");
  if (python.find('/') != std::string_view::npos) {
    std::error_code ec;
    fs::path p(python);
    if (p.is_relative()) p = fs::absolute(p, ec);
    return check(p);
  }
  std::size_t start = 0;
  while (start <= path_env.size()) {
    auto colon = path_env.find(':', start);
    if (colon == std::string_view::npos) colon = path_env.size();
    std::string dir(path_env.substr(start, colon - start));
    start = colon + 1;
    std::error_code ec;
    fs::path candidate = (dir.empty() ? fs::current_path(ec) : fs::path(dir)) / python;
    if (candidate.is_relative()) candidate = fs::absolute(candidate, ec);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate.lexically_normal().string();
    }
  }
  return unexpected(Errc::not_found, std::string(python) + ": not found on PATH (" +
                                         (path_env.empty() ? std::string("PATH is empty") : "PATH=" + std::string(path_env)) +
                                         "); give the interpreter with --python PATH");
}

#else  // _WIN32

namespace {

using util::win::narrow;
using util::win::widen;

fs::path wpath(std::string_view utf8) { return fs::path(widen(utf8)); }
std::string u8(const fs::path& p) { return narrow(p.native()); }

std::vector<std::string_view> pieces(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

// A program CreateProcessW can start directly: .exe or .com (a .bat or .cmd needs cmd.exe).
bool runnable_extension(const fs::path& p) {
  const std::string ext = util::ascii_upper(narrow(p.extension().native()));
  return ext == ".EXE" || ext == ".COM";
}

// The extensions PATHEXT lists (default ".COM;.EXE;.BAT;.CMD"), upper case, only runnable ones.
std::vector<std::wstring> path_extensions() {
  const std::string list = util::env_utf8("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD");
  std::vector<std::wstring> out;
  for (const auto& e : pieces(list, ';')) {
    const std::string t(util::trim(e));
    if (runnable_extension(fs::path(widen("x" + t)))) out.push_back(widen(t));
  }
  if (out.empty()) out.push_back(L".EXE");
  return out;
}

// The interpreter in a Python environment folder: a venv's Scripts\python.exe, else conda's (and
// a plain installation's) python.exe at its root.
std::optional<fs::path> environment_python(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& p : {dir / L"Scripts" / L"python.exe", dir / L"python.exe"}) {
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

Expected<std::string> check(const fs::path& given) {
  std::error_code ec;
  fs::path p = given.is_relative() ? fs::absolute(given, ec) : given;
  const auto status = fs::status(p, ec);
  if (!fs::exists(status)) return unexpected(Errc::not_found, u8(p) + ": no such file");
  if (fs::is_directory(status)) {
    if (auto inside = environment_python(p)) return u8(inside->lexically_normal());
    return unexpected(Errc::usage, u8(p) + ": is a directory, not a Python interpreter (nor an environment holding "
                                           "Scripts\\python.exe or python.exe)");
  }
  if (!runnable_extension(p)) return unexpected(Errc::usage, u8(p) + ": not executable (not an .exe)");
  return u8(p.lexically_normal());
}

// The first runnable `name` (with each PATHEXT extension unless it has one) in a ';' list. Skips
// empty files: the Microsoft Store's "App Execution Alias" stubs (WindowsApps\python.exe).
std::optional<fs::path> search_path(std::string_view name, std::string_view path_env) {
  const fs::path base = wpath(name);
  const auto exts = base.has_extension() ? std::vector<std::wstring>{L""} : path_extensions();
  for (const auto& dir : pieces(path_env, ';')) {
    const std::string d(util::trim(dir));
    if (d.empty()) continue;
    for (const auto& ext : exts) {
      fs::path candidate = wpath(d) / base;
      candidate += ext;
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec) && runnable_extension(candidate) && fs::file_size(candidate, ec) > 0) {
        return candidate.lexically_normal();
      }
    }
  }
  return std::nullopt;
}

// "py", "py -3", "py -3.12": the launcher asked which interpreter it would run.
Expected<std::string> via_launcher(std::string_view spec, std::string_view path_env) {
  auto words = pieces(spec, ' ');
  std::erase_if(words, [](std::string_view w) { return w.empty(); });
  std::optional<fs::path> py = search_path("py", path_env);
  if (!py) {
    if (auto root = util::env_utf8("SystemRoot")) {
      std::error_code ec;
      if (fs::is_regular_file(wpath(*root) / L"py.exe", ec)) py = wpath(*root) / L"py.exe";
    }
  }
  if (!py) return unexpected(Errc::not_found, std::string(spec) + ": the py launcher is not on PATH nor in %SystemRoot%");
  std::vector<std::string> argv{u8(*py)};
  for (std::size_t i = 1; i < words.size(); ++i) argv.emplace_back(words[i]);
  argv.insert(argv.end(), {"-c", "import sys; sys.stdout.write(sys.executable)"});
  auto run = util::run_process(argv, std::chrono::seconds(15), 64 * 1024, util::probe_environment());
  if (!run) return run.error();
  if (!run->exited_ok()) {
    const auto err = util::trim(run->err);
    return unexpected(Errc::not_found, std::string(spec) + ": the py launcher " + run->describe(std::chrono::seconds(15)) +
                                           (err.empty() ? "" : ": " + std::string(err.substr(0, 200))));
  }
  const std::string exe(util::trim(run->out));
  if (exe.empty()) return unexpected(Errc::not_found, std::string(spec) + ": the py launcher named no interpreter");
  return check(wpath(exe));
}

bool is_launcher(std::string_view python) {
  return python == "py" || python == "py.exe" || python.starts_with("py ") || python.starts_with("py.exe ");
}

}  // namespace

std::string detail::file_stamp(const std::string& path, bool follow_links) {
  const DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | (follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
  HANDLE h = ::CreateFileW(widen(path).c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           nullptr, OPEN_EXISTING, flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) return "missing";
  BY_HANDLE_FILE_INFORMATION info{};
  const BOOL ok = ::GetFileInformationByHandle(h, &info);
  ::CloseHandle(h);
  if (!ok) return "missing";
  auto join = [](DWORD hi, DWORD lo) { return (static_cast<unsigned long long>(hi) << 32) | lo; };
  return std::to_string(info.dwVolumeSerialNumber) + ":" + std::to_string(join(info.nFileIndexHigh, info.nFileIndexLow)) +
         ":" + std::to_string(join(info.nFileSizeHigh, info.nFileSizeLow)) + ":" +
         std::to_string(join(info.ftLastWriteTime.dwHighDateTime, info.ftLastWriteTime.dwLowDateTime));
}

std::string detail::real_path(const std::string& p) {
  std::error_code ec;
  const fs::path r = fs::canonical(wpath(p), ec);
  return ec ? p : u8(r);
}

Expected<std::string> find_interpreter(std::string_view python, std::string_view path_env) {
  if (python.empty()) return unexpected(Errc::usage, "an empty interpreter path");
  if (is_launcher(python)) return via_launcher(python, path_env);
  if (python.find_first_of("/\\:") != std::string_view::npos) return check(wpath(python));
  if (auto found = search_path(python, path_env)) return u8(*found);
  // "python" is not on PATH (no environment is active): the launcher knows the installed ones.
  if (python == "python") {
    if (auto launched = via_launcher("py -3", path_env)) return launched;
  }
  return unexpected(Errc::not_found, std::string(python) + ": not found on PATH (" +
                                         (path_env.empty() ? std::string("PATH is empty") : "PATH=" + std::string(path_env)) +
                                         (python == "python" ? ") nor through the py launcher" : ")") +
                                         "; give the interpreter with --python PATH, an environment folder or \"py -3.12\"");
}

#endif  // _WIN32

}  // namespace wheelfit::machine
