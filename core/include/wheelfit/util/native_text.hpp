#pragma once
// Text between wheelfit (UTF-8 everywhere) and the operating system: the program's arguments,
// environment variables, paths made from text, the console. On Linux these are argv, getenv,
// fs::path, nothing and isatty. On Windows the OS speaks UTF-16: the arguments come from the
// UTF-16 command line (argv is in the ANSI code page, which cannot hold "C:\Users\Jürgen" on
// most systems), variables from _wgetenv, a path from UTF-8 text through fs::u8path (MinGW's
// fs::path(std::string) reads the bytes as Latin-1 while path::string() writes UTF-8), the
// console's output code page is set to UTF-8, and a console counts as a terminal once it accepts
// ANSI escapes (ENABLE_VIRTUAL_TERMINAL_PROCESSING).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfit::util {

/// The program's arguments (the program's name first) as UTF-8: `argv` on POSIX; on Windows
/// GetCommandLineW split by CommandLineToArgvW and converted (argv when that fails).
[[nodiscard]] std::vector<std::string> utf8_arguments(int argc, char** argv);

/// The environment variable `name` as UTF-8 (Windows: _wgetenv); nullopt when unset.
[[nodiscard]] std::optional<std::string> environment_utf8(const char* name);

/// A path from UTF-8 text (an argument, a variable, JSON): fs::path(text) on POSIX, fs::u8path on
/// Windows.
[[nodiscard]] std::filesystem::path path_from_utf8(std::string_view text);

/// Windows: the console's output code page becomes UTF-8 (SetConsoleOutputCP(CP_UTF8)), so the
/// UTF-8 the program writes shows as written; nothing without a console, nothing on POSIX.
void use_utf8_console() noexcept;

/// Whether stderr is a terminal that understands ANSI escapes (a progress view redraws in place):
/// isatty on POSIX; on Windows a console whose mode takes ENABLE_VIRTUAL_TERMINAL_PROCESSING
/// (set here; a pipe, a file or an old console is not one).
[[nodiscard]] bool stderr_is_terminal() noexcept;

}  // namespace wheelfit::util
