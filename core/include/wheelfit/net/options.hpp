#pragma once
// The options of the transports, as plain structs of the core: what the façade's requests carry
// (ResolveRequest::network, ...) and what a transport factory of the registry (registry.hpp) is
// given. The transports read them (transports/: the http transport, the cache, the trust store);
// nothing here does I/O except ProxyConfig::from_env (reads the environment).
// Thread safety: plain values; the functions are pure unless they say otherwise.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/gss.hpp"

namespace wheelfit::net {

/// Retry timing (docs/network-faults.md defaults; tests shrink them).
struct RetryPolicy {
  int retries = 3;                                 ///< attempts after the first
  std::chrono::milliseconds base{1000};            ///< first backoff
  std::chrono::milliseconds cap{30000};            ///< no backoff above this
  std::chrono::milliseconds max_wait{60000};       ///< a Retry-After / reset wait above this: give up at once
  int max_reconnects = 5;                          ///< stale keep-alive reconnects, not charged

  /// The jittered exponential wait before retry `attempt` (1-based): uniform in
  /// [d/2, d] with d = min(cap, base * 2^(attempt-1)). `random01` gives a value in [0, 1).
  [[nodiscard]] std::chrono::milliseconds backoff(int attempt, double random01) const;
};

/// A bound on a whole call (--max-time): every request, attempt and wait of the transports made
/// with it ends by `end`; past it, what is in flight fails with NetErrc::deadline naming `source`.
struct MaxTime {
  std::chrono::steady_clock::time_point end;
  std::chrono::milliseconds total{0};  ///< as given, for messages
  std::string source = "--max-time";   ///< the flag or key that set it, for messages

  /// A bound of `total` from now.
  static MaxTime from_now(std::chrono::milliseconds total, std::string source = "--max-time");
  [[nodiscard]] bool passed() const { return std::chrono::steady_clock::now() >= end; }
  /// "the --max-time of 5 s" (ms below a second).
  [[nodiscard]] std::string name() const;
};

/// The user's system proxy settings as Windows keeps them (WinHTTP's
/// WINHTTP_CURRENT_USER_IE_PROXY_CONFIG, in UTF-8). The http transport reads them on Windows
/// (its system_proxy.hpp) and uses them for a URL that no proxy variable decides.
struct SystemProxySettings {
  bool auto_detect = false;     ///< WPAD ("Automatically detect settings"): not followed
  std::string auto_config_url;  ///< a PAC script's URL, or "": not followed
  std::string proxy;            ///< "proxy:8080", or per scheme "http=a:1;https=b:2"; "" none
  std::string bypass;           ///< "<local>;*.corp.example;10.*"; "" none
};

/// The proxy settings of curl: http_proxy (lower case only, as curl: HTTP_PROXY is ignored for
/// CGI safety), HTTPS_PROXY / https_proxy, ALL_PROXY / all_proxy, NO_PROXY / no_proxy (lower
/// case wins when both are set).
struct ProxyConfig {
  std::string http_proxy, https_proxy, all_proxy, no_proxy;
  /// The user's system settings (Windows; nullopt elsewhere): after the variables.
  std::optional<SystemProxySettings> system;

  /// Reads the variables through `getenv` (the process environment by default).
  static ProxyConfig from_env(const std::function<const char*(const char*)>& getenv = nullptr);
};

/// How the http transport authenticates to a proxy (--proxy-auth, WHEELFIT_PROXY_AUTH).
enum class ProxyAuth {
  automatic,  ///< Basic when the proxy URL has user:password, else Negotiate when the proxy asks for it
  basic,      ///< Basic only (the proxy URL's user:password)
  negotiate,  ///< Negotiate only, from the first request on; the proxy URL's user:password is never sent
  none,       ///< nothing: a 407 fails
};

/// One entry of a .netrc file (the http transport's netrc.hpp parses them).
struct NetrcEntry {
  std::string machine;     ///< the host as written, lower-cased; "" for `default`
  bool is_default = false;
  std::string login, password, account;
  std::size_t line = 0;    ///< where the entry starts (1-based), for messages
};

struct Netrc {
  std::vector<NetrcEntry> entries;  ///< in file order

