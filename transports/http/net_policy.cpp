// The pure policy of the network layer: URL parsing, curl's proxy rules, retry decisions and
// secret redaction. No sockets and no Asio here, so the tables in test_net_policy.cpp cover it
// quickly and this file compiles in a moment.

#include "wheelfit/transports/net_policy.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "wheelfit/model/url.hpp"
#include "wheelfit/transports/negotiate.hpp"
#include "wheelfit/transports/system_proxy.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/utc_time.hpp"

namespace wheelfit::transports {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMaxUrl = 8 * 1024;
constexpr std::size_t kShownUrl = 160;

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

using util::iequals;

bool iends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

// HTTP's optional white space (RFC 9110 5.6.3): space and tab only, unlike util::trim.
std::string_view trim_ows(std::string_view s) noexcept {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) noexcept { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

// The URL as an error message may show it: secrets redacted first (a secret cut in half would no
// longer be recognised), control bytes made visible, long URLs cut (the message of an 8 MiB URL
// must not be 8 MiB).
std::string shown_url(std::string_view url) {
  const std::string safe = util::redact(url);
  std::string out = "'" + safe.substr(0, kShownUrl);
  for (std::size_t i = 1; i < out.size(); ++i) {
    const auto u = static_cast<unsigned char>(out[i]);
    if (u < 0x20 || u == 0x7f) out[i] = '?';
  }
  out += safe.size() > kShownUrl ? "...'" : "'";
  return out;
}

Unexpected bad_url(std::string_view url, const std::string& problem) {
  return unexpected(Errc::invalid_input, "URL " + shown_url(url) + ": " + problem);
}

std::string hex_byte(unsigned char u) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%02x", u);
  return buf.data();
}

// The first byte no URL we send may hold: controls, space, DEL, backslash (which some servers
// and WHATWG parsers read as '/', so a path could mean two things).
std::optional<std::string> forbidden_byte(std::string_view url) {
  for (std::size_t i = 0; i < url.size(); ++i) {
    const auto u = static_cast<unsigned char>(url[i]);
    if (u == 0) return "NUL byte at offset " + std::to_string(i);
    if (u < 0x20 || u == 0x7f) return "control character " + hex_byte(u) + " at offset " + std::to_string(i);
    if (u == ' ') return "space at offset " + std::to_string(i);
    if (u == '\\') return "backslash at offset " + std::to_string(i);
  }
  return std::nullopt;
}

bool is_ipv4_literal(std::string_view s) noexcept {
  int parts = 0;
  while (true) {
    std::size_t n = 0;
    while (n < s.size() && is_digit(s[n])) ++n;
    if (n == 0 || n > 3) return false;
    int value = 0;
    std::from_chars(s.data(), s.data() + n, value);
    if (value > 255) return false;
    ++parts;
    s.remove_prefix(n);
    if (s.empty()) return parts == 4;
    if (s.front() != '.' || parts == 4) return false;
    s.remove_prefix(1);
  }
}

// RFC 4291 text form into 16 bytes; nullopt when it is not one. (inet_pton would do, but this
// file stays free of system headers and so behaves the same everywhere.)
std::optional<std::array<std::uint8_t, 16>> parse_ipv6(std::string_view s) {
  std::array<std::uint16_t, 8> groups{};
  int count = 0;
  int gap = -1;  // the group index where "::" stands
  if (s.substr(0, 2) == "::") {
    gap = 0;
    s.remove_prefix(2);
  }
  while (!s.empty()) {
    if (count == 8) return std::nullopt;
    std::size_t n = 0;
    while (n < s.size() && n < 5 && is_hex(s[n])) ++n;
    if (n < s.size() && s[n] == '.') {  // an embedded IPv4 tail ("::ffff:1.2.3.4")
      if (count > 6 || !is_ipv4_literal(s)) return std::nullopt;
      std::array<int, 4> q{};
      std::string_view rest = s;
      for (int& v : q) {
        const std::size_t dot = rest.find('.');
        std::from_chars(rest.data(), rest.data() + std::min(dot, rest.size()), v);
        rest.remove_prefix(dot == std::string_view::npos ? rest.size() : dot + 1);
      }
      groups[static_cast<std::size_t>(count++)] = static_cast<std::uint16_t>(q[0] << 8 | q[1]);
      groups[static_cast<std::size_t>(count++)] = static_cast<std::uint16_t>(q[2] << 8 | q[3]);
      s = {};
      break;
    }
    if (n == 0 || n > 4) return std::nullopt;
    unsigned value = 0;
    std::from_chars(s.data(), s.data() + n, value, 16);
    groups[static_cast<std::size_t>(count++)] = static_cast<std::uint16_t>(value);
    s.remove_prefix(n);
    if (s.empty()) break;
    if (s.substr(0, 2) == "::") {
      if (gap >= 0) return std::nullopt;
      gap = count;
      s.remove_prefix(2);
    } else if (s.front() == ':' && s.size() > 1) {
      s.remove_prefix(1);
    } else {
      return std::nullopt;
    }
  }
  if (gap < 0 ? count != 8 : count > 7) return std::nullopt;
  std::array<std::uint16_t, 8> full{};
  const int tail = gap < 0 ? 0 : count - gap;
  for (int i = 0; i < count - tail; ++i) full[static_cast<std::size_t>(i)] = groups[static_cast<std::size_t>(i)];
  for (int i = 0; i < tail; ++i) full[static_cast<std::size_t>(8 - tail + i)] = groups[static_cast<std::size_t>(gap + i)];
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < 8; ++i) {
    bytes[2 * i] = static_cast<std::uint8_t>(full[i] >> 8);
    bytes[2 * i + 1] = static_cast<std::uint8_t>(full[i] & 0xff);
  }
  return bytes;
}

