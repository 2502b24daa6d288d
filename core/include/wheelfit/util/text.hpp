#pragma once
// Small text helpers shared by the parsers.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// The text of a single-line region given as 1-based (line, column) positions, where columns
/// count code points (UTF-8 continuation bytes are skipped), end exclusive; "" when the region
/// spans lines, is empty, or lies outside `text`. Used to quote a value as written ("3.10", not
/// the float 3.1) in error messages.
std::string source_span(std::string_view text, std::size_t begin_line, std::size_t begin_column, std::size_t end_line,
                        std::size_t end_column);

/// ASCII character classes and case (locale-independent), for the parsers of outside input.
namespace ascii {
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_alnum(char c) noexcept { return is_digit(c) || is_alpha(c); }
constexpr char to_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
/// A PEP 503 / PEP 440 separator: '-', '_' or '.'.
constexpr bool is_sep(char c) noexcept { return c == '-' || c == '_' || c == '.'; }
/// Non-empty and only ASCII digits.
constexpr bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (const char c : s)
    if (!is_digit(c)) return false;
  return true;
}
}  // namespace ascii

/// ASCII lower-casing (locale-independent).
std::string ascii_lower(std::string_view s);
/// ASCII upper-casing (locale-independent).
std::string ascii_upper(std::string_view s);

/// `s` without leading and trailing ASCII whitespace (space, \t, \r, \n, \f, \v).
std::string_view trim(std::string_view s) noexcept;

/// ASCII case-insensitive equality (locale-independent); inline: the index parsers compare every tag name with it.
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// Whether `s` begins with `prefix`, ASCII case-insensitively.
bool starts_with_ci(std::string_view s, std::string_view prefix) noexcept;

/// `parts` with `sep` between each two (empty parts kept); "" for no parts.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

/// Whether `url` begins with "http://" or "https://" (the scheme case-insensitively).
bool is_http_url(std::string_view url) noexcept;

/// A byte count as people read it, in powers of 1024: "512 B", "2.7 KiB", "1.5 MiB", "2.25 GiB";
/// `kib_digits` digits after the point in KiB (a live progress line shows whole KiB).
[[nodiscard]] std::string human_bytes(std::uint64_t n, int kib_digits = 1);

/// `text` for HTML text or a quoted attribute: '&', '<', '>', '"' and '\'' as entities.
[[nodiscard]] std::string html_escape(std::string_view text);

/// How escape_controls treats line structure.
enum class ControlEscape {
  text,  ///< a report or a log message: '\n' and '\t' pass (they only lay the text out)
  line,  ///< one field on one line (a file name in a progress line): '\n' and '\t' are escaped too
};

/// `text` safe to print on a terminal: every C0 control (0x00-0x1f: ESC, CR, BEL, BS, ...) but the
/// layout ones `mode` keeps, DEL (0x7f), and the C1 controls written in UTF-8 (U+0080-U+009F, which
/// some terminals obey as ESC sequences) become "\xNN" per byte, so that text from the network
/// ("\x1b[2J" in a file name) cannot move the cursor, clear the screen or forge a line. Everything
/// else passes unchanged: printable ASCII, backslashes, valid UTF-8, and bytes that are not valid
/// UTF-8 (a terminal shows those as replacement characters).
[[nodiscard]] std::string escape_controls(std::string_view text, ControlEscape mode = ControlEscape::text);

/// An enum's name from its table of (value, name) pairs; "unknown" for a value not listed.
///   constexpr std::pair<Os, std::string_view> kOsNames[] = {{Os::linux_, "linux"}, ...};
///   return util::name_of(kOsNames, os);
template <class Enum, std::size_t N>
constexpr std::string_view name_of(const std::pair<Enum, std::string_view> (&names)[N], Enum value) noexcept {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "unknown";
}
/// A size in bytes as people write it: a number (a fraction with a unit: "1.5G") and an optional
/// unit, case-insensitive: none or "B" (bytes), "K" "M" "G" "T" (powers of 1000, also with
/// "B": "500MB"), "Ki" "Mi" "Gi" "Ti" (powers of 1024, also "KiB" ... "TiB"); spaces around the
/// whole are ignored, none inside; a fraction is rounded down to whole bytes (6 digits read).
/// Errc::invalid_input quoting `text` for anything else (a sign,
/// no digits, an unknown unit, a fraction of a byte, more than 2^64 - 1 bytes).
[[nodiscard]] Expected<std::uint64_t> parse_size(std::string_view text);

}  // namespace wheelfit::util