  /// The credentials for `host`: the first `machine` entry naming it (ASCII case-insensitive),
  /// else the first `default` entry (as Python's netrc module; the entry order otherwise does not
  /// matter); nullptr when neither exists.
  [[nodiscard]] const NetrcEntry* find(std::string_view host) const;
};

/// A credential given for one origin.
struct OriginCredential {
  std::string origin;    ///< "https://host" or "http://host:8080" (the URL's origin)
  std::string userinfo;  ///< "user:password" (percent-decoded) for Basic, or ""
  std::string token;     ///< a bearer token, or "" (userinfo wins when both are set)
  std::string source;    ///< where it came from, for messages: "--index", "WHEELFIT_INDEX_TOKEN"
};

/// Per-origin credentials, the netrc, and the hosts credentials may reach over plain http (the
/// rules are the http transport's credentials.hpp).
struct Credentials {
  std::vector<OriginCredential> origins;
  std::optional<Netrc> netrc;
  std::string netrc_source;                 ///< the file the netrc was read from
  std::vector<std::string> insecure_hosts;  ///< "host", "host:port", "[v6]:port", lower-cased
};

/// "wheelfit/<project version>".
std::string default_user_agent();

/// The http(s) transports' options (the http transport's http_transport.hpp has the behaviour).
struct HttpOptions {
  std::string user_agent = default_user_agent();
  RetryPolicy retry;
  std::chrono::milliseconds connect_timeout{10000};  ///< TCP + proxy CONNECT + TLS
  std::chrono::milliseconds idle_timeout{30000};     ///< no byte received for this long
  std::chrono::milliseconds deadline{300000};        ///< one resource, all attempts together
  /// The low-speed rule (curl's --speed-limit / --speed-time): an attempt receiving fewer than
  /// `speed_limit` bytes/s averaged over `speed_time` fails as NetErrc::too_slow, which is
  /// retried (a streamed body continues with Range). 0: off.
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
  ProxyConfig proxy;        ///< ProxyConfig::from_env() by default (set by the http transport)
  bool proxy_from_env = true;  ///< false: use `proxy` as given
  /// How to authenticate to the proxy: auto = Basic with the proxy URL's user:password, else
  /// Negotiate (Kerberos) when a 407 offers it.
  ProxyAuth proxy_auth = ProxyAuth::automatic;
  /// The GSS-API behind Negotiate (gss.hpp); nullptr: the system's (MIT Kerberos), made when
  /// first needed.
  std::shared_ptr<Gss> gss;
  /// A GSS-API step still running when its request's time ran out (a KDC that does not answer)
  /// finishes alone; the transport's destructor waits up to this long for such steps, so that no
  /// thread of the transport outlives it (MIT Kerberos' own KDC timeouts end a step within
  /// seconds). A step still running after that is left to finish, with a warning.
  std::chrono::milliseconds gss_wait{15000};
  /// TLS trust (the http transport's trust_store.hpp has the order): ca_file (a PEM bundle; a
  /// folder is taken as ca_dir) and / or ca_dir (a folder of hashed certificates) replace the
  /// system roots; `ca_source` names them in errors and reports ("--cert"). Without them:
  /// PIP_CERT, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE / SSL_CERT_DIR, else the system store.
  std::optional<std::string> ca_file, ca_dir;
  std::string ca_source = "the ca_file / ca_dir option";
  /// Mutual TLS: one PEM file with the client certificate (and its chain) and its unencrypted
  /// private key, presented to a server that asks; default SSL_CLIENT_CERT.
  std::optional<std::string> client_cert;
  std::string client_cert_source = "the client_cert option";
  bool ca_from_env = true;  ///< false: read no variable (trust store or SSL_CLIENT_CERT); use the fields as given
  Credentials credentials;  ///< per-origin credentials, netrc, hosts allowed insecure
  bool credentials_from_env = true;  ///< add NETRC / ~/.netrc and WHEELFIT_ALLOW_INSECURE_HOST to `credentials`
};

/// What the http transport would do for a URL (`wheelfit doctor --url`): the proxy and the method.
struct ProxyPlan {
  std::string url;                   ///< the URL, credentials stripped
  std::optional<std::string> proxy;  ///< the proxy URL (password redacted); nullopt: direct
  std::string source;                ///< where the proxy came from: "https_proxy", "no_proxy (direct)", ...
  std::string method;                ///< "none", "basic", "negotiate", "negotiate when the proxy asks for it"
  std::string detail;                ///< Negotiate: the service and the credential (or GSS-API's error)
  std::string note;                  ///< Windows: a PAC script / WPAD not followed, and what to set instead; "" none
};

/// One place certificates are read from.
struct TrustLocation {
  std::string path;
  bool directory = false;  ///< a folder of hashed certificates (<hash>.0), else a PEM file
  std::string source;      ///< "--cert", "REQUESTS_CA_BUNDLE", "SSL_CERT_DIR", ...
};

/// The TLS trust store and client certificate https uses (README "TLS").
struct TrustChoice {
  std::vector<TrustLocation> locations;      ///< empty: the system store
  std::optional<TrustLocation> client_cert;  ///< mutual TLS

  /// Where the trust store came from: the flag or variable, or "system".
  [[nodiscard]] std::string source() const;
  /// "the system store", or "/etc/corp-ca.pem (REQUESTS_CA_BUNDLE)", for reports.
  [[nodiscard]] std::string describe() const;
};

/// The on-disk HTTP cache's size cap when none is given (`--cache-max-size`,
/// WHEELFIT_CACHE_MAX_SIZE): 1 GiB.
inline constexpr std::uint64_t kDefaultCacheMaxSize = std::uint64_t{1} << 30;

/// The on-disk HTTP cache (a decorator; the cache's cache_transport.hpp).
struct CacheOptions {
  std::filesystem::path dir;   ///< the cache root; the cache's default folder when empty
  bool offline = false;        ///< answer only from the cache
  /// The size cap: once a transport's writes are on disk (flush(), destruction), the least
  /// recently used entries beyond it are removed.
  std::uint64_t max_size = kDefaultCacheMaxSize;
};

/// What the on-disk cache holds.
struct CacheUsage {
  std::filesystem::path root;    ///< the cache root
  std::uint64_t entries = 0;     ///< entry files (v2/*.entry)
  std::uint64_t bytes = 0;       ///< their size in bytes (what the cap limits)
  std::uint64_t temp_files = 0;  ///< temporary files: writes in flight, or left by a killed run
  std::uint64_t other_bytes = 0; ///< wheelfit's other files: temporary files, a v1/ of an old wheelfit
};

/// What a prune or clean of the cache did.
struct CacheCleanup {
  CacheUsage before, after;
  std::uint64_t removed_entries = 0;
  std::uint64_t removed_bytes = 0;
  std::uint64_t removed_temp_files = 0;
};

}  // namespace wheelfit::net