bool valid_reg_name(std::string_view host) noexcept {
  return std::all_of(host.begin(), host.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
  });
}

std::uint16_t default_port(std::string_view scheme) noexcept { return scheme == "https" ? 443 : 80; }

// Splits "host[:port]" or "[v6][:port]" into url.host / url.port.
Expected<void> parse_host_port(std::string_view url, std::string_view hostport, Url& out) {
  std::string_view port;
  if (!hostport.empty() && hostport.front() == '[') {
    const std::size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad_url(url, "unbalanced '[' in the host");
    const std::string_view literal = hostport.substr(1, close - 1);
    if (!parse_ipv6(literal)) return bad_url(url, "'" + std::string(literal) + "' is not an IPv6 address");
    out.host = util::ascii_lower(literal);
    out.ipv6 = true;
    const std::string_view rest = hostport.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return bad_url(url, "unexpected text after ']' in the host");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    if (hostport.find_first_of("[]") != std::string_view::npos) return bad_url(url, "unbalanced ']' in the host");
    const std::size_t colon = hostport.find(':');
    const std::string_view host = hostport.substr(0, colon);
    if (host.empty()) return bad_url(url, "no host");
    if (!valid_reg_name(host)) return bad_url(url, "invalid character in the host '" + std::string(host) + "'");
    out.host = util::ascii_lower(host);
    if (colon != std::string_view::npos) port = hostport.substr(colon + 1);
  }
  if (out.host.empty()) return bad_url(url, "no host");
  out.port = default_port(out.scheme);
  if (port.empty()) return {};  // "host:" means the default port (RFC 3986 section 6.2.3)
  unsigned value = 0;
  if (!all_digits(port) || port.size() > 5) return bad_url(url, "bad port '" + std::string(port) + "'");
  std::from_chars(port.data(), port.data() + port.size(), value);
  if (value == 0 || value > 65535) return bad_url(url, "port " + std::string(port) + " is out of range 1-65535");
  out.port = static_cast<std::uint16_t>(value);
  return {};
}


}  // namespace

// ---------------------------------------------------------------------------------------------
// Url

bool Url::is_ip_literal() const { return ipv6 || is_ipv4_literal(host); }

std::string Url::host_port() const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string Url::origin() const {
  std::string out = scheme + "://" + (ipv6 ? "[" + host + "]" : host);
  if (port != default_port(scheme)) out += ":" + std::to_string(port);
  return out;
}

