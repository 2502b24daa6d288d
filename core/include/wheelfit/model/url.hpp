#pragma once
// URLs in one place (RFC 3986, RFC 8089 for file URLs): splitting a reference into its
// components, the authority into userinfo / host / port (IPv6 literals too), resolving a
// reference against a base, percent-encoding and -decoding, the scheme, the origin, and file URLs
// to and from local paths. Every other component asks here (docs/decisions/0039).
//
// Thread safety: pure functions over their arguments, safe from any thread; from_path alone reads
// the process's working directory (for a relative path).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::model::url {

/// The five components of a URI reference (RFC 3986 section 3), as views into its text.
struct Parts {
  std::string_view scheme, authority, path, query, fragment;
  bool has_scheme = false, has_authority = false, has_query = false, has_fragment = false;
};
/// Splits a reference by RFC 3986 appendix B (never fails: every string is some reference). The
/// scheme is a letter, then letters, digits, '+', '-', '.', then ':'.
[[nodiscard]] Parts split(std::string_view reference) noexcept;

/// An authority's parts (RFC 3986 section 3.2), as views into its text.
struct Authority {
  std::string_view userinfo;  ///< before the last '@', still percent-encoded
  std::string_view host;      ///< an IPv6 literal without its brackets; case as written
  std::string_view port;      ///< digits as written ("" when absent or empty)
  bool has_userinfo = false, has_port = false, ipv6 = false;
};
/// Splits an authority. nullopt when its brackets do not make one IPv6 literal (an unclosed '[',
/// text other than ":port" after ']', a ']' or '[' outside one). Host and port are not validated.
[[nodiscard]] std::optional<Authority> split_authority(std::string_view authority) noexcept;

/// The RFC 3986 scheme of `text` (before its first ':'), lower-cased; "" when it has none.
/// "C:/x" has the scheme "c": use url_scheme to tell a URL from a path.
[[nodiscard]] std::string scheme(std::string_view text);
/// The scheme of a URL written with an authority ("https" for "HTTPS://h/", "file" for
/// "file:///x"), lower-cased; "" when `text` does not start with <scheme>"://": a plain path
/// (Windows' "C:/x" and "C:\\x" too).
[[nodiscard]] std::string url_scheme(std::string_view text);
/// Whether `url` starts with "http://" or "https://" (the scheme case-insensitively).
[[nodiscard]] bool is_http(std::string_view url) noexcept;
/// Whether `url` starts with "file://" in lower or upper case (as the file transport reads it).
[[nodiscard]] bool is_file_url(std::string_view url) noexcept;

/// The origin of a URL with an authority (RFC 6454): scheme and host lower-cased, userinfo
/// dropped, an IPv6 host with its brackets, the port as written or the scheme's default ("443"
/// for https, "80" otherwise). nullopt without "://", without a host, or for unbalanced brackets.
struct Origin {
  std::string scheme, host, port;
  bool operator==(const Origin&) const = default;
};
[[nodiscard]] std::optional<Origin> origin(std::string_view url);

/// Where a resolved URL's path lies in the string it was appended to: [begin, end).
struct PathRange {
  std::size_t begin = 0, end = 0;
};
/// resolve() with the base split once (a page resolves every href against the same base):
/// appends the resolved URL to `out`. `base` must view text that outlives the call.
PathRange resolve_into(std::string& out, const Parts& base, std::string_view reference);
/// Resolves `reference` against `base` (RFC 3986 section 5.2, strict), removing dot segments and
/// keeping percent-escapes as they are ("%2B" stays "%2B": never decoded twice).
[[nodiscard]] std::string resolve(std::string_view base, std::string_view reference);
/// The last path segment of a reference: the text after the last '/' of its path (query and
/// fragment excluded, scheme and authority never counted as a segment). "" for a directory URL.
[[nodiscard]] std::string_view last_path_segment(std::string_view reference) noexcept;

/// Decodes %XX escapes once. Invalid escapes are kept literally.
[[nodiscard]] std::string percent_decode(std::string_view text);
/// Which bytes percent_encode keeps as they are.
enum class Component {
  segment,  ///< RFC 3986's unreserved set only: a path segment or a query value ("+" -> "%2B")
  path,     ///< a file path: also '/', '+', '@', ',', '=', ':' (what file URLs have always kept)
};
/// Every byte outside the component's plain set as %XX (upper-case hex).
[[nodiscard]] std::string percent_encode(std::string_view text, Component component);

/// True when `url_or_path` is a file:// URL or a path without a scheme (url_scheme is "").
[[nodiscard]] bool is_local(std::string_view url_or_path);
/// A local path (relative: made absolute against the working directory; UTF-8, on Windows too)
/// as a file:// URL, its path percent-encoded (Component::path); a Windows drive path becomes
/// file:///C:/...; a URL comes back unchanged. `directory`: a trailing '/' is ensured.
[[nodiscard]] std::string from_path(std::string_view url_or_path, bool directory);
/// The local path a file:// URL names (percent-decoded once; on Windows file:///C:/x names C:/x),
/// a plain path as it is. Errc::invalid_input for a host other than "" or "localhost" and for a
/// NUL byte; Errc::unsupported for another scheme. Each message names the URL.
[[nodiscard]] Expected<std::string> to_path(std::string_view url);

}  // namespace wheelfit::model::url
