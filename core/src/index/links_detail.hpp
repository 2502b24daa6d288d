#pragma once
// Helpers shared by the index page parsers (links.cpp, links_html.cpp, links_json.cpp,
// packages_json.cpp). Internal to wheelfit::index; not installed.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/index/links.hpp"

namespace wheelfit::index::detail {

constexpr bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}
constexpr char to_lower_ascii(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr bool is_hex_digit(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
/// The five components of a URI reference (RFC 3986 section 3), as views into its text.
struct UriParts {
  std::string_view scheme, authority, path, query, fragment;
  bool has_scheme = false, has_authority = false, has_query = false, has_fragment = false;
};
UriParts split_uri(std::string_view s) noexcept;

/// Where a resolved URL's path lies in the string it was appended to: [begin, end).
struct PathRange {
  std::size_t begin = 0, end = 0;
};
/// resolve_url with the base split once (a page resolves every href against the same base):
/// appends the resolved URL to `out`. `base` must view text that outlives the call.
PathRange resolve_into(std::string& out, const UriParts& base, std::string_view href);

// Word-at-a-time byte tests (exact as booleans; "bit twiddling hacks", hasless/haszero).
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
constexpr std::uint64_t zero_byte_bits(std::uint64_t v) noexcept { return (v - kOnes) & ~v & kHighs; }
constexpr std::uint64_t byte_bits(std::uint64_t v, unsigned char b) noexcept { return zero_byte_bits(v ^ (kOnes * b)); }
/// Nonzero when some byte of v is below n (n <= 128).
constexpr std::uint64_t below_bits(std::uint64_t v, unsigned char n) noexcept { return (v - kOnes * n) & ~v & kHighs; }
inline std::uint64_t load_word(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
/// Does `s` hold a byte for which word_test (on 8 bytes) / byte_test (on one) says yes?
template <class WordTest, class ByteTest>
bool any_byte(std::string_view s, WordTest word_test, ByteTest byte_test) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    if (word_test(load_word(s.data() + i)) != 0) return true;
  }
  for (; i < s.size(); ++i) {
    if (byte_test(static_cast<unsigned char>(s[i]))) return true;
  }
  return false;
}

/// Trims ASCII whitespace (HTML's definition: space, tab, LF, CR, FF) from both ends.
std::string_view trim_ascii(std::string_view s) noexcept;

/// Exactly 64 hex digits (either case)?
bool is_sha256_hex(std::string_view s) noexcept;

/// The last path segment of a URL reference: the text after the last '/' of its path (query and
/// fragment excluded, scheme and authority never counted as a segment). "" for a directory URL.
std::string_view last_path_segment(std::string_view url) noexcept;

/// A file name holding '/', '\\' or a control character (decoded from "%2F", "%00", ...) could
/// escape a download folder: links to such names are skipped.
bool unsafe_filename(std::string_view name) noexcept;
/// Why a link to the file `name` (its URL's decoded last segment) is skipped: "holds a path
/// separator or a control character" (unsafe_filename), "is not UTF-8" (decoded from "%FF": it
/// would make the JSON and TOML that name it unreadable); "" when it is not.
std::string_view filename_problem(std::string_view name) noexcept;

/// What a page reader refused or repaired, told once per kind in a warning naming the page:
/// links skipped for a URL that is not one token (util::url_token_problem), and text that was not
/// UTF-8 (an anchor's text or data-yanked, its bytes replaced by U+FFFD; data-requires-python,
/// dropped).
struct PageNotes {
  std::size_t unsafe_urls = 0, not_utf8 = 0;
  std::string first_unsafe_url, first_not_utf8;

  void unsafe_url(const std::string& reason) {
    if (unsafe_urls++ == 0) first_unsafe_url = reason;
  }
  void text_not_utf8(std::string what) {
    if (not_utf8++ == 0) first_not_utf8 = std::move(what);
  }
  /// Adds the warnings (none when nothing was noted) to page.warnings.
  void flush(Page& page, std::string_view page_url) const;
};

/// What a "#name=value" fragment says about the file's sha256 (PEP 503).
struct FragmentHash {
  std::optional<std::string> sha256;  ///< lower-case, when the fragment is a valid "sha256=<64 hex>"
  bool bad_sha256 = false;            ///< the fragment is "sha256=..." but not 64 hex digits
};
FragmentHash parse_hash_fragment(std::string_view fragment);

/// Shortens text quoted in a message (hrefs, anchor text) so that one bad anchor cannot make a
/// message arbitrarily long; secrets redacted first (util::redact).
std::string quote_for_message(std::string_view s);
void append_quoted(std::string& out, std::string_view s);

/// PEP 503 normalisation: lower-case, each run of '-', '_', '.' becomes one '-'.
std::string normalize_project_name(std::string_view name);

}  // namespace wheelfit::index::detail
