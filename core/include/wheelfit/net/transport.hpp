#pragma once
// The transport seam: bytes by URL. The core reads indexes only through this interface; the
// implementations (file:// and plain paths, http/https with retries, the on-disk cache, the
// GitHub Releases source) live in transports/. Callers never see sockets or Asio.
//
// Errors: Errc::not_found means the resource cleanly does not exist (a 404 / 410, a missing
// file): for a package page that is "not published on this index", never "the network failed".
// Errc::too_large: a body or header above its limit. Errc::invalid_input: a malformed or hostile
// URL. Errc::unsupported: a scheme the transport does not read. Every network failure carries a
// NetErrc (category "wheelfit.transport"); is_transient() says which of them a retry may cure.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::net {

/// Network failures. The message of the Error says which host:port and what happened.
enum class NetErrc {
  connect_failed = 1,  ///< refused, unreachable, name resolution failed
  connect_timeout,     ///< TCP + proxy CONNECT + TLS did not finish within the connect timeout
  reset,               ///< connection reset / broken pipe / closed before any response byte
  truncated,           ///< the response ended early (Content-Length short, chunked unterminated, TLS cut)
  idle_timeout,        ///< no byte for the idle timeout
  deadline,            ///< the overall deadline of one resource passed
  tls_handshake,       ///< a TLS failure that is not about the certificate (retried)
  certificate,         ///< peer verification, host name or expiry failed (never retried)
  http_status,         ///< a status that is neither success nor 404/410 (5xx after retries, 401, 403...)
  rate_limited,        ///< 429 / 403 with x-ratelimit-remaining: 0 and a wait past the cap
  proxy,               ///< the proxy refused the tunnel (407, 403, ...) or reset it past the budget
  redirect,            ///< too many hops, https -> http, a bad Location
  protocol,            ///< a malformed response (bad status line, bad header, bad chunk)
  offline,             ///< --offline and the resource is not in the cache
  too_slow,            ///< fewer bytes per second than the low-speed limit for its whole window (retried)
};

const std::error_category& net_category() noexcept;
inline std::error_code make_error_code(NetErrc e) noexcept { return {static_cast<int>(e), net_category()}; }

/// True for the failures docs/network-faults.md retries: connect errors and timeouts, resets, truncation,
/// idle timeouts, transfers below the low-speed limit, non-certificate TLS failures, and http_status errors whose `status` is 408,
/// 429, 500, 502, 503, 504 or 520-527. Never for certificate, redirect, proxy auth, not_found,
/// too_large or invalid_input.
bool is_transient(const Error& error, int status = 0);

/// An Error with a NetErrc code.
inline Error net_error(NetErrc code, std::string message) {
  return Error(std::error_code(static_cast<int>(code), net_category()), std::move(message));
}
/// True when `error` carries `code`.
inline bool is(const Error& error, NetErrc code) noexcept {
  return error.code == std::error_code(static_cast<int>(code), net_category());
}

using Headers = std::vector<std::pair<std::string, std::string>>;

/// The value of the first header named `name` (ASCII case-insensitive), if any.
std::optional<std::string_view> find_header(const Headers& headers, std::string_view name);

/// Where a streamed body goes (Request::sink): a body too big to hold in memory (a wheel being
/// downloaded). The transport calls prepare() before every attempt (the first, each retry, each
/// redirect hop), then, for a 2xx answer, begin() once and write() for each run of body bytes.
/// An error from begin(), write() or commit() ends the request with that error at once (never
/// retried).
/// Called on the thread running the transport's get()/get_many(), one call at a time per sink.
class BodySink {
 public:
  virtual ~BodySink() = default;
  /// Headers to add to the next attempt (Range / If-Range to continue a partial body).
  virtual void prepare(Headers& headers) = 0;
  /// A 2xx header arrived: 200 (the whole body: start over) or 206 (the range asked for).
  virtual Expected<void> begin(int status, const Headers& headers) = 0;
  /// The next body bytes, in order.
  virtual Expected<void> write(std::string_view bytes) = 0;
  /// Optional, to receive a body without a copy: room for up to `want` next body bytes in the
  /// sink's own memory (empty: the sink takes write() only, the default). A transport that uses
  /// it reads into a prefix of the room and calls commit() with how many bytes it read before
  /// any other call; the room is the sink's until then.
  virtual std::span<char> room(std::size_t want) {
    (void)want;
    return {};
  }
  /// The first `n` bytes of the last room() are the next body bytes: as write() of them.
  virtual Expected<void> commit(std::size_t n) {
    (void)n;
    return {};
  }
};

struct Request {
  std::string url;
  std::size_t max_body = 64u << 20;  ///< bodies above this are Errc::too_large
  /// Extra request headers ("Accept", "If-None-Match", "Authorization", ...). The transport adds
  /// Host, User-Agent, Accept-Encoding (gzip when `compressed`, else identity), and the
  /// Authorization of its credentials when none is given here. A redirect to another origin keeps
  /// only the headers that carry no credential (the http transport's credentials.hpp).
  Headers headers{};
  bool compressed = false;  ///< may arrive gzip-compressed (index pages); the transport decodes it, never for files
  /// Streams a 2xx body to this sink instead of Response::body (which stays empty); max_body
  /// still applies to what one attempt receives. A streamed request has no overall deadline
  /// (only the idle timeout: a large file on a slow link is not a failure) and is never cached.
  /// Not owned: it must outlive the call.
  BodySink* sink = nullptr;
};

