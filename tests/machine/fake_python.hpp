#pragma once
// Fake Python interpreters for the interpreter and detect tests: shell scripts that print a
// given answer (and count their runs), and fake site-packages folders with dist-info metadata.
// On Windows a fake interpreter is a copy of wheelfit_test_child.exe (tests/windows/helpers),
// which prints <itself>.answer and counts its runs in <itself>.calls the same way; tests that
// need a shell script of their own are Linux-only ([posix]).

#ifdef _WIN32
#include <windows.h>
#endif

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace wheelfit::test {

#ifdef _WIN32
/// The interpreter's file name in a fake environment's bin folder.
inline const std::string kPythonName = "python.exe";
#else
inline const std::string kPythonName = "python3";
#endif

inline std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// The JSON the real query script prints.
inline std::string python_answer(const std::string& executable, const std::vector<std::string>& site_dirs,
                                 const std::string& version = "3, 12, 4", bool gil_disabled = false,
                                 const std::string& abiflags = "", const std::string& machine = "x86_64",
                                 const std::string& implementation = "cpython") {
  std::string dirs;
  for (const auto& d : site_dirs) dirs += (dirs.empty() ? "" : ", ") + json_quote(d);
  return R"({"wheelfit_query": 1, "executable": )" + json_quote(executable) + R"(, "implementation": )" +
         json_quote(implementation) + R"(, "version": [)" + version + R"(], "abiflags": )" + json_quote(abiflags) +
         R"(, "gil_disabled": )" + (gil_disabled ? "true" : "false") + R"(, "machine": )" + json_quote(machine) +
         R"(, "prefix": "/fake", "venv_config": "", "site_dirs": [)" + dirs + "]}";
}

inline void make_executable(const std::filesystem::path& p) {
  std::filesystem::permissions(p, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                      std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                      std::filesystem::perms::others_exec);
}

/// Writes an executable /bin/sh script at `path` that appends a line to `path`.calls on each
/// run and then runs `body`.
inline void write_script(const std::filesystem::path& path, const std::string& body) {
  write_file(path, "#!/bin/sh\necho run >> '" + path.string() + ".calls'\n" + body + "\n");
  make_executable(path);
}

/// A script that prints `answer` (its own executable is itself unless the answer says otherwise).
inline void write_fake_python(const std::filesystem::path& path, const std::string& answer) {
#ifdef _WIN32
  std::filesystem::create_directories(path.parent_path());
  std::filesystem::copy_file(std::filesystem::absolute(WHEELFIT_TEST_CHILD), path,
                             std::filesystem::copy_options::overwrite_existing);
  write_file(path.string() + ".answer", answer);
#else
  write_script(path, "cat <<'WHEELFIT_EOF'\n" + answer + "\nWHEELFIT_EOF");
#endif
}

/// How many times the script at `path` ran.
inline int script_runs(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path.string() + ".calls", ec)) return 0;
  const std::string text = read_file(path.string() + ".calls");
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

/// Writes <site>/<dir>/METADATA with the given name and version headers.
inline void write_dist_info(const std::filesystem::path& site, const std::string& dir, const std::string& name,
                            const std::string& version) {
  write_file(site / dir / "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version +
                                          "\nSummary: fake\nRequires-Dist: filelock\n\nVersion: 0.0.0-in-the-body\n");
}

/// Moves a file's or folder's mtime an hour back, so that the next change is surely a new mtime
/// (file times are only as fine as the kernel's clock tick).
inline void age(const std::filesystem::path& p) {
#ifdef _WIN32
  // libstdc++ sets times through _wutime, which cannot open a folder: SetFileTime on a handle
  // opened with FILE_FLAG_BACKUP_SEMANTICS can.
  HANDLE h = ::CreateFileW(p.c_str(), FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) throw std::runtime_error("test: cannot open " + p.string());
  FILETIME ft{};
  ::GetFileTime(h, nullptr, nullptr, &ft);
  ULARGE_INTEGER t{};
  t.LowPart = ft.dwLowDateTime;
  t.HighPart = ft.dwHighDateTime;
  t.QuadPart -= 36'000'000'000ULL;  // one hour in 100 ns units
  ft.dwLowDateTime = t.LowPart;
  ft.dwHighDateTime = t.HighPart;
  const BOOL ok = ::SetFileTime(h, nullptr, nullptr, &ft);
  ::CloseHandle(h);
  if (!ok) throw std::runtime_error("test: cannot set the time of " + p.string());
#else
  std::filesystem::last_write_time(p, std::filesystem::last_write_time(p) - std::chrono::hours(1));
#endif
}

}  // namespace wheelfit::test
