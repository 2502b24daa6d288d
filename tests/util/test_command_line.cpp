// util::detail::quote_windows_argument / windows_command_line: the C runtime's quoting rules,
// as a table (pure text: runs on Linux too). On Windows each line is also parsed back by
// CommandLineToArgvW, which follows the same rules.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "wheelfit/util/subprocess.hpp"
#ifdef _WIN32
#include <windows.h>
#include <shellapi.h>

#include "wheelfit/util/windows_text.hpp"
#endif

using wheelfit::Errc;
using wheelfit::util::detail::exception_text;
using wheelfit::util::detail::quote_windows_argument;
using wheelfit::util::detail::windows_command_line;

namespace {

struct Row {
  std::string arg, quoted;
};

// Each argument and how it must appear on the command line.
const std::vector<Row> kRows = {
    {"plain", "plain"},
    {"", R"("")"},
    {"two words", R"("two words")"},
    {"tab\there", "\"tab\there\""},
    {"new\nline", "\"new\nline\""},
    {R"(a"b)", R"("a\"b")"},
    {R"(")", R"("\"")"},
    {R"(C:\path\to\file)", R"(C:\path\to\file)"},            // backslashes alone are literal
    {R"(C:\has space\)", R"("C:\has space\\")"},             // doubled before the closing quote
    {R"(trailing\)", R"(trailing\)"},                        // no quoting needed: left alone
    {R"(\\server\share\)", R"(\\server\share\)"},
    {R"(a\\"b)", R"("a\\\\\"b")"},                           // 2 backslashes + quote: 5 + quote
    {R"(a\"b c)", R"("a\\\"b c")"},
    {"Jürgen ü 日本", "\"Jürgen ü 日本\""},                   // UTF-8 passes through
    {"ünïcödé", "ünïcödé"},
    {"-c", "-c"},
    {"import sys; print('x')", "\"import sys; print('x')\""},
};

}  // namespace

TEST_CASE("quote_windows_argument follows the C runtime's rules", "[util][command_line]") {
  for (const auto& row : kRows) {
    CAPTURE(row.arg);
    CHECK(quote_windows_argument(row.arg) == row.quoted);
  }
}

TEST_CASE("windows_command_line: the program path, then each argument quoted", "[util][command_line]") {
  auto line = windows_command_line({R"(C:\Program Files\Python312\python.exe)", "-I", "two words", ""});
  REQUIRE(line);
  CHECK(*line == R"("C:\Program Files\Python312\python.exe" -I "two words" "")");
  auto bare = windows_command_line({R"(C:\py\python.exe)"});
  REQUIRE(bare);
  CHECK(*bare == R"(C:\py\python.exe)");

  struct Bad {
    std::vector<std::string> argv;
    std::string message_part;
  };
  const std::vector<Bad> bad = {
      {{}, "no program given"},
      {{""}, "no program given"},
      {{R"(C:\a"b.exe)"}, "cannot hold a quote"},
      {{"prog.exe", std::string("a\0b", 3)}, "NUL character"},
  };
  for (const auto& b : bad) {
    auto r = windows_command_line(b.argv);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
    CHECK_THAT(r.error().message, Catch::Contains(b.message_part));
  }
}

TEST_CASE("exception_text names the common crash codes", "[util][command_line]") {
  CHECK(exception_text(0xC0000005u) == "exception 0xC0000005 (access violation)");
  CHECK(exception_text(0xC00000FDu) == "exception 0xC00000FD (stack overflow)");
  CHECK(exception_text(0xC0000409u) == "exception 0xC0000409 (stack buffer overrun (fail fast))");
  CHECK(exception_text(0xC0001234u) == "exception 0xC0001234");
}

#ifdef _WIN32
TEST_CASE("windows_command_line round-trips through CommandLineToArgvW", "[windows][command_line]") {
  std::vector<std::string> argv = {R"(C:\Program Files\x\prog.exe)"};
  for (const auto& row : kRows) argv.push_back(row.arg);
  auto line = windows_command_line(argv);
  REQUIRE(line);
  int n = 0;
  const std::wstring wide = wheelfit::util::win::widen(*line);
  LPWSTR* parsed = ::CommandLineToArgvW(wide.c_str(), &n);
  REQUIRE(parsed);
  REQUIRE(n == static_cast<int>(argv.size()));
  for (int i = 0; i < n; ++i) CHECK(wheelfit::util::win::narrow(parsed[i]) == argv[static_cast<std::size_t>(i)]);
  ::LocalFree(parsed);
}
#endif
