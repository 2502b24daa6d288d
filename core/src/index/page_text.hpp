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
#include "wheelfit/model/url.hpp"
#include "wheelfit/util/word_bytes.hpp"

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
/// The URL helpers of model/url.hpp, under the names the page parsers use.
using UriParts = model::url::Parts;
using model::url::last_path_segment, model::url::PathRange, model::url::resolve_into;
inline UriParts split_uri(std::string_view s) noexcept { return model::url::split(s); }

// Word-at-a-time byte tests: load_word, byte_bits, below_bits, any_byte, ... (util/word_bytes.hpp).
using namespace util::word;

/// Trims ASCII whitespace (HTML's definition: space, tab, LF, CR, FF) from both ends.
std::string_view trim_ascii(std::string_view s) noexcept;

/// Exactly 64 hex digits (either case)?
bool is_sha256_hex(std::string_view s) noexcept;

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