std::string Url::str() const { return origin() + target; }

Expected<Url> parse_url(std::string_view url) {
  if (url.size() > kMaxUrl) {
    return bad_url(url, "longer than " + std::to_string(kMaxUrl) + " bytes (" + std::to_string(url.size()) + ")");
  }
  if (auto problem = forbidden_byte(url)) return bad_url(url, *problem);
  Url out;
  out.scheme = model::url::scheme(url);
  if (out.scheme.empty()) return bad_url(url, "not an absolute URL (no scheme)");
  if (out.scheme != "http" && out.scheme != "https") {
    return unexpected(Errc::unsupported, "URL " + shown_url(url) + ": scheme '" + out.scheme +
                                             "' is not supported (http and https are)");
  }
  std::string_view rest = url.substr(out.scheme.size() + 1);
  if (rest.substr(0, 2) != "//") return bad_url(url, "no host (expected '//' after the scheme)");
  rest.remove_prefix(2);
  const std::size_t authority_end = std::min(rest.find_first_of("/?#"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  rest.remove_prefix(authority_end);
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    // RFC 3986 userinfo: unreserved, %HH, sub-delims and ':'; anything else is refused (not
    // quoted: it is part of a secret), so what redaction finds is what a request would send.
    const std::string_view raw = authority.substr(0, at);
    const bool clean = std::all_of(raw.begin(), raw.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("-._~%!$&'()*+,;=:").find(c) != std::string_view::npos;
    });
    if (!clean) return bad_url(url, "the userinfo holds a character that must be percent-encoded");
    out.userinfo = model::url::percent_decode(raw);
    authority.remove_prefix(at + 1);
  }
  if (auto ok = parse_host_port(url, authority, out); !ok) return ok.error();
  rest = rest.substr(0, rest.find('#'));
  out.target = rest.empty() || rest.front() != '/' ? "/" + std::string(rest) : std::string(rest);
  return out;
}

Expected<Url> resolve_location(const Url& base, std::string_view location) {
  location = trim_ows(location);
  if (location.empty()) return unexpected(Errc::invalid_input, "redirect from " + shown_url(base.str()) + ": empty Location");
  if (auto problem = forbidden_byte(location)) {
    return unexpected(Errc::invalid_input, "redirect from " + shown_url(base.str()) + ": Location " +
                                               shown_url(location) + ": " + *problem);
  }
  auto resolved = parse_url(model::url::resolve(base.str(), location));
  if (!resolved) return resolved;
  // A reference without an authority stays on the same server and keeps its credentials
  // (RFC 3986 section 5.2.2); one naming a server carries its own.
  const bool names_authority = !model::url::scheme(location).empty() || location.substr(0, 2) == "//";
  if (!names_authority) resolved->userinfo = base.userinfo;
  return resolved;
}

// ---------------------------------------------------------------------------------------------
// Proxies

Expected<std::optional<Url>> proxy_for(const ProxyConfig& config, const Url& target) {
  if (no_proxy_matches(config.no_proxy, target.ipv6 ? "[" + target.host + "]" : target.host)) {
    return std::optional<Url>();
  }
  std::string_view spec = trim_ows(target.scheme == "https" ? config.https_proxy : config.http_proxy);
  if (spec.empty()) spec = trim_ows(config.all_proxy);
  std::string from_system;  // no variable decides: the system settings (Windows; system_proxy.hpp)
  if (spec.empty() && config.system && !system_bypass_matches(config.system->bypass, target.host)) {
    from_system = system_proxy_for(config.system->proxy, target.scheme);
    spec = trim_ows(from_system);
  }
  if (spec.empty()) return std::optional<Url>();
  const std::string scheme = spec.find("://") == std::string_view::npos ? std::string() : model::url::scheme(spec);
  if (scheme.rfind("socks", 0) == 0 || scheme == "https") {
    // A TLS connection to the proxy itself, or SOCKS, is more than this transport speaks.
    const std::string origin = from_system.empty() ? "" : " (from the system proxy settings)";
    return unexpected(Errc::unsupported, "proxy " + shown_url(spec) + origin + ": '" + scheme + "://' proxies are not supported");
  }
  auto proxy = parse_url(scheme.empty() ? "http://" + std::string(spec) : std::string(spec));
  if (!proxy) return proxy.error().with_context(from_system.empty() ? "proxy" : "the system proxy setting");
  return std::optional<Url>(std::move(proxy).value());
}

