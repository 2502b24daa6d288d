// URL helpers of wheelfit::index: RFC 3986 reference resolution, percent-decoding, and the small
// helpers the page parsers share (links_detail.hpp).

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "links_detail.hpp"
#include "wheelfit/index/links.hpp"

#include "wheelfit/model/name.hpp"
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

namespace {

using util::ascii::is_alpha;
constexpr bool is_scheme_char(char c) noexcept {
  return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

// Removes the last segment and its preceding '/' from the path being built in out[floor..]
// (RFC 3986 5.2.4 2C/2D). Linear overall: it only scans back over text it then drops.
void pop_segment(std::string& out, std::size_t floor) {
  const std::size_t slash = std::string_view(out).substr(floor).rfind('/');
  out.resize(slash == std::string_view::npos ? floor : floor + slash);
}

// Appends `in` without its dot segments (RFC 3986 section 5.2.4), in one linear pass: the input
// is consumed from the front by moving a view, never by erasing.
// Could `path` hold a "." or ".." segment? (They start the path or follow a '/'.)
// Word at a time: a '.' right after a '/' (string_view::find("/.") would call memchr at every
// '/'). A false positive only costs the exact algorithm.
bool has_dot_segment(std::string_view path) noexcept {
  if (path.empty()) return false;
  if (path.front() == '.') return true;
  std::size_t i = 0;
  std::uint64_t carry = 0;  // the high bit of the last byte, when that byte was '/'
  for (; std::endian::native == std::endian::little && i + 8 <= path.size(); i += 8) {
    const std::uint64_t w = detail::load_word(path.data() + i);
    const std::uint64_t slashes = detail::byte_bits(w, '/');
    const std::uint64_t dots = detail::byte_bits(w, '.');
    if ((((slashes << 8) | carry) & dots) != 0) return true;
    carry = slashes >> 56;  // 0x80 when the word's last byte is a '/' (as byte 0 of the next)
  }
  for (; i < path.size(); ++i) {
    if (path[i] == '.' && i > 0 && path[i - 1] == '/') return true;
  }
  return false;
}

void append_without_dot_segments(std::string& out, std::string_view in) {
  if (!has_dot_segment(in)) {
    out.append(in);  // no dot segment anywhere (the common case)
    return;
  }
  const std::size_t floor = out.size();
  while (!in.empty()) {
    if (in.starts_with("../")) {
      in.remove_prefix(3);
    } else if (in.starts_with("./")) {
      in.remove_prefix(2);
    } else if (in.starts_with("/./")) {
      in.remove_prefix(2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.starts_with("/../")) {
      in.remove_prefix(3);
      pop_segment(out, floor);
    } else if (in == "/..") {
      in = "/";
      pop_segment(out, floor);
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      std::size_t end = in.find('/', in[0] == '/' ? 1 : 0);
      if (end == std::string_view::npos) end = in.size();
      out.append(in.substr(0, end));
      in.remove_prefix(end);
    }
  }
}

}  // namespace

namespace detail {

PathRange resolve_into(std::string& out, const UriParts& b, std::string_view href) {
  const UriParts r = split_uri(href);
  out.reserve(out.size() + b.scheme.size() + b.authority.size() + b.path.size() + b.query.size() + href.size() + 5);
  PathRange path;
  // Target scheme, authority, path, query (RFC 3986 section 5.2.2, strict parser).
  const UriParts& scheme_from = r.has_scheme ? r : b;
  if (scheme_from.has_scheme) {
    out.append(scheme_from.scheme);
    out += ':';
  }
  const UriParts* query_from = &r;
  if (r.has_scheme || r.has_authority) {
    if (r.has_authority) {
      out += "//";
      out.append(r.authority);
    }
    path.begin = out.size();
    append_without_dot_segments(out, r.path);
  } else {
    if (b.has_authority) {
      out += "//";
      out.append(b.authority);
    }
    path.begin = out.size();
    if (r.path.empty()) {
      out.append(b.path);
      if (!r.has_query) query_from = &b;
    } else if (r.path.front() == '/') {
      append_without_dot_segments(out, r.path);
    } else {
      // Merge (section 5.2.3): the base path up to its last '/', then the reference's path.
      std::string_view base_dir;
      if (b.has_authority && b.path.empty()) {
        base_dir = "/";
      } else {
        const std::size_t slash = b.path.rfind('/');
        if (slash != std::string_view::npos) base_dir = b.path.substr(0, slash + 1);
      }
      if (!has_dot_segment(base_dir) && !has_dot_segment(r.path)) {
        out.append(base_dir);  // the common case: nothing to remove, nothing to allocate
        out.append(r.path);
      } else {
        std::string merged;
        merged.reserve(base_dir.size() + r.path.size());
        merged.append(base_dir);
        merged.append(r.path);
        append_without_dot_segments(out, merged);
      }
    }
  }
  path.end = out.size();
  if (query_from->has_query) {
    out += '?';
    out.append(query_from->query);
  }
  if (r.has_fragment) {
    out += '#';
    out.append(r.fragment);
  }
  return path;
}

}  // namespace detail

std::string resolve_url(std::string_view base, std::string_view href) {
  std::string out;
  detail::resolve_into(out, detail::split_uri(base), href);
  return out;
}

std::string percent_decode(std::string_view text) {
  auto hex_value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // Decoding only shrinks: write into a buffer of the input's size, then trim it.
  std::string out(text.size(), '\0');
  char* o = out.data();
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const auto* pct = static_cast<const char*>(std::memchr(p, '%', static_cast<std::size_t>(end - p)));
    const char* stop = pct ? pct : end;
    std::memcpy(o, p, static_cast<std::size_t>(stop - p));
    o += stop - p;
    if (!pct) break;
    const int hi = pct + 2 < end ? hex_value(pct[1]) : -1;
    const int lo = hi >= 0 ? hex_value(pct[2]) : -1;
    if (lo >= 0) {
      *o++ = static_cast<char>(hi * 16 + lo);
      p = pct + 3;
    } else {
      *o++ = '%';  // an invalid escape stays as written
      p = pct + 1;
    }
  }
  out.resize(static_cast<std::size_t>(o - out.data()));
  return out;
}

namespace detail {
// RFC 3986 appendix B, without a regex; memchr-based (string_view::find_first_of would call
// memchr once per character).
UriParts split_uri(std::string_view s) noexcept {
  UriParts u;
  std::size_t i = 0;
  if (!s.empty() && is_alpha(s[0])) {
    std::size_t j = 1;
    while (j < s.size() && is_scheme_char(s[j])) ++j;
    if (j < s.size() && s[j] == ':') {
      u.has_scheme = true;
      u.scheme = s.substr(0, j);
      i = j + 1;
    }
  }
  const std::size_t query = s.find('?', i);
  const std::size_t fragment = s.find('#', i);
  const std::size_t path_end = std::min({query, fragment, s.size()});
  if (s.substr(i, 2) == "//") {
    const std::size_t start = i + 2;
    const std::size_t slash = s.find('/', start);
    const std::size_t end = std::min(slash, path_end);
    u.has_authority = true;
    u.authority = s.substr(start, end - start);
    i = end;
  }
  u.path = s.substr(i, path_end - i);
  if (query < fragment && query != std::string_view::npos) {
    u.has_query = true;
    u.query = s.substr(query + 1, std::min(fragment, s.size()) - query - 1);
  }
  if (fragment != std::string_view::npos) {
    u.has_fragment = true;
    u.fragment = s.substr(fragment + 1);
  }
  return u;
}

std::string_view last_path_segment(std::string_view url) noexcept {
  const std::string_view path = split_uri(url).path;
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}
}  // namespace detail

}  // namespace wheelfit::index
