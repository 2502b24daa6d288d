// The small helpers the page parsers share (page_text.hpp), and resolve_url / percent_decode
// (links.hpp), which model/url.hpp implements.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "page_text.hpp"
#include "wheelfit/index/links.hpp"

#include "wheelfit/model/name.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/util/safe_text.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::index {
namespace detail {

std::string_view trim_ascii(std::string_view s) noexcept {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && is_ascii_space(s[b])) ++b;
  while (e > b && is_ascii_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool is_sha256_hex(std::string_view s) noexcept {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!is_hex_digit(c)) return false;
  }
  return true;
}

FragmentHash parse_hash_fragment(std::string_view fragment) {
  FragmentHash result;
  const std::size_t eq = fragment.find('=');
  if (eq == std::string_view::npos) return result;
  if (!util::iequals(fragment.substr(0, eq), "sha256")) return result;  // md5=, sha1=, ...: no sha256
  const std::string_view value = fragment.substr(eq + 1);
  if (is_sha256_hex(value)) {
    result.sha256 = util::ascii_lower(value);
  } else {
    result.bad_sha256 = true;
  }
  return result;
}

void append_quoted(std::string& out, std::string_view text) {
  constexpr std::size_t kMax = 160;
  // Redacted before the cut: a password cut in half would no longer be recognised as one.
  const std::string safe = util::redact(text);
  const std::string_view s = safe;
  const std::string_view shown = s.substr(0, kMax);
  out.reserve(out.size() + shown.size() + 5);
  out += '\'';
  // One line of UTF-8 (a message is JSON text too: warnings in resolve --json): control
  // characters (a tab too), line breaks (U+2028 too) and bytes that are not UTF-8, a page's or a
  // sequence the cut split, become '?'.
  std::string line = util::one_line(shown, "?");
  std::replace(line.begin(), line.end(), '\t', '?');
  out += line;
  if (s.size() > kMax) out += "...";
  out += '\'';
}

std::string quote_for_message(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

bool unsafe_filename(std::string_view name) noexcept {
  return any_byte(
      name,
      [](std::uint64_t w) { return below_bits(w, 0x20) | byte_bits(w, '/') | byte_bits(w, '\\') | byte_bits(w, 0x7f); },
      [](unsigned char c) { return c < 0x20 || c == '/' || c == '\\' || c == 0x7f; });
}

std::string_view filename_problem(std::string_view name) noexcept {
  if (unsafe_filename(name)) return "holds a path separator or a control character";
  if (!util::is_utf8(name)) return "is not UTF-8";
  return {};
}

void PageNotes::flush(Page& page, std::string_view page_url) const {
  const auto more = [](std::size_t n) { return n > 1 ? " (and " + std::to_string(n - 1) + " more)" : std::string(); };
  if (unsafe_urls != 0) {
    page.warnings.push_back(std::string(page_url) + ": " + std::to_string(unsafe_urls) + (unsafe_urls == 1 ? " link" : " links") +
                            " skipped for a URL that is not one token (control characters, whitespace and non-ASCII "
                            "must be percent-encoded): " + first_unsafe_url + more(unsafe_urls));
  }
  if (not_utf8 != 0) {
    page.warnings.push_back(std::string(page_url) + ": text that is not UTF-8 (anchor text and data-yanked: the bytes "
                            "replaced by U+FFFD; data-requires-python: dropped): " + first_not_utf8 + more(not_utf8));
  }
}

std::string normalize_project_name(std::string_view name) { return model::normalize_name(name); }

}  // namespace detail

std::string resolve_url(std::string_view base, std::string_view href) { return model::url::resolve(base, href); }

std::string percent_decode(std::string_view text) { return model::url::percent_decode(text); }

}  // namespace wheelfit::index