namespace {

// An address for no_proxy: 4 bytes (IPv4) or 16 (IPv6), brackets allowed around IPv6.
std::optional<std::vector<std::uint8_t>> ip_bytes(std::string_view s) {
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  if (is_ipv4_literal(s)) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i < 4; ++i) {
      const std::size_t dot = s.find('.');
      unsigned v = 0;
      std::from_chars(s.data(), s.data() + std::min(dot, s.size()), v);
      out.push_back(static_cast<std::uint8_t>(v));
      s.remove_prefix(dot == std::string_view::npos ? s.size() : dot + 1);
    }
    return out;
  }
  if (auto v6 = parse_ipv6(s)) return std::vector<std::uint8_t>(v6->begin(), v6->end());
  return std::nullopt;
}

bool prefix_equal(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, unsigned bits) {
  if (a.size() != b.size() || bits > a.size() * 8) return false;
  const std::size_t whole = bits / 8;
  if (!std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(whole), b.begin())) return false;
  if (bits % 8 == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - bits % 8));
  return (a[whole] & mask) == (b[whole] & mask);
}

bool entry_matches_ip(std::string_view entry, const std::vector<std::uint8_t>& host) {
  const std::size_t slash = entry.find('/');
  std::string_view address = entry.substr(0, slash);
  if (address.size() > 2 && address.front() == '[' && address.find("]:") != std::string_view::npos) {
    address = address.substr(0, address.find("]:") + 1);  // "[::1]:8080": the port is not compared
  } else if (std::count(address.begin(), address.end(), ':') == 1) {
    address = address.substr(0, address.find(':'));  // "10.0.0.1:8080"
  }
  const auto pattern = ip_bytes(address);
  if (!pattern) return false;
  unsigned bits = static_cast<unsigned>(pattern->size() * 8);
  if (slash != std::string_view::npos) {
    const std::string_view width = entry.substr(slash + 1);
    if (!all_digits(width) || width.size() > 3) return false;
    std::from_chars(width.data(), width.data() + width.size(), bits);
  }
  return prefix_equal(*pattern, host, bits);
}

bool entry_matches_name(std::string_view entry, std::string_view host) {
  if (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
  if (const std::size_t colon = entry.find(':'); colon != std::string_view::npos) entry = entry.substr(0, colon);
  if (!entry.empty() && entry.back() == '.') entry.remove_suffix(1);
  if (entry.empty()) return false;
  if (iequals(entry, host)) return true;
  return host.size() > entry.size() && iends_with(host, entry) && host[host.size() - entry.size() - 1] == '.';
}

}  // namespace