struct Response {
  std::string url;           ///< the URL finally answered (after redirects / index.html)
  std::string content_type;  ///< "text/html", "application/vnd.pypi.simple.v1+json", ... or empty
  std::string body;
  int status = 200;          ///< 200, or 304 (body empty) when the request was conditional
  Headers headers{};         ///< response headers as received (names lower-cased); empty for file://
  bool from_cache = false;   ///< served by the cache (fresh or revalidated), no body transferred
};

/// Counters a transport keeps (for reports, tests and the benchmark). All zero for file://.
struct Stats {
  std::uint64_t requests = 0;      ///< HTTP requests written to a connection (retries included)
  std::uint64_t connections = 0;   ///< TCP connections opened
  std::uint64_t retries = 0;       ///< attempts after a transient failure (charged to the budget)
  std::uint64_t reconnects = 0;    ///< stale keep-alive reconnects (not charged)
  std::uint64_t cache_fresh = 0;   ///< answered from the cache without a request
  std::uint64_t cache_revalidated = 0;  ///< 304 answers served from the cache
  std::uint64_t bytes = 0;         ///< body bytes received
};

/// What a URL scheme is, declared by the transport that reads it when it registers
/// (registry.hpp's TransportEntry::facts; docs/decisions/0039). The core asks these, never the
/// scheme's name: a new scheme is one transport and one registration.
struct SchemeFacts {
  bool remote = false;         ///< read over a network: its index gets the Releases failover, its pages no local links
  bool cacheable = false;      ///< the on-disk cache decorator stores its answers
  bool credentials = false;    ///< its URLs may carry userinfo or a token (HttpRules::take_credentials takes them out)
  bool network_rules = false;  ///< the proxy and TLS rules of the http transport (HttpRules) apply
  bool operator==(const SchemeFacts&) const = default;
};
/// The facts of a URL whose transport declares none: http:// and https:// (either case) have
/// every fact, every other scheme and a plain path none (as file:// has). Pure; thread-safe.
[[nodiscard]] SchemeFacts default_facts(std::string_view url);

/// Reads resources by URL. Thread safety: get() and get_many() may be called from one thread
/// at a time; implementations document more where they offer it.
class Transport {
 public:
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  /// One resource.
  [[nodiscard]] Expected<Response> get(const Request& request) { return get_impl(request); }
  /// Several resources; the answers come back in request order. Network transports fetch them
  /// concurrently; the default fetches one after another.
  [[nodiscard]] std::vector<Expected<Response>> get_many(const std::vector<Request>& requests) {
    return get_many_impl(requests);
  }
  /// Told of each answer of a batch as soon as it is known, before the batch ends: `index` is the
  /// request's position. Runs on the thread that called get_many, between that transport's I/O
  /// steps: keep it short (queue heavy work elsewhere). It sees the answer get_many then returns.
  /// A hook that throws loses only its own work: the answer stands (see tell()).
  using AnswerHook = std::function<void(std::size_t index, const Expected<Response>& answer)>;
  /// get_many, calling `on_answer` for every answer as it comes (the default: after the batch).
  [[nodiscard]] std::vector<Expected<Response>> get_many(const std::vector<Request>& requests,
                                                         const AnswerHook& on_answer) {
    return get_many_hooked_impl(requests, on_answer);
  }
  /// The facts of `url`'s scheme as this transport reads it: a stack's router answers from the
  /// registrations, a decorator asks its inner transport, any other transport default_facts(url).
  [[nodiscard]] SchemeFacts facts(std::string_view url) const { return facts_impl(url); }
  /// Counters since construction (decorators add their inner transport's).
  [[nodiscard]] virtual Stats stats() const { return {}; }
  /// Waits until work a transport deferred past its answers (the cache's writes) is done.
  /// Destruction does the same; decorators flush their inner transport too.
  virtual void flush() {}

 protected:
  Transport() = default;

 private:
  virtual Expected<Response> get_impl(const Request& request) = 0;
  virtual SchemeFacts facts_impl(std::string_view url) const { return default_facts(url); }
  virtual std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) {
    std::vector<Expected<Response>> out;
    out.reserve(requests.size());
    for (const auto& r : requests) out.push_back(get_impl(r));
    return out;
  }
  virtual std::vector<Expected<Response>> get_many_hooked_impl(const std::vector<Request>& requests,
                                                               const AnswerHook& on_answer) {
    auto out = get_many_impl(requests);
    for (std::size_t i = 0; i < out.size(); ++i) tell(on_answer, i, out[i]);
    return out;
  }

 protected:
  /// Calls `on_answer` (when set) the way every transport must: an exception it throws is dropped.
  static void tell(const AnswerHook& on_answer, std::size_t index, const Expected<Response>& answer) noexcept {
    if (!on_answer) return;
    try {
      on_answer(index, answer);
    } catch (...) {
    }
  }
};

}  // namespace wheelfit::net

template <>
struct std::is_error_code_enum<wheelfit::net::NetErrc> : std::true_type {};
