#pragma once
// The pure policy of the network layer, kept apart from the sockets so it is tested as tables:
// URL parsing, proxy choice from the environment (curl's rules), retry classification and
// waits, secret redaction. Nothing here does I/O. Thread safety: all functions are pure.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/options.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::transports {

/// An absolute http(s) URL split for a request. Userinfo is kept apart (never sent as part of
/// the target); `host` is lower-cased, brackets removed for IPv6 literals.
struct Url {
  std::string scheme;    ///< "http" or "https"
  std::string userinfo;  ///< "user:password" percent-decoded once, or ""
  std::string host;      ///< "example.test", "127.0.0.1", "::1"
  std::uint16_t port = 0;  ///< explicit or the scheme's default
  std::string target;    ///< path + query, at least "/"; fragment dropped; escapes kept as written
  bool ipv6 = false;

  [[nodiscard]] bool is_ip_literal() const;           ///< IPv4 dotted quad or IPv6: no SNI
  [[nodiscard]] std::string host_port() const;        ///< "host:port", "[::1]:8080"
  [[nodiscard]] std::string origin() const;           ///< "https://host[:port]" (default port omitted)
  [[nodiscard]] std::string str() const;              ///< origin + target, userinfo omitted
};

/// Parses an absolute http:// or https:// URL. Errc::invalid_input naming the URL (redacted) for
/// a control character, space, NUL or backslash anywhere, a missing host, a bad port (non-digit,
/// 0, > 65535), an unbalanced IPv6 bracket, a URL above 8 KiB; Errc::unsupported for another
/// scheme.
Expected<Url> parse_url(std::string_view url);

/// Resolves a Location header against the URL that answered (absolute, scheme-relative,
/// absolute-path and relative forms).
Expected<Url> resolve_location(const Url& base, std::string_view location);

/// The proxy settings of curl (options.hpp).
using net::ProxyConfig;

/// The proxy for one origin: nullopt = connect directly. The proxy URL may lack a scheme
/// ("proxy:3128" = http://); its userinfo becomes Basic Proxy-Authorization. Errc::invalid_input
/// for a proxy URL that does not parse; Errc::unsupported for socks*://.
Expected<std::optional<Url>> proxy_for(const ProxyConfig& config, const Url& target);

/// curl's NO_PROXY matching: comma-separated (spaces trimmed), case-insensitive; "*" matches
/// everything; "example.test" and ".example.test" match the host and its subdomains; IP literals
/// and CIDR blocks ("10.0.0.0/8", "::1/128") match addresses; an entry with ":port" is ignored
/// as curl does (the port is not compared).
bool no_proxy_matches(std::string_view no_proxy, std::string_view host);

/// Retry timing (options.hpp).
using net::RetryPolicy;

/// The low-speed rule of one attempt (curl's --speed-limit / --speed-time): the bytes an attempt
/// receives are counted in windows of `time`, the first opening when its first read completes (the
/// wait for an answer is the idle timeout's business); a window that closes with fewer than
/// `limit` bytes per second on average fails the attempt. Checked as reads complete: a complete
/// stall is the idle timeout's. `limit` 0 (or `time` 0) turns the rule off.
class SpeedFloor {
 public:
  SpeedFloor() = default;
  SpeedFloor(std::uint64_t limit, std::chrono::milliseconds time) : limit_(limit), time_(time) {}
  /// A read completed at `now` with `bytes` more; false when the window it closed fell short.
  [[nodiscard]] bool add(std::uint64_t bytes, std::chrono::steady_clock::time_point now);
  /// "4 bytes in 2000 ms, under the floor of 1024 bytes/s over 1000 ms": the window that fell short.
  [[nodiscard]] std::string shortfall() const;

 private:
  std::uint64_t limit_ = 0;
  std::chrono::milliseconds time_{0};
  bool started_ = false;
  std::chrono::steady_clock::time_point window_start_{};
  std::uint64_t window_bytes_ = 0;
  std::chrono::milliseconds short_elapsed_{0};  ///< the window that fell short: its length
};

/// A bound on a whole call (options.hpp).
using net::MaxTime;

/// What a failed attempt asks for.
struct RetryDecision {
  bool retry = false;
  std::chrono::milliseconds wait{0};
  std::string reason;   ///< "HTTP 503", "connection reset", "Retry-After 3600 s exceeds the 60 s cap"
};

/// Decides about attempt `attempt` (1-based, the attempt that just failed) that ended in `error`
/// (with the HTTP `status` when there was one, and its response `headers`). Honours Retry-After
/// (delta seconds or an HTTP date, relative to `now`) and, for 403/429 with
/// x-ratelimit-remaining: 0, x-ratelimit-reset (epoch seconds); a wait above max_wait gives up
/// at once, saying so in `reason`. Never retries what is_transient() rejects.
RetryDecision decide_retry(const RetryPolicy& policy, int attempt, const Error& error, int status,
                           const net::Headers& headers, std::chrono::system_clock::time_point now,
                           double random01);

/// Parses Retry-After: delta-seconds or an IMF-fixdate / RFC 850 / asctime HTTP date, as a wait
/// from `now` (never negative). nullopt when malformed.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now);

/// util::redact (wheelfit/util/secrets.hpp): secrets replaced with "***": userinfo passwords in
/// URLs ("https://u:***@h/"), credential header values ("Authorization: Bearer ***"), credential
/// query values ("token=***"), GitHub / GitLab token shapes.
std::string redact(std::string_view text);

/// "Basic <base64(userinfo)>" for Proxy-Authorization.
std::string basic_auth(std::string_view userinfo);

}  // namespace wheelfit::transports
