// UTF-8 text to and from the OS: arguments, variables, paths, the console.
#include "wheelfit/util/native_text.hpp"

#ifdef _WIN32
#include <windows.h>
#include <shellapi.h>

#include "wheelfit/util/win_file.hpp"
#else
#include <unistd.h>
#endif

#include <cstdlib>

namespace wheelfit::util {

#ifdef _WIN32

namespace {
// UTF-16 -> UTF-8 through the path conversion of win_file.hpp.
std::string utf8_from_wide(const wchar_t* text) { return win::u8(std::filesystem::path(text)); }
}  // namespace

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  int count = 0;
  if (LPWSTR* wide = ::CommandLineToArgvW(::GetCommandLineW(), &count); wide != nullptr) {
    std::vector<std::string> out;
    try {
      out.reserve(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i) out.push_back(utf8_from_wide(wide[i]));
    } catch (const std::exception&) {  // an unpaired surrogate: not text; keep the CRT's arguments
      count = -1;
    }
    ::LocalFree(wide);
    if (count == argc) return out;  // else the CRT and the shell split differently: keep the CRT's
  }
  return std::vector<std::string>(argv, argv + argc);
}

std::optional<std::string> environment_utf8(const char* name) {
  const std::wstring wide_name(name, name + std::char_traits<char>::length(name));  // names are ASCII
  const wchar_t* value = ::_wgetenv(wide_name.c_str());
  if (value == nullptr) return std::nullopt;
  try {
    return utf8_from_wide(value);
  } catch (const std::exception&) {  // an unpaired surrogate: not text
    return std::nullopt;
  }
}

std::filesystem::path path_from_utf8(std::string_view text) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return std::filesystem::u8path(text);  // deprecated in C++20; path(std::u8string) would copy twice
#pragma GCC diagnostic pop
}

namespace {
UINT g_console_cp = 0;  // the console's output code page before use_utf8_console; 0: none
}  // namespace

void use_utf8_console() noexcept {
  // The code page belongs to the console, not the process: it is given back at exit, so the
  // shell the program ran in is left as it was.
  const UINT before = ::GetConsoleOutputCP();
  if (before == 0 || before == CP_UTF8 || !::SetConsoleOutputCP(CP_UTF8)) return;
  g_console_cp = before;
  std::atexit([] { ::SetConsoleOutputCP(g_console_cp); });
}

bool stderr_is_terminal() noexcept {
  const HANDLE err = ::GetStdHandle(STD_ERROR_HANDLE);
  DWORD mode = 0;
  if (err == nullptr || err == INVALID_HANDLE_VALUE || !::GetConsoleMode(err, &mode)) return false;
  if ((mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0) return true;
  return ::SetConsoleMode(err, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0;
}

#else

std::vector<std::string> utf8_arguments(int argc, char** argv) { return std::vector<std::string>(argv, argv + argc); }

std::optional<std::string> environment_utf8(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::filesystem::path path_from_utf8(std::string_view text) { return std::filesystem::path(text); }

void use_utf8_console() noexcept {}

bool stderr_is_terminal() noexcept { return ::isatty(STDERR_FILENO) == 1; }

#endif

}  // namespace wheelfit::util
