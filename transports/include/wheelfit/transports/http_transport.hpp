#pragma once
// The http:// and https:// transport: Boost.Beast + OpenSSL on one io_context, owned by the
// transport and run inside get()/get_many() (callers never see Asio). get_many fetches
// concurrently, at most `jobs` requests at once and `per_host` connections per origin, with
// keep-alive reuse; answers come back in request order.
//
// Behaviour (docs/network-faults.md): retries per RetryPolicy with every retry logged (log::info: the URL
// redacted, the reason, the wait); a stale keep-alive connection (reset / EOF before any response
// byte on a reused connection) is reconnected at once and not charged; connect / idle / overall
// timeouts; the low-speed rule; the whole call's max_time; header and body limits (Content-Length above Request::max_body refused before the
// body is read); redirects (at most 10, never https -> http; across origins only the headers
// credentials.hpp names as safe follow); credentials (credentials.hpp: URL userinfo, per-origin
// credentials, netrc; https only unless the host is allowed insecure); TLS 1.2+, peer and
// host-name verification, SNI except for IP literals, the trust store of trust_store.hpp (a
// client certificate when one is given); proxies from ProxyConfig (CONNECT tunnels for https,
// TLS verified against the origin; absolute-form requests for http; Basic or Negotiate
// (Kerberos, negotiate.hpp) auth to the proxy only, per `proxy_auth`). 404 / 410 -> Errc::not_found; other non-2xx -> NetErrc::http_status (after retries for
// the transient ones), the status in the message ("HTTP 403 from host:port for URL").
// 304 (conditional requests) -> a Response with status 304 and an empty body.
// Thread safety: one caller at a time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "wheelfit/transport/transport.hpp"
#include "wheelfit/transports/credentials.hpp"
#include "wheelfit/transports/negotiate.hpp"
#include "wheelfit/transports/net_policy.hpp"

namespace wheelfit::transports {

/// "wheelfit/<project version>".
std::string default_user_agent();

struct HttpOptions {
  std::string user_agent = default_user_agent();
  RetryPolicy retry;
  std::chrono::milliseconds connect_timeout{10000};  ///< TCP + proxy CONNECT + TLS
  std::chrono::milliseconds idle_timeout{30000};     ///< no byte received for this long
  std::chrono::milliseconds deadline{300000};        ///< one resource, all attempts together
  /// The low-speed rule (SpeedFloor in net_policy.hpp; curl's --speed-limit / --speed-time): an
  /// attempt receiving fewer than `speed_limit` bytes/s averaged over `speed_time` fails as
  /// NetErrc::too_slow, which is retried (a streamed body continues with Range). 0: off.
  std::uint64_t speed_limit = 1024;
  std::chrono::milliseconds speed_time{30000};
  /// The whole call's bound (--max-time): with the per-resource deadline, the nearer one applies,
  /// to streamed bodies too; nullopt: none.
  std::optional<MaxTime> max_time;
  int max_redirects = 10;
  /// Requests in flight in get_many (>= 1). 50, as uv's default: an index read is ~45 small pages
  /// from one host, and each round of them costs a round trip (docs/decisions/0007).
  unsigned jobs = 50;
  unsigned per_host = 50;   ///< connections per origin (>= 1)
  std::size_t max_header_bytes = 64u << 10;  ///< the whole response header
  ProxyConfig proxy;        ///< ProxyConfig::from_env() by default (set in make_http_transport)
  bool proxy_from_env = true;  ///< false: use `proxy` as given
  /// How to authenticate to the proxy (negotiate.hpp): auto = Basic with the proxy URL's
  /// user:password, else Negotiate (Kerberos) when a 407 offers it.
  ProxyAuth proxy_auth = ProxyAuth::automatic;
  /// The GSS-API behind Negotiate; nullptr: system_gss() (MIT Kerberos), made when first needed.
  std::shared_ptr<Gss> gss;
  /// TLS trust (trust_store.hpp has the order): ca_file (a PEM bundle; a folder is taken as
  /// ca_dir) and / or ca_dir (a folder of hashed certificates) replace the system roots;
  /// `ca_source` names them in errors and reports ("--cert"). Without them: PIP_CERT,
  /// REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE / SSL_CERT_DIR, else the system store.
  std::optional<std::string> ca_file, ca_dir;
  std::string ca_source = "the ca_file / ca_dir option";
  /// Mutual TLS: one PEM file with the client certificate (and its chain) and its unencrypted
  /// private key, presented to a server that asks; default SSL_CLIENT_CERT.
  std::optional<std::string> client_cert;
  std::string client_cert_source = "the client_cert option";
  bool ca_from_env = true;  ///< false: read no variable (trust store or SSL_CLIENT_CERT); use the fields as given
  Credentials credentials;  ///< per-origin credentials, netrc, hosts allowed insecure (credentials.hpp)
  bool credentials_from_env = true;  ///< add NETRC / ~/.netrc and WHEELFIT_ALLOW_INSECURE_HOST to `credentials`
};

/// Errc::invalid_input when the options are unusable: a trust store or client certificate that
/// cannot be loaded (missing, unreadable, no certificate in it, a folder without hashed
/// certificates, a key that is missing, encrypted or not the certificate's) names the file and the
/// flag or variable it came from. The system store is loaded at the first https connection;
/// when it holds no certificate, each https request fails with NetErrc::certificate naming it.
Expected<std::unique_ptr<transport::Transport>> make_http_transport(HttpOptions options = {});

/// What the transport would do for `url` (`wheelfit doctor --url`): the proxy and the method.
struct ProxyPlan {
  std::string url;                   ///< the URL, credentials stripped
  std::optional<std::string> proxy;  ///< the proxy URL (password redacted); nullopt: direct
  std::string source;                ///< where the proxy came from: "https_proxy", "no_proxy (direct)", ...
  std::string method;                ///< "none", "basic", "negotiate", "negotiate when the proxy asks for it"
  std::string detail;                ///< Negotiate: the service and the credential (or GSS-API's error)
};

/// The plan for `url` under `options` (the proxy variables read as make_http_transport reads
/// them). Errors: the URL or the proxy URL does not parse (Errc::invalid_input / unsupported).
Expected<ProxyPlan> plan_proxy(const HttpOptions& options, std::string_view url);

/// One transport for every scheme: file:// URLs and plain paths to the file transport, http(s)
/// to an http transport made from `options`. Errc::unsupported (naming the URL) for other
/// schemes. Errors: those of make_http_transport.
Expected<std::unique_ptr<transport::Transport>> make_transport(HttpOptions options = {});

}  // namespace wheelfit::transports
