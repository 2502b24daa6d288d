// UTF-8 validation, and the one-token and one-line tests of text from the network
// (util/safe_text.hpp).
#include "wheelfit/util/safe_text.hpp"

#include <cstdint>
#include <cstdio>

namespace wheelfit::util {
// Named, not anonymous: the unity build joins this file with others of util.
namespace safe_text_impl {

/// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629, table 3-7 of Unicode), or 0.
std::size_t sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  if (c < 0x80) return 1;
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return b(k) >= lo && b(k) <= hi; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;  // no overlong, no surrogate
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;  // no overlong, nothing past U+10FFFF
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/// The code point of the well-formed sequence of `n` bytes at s[i].
char32_t code_point(std::string_view s, std::size_t i, std::size_t n) noexcept {
  const auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
  if (n == 1) return b(0);
  char32_t cp = b(0) & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(k) & 0x3f);
  return cp;
}

std::string at(const char* what, char32_t value, bool as_code_point, std::size_t offset) {
  char buf[96];
  std::snprintf(buf, sizeof buf, as_code_point ? "%s (U+%04X at byte %zu)" : "%s (0x%02x at byte %zu)", what,
                static_cast<unsigned>(value), offset);
  return buf;
}

constexpr bool is_line_break(char32_t c) noexcept {
  return c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e) || c == 0x85 || c == 0x2028 ||
         c == 0x2029;
}

/// A control character that is not a line break's: C0 but '\t', DEL, C1.
constexpr bool is_control(char32_t c) noexcept { return (c < 0x20 && c != '\t') || (c >= 0x7f && c <= 0x9f); }

}  // namespace safe_text_impl

std::size_t utf8_valid_prefix(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    // ASCII a word at a time: the common case.
    while (i + 8 <= s.size()) {
      std::uint64_t w = 0;
      for (std::size_t k = 0; k < 8; ++k) w |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[i + k])) << (8 * k);
      if ((w & 0x8080808080808080ULL) != 0) break;
      i += 8;
    }
    if (i >= s.size()) break;
    const std::size_t n = safe_text_impl::sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return s.size();
}

bool is_utf8(std::string_view s) noexcept { return utf8_valid_prefix(s) == s.size(); }

std::string utf8_or_replaced(std::string_view s, std::string_view replacement) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const std::size_t good = utf8_valid_prefix(s);
    out.append(s.substr(0, good));
    if (good == s.size()) break;
    out.append(replacement);
    s.remove_prefix(good + 1);
  }
  return out;
}

std::string url_token_problem(std::string_view url) {
  for (std::size_t i = 0; i < url.size(); ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (c > 0x20 && c < 0x7f) continue;
    if (c == ' ') return safe_text_impl::at("holds whitespace", c, false, i);
    if (c < 0x20 || c == 0x7f) return safe_text_impl::at("holds a control character", c, false, i);
    return safe_text_impl::at("holds a byte that is not ASCII and not percent-encoded", c, false, i);
  }
  return {};
}

std::string one_line_problem(std::string_view text) {
  if (const std::size_t good = utf8_valid_prefix(text); good != text.size()) {
    return safe_text_impl::at("is not UTF-8", static_cast<unsigned char>(text[good]), false, good);
  }
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = safe_text_impl::sequence_length(text, i);
    const char32_t c = safe_text_impl::code_point(text, i, n);
    if (safe_text_impl::is_line_break(c)) return safe_text_impl::at("holds a line break", c, true, i);
    if (safe_text_impl::is_control(c)) return safe_text_impl::at("holds a control character", c, true, i);
    i += n;
  }
  return {};
}

std::string one_line(std::string_view text, std::string_view replacement) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = safe_text_impl::sequence_length(text, i);
    const char32_t c = n == 0 ? 0 : safe_text_impl::code_point(text, i, n);
    if (n == 0 || safe_text_impl::is_line_break(c) || safe_text_impl::is_control(c)) out.append(replacement);
    else out.append(text.substr(i, n));
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace wheelfit::util
