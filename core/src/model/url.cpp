// URLs in one place (wheelfit/model/url.hpp): RFC 3986 splitting and reference resolution,
// percent-encoding, schemes, origins, and file URLs (RFC 8089).
#include "wheelfit/model/url.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/word_bytes.hpp"

namespace wheelfit::model::url {
namespace {

constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_scheme_char(char c) noexcept {
  return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}
// The length of the scheme `s` starts with, its ':' excluded; 0 when it starts with none.
std::size_t scheme_length(std::string_view s) noexcept {
  if (s.empty() || !is_alpha(s[0])) return 0;
  std::size_t j = 1;
  while (j < s.size() && is_scheme_char(s[j])) ++j;
  return j < s.size() && s[j] == ':' ? j : 0;
}

// Removes the last segment and its preceding '/' from the path being built in out[floor..]
// (RFC 3986 5.2.4 2C/2D). Linear overall: it only scans back over text it then drops.
void pop_segment(std::string& out, std::size_t floor) {
  const std::size_t slash = std::string_view(out).substr(floor).rfind('/');
  out.resize(slash == std::string_view::npos ? floor : floor + slash);
}

// Could `path` hold a "." or ".." segment? (They start the path or follow a '/'.)
// Word at a time: a '.' right after a '/' (string_view::find("/.") would call memchr at every
// '/'). A false positive only costs the exact algorithm.
bool has_dot_segment(std::string_view path) noexcept {
  if (path.empty()) return false;
  if (path.front() == '.') return true;
  std::size_t i = 0;
  std::uint64_t carry = 0;  // the high bit of the last byte, when that byte was '/'
  for (; std::endian::native == std::endian::little && i + 8 <= path.size(); i += 8) {
    const std::uint64_t w = util::word::load_word(path.data() + i);
    const std::uint64_t slashes = util::word::byte_bits(w, '/');
    const std::uint64_t dots = util::word::byte_bits(w, '.');
    if ((((slashes << 8) | carry) & dots) != 0) return true;
    carry = slashes >> 56;  // 0x80 when the word's last byte is a '/' (as byte 0 of the next)
  }
  for (; i < path.size(); ++i) {
    if (path[i] == '.' && i > 0 && path[i - 1] == '/') return true;
  }
  return false;
}

// Appends `in` without its dot segments (RFC 3986 section 5.2.4), in one linear pass: the input
// is consumed from the front by moving a view, never by erasing.
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

// Merge (section 5.2.3): the base path up to its last '/', then the reference's path, without
// dot segments.
void append_merged(std::string& out, const Parts& b, std::string_view ref_path) {
  std::string_view base_dir;
  if (b.has_authority && b.path.empty()) {
    base_dir = "/";
  } else {
    const std::size_t slash = b.path.rfind('/');
    if (slash != std::string_view::npos) base_dir = b.path.substr(0, slash + 1);
  }
  if (!has_dot_segment(base_dir) && !has_dot_segment(ref_path)) {
    out.append(base_dir);  // the common case: nothing to remove, nothing to allocate
    out.append(ref_path);
    return;
  }
  std::string merged;
  merged.reserve(base_dir.size() + ref_path.size());
  merged.append(base_dir);
  merged.append(ref_path);
  append_without_dot_segments(out, merged);
}

void append_authority(std::string& out, const Parts& p) {
  if (!p.has_authority) return;
  out += "//";
  out.append(p.authority);
}

}  // namespace

Parts split(std::string_view s) noexcept {
  // RFC 3986 appendix B, without a regex.
  Parts u;
  std::size_t i = 0;
  if (const std::size_t n = scheme_length(s); n != 0) {
    u.has_scheme = true;
    u.scheme = s.substr(0, n);
    i = n + 1;
  }
  const std::size_t query = s.find('?', i);
  const std::size_t fragment = s.find('#', i);
  const std::size_t path_end = std::min({query, fragment, s.size()});
  if (s.substr(i, 2) == "//") {
    const std::size_t start = i + 2;
    const std::size_t end = std::min(s.find('/', start), path_end);
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

std::optional<Authority> split_authority(std::string_view authority) noexcept {
  Authority a;
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    a.has_userinfo = true;
    a.userinfo = authority.substr(0, at);
    authority.remove_prefix(at + 1);
  }
  std::string_view port_part;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.ipv6 = true;
    a.host = authority.substr(1, close - 1);
    port_part = authority.substr(close + 1);
    if (a.host.find_first_of("[]") != std::string_view::npos) return std::nullopt;
    if (!port_part.empty() && port_part.front() != ':') return std::nullopt;
  } else {
    if (authority.find_first_of("[]") != std::string_view::npos) return std::nullopt;
    const std::size_t colon = authority.find(':');
    a.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_part = authority.substr(colon);
  }
  if (!port_part.empty()) {
    a.has_port = true;
    a.port = port_part.substr(1);
  }
  return a;
}

std::string scheme(std::string_view text) { return util::ascii_lower(text.substr(0, scheme_length(text))); }

std::string url_scheme(std::string_view text) {
  const std::size_t n = scheme_length(text);
  if (n == 0 || text.substr(n, 3) != "://") return {};
  return util::ascii_lower(text.substr(0, n));
}

bool is_http(std::string_view url) noexcept {
  return util::starts_with_ci(url, "http://") || util::starts_with_ci(url, "https://");
}

bool is_file_url(std::string_view url) noexcept { return url.starts_with("file://") || url.starts_with("FILE://"); }

std::optional<Origin> origin(std::string_view url) {
  const std::string s = url_scheme(url);
  if (s.empty()) return std::nullopt;
  std::string_view rest = url.substr(s.size() + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(0, close + 1);
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port = after.substr(1);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return std::nullopt;
  Origin o{s, util::ascii_lower(host), std::string(port)};
  if (port.empty()) o.port = s == "https" ? "443" : "80";
  return o;
}

PathRange resolve_into(std::string& out, const Parts& b, std::string_view href) {
  const Parts r = split(href);
  out.reserve(out.size() + b.scheme.size() + b.authority.size() + b.path.size() + b.query.size() + href.size() + 5);
  PathRange path;
  // Target scheme, authority, path, query (RFC 3986 section 5.2.2, strict parser).
  const Parts& scheme_from = r.has_scheme ? r : b;
  if (scheme_from.has_scheme) {
    out.append(scheme_from.scheme);
    out += ':';
  }
  const Parts* query_from = &r;
  if (r.has_scheme || r.has_authority) {
    append_authority(out, r);
    path.begin = out.size();
    append_without_dot_segments(out, r.path);
  } else {
    append_authority(out, b);
    path.begin = out.size();
    if (r.path.empty()) {
      out.append(b.path);
      if (!r.has_query) query_from = &b;
    } else if (r.path.front() == '/') {
      append_without_dot_segments(out, r.path);
    } else {
      append_merged(out, b, r.path);
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

std::string resolve(std::string_view base, std::string_view reference) {
  std::string out;
  resolve_into(out, split(base), reference);
  return out;
}

std::string_view last_path_segment(std::string_view reference) noexcept {
  const std::string_view path = split(reference).path;
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
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

std::string percent_encode(std::string_view text, Component component) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  static constexpr std::string_view kPathExtra = "/+@,=:";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved || (component == Component::path && kPathExtra.find(ch) != std::string_view::npos)) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool is_local(std::string_view s) { return url_scheme(s).empty() || is_file_url(s); }

std::string from_path(std::string_view s, bool directory) {
  namespace fs = std::filesystem;
  std::string out;
  if (!url_scheme(s).empty()) {
    out = std::string(s);
  } else {
    std::error_code ec;
    const fs::path given = util::path_from_utf8(s);  // UTF-8 (Windows: not the ANSI code page)
    fs::path abs = fs::absolute(given, ec);
    std::string path = (ec ? given : abs).lexically_normal().generic_string();
    if (!s.empty() && s.back() == '/' && (path.empty() || path.back() != '/')) path += '/';
#ifdef _WIN32
    // A drive's path, "C:/Users/x", is the URL file:///C:/Users/x (RFC 8089), never host "C:".
    if (path.size() >= 2 && path[1] == ':') path.insert(0, "/");
#endif
    out = "file://" + percent_encode(path, Component::path);
  }
  if (directory && (out.empty() || out.back() != '/')) out += '/';
  return out;
}

Expected<std::string> to_path(std::string_view url) {
  if (url_scheme(url).empty()) return std::string(url);
  if (!is_file_url(url)) {
    return unexpected(Errc::unsupported, std::string(url) + ": the file transport reads only file:// URLs and paths");
  }
  std::string_view rest = url.substr(7);
  const std::string_view host = rest.substr(0, rest.find('/'));
  if (!host.empty() && host != "localhost") {
    return unexpected(Errc::invalid_input, std::string(url) + ": a file URL with host '" + std::string(host) + "' is not local");
  }
  rest.remove_prefix(host.size());
  if (auto q = rest.find_first_of("?#"); q != std::string_view::npos) rest = rest.substr(0, q);
#ifdef _WIN32
  // file:///C:/Users/x names C:/Users/x.
  if (rest.size() >= 3 && rest[0] == '/' && std::isalpha(static_cast<unsigned char>(rest[1])) && rest[2] == ':') rest.remove_prefix(1);
#endif
  std::string path = percent_decode(rest);
  if (path.find('\0') != std::string::npos) return unexpected(Errc::invalid_input, std::string(url) + ": NUL byte in path");
  return path;
}

}  // namespace wheelfit::model::url