bool no_proxy_matches(std::string_view no_proxy, std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  const auto host_ip = ip_bytes(host);
  while (!no_proxy.empty()) {
    const std::size_t comma = std::min(no_proxy.find(','), no_proxy.size());
    const std::string_view entry = trim_ows(no_proxy.substr(0, comma));
    no_proxy.remove_prefix(std::min(comma + 1, no_proxy.size()));
    if (entry == "*") return true;
    if (entry.empty()) continue;
    if (host_ip ? entry_matches_ip(entry, *host_ip) : entry_matches_name(entry, host)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Retries

bool SpeedFloor::add(std::uint64_t bytes, std::chrono::steady_clock::time_point now) {
  if (limit_ == 0 || time_.count() <= 0) return true;
  if (!started_) {  // the first read opens the first window
    started_ = true;
    window_start_ = now;
    window_bytes_ = bytes;
    return true;
  }
  window_bytes_ += bytes;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - window_start_);
  if (elapsed < time_) return true;
  // The average over the window as it ran (a read may close it late); doubles: no overflow.
  if (static_cast<double>(window_bytes_) * 1000.0 < static_cast<double>(limit_) * static_cast<double>(elapsed.count())) {
    short_elapsed_ = elapsed;
    return false;
  }
  window_start_ = now;
  window_bytes_ = 0;
  return true;
}

std::string SpeedFloor::shortfall() const {
  return std::to_string(window_bytes_) + (window_bytes_ == 1 ? " byte" : " bytes") + " in " +
         std::to_string(short_elapsed_.count()) + " ms, under the floor of " + std::to_string(limit_) +
         " bytes/s over " + std::to_string(time_.count()) + " ms";
}

namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                                       "Friday", "Saturday", "Sunday"};

template <std::size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

std::optional<unsigned> month_of(std::string_view s) {
  const auto it = std::find(kMonths.begin(), kMonths.end(), s);
  if (it == kMonths.end()) return std::nullopt;
  return static_cast<unsigned>(it - kMonths.begin()) + 1;
}

std::optional<int> number(std::string_view s, std::size_t digits) {
  if (s.size() != digits || !all_digits(s)) return std::nullopt;
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// "08:49:37" -> seconds of the day.
std::optional<int> time_of_day(std::string_view s) {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') return std::nullopt;
  const auto h = number(s.substr(0, 2), 2);
  const auto m = number(s.substr(3, 2), 2);
  const auto sec = number(s.substr(6, 2), 2);
  if (!h || !m || !sec || *h > 23 || *m > 59 || *sec > 60) return std::nullopt;
  return *h * 3600 + *m * 60 + *sec;
}

std::optional<std::chrono::sys_seconds> make_time(int year, unsigned month, int day, int seconds) {
  const std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(month),
                                        std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days(ymd) + std::chrono::seconds(seconds);
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  while (!(s = trim_ows(s)).empty()) {
    const std::size_t end = std::min(s.find(' '), s.size());
    out.push_back(s.substr(0, end));
    s.remove_prefix(end);
  }
  return out;
}

// The three date forms of RFC 9110 section 5.6.7.
std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view value, std::chrono::system_clock::time_point now) {
  const auto w = words(value);
  if (w.size() == 6 && w[0].size() == 4 && w[0].back() == ',' && one_of(w[0].substr(0, 3), kDays) && w[5] == "GMT") {
    // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
    const auto day = number(w[1], 2);
    const auto month = month_of(w[2]);
    const auto year = number(w[3], 4);
    const auto tod = time_of_day(w[4]);
    if (!day || !month || !year || !tod) return std::nullopt;
    return make_time(*year, *month, *day, *tod);
  }
  if (w.size() == 4 && w[0].size() > 1 && w[0].back() == ',' && one_of(w[0].substr(0, w[0].size() - 1), kLongDays) &&
      w[3] == "GMT") {
    // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"; a two-digit year more than 50 years ahead is
    // in the past century (RFC 9110).
    const std::string_view date = w[1];
    if (date.size() != 9 || date[2] != '-' || date[6] != '-') return std::nullopt;
    const auto day = number(date.substr(0, 2), 2);
    const auto month = month_of(date.substr(3, 3));
    const auto yy = number(date.substr(7, 2), 2);
    const auto tod = time_of_day(w[2]);
    if (!day || !month || !yy || !tod) return std::nullopt;
    const int this_year = static_cast<int>(std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(now)).year());
    int year = this_year / 100 * 100 + *yy;
    if (year > this_year + 50) year -= 100;
    return make_time(year, *month, *day, *tod);
  }
  if (w.size() == 5 && one_of(w[0], kDays)) {
    // asctime: "Sun Nov  6 08:49:37 1994"
    const auto month = month_of(w[1]);
    const auto day = w[2].size() == 1 ? number(w[2], 1) : number(w[2], 2);
    const auto tod = time_of_day(w[3]);
    const auto year = number(w[4], 4);
    if (!day || !month || !year || !tod) return std::nullopt;
    return make_time(*year, *month, *day, *tod);
  }
  return std::nullopt;
}

std::chrono::seconds until(std::chrono::sys_seconds when, std::chrono::system_clock::time_point now) {
  return std::max(std::chrono::ceil<std::chrono::seconds>(when - now), std::chrono::seconds(0));
}

std::string utc_text(std::chrono::system_clock::time_point when) { return util::format_utc(when, "%Y-%m-%dT%H:%M:%SZ"); }

std::string what_failed(const Error& error, int status) {
  if (net::is(error, net::NetErrc::http_status) || net::is(error, net::NetErrc::rate_limited)) {
    if (status > 0) return "HTTP " + std::to_string(status);
  }
  return error.code.message();
}

// A GitHub-style exhausted rate limit: 403 or 429 with x-ratelimit-remaining: 0.
bool rate_limit_exhausted(int status, const net::Headers& headers) {
  const auto remaining = net::find_header(headers, "x-ratelimit-remaining");
  return (status == 403 || status == 429) && remaining && trim_ows(*remaining) == "0";
}

struct ServerWait {
  std::chrono::seconds wait;
  std::string what;  ///< "Retry-After 5 s", "x-ratelimit-reset in 120 s (2025-...Z)"
};

// The longest wait the response asks for, if any; a malformed header asks for nothing.
std::optional<ServerWait> server_wait(int status, const net::Headers& headers,
                                      std::chrono::system_clock::time_point now) {
  std::optional<ServerWait> out;
  if (const auto value = net::find_header(headers, "retry-after")) {
    if (const auto wait = parse_retry_after(*value, now)) out = ServerWait{*wait, "Retry-After " + std::to_string(wait->count()) + " s"};
  }
  if (rate_limit_exhausted(status, headers)) {
    const auto reset = net::find_header(headers, "x-ratelimit-reset");
    const std::string_view text = reset ? trim_ows(*reset) : std::string_view();
    std::int64_t epoch = 0;
    if (all_digits(text) && text.size() <= 12) {
      std::from_chars(text.data(), text.data() + text.size(), epoch);
      const std::chrono::sys_seconds when{std::chrono::seconds(epoch)};
      const auto wait = until(when, now);
      if (!out || wait > out->wait) {
        out = ServerWait{wait, "x-ratelimit-reset in " + std::to_string(wait.count()) + " s (" + utc_text(when) + ")"};
      }
    }
  }
  return out;
}

}  // namespace

RetryDecision decide_retry(const RetryPolicy& policy, int attempt, const Error& error, int status,
                           const net::Headers& headers, std::chrono::system_clock::time_point now,
                           double random01) {
  RetryDecision d;
  const std::string what = what_failed(error, status);
  // An exhausted rate limit is a 429 in disguise: is_transient() rejects a bare 403, but this one
  // clears at the reset time.
  const bool rate_limited = net::is(error, net::NetErrc::http_status) && rate_limit_exhausted(status, headers);
  if (!net::is_transient(error, status) && !rate_limited) {
    d.reason = what + " is not retried";
    return d;
  }
  if (attempt > policy.retries) {
    d.reason = what + ", gave up after " + std::to_string(attempt) + " attempts";
    return d;
  }
  if (const auto asked = status > 0 ? server_wait(status, headers, now) : std::nullopt) {
    if (asked->wait > policy.max_wait) {
      d.reason = what + ": " + asked->what + " exceeds the " +
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(policy.max_wait).count()) + " s cap";
      return d;
    }
    d.retry = true;
    d.wait = asked->wait;
    d.reason = what + ", " + asked->what;
    return d;
  }
  d.retry = true;
  d.wait = policy.backoff(attempt, random01);
  d.reason = what;
  return d;
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  value = trim_ows(value);
  if (all_digits(value)) {
    // A huge delta saturates rather than overflows: it is past any cap either way.
    constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
    std::int64_t seconds = kMax;
    if (value.size() <= 10) std::from_chars(value.data(), value.data() + value.size(), seconds);
    return std::chrono::seconds(std::min(seconds, kMax));
  }
  if (const auto when = parse_http_date(value, now)) return until(*when, now);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Secrets

std::string redact(std::string_view text) { return util::redact(text); }

std::string basic_auth(std::string_view userinfo) { return "Basic " + base64_encode(userinfo); }

}  // namespace wheelfit::transports
