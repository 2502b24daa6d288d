// The http:// and https:// transport (see http_transport.hpp): Beast HTTP/1.1 over Asio, one
// io_context owned by the transport and run inside get() / get_many(), C++20 coroutines.
//
// Shape of one resource (fetch):
//   redirect loop  -> retry loop (decide_retry, RetryPolicy; stale keep-alive reconnects free)
//                  -> one attempt: per-origin slot, pooled or new connection (TCP, proxy CONNECT,
//                     TLS), write the request, read the header, read the body.
// Compression: Accept-Encoding: gzip for Request::compressed (index pages), identity otherwise
// (files). A 2xx body with Content-Encoding gzip / x-gzip is decoded while it is read (zlib,
// bounded: the decoded size obeys Request::max_body, as does the compressed size), whether or
// not the request asked for it (a server that compresses anyway is decoded, never passed on
// encoded); Content-Encoding and Content-Length are then dropped from Response::headers, so a
// Response body is never encoded and the cache stores decoded bodies. A corrupt or truncated
// gzip stream, or any other coding (br, deflate, ...), is NetErrc::protocol, never retried.
// Stats::bytes counts the body bytes on the wire (compressed).
// Timeouts: every socket operation runs under beast::tcp_stream's expiry, set to the nearer of
// its own limit (connect / idle) and the resource's overall deadline; which one fired decides the
// NetErrc. Errors are values; no exception leaves get() / get_many().
#include "wheelfit/transports/http_transport.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <map>
#include <random>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/text.hpp"

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "0"
#endif

namespace wheelfit::transports {

std::string default_user_agent() { return std::string("wheelfit/") + WHEELFIT_VERSION; }

namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using boost::system::error_code;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using transport::Headers;
using transport::NetErrc;
using transport::net_error;
using transport::Request;
using transport::Response;
using transport::Stats;
using transport::Transport;

// Limits on single header lines and on the number of header fields (FAULTS H04: a 9 KiB line,
// 2,000 headers), on top of HttpOptions::max_header_bytes for the whole header.
constexpr std::size_t kMaxHeaderLine = 8u << 10;
constexpr std::size_t kMaxHeaderFields = 256;

auto tok(error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

std::string ms_text(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && util::ascii_lower(a) == util::ascii_lower(b);
}

bool has_ctl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

bool is_redirect_status(int s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

/// "host:port (url)" for messages, the URL redacted.
std::string where(const Url& u) { return u.host_port() + " (" + redact(u.str()) + ")"; }

/// The Host header: host[:port], brackets for IPv6, default port omitted.
std::string host_header(const Url& u) {
  const std::string origin = u.origin();
  const auto p = origin.find("://");
  return p == std::string::npos ? u.host_port() : origin.substr(p + 3);
}

bool same_origin(const Url& a, const Url& b) { return a.scheme == b.scheme && a.host == b.host && a.port == b.port; }

const error_code& http_error_sample() {
  static const error_code ec = http::make_error_code(http::error::end_of_stream);
  return ec;
}
bool is_http_error(const error_code& ec) { return ec.category() == http_error_sample().category(); }

/// The connection closed or reset (no response byte involved).
bool is_closed(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::connection_aborted || ec == ssl::error::stream_truncated ||
         ec == net::error::not_connected || ec == net::error::bad_descriptor;
}

/// One connection: plain TCP, or TLS over TCP (directly or through a proxy tunnel).
struct Conn {
  explicit Conn(net::io_context& ioc) { plain.emplace(ioc); }
  std::optional<beast::tcp_stream> plain;
  std::optional<ssl::stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  std::string verify_failure;  ///< set by the verify callback

  beast::tcp_stream& tcp() { return tls ? tls->next_layer() : *plain; }
  void close() {
    error_code ec;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp().close();
  }
};

/// Where one URL goes: directly, or via a proxy.
struct Route {
  Url url;
  std::optional<Url> proxy;
  [[nodiscard]] bool tunnel() const { return proxy && url.scheme == "https"; }
  [[nodiscard]] bool absolute_form() const { return proxy && url.scheme == "http"; }
  /// The pool key: connections are shared only by requests that could use them.
  [[nodiscard]] std::string key() const {
    if (absolute_form()) return "proxy " + proxy->host_port() + " " + proxy->userinfo;
    std::string k = url.scheme + "://" + url.host_port();
    if (proxy) k += " via " + proxy->host_port() + " " + proxy->userinfo;
    return k;
  }
};

/// The result of one attempt: a complete response, or an error.
struct Outcome {
  bool ok = false;
  bool stale = false;        ///< a reused connection failed before any response byte
  bool proxy_reset = false;  ///< the proxy reset / closed the connection during CONNECT
  bool keep = false;         ///< the connection may serve another request
  Error error;
  int status = 0;
  Headers headers;
  std::string body;
  std::string content_type;
};

Outcome fail(Error e, int status = 0) {
  Outcome o;
  o.error = std::move(e);
  o.status = status;
  return o;
}

std::string media_type(std::string_view v) {
  const auto semi = v.find(';');
  if (semi != std::string_view::npos) v = v.substr(0, semi);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  return util::ascii_lower(v);
}

/// True when the raw header bytes carry a Content-Length made of digits too long for 64 bits.
bool huge_content_length(std::string_view raw) {
  // Beast leaves the unparsed rest of the header in the buffer: the offending line may be first.
  const std::string lower = "\n" + util::ascii_lower(raw.substr(0, std::min<std::size_t>(raw.size(), 1u << 20)));
  const auto p = lower.find("\ncontent-length:");
  if (p == std::string::npos) return false;
  std::size_t i = p + 16;
  while (i < lower.size() && (lower[i] == ' ' || lower[i] == '\t')) ++i;
  std::size_t digits = 0;
  while (i < lower.size() && lower[i] >= '0' && lower[i] <= '9') ++i, ++digits;
  return digits >= 20;
}

/// Incremental gzip decoding (RFC 1952, concatenated members allowed) into a string of at most
/// `limit` bytes: the output never grows past the limit, whatever the input expands to.
class Gunzip {
 public:
  enum class Status { ok, too_large, corrupt };

  explicit Gunzip(std::size_t limit) : limit_(limit) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK) init_ = true;
  }
  ~Gunzip() {
    if (init_) inflateEnd(&z_);
  }
  Gunzip(const Gunzip&) = delete;
  Gunzip& operator=(const Gunzip&) = delete;

  /// Decodes `in` (any amount) and appends to out(); `why` says what went wrong.
  Status feed(std::string_view in) {
    if (!init_) return corrupt("cannot initialise zlib");
    while (!in.empty()) {
      if (ended_) {  // another member follows
        if (inflateReset(&z_) != Z_OK) return corrupt("cannot reset zlib");
        ended_ = false;
      }
      const auto n = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT_MAX));
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      z_.avail_in = n;
      for (;;) {
        z_.next_out = buf_;
        z_.avail_out = sizeof buf_;
        const uInt before_in = z_.avail_in;
        const int rc = inflate(&z_, Z_NO_FLUSH);
        if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR || rc == Z_MEM_ERROR) {
          return corrupt(z_.msg ? z_.msg : "invalid compressed data");
        }
        const std::size_t produced = sizeof buf_ - z_.avail_out;
        if (produced > limit_ - out_.size()) return Status::too_large;
        if (out_.size() + produced > out_.capacity()) {
          // Grow geometrically, but never reserve past the limit.
          out_.reserve(std::min(limit_, std::max(out_.size() + produced, 2 * out_.capacity())));
        }
        out_.append(reinterpret_cast<const char*>(buf_), produced);
        if (rc == Z_STREAM_END) {
          ended_ = true;
          break;
        }
        if (z_.avail_out != 0 && z_.avail_in == 0) break;  // all input taken, no output pending
        if (produced == 0 && z_.avail_in == before_in) break;  // no progress (Z_BUF_ERROR)
      }
      in.remove_prefix(n - z_.avail_in);
      fed_ = true;
      if (!ended_ && z_.avail_in != 0) return corrupt("the decoder stopped before the end of its input");
    }
    return Status::ok;
  }
  /// After the last input: corrupt when a member is incomplete (an empty body is an empty body).
  Status finish() {
    if (fed_ && !ended_) return corrupt("the gzip stream is truncated (it ends before its trailer)");
    return Status::ok;
  }
  [[nodiscard]] const std::string& why() const { return why_; }
  std::string& out() { return out_; }

 private:
  Status corrupt(std::string why) {
    why_ = std::move(why);
    return Status::corrupt;
  }

  z_stream z_{};
  bool init_ = false;
  bool ended_ = false;
  bool fed_ = false;
  std::size_t limit_;
  std::string out_;
  std::string why_;
  Bytef buf_[16u << 10];
};

/// The codings of a response's Content-Encoding headers (lower-cased, identity and empty items
/// dropped), in order.
std::vector<std::string> content_codings(const Headers& headers) {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers) {
    if (k != "content-encoding") continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string item = media_type(rest.substr(0, comma));  // trimmed, lower-cased
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (!item.empty() && item != "identity") out.push_back(std::move(item));
    }
  }
  return out;
}

class HttpTransport final : public Transport {
 public:
  /// `system_roots`: the machine's default trust store is still to be loaded (no ca_file/ca_dir
  /// given). Parsing the system bundle costs ~25 ms, so it waits for the first TLS connection: a
  /// run over file:// or http:// never pays it.
  HttpTransport(HttpOptions options, ssl::context ctx, bool system_roots)
      : opts_(std::move(options)), ssl_(std::move(ctx)), system_roots_pending_(system_roots) {
    std::random_device rd;
    rng_.seed((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  }
  ~HttpTransport() override { idle_.clear(); }

  [[nodiscard]] Stats stats() const override { return stats_; }

 private:
  struct HostSlot {
    unsigned active = 0;
    std::deque<net::steady_timer*> waiters;
  };
  struct SlotGuard {
    HttpTransport* self;
    std::string key;
    SlotGuard(HttpTransport* s, std::string k) : self(s), key(std::move(k)) {}
    SlotGuard(const SlotGuard&) = delete;
    SlotGuard& operator=(const SlotGuard&) = delete;
    ~SlotGuard() { self->release(key); }
  };

  Expected<Response> get_impl(const Request& request) override {
    auto out = run_batch(&request, 1);
    return std::move(out.front());
  }
  std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) override {
    return get_many_hooked_impl(requests, {});
  }
  std::vector<Expected<Response>> get_many_hooked_impl(const std::vector<Request>& requests,
                                                       const AnswerHook& on_answer) override {
    if (requests.empty()) return {};
    return run_batch(requests.data(), requests.size(), on_answer ? &on_answer : nullptr);
  }

  // Coroutine style (g++ 12): every coroutine returns awaitable<void> and writes its result to an
  // out-parameter; variables that live across a co_await are declared at function scope; no
  // co_await inside ?: or a function argument, and no temporaries with destructors in a co_await
  // expression. Decisions are plain member functions, so the coroutines stay small.

  using Slot = std::optional<Expected<Response>>;

  std::vector<Expected<Response>> run_batch(const Request* reqs, std::size_t n, const AnswerHook* on_answer = nullptr) {
    std::vector<Slot> slots(n);
    std::size_t next = 0;
    const std::size_t workers = std::min<std::size_t>(std::max(1u, opts_.jobs), n);
    for (std::size_t w = 0; w < workers; ++w) {
      net::co_spawn(ioc_, worker(reqs, n, slots, next, on_answer), [](const std::exception_ptr&) {});
    }
    ioc_.restart();
    for (;;) {
      try {
        ioc_.run();
        break;
      } catch (...) {  // a handler threw (never expected): keep the remaining work going
      }
    }
    std::vector<Expected<Response>> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (slots[i]) {
        out.push_back(std::move(*slots[i]));
      } else {
        out.push_back(Error(Errc::io_error, "internal error: no answer for " + redact(reqs[i].url)));
      }
    }
    return out;
  }

  net::awaitable<void> worker(const Request* reqs, std::size_t n, std::vector<Slot>& out, std::size_t& next,
                              const AnswerHook* on_answer) {
    std::size_t i = 0;
    while (next < n) {
      i = next++;
      bool failed = false;
      try {
        co_await fetch(reqs[i], out[i]);
      } catch (...) {
        failed = true;
      }
      if (failed || !out[i]) out[i].emplace(Error(Errc::io_error, "reading " + redact(reqs[i].url) + " failed unexpectedly"));
      if (on_answer) tell(*on_answer, i, *out[i]);
    }
  }

  // ---- one resource: redirects around retries around attempts ----

  /// Checks the request; the first URL, or the error.
  static Expected<Url> start(const Request& req, Headers& headers) {
    auto parsed = parse_url(req.url);
    if (!parsed) return parsed.error();
    for (const auto& [k, v] : req.headers) {
      if (k.empty() || has_ctl(k) || has_ctl(v) || k.find(':') != std::string::npos) {
        return Error(Errc::invalid_input, "request header '" + redact(k) + "' for " + redact(parsed->str()) +
                                              " has a control character or a colon in its name");
      }
      headers.emplace_back(k, v);
    }
    return parsed;
  }

  /// The route to `url`, or an error in `result`.
  bool route_for(const Url& url, Route& route, Slot& result) const {
    auto proxy = proxy_for(opts_.proxy, url);
    if (!proxy) {
      result.emplace(proxy.error());
      return false;
    }
    if (*proxy && (*proxy)->scheme != "http") {
      result.emplace(Error(Errc::unsupported, "proxy " + redact((*proxy)->str()) + " for " + redact(url.str()) +
                                                  ": only http:// proxies are supported"));
      return false;
    }
    route.url = url;
    route.proxy = std::move(*proxy);
    return true;
  }

  /// After the retries: the answer in `result`, or the next URL of a redirect in `url` (true).
  bool finish(Outcome& o, const Request& req, Url& url, Headers& headers, int& hops, Slot& result) const {
    if (!o.ok) {
      result.emplace(std::move(o.error));
      return false;
    }
    if (!is_redirect_status(o.status)) {
      Response r;
      r.url = url.str();
      r.status = o.status;
      r.headers = std::move(o.headers);
      r.content_type = std::move(o.content_type);
      if (o.status != 304) r.body = std::move(o.body);
      result.emplace(std::move(r));
      return false;
    }
    const auto location = transport::find_header(o.headers, "location");
    if (!location) {
      result.emplace(net_error(NetErrc::redirect, "HTTP " + std::to_string(o.status) + " without a Location from " + where(url)));
      return false;
    }
    if (++hops > opts_.max_redirects) {
      result.emplace(net_error(NetErrc::redirect, "too many redirects (more than " + std::to_string(opts_.max_redirects) +
                                                      ") starting at " + redact(req.url) + "; the last went to " +
                                                      redact(std::string(*location))));
      return false;
    }
    auto target = resolve_location(url, *location);
    if (!target) {
      result.emplace(net_error(NetErrc::redirect, "bad redirect Location '" + redact(std::string(*location)) + "' from " +
                                                      where(url) + ": " + target.error().message));
      return false;
    }
    if (url.scheme == "https" && target->scheme == "http") {
      result.emplace(net_error(NetErrc::redirect, "refusing the redirect from https to http: " + redact(url.str()) +
                                                      " -> " + redact(target->str())));
      return false;
    }
    if (!same_origin(url, *target)) {
      // Credentials belong to the origin they were given for.
      std::erase_if(headers, [](const auto& h) {
        return iequals(h.first, "authorization") || iequals(h.first, "proxy-authorization") || iequals(h.first, "cookie");
      });
    }
    log::debug("redirect " + std::to_string(o.status) + ": " + redact(url.str()) + " -> " + redact(target->str()));
    url = std::move(*target);
    return true;
  }

  net::awaitable<void> fetch(const Request& req, Slot& result) {
    const auto deadline = Clock::now() + opts_.deadline;
    Headers headers;
    Url url;
    Route route;
    Outcome o;
    int hops = 0;
    {
      auto first = start(req, headers);
      if (!first) {
        result.emplace(first.error());
        co_return;
      }
      url = std::move(*first);
    }
    for (;;) {
      if (!route_for(url, route, result)) co_return;
      o = Outcome{};
      co_await with_retries(route, req, headers, deadline, o);
      if (!finish(o, req, url, headers, hops, result)) co_return;
    }
  }

  /// Classifies a complete response: what the caller gets or what a retry decision sees.
  static void classify_status(Outcome& o, const Route& route) {
    const int s = o.status;
    if ((s >= 200 && s < 300) || s == 304 || is_redirect_status(s)) return;
    o.ok = false;
    if (s == 404 || s == 410) {
      o.error = Error(Errc::not_found, "not found: HTTP " + std::to_string(s) + " from " + where(route.url));
    } else if (s == 407 && route.absolute_form()) {
      o.error = proxy_auth_error(*route.proxy, route.url);
    } else {
      o.error = net_error(NetErrc::http_status, "HTTP " + std::to_string(s) + " from " + where(route.url));
    }
  }

  /// A 403 that says the rate limit is exhausted (GitHub): retried at the reset time.
  static bool limited403(const Outcome& o) {
    if (o.status != 403) return false;
    const auto left = transport::find_header(o.headers, "x-ratelimit-remaining");
    return left && *left == "0";
  }

  static Error proxy_auth_error(const Url& proxy, const Url& target) {
    const std::string what = proxy.userinfo.empty()
                                 ? "requires proxy authentication (HTTP 407); put user:password in the proxy URL"
                                 : "rejected the proxy authentication credentials (HTTP 407)";
    return net_error(NetErrc::proxy, "proxy " + proxy.host_port() + " " + what + " (" + redact(target.str()) + ")");
  }

  struct Counters {
    int attempt = 1;
    int reconnects = 0;
    int proxy_resets = 0;
  };
  enum class Next { done, again, wait };

  /// After one attempt: done (o holds the answer or the final error), again (a stale keep-alive
  /// connection: reconnect at once, uncharged) or wait `wait` and retry.
  Next after_attempt(Outcome& o, const Route& route, Counters& n, Clock::time_point deadline, milliseconds& wait) {
    if (o.stale && n.reconnects < opts_.retry.max_reconnects) {
      ++n.reconnects;
      ++stats_.reconnects;
      log::debug("stale keep-alive connection to " + route.url.host_port() + ": reconnecting (" + o.error.message + ")");
      return Next::again;
    }
    if (o.ok) {
      classify_status(o, route);
      if (o.ok) return Next::done;
    }
    if (o.proxy_reset) ++n.proxy_resets;
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    const RetryDecision d = decide_retry(opts_.retry, n.attempt, o.error, o.status, o.headers,
                                         std::chrono::system_clock::now(), uni(rng_));
    const bool transient = transport::is_transient(o.error, o.status);
    if (!d.retry || n.attempt > opts_.retry.retries) {
      if (o.proxy_reset && route.proxy) {
        o.error = net_error(NetErrc::proxy, "proxy " + route.proxy->host_port() + " reset the connection " +
                                                std::to_string(n.proxy_resets) + (n.proxy_resets == 1 ? " time" : " times") +
                                                " (CONNECT " + route.url.host_port() + " for " + redact(route.url.str()) + ")");
      } else if ((transient || limited403(o)) && n.attempt <= opts_.retry.retries) {
        // Retryable, budget left, and still no retry: the wait the server asked for is too long.
        const bool limited = transport::is(o.error, NetErrc::http_status) && (o.status == 429 || o.status == 403);
        o.error = Error(limited ? make_error_code(NetErrc::rate_limited) : o.error.code,
                        o.error.message + "; giving up: " + d.reason);
      } else if (n.attempt > 1 && transient) {
        o.error.message += " (after " + std::to_string(n.attempt) + " attempts)";
      }
      return Next::done;
    }
    if (Clock::now() + d.wait >= deadline) {
      o.error = net_error(NetErrc::deadline, "the deadline of " + ms_text(opts_.deadline) + " for " +
                                                 redact(route.url.str()) + " would pass before retry " +
                                                 std::to_string(n.attempt) + " (" + o.error.message + ")");
      return Next::done;
    }
    log::info("retry " + std::to_string(n.attempt) + " of " + std::to_string(opts_.retry.retries) + " for " +
              redact(route.url.str()) + " in " + ms_text(d.wait) + ": " + (d.reason.empty() ? o.error.message : d.reason));
    ++stats_.retries;
    ++n.attempt;
    wait = d.wait;
    return Next::wait;
  }

  net::awaitable<void> with_retries(const Route& route, const Request& req, const Headers& headers,
                                    Clock::time_point deadline, Outcome& o) {
    Counters n;
    milliseconds wait{0};
    net::steady_timer timer(ioc_);
    error_code ec;
    for (;;) {
      o = Outcome{};
      co_await attempt_once(route, req, headers, deadline, o);
      const Next next = after_attempt(o, route, n, deadline, wait);
      if (next == Next::done) co_return;
      if (next == Next::wait && wait.count() > 0) {
        timer.expires_after(wait);
        co_await timer.async_wait(tok(ec));
      }
    }
  }

  // ---- per-origin slots and the keep-alive pool ----

  net::awaitable<void> acquire(const std::string& key) {
    HostSlot& slot = slots_[key];
    net::steady_timer wake(ioc_);
    error_code ec;
    while (slot.active >= std::max(1u, opts_.per_host)) {
      wake.expires_at(net::steady_timer::time_point::max());
      slot.waiters.push_back(&wake);
      co_await wake.async_wait(tok(ec));
      // release() popped us (or we were woken for another reason): look again.
      std::erase(slot.waiters, &wake);
    }
    ++slot.active;
  }

  void release(const std::string& key) {
    HostSlot& slot = slots_[key];
    if (slot.active > 0) --slot.active;
    if (!slot.waiters.empty()) {
      net::steady_timer* t = slot.waiters.front();
      slot.waiters.pop_front();
      t->cancel();
    }
  }

  std::unique_ptr<Conn> take_idle(const std::string& key) {
    auto it = idle_.find(key);
    if (it == idle_.end() || it->second.empty()) return nullptr;
    auto c = std::move(it->second.back());
    it->second.pop_back();
    return c;
  }

  void put_idle(const std::string& key, std::unique_ptr<Conn> c) {
    auto& list = idle_[key];
    if (list.size() >= std::max(1u, opts_.per_host)) return;  // closes c
    c->tcp().expires_never();
    list.push_back(std::move(c));
  }

  /// Sets the stream's expiry to the nearer of now + limit and the deadline; true when the
  /// deadline is the nearer one.
  static bool arm(beast::tcp_stream& s, milliseconds limit, Clock::time_point deadline) {
    const auto until = Clock::now() + limit;
    const bool by_deadline = deadline <= until;
    s.expires_at(by_deadline ? deadline : until);
    return by_deadline;
  }

  // ---- connecting: TCP, proxy CONNECT, TLS ----

  /// The state of one connection attempt (kept in one object the coroutine fills in).
  struct Connecting {
    const Route* route = nullptr;
    Clock::time_point until;
    bool by_deadline = false;
    std::string hop_name;
    std::string port_text;
    std::unique_ptr<Conn> conn;
    http::request<http::empty_body> connect_request;
    std::optional<http::response_parser<http::empty_body>> connect_answer;
    Outcome failure;
  };

  Error connect_timeout_error(const Connecting& k, const char* stage) const {
    if (k.by_deadline) {
      return net_error(NetErrc::deadline, "the deadline of " + ms_text(opts_.deadline) + " passed while " + stage + " " +
                                              k.hop_name + " (" + redact(k.route->url.str()) + ")");
    }
    return net_error(NetErrc::connect_timeout, std::string(stage) + " " + k.hop_name + " timed out after " +
                                                   ms_text(opts_.connect_timeout) + " (" + redact(k.route->url.str()) + ")");
  }

  Error tcp_error(const Connecting& k, const error_code& ec) const {
    if (ec == beast::error::timeout) return connect_timeout_error(k, "connecting to");
    if (ec == net::error::connection_refused) {
      return net_error(NetErrc::connect_failed, "connection refused to " + k.hop_name + " (" + redact(k.route->url.str()) + ")");
    }
    return net_error(NetErrc::connect_failed, "cannot connect to " + k.hop_name + ": " + ec.message() + " (" +
                                                  redact(k.route->url.str()) + ")");
  }

  void prepare_connect_request(Connecting& k) const {
    const Route& route = *k.route;
    auto& rq = k.connect_request;
    rq.method(http::verb::connect);
    rq.target(route.url.host_port());
    rq.version(11);
    rq.set(http::field::host, route.url.host_port());
    rq.set(http::field::user_agent, opts_.user_agent);
    if (!route.proxy->userinfo.empty()) rq.set(http::field::proxy_authorization, basic_auth(route.proxy->userinfo));
    k.connect_answer.emplace();
    k.connect_answer->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(opts_.max_header_bytes, UINT32_MAX)));
    k.connect_answer->skip(true);
  }

  /// After the proxy's answer to CONNECT: true when the tunnel is open.
  bool tunnel_result(Connecting& k, const error_code& ec) const {
    const Route& route = *k.route;
    const Url& proxy = *route.proxy;
    if (ec) {
      if (ec == beast::error::timeout) {
        k.failure = fail(connect_timeout_error(k, "the CONNECT tunnel through"));
      } else if (is_closed(ec) || ec == http::error::partial_message) {
        k.failure = fail(net_error(NetErrc::reset, "proxy " + proxy.host_port() + " reset the connection (CONNECT " +
                                                       route.url.host_port() + " for " + redact(route.url.str()) + ")"));
        k.failure.proxy_reset = true;
      } else {
        k.failure = fail(net_error(NetErrc::proxy, "proxy " + proxy.host_port() + " sent a malformed answer to CONNECT " +
                                                       route.url.host_port() + ": " + ec.message() + " (" +
                                                       redact(route.url.str()) + ")"));
      }
      return false;
    }
    const auto& answer = k.connect_answer->get();
    const int s = answer.result_int();
    if (s == 407) {
      k.failure = fail(proxy_auth_error(proxy, route.url), s);
      return false;
    }
    if (s < 200 || s >= 300) {
      const std::string msg = "proxy " + proxy.host_port() + " refused the tunnel to " + route.url.host_port() +
                              ": HTTP " + std::to_string(s) + " " + std::string(answer.reason()) + " (" +
                              redact(route.url.str()) + ")";
      const bool transient = s == 502 || s == 503 || s == 504 || s == 408 || s == 429;
      k.failure = fail(net_error(transient ? NetErrc::http_status : NetErrc::proxy, msg), s);
      return false;
    }
    k.conn->buffer.consume(k.conn->buffer.size());
    return true;
  }

  /// Wraps the TCP stream in TLS: SNI (not for IP literals), peer and host-name verification.
  void prepare_tls(Connecting& k) {
    Conn& c = *k.conn;
    const Url& url = k.route->url;
    if (system_roots_pending_) {
      system_roots_pending_ = false;
      error_code ignored;
      ssl_.set_default_verify_paths(ignored);  // none: every peer fails verification, as it should
    }
    c.tls.emplace(std::move(*c.plain), ssl_);
    c.plain.reset();
    if (!url.is_ip_literal()) SSL_set_tlsext_host_name(c.tls->native_handle(), url.host.c_str());
    c.tls->set_verify_mode(ssl::verify_peer);
    Conn* raw = &c;
    c.tls->set_verify_callback([raw, host = url.host, check = ssl::host_name_verification(url.host)](
                                   bool preverified, ssl::verify_context& vc) {
      X509_STORE_CTX* x = vc.native_handle();
      if (!preverified) {
        if (raw->verify_failure.empty()) raw->verify_failure = X509_verify_cert_error_string(X509_STORE_CTX_get_error(x));
        return false;
      }
      if (X509_STORE_CTX_get_error_depth(x) == 0 && !check(preverified, vc)) {
        raw->verify_failure = "the certificate does not name host " + host;
        return false;
      }
      return true;
    });
    c.tls->next_layer().expires_at(k.until);
  }

  Error tls_error(const Connecting& k, const error_code& ec) const {
    const Conn& c = *k.conn;
    const Url& url = k.route->url;
    const long vr = SSL_get_verify_result(const_cast<Conn&>(c).tls->native_handle());
    const bool cert = !c.verify_failure.empty() || vr != X509_V_OK ||
                      (ec.category() == net::error::get_ssl_category() &&
                       ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED);
    if (cert) {
      std::string why = c.verify_failure;
      if (why.empty()) why = vr != X509_V_OK ? X509_verify_cert_error_string(vr) : ec.message();
      return net_error(NetErrc::certificate, "certificate of " + url.host_port() + " rejected: " + why + " (" +
                                                 redact(url.str()) + ")");
    }
    if (ec == beast::error::timeout) return connect_timeout_error(k, "the TLS handshake with");
    const std::string why = is_closed(ec) ? "the connection was closed or reset" : ec.message();
    return net_error(NetErrc::tls_handshake, "TLS handshake with " + url.host_port() + " failed: " + why + " (" +
                                                 redact(url.str()) + ")");
  }

  net::awaitable<void> connect(Connecting& k) {
    const Route& route = *k.route;
    const Url& hop = route.proxy ? *route.proxy : route.url;
    const auto connect_until = Clock::now() + opts_.connect_timeout;
    error_code ec;
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type endpoints;
    k.by_deadline = k.until <= connect_until;
    if (!k.by_deadline) k.until = connect_until;
    k.hop_name = (route.proxy ? "proxy " : "") + hop.host_port();
    k.port_text = std::to_string(hop.port);

    endpoints = co_await resolver.async_resolve(hop.host, k.port_text, tok(ec));
    if (ec) {
      k.failure = fail(net_error(NetErrc::connect_failed, "cannot resolve " + k.hop_name + ": " + ec.message() + " (" +
                                                              redact(route.url.str()) + ")"));
      co_return;
    }
    k.conn = std::make_unique<Conn>(ioc_);
    k.conn->plain->expires_at(k.until);
    co_await k.conn->plain->async_connect(endpoints, tok(ec));
    if (ec) {
      k.failure = fail(tcp_error(k, ec));
      k.conn.reset();
      co_return;
    }
    ++stats_.connections;
    k.conn->plain->socket().set_option(tcp::no_delay(true), ec);
    ec = {};

    if (route.tunnel()) {
      prepare_connect_request(k);
      k.conn->plain->expires_at(k.until);
      co_await http::async_write(*k.conn->plain, k.connect_request, tok(ec));
      if (!ec) {
        k.conn->plain->expires_at(k.until);
        co_await http::async_read_header(*k.conn->plain, k.conn->buffer, *k.connect_answer, tok(ec));
      }
      if (!tunnel_result(k, ec)) {
        k.conn.reset();
        co_return;
      }
    }

    if (route.url.scheme == "https") {
      prepare_tls(k);
      co_await k.conn->tls->async_handshake(ssl::stream_base::client, tok(ec));
      if (ec) {
        k.failure = fail(tls_error(k, ec));
        k.conn.reset();
        co_return;
      }
    }
    k.conn->tcp().expires_never();
  }

  // ---- one attempt ----

  void prepare_request(const Route& route, const Request& req, const Headers& headers,
                       http::request<http::empty_body>& rq) const {
    rq.method(http::verb::get);
    rq.target(route.absolute_form() ? route.url.str() : route.url.target);
    rq.version(11);
    rq.set(http::field::host, host_header(route.url));
    rq.set(http::field::user_agent, opts_.user_agent);
    rq.set(http::field::accept_encoding, req.compressed ? "gzip" : "identity");
    bool has_auth = false;
    for (const auto& [k, v] : headers) {
      if (iequals(k, "host") || iequals(k, "accept-encoding") || iequals(k, "connection") ||
          iequals(k, "content-length") || iequals(k, "transfer-encoding") || iequals(k, "proxy-authorization")) {
        continue;
      }
      if (iequals(k, "authorization")) has_auth = true;
      if (iequals(k, "user-agent")) {
        rq.set(http::field::user_agent, v);
      } else {
        rq.insert(k, v);
      }
    }
    if (!has_auth && !route.url.userinfo.empty()) rq.set(http::field::authorization, basic_auth(route.url.userinfo));
    if (route.absolute_form() && !route.proxy->userinfo.empty()) {
      rq.set(http::field::proxy_authorization, basic_auth(route.proxy->userinfo));
    }
  }

  net::awaitable<void> attempt_once(const Route& route, const Request& req, const Headers& headers,
                                    Clock::time_point deadline, Outcome& o) {
    const std::string key = route.key();
    std::unique_ptr<Conn> c;
    Connecting k;
    Exchange x;
    bool reused = false;

    co_await acquire(key);
    SlotGuard guard(this, key);
    c = take_idle(key);
    reused = c != nullptr;
    if (!c) {
      k.route = &route;
      k.until = deadline;
      co_await connect(k);
      if (!k.conn) {
        o = std::move(k.failure);
        co_return;
      }
      c = std::move(k.conn);
    }

    x.conn = c.get();
    x.req = &req;
    x.route = &route;
    x.deadline = deadline;
    x.reused = reused;
    x.out = &o;
    prepare_request(route, req, headers, x.request);
    if (c->tls) {
      co_await exchange(*c->tls, x);
    } else {
      co_await exchange(*c->plain, x);
    }
    if (o.ok && o.keep) {
      put_idle(key, std::move(c));
    } else {
      c->close();
    }
  }

  /// The state of one request / response exchange on a connection.
  struct Exchange {
    Conn* conn = nullptr;
    const Request* req = nullptr;
    const Route* route = nullptr;
    Clock::time_point deadline;
    bool reused = false;
    Outcome* out = nullptr;
    http::request<http::empty_body> request;
    std::optional<http::response_parser<http::string_body>> parser;
    bool by_deadline = false;
    std::unique_ptr<Gunzip> gunzip;  ///< set when the body is gzip-encoded
    std::uint64_t wire = 0;          ///< body bytes received and already handed to gunzip
  };

  Error timeout_error(const Exchange& x, const char* doing) const {
    if (x.by_deadline) {
      return net_error(NetErrc::deadline, "the deadline of " + ms_text(opts_.deadline) + " passed while " + doing + " " +
                                              where(x.route->url));
    }
    return net_error(NetErrc::idle_timeout, std::string(doing) + " " + where(x.route->url) + " timed out after " +
                                                ms_text(opts_.idle_timeout));
  }

  /// After writing the request: false (and the outcome set) on an error.
  bool written(Exchange& x, const error_code& ec) {
    ++stats_.requests;
    if (!ec) return true;
    if (ec == beast::error::timeout) {
      *x.out = fail(timeout_error(x, "sending the request to"));
    } else {
      *x.out = fail(net_error(NetErrc::reset, "connection to " + where(x.route->url) +
                                                  " failed while sending the request: " + ec.message()));
      x.out->stale = x.reused;
    }
    return false;
  }

  void start_parser(Exchange& x) const {
    // Beast sizes each socket read by the buffer's spare capacity (at least 512 bytes, at most
    // 64 KiB); the parser drains the buffer, so without this it never grows and a 7 MB page
    // costs ~20,000 tiny reads. 64 KiB of room makes every read as large as Beast allows.
    x.conn->buffer.reserve(x.conn->buffer.size() + (64u << 10));
    x.parser.emplace();
    x.parser->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(opts_.max_header_bytes, UINT32_MAX)));
    x.parser->body_limit(static_cast<std::uint64_t>(x.req->max_body));
  }

  /// After reading the header: false (and the outcome set) on an error or a header over a limit.
  bool header_read(Exchange& x, const error_code& ec) {
    const Url& url = x.route->url;
    Outcome& o = *x.out;
    auto& p = *x.parser;
    if (ec) {
      const auto too_long = [&] {
        o = fail(Error(Errc::too_large, "the Content-Length of the response from " + where(url) +
                                            " exceeds the limit of " + std::to_string(x.req->max_body) + " bytes"));
      };
      if (ec == beast::error::timeout) {
        o = fail(timeout_error(x, "waiting for the response from"));
      } else if (ec == http::error::header_limit) {
        o = fail(Error(Errc::too_large, "the response header from " + where(url) + " exceeds " +
                                            std::to_string(opts_.max_header_bytes) + " bytes"));
      } else if (ec == http::error::body_limit) {
        too_long();
      } else if (ec == http::error::bad_content_length &&
                 huge_content_length(std::string_view(static_cast<const char*>(x.conn->buffer.data().data()),
                                                      x.conn->buffer.data().size()))) {
        too_long();
      } else if (is_closed(ec) && !p.got_some() && x.conn->buffer.size() == 0) {
        o = fail(net_error(NetErrc::reset, "connection to " + where(url) + " closed before any response byte: " + ec.message()));
        o.stale = x.reused;
      } else if (is_closed(ec) || ec == http::error::partial_message) {
        o = fail(net_error(NetErrc::truncated, "the response header from " + where(url) + " was cut short"));
      } else if (is_http_error(ec)) {
        o = fail(net_error(NetErrc::protocol, "malformed response from " + where(url) + ": " + ec.message()));
      } else {
        o = fail(net_error(NetErrc::reset, "reading the response from " + where(url) + " failed: " + ec.message()));
      }
      return false;
    }
    o.status = p.get().result_int();
    std::size_t fields = 0;
    for (const auto& f : p.get()) {
      ++fields;
      if (f.name_string().size() + f.value().size() + 4 > kMaxHeaderLine) {
        o = fail(Error(Errc::too_large, "a response header line from " + where(url) + " exceeds " +
                                            std::to_string(kMaxHeaderLine) + " bytes"));
        return false;
      }
      o.headers.emplace_back(util::ascii_lower(std::string_view(f.name_string().data(), f.name_string().size())),
                             std::string(f.value()));
    }
    if (fields > kMaxHeaderFields) {
      o = fail(Error(Errc::too_large, "the response from " + where(url) + " has " + std::to_string(fields) +
                                          " header fields (at most " + std::to_string(kMaxHeaderFields) + ")"));
      return false;
    }
    if (const auto ct = transport::find_header(o.headers, "content-type")) o.content_type = media_type(*ct);
    return decoding(x);
  }

  /// After the header: prepares decoding the body of a 2xx (false, and the outcome set, for a
  /// coding other than gzip). Other statuses keep their meaning: their bodies are never used.
  bool decoding(Exchange& x) {
    Outcome& o = *x.out;
    if (o.status == 304) {
      // No body; the body a cache revalidates with it was decoded, so no coding is claimed.
      std::erase_if(o.headers, [](const auto& h) { return h.first == "content-encoding"; });
      return true;
    }
    if (o.status < 200 || o.status >= 300) return true;
    const auto codings = content_codings(o.headers);
    if (codings.empty()) return true;
    if (codings.size() == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip")) {
      x.gunzip = std::make_unique<Gunzip>(x.req->max_body);
      return true;
    }
    std::string list;
    for (const auto& c : codings) list += (list.empty() ? "" : ", ") + c;
    o = fail(net_error(NetErrc::protocol, "unsupported Content-Encoding '" + list + "' from " + where(x.route->url) +
                                              " (wheelfit decodes gzip only)"));
    return false;
  }

  /// Decodes what the parser has collected so far (gzip bodies): false, and the outcome set, on
  /// a corrupt stream or a decoded body over the limit.
  bool decode_some(Exchange& x, bool last) {
    if (!x.gunzip) return true;
    auto& body = x.parser->get().body();
    x.wire += body.size();
    stats_.bytes += body.size();
    auto st = x.gunzip->feed(body);
    body.clear();
    if (st == Gunzip::Status::ok && last) st = x.gunzip->finish();
    if (st == Gunzip::Status::ok) return true;
    const Url& url = x.route->url;
    if (st == Gunzip::Status::too_large) {
      *x.out = fail(Error(Errc::too_large, "the decoded gzip body from " + where(url) + " exceeds the limit of " +
                                               std::to_string(x.req->max_body) + " bytes"));
    } else {
      *x.out = fail(net_error(NetErrc::protocol, "gzip body from " + where(url) + ": " + x.gunzip->why() +
                                                     " (after " + std::to_string(x.wire) + " compressed bytes)"));
    }
    return false;
  }

  /// After the body loop: the outcome.
  void body_read(Exchange& x, const error_code& ec) {
    const Url& url = x.route->url;
    Outcome& o = *x.out;
    auto& p = *x.parser;
    const std::uint64_t received = x.wire + p.get().body().size();
    if (ec) {
      stats_.bytes += p.get().body().size();
      if (ec == beast::error::timeout) {
        o = fail(timeout_error(x, "reading the body from"));
      } else if (ec == http::error::body_limit) {
        o = fail(Error(Errc::too_large, "the response body from " + where(url) + " exceeds the limit of " +
                                            std::to_string(x.req->max_body) + " bytes"));
      } else if (is_closed(ec) || ec == http::error::partial_message) {
        o = fail(net_error(NetErrc::truncated, "the response from " + where(url) + " was cut short after " +
                                                   std::to_string(received) + " body bytes"));
      } else if (is_http_error(ec)) {
        o = fail(net_error(NetErrc::protocol, "malformed response body from " + where(url) + ": " + ec.message()));
      } else {
        o = fail(net_error(NetErrc::truncated, "reading the body from " + where(url) + " failed: " + ec.message()));
      }
      return;
    }
    x.conn->tcp().expires_never();
    if (x.gunzip) {
      if (!decode_some(x, true)) return;  // counts the bytes
      o.body = std::move(x.gunzip->out());
      std::erase_if(o.headers, [](const auto& h) { return h.first == "content-encoding" || h.first == "content-length"; });
    } else {
      stats_.bytes += p.get().body().size();
      o.body = std::move(p.get().body());
    }
    o.keep = p.get().keep_alive() && !p.need_eof() && x.conn->buffer.size() == 0;
    o.ok = true;
  }

  template <class Stream>
  net::awaitable<void> exchange(Stream& s, Exchange& x) {
    error_code ec;
    x.by_deadline = arm(x.conn->tcp(), opts_.idle_timeout, x.deadline);
    co_await http::async_write(s, x.request, tok(ec));
    if (!written(x, ec)) co_return;

    start_parser(x);
    x.by_deadline = arm(x.conn->tcp(), opts_.idle_timeout, x.deadline);
    co_await http::async_read_header(s, x.conn->buffer, *x.parser, tok(ec));
    if (!header_read(x, ec)) co_return;

    while (!x.parser->is_done()) {
      x.by_deadline = arm(x.conn->tcp(), opts_.idle_timeout, x.deadline);
      co_await http::async_read_some(s, x.conn->buffer, *x.parser, tok(ec));
      if (ec) break;
      if (!decode_some(x, false)) co_return;
    }
    body_read(x, ec);
  }

  HttpOptions opts_;
  net::io_context ioc_{1};
  ssl::context ssl_;
  bool system_roots_pending_;  ///< set_default_verify_paths before the first TLS stream (one io thread)
  std::map<std::string, std::vector<std::unique_ptr<Conn>>> idle_;
  std::map<std::string, HostSlot> slots_;
  Stats stats_;
  std::mt19937_64 rng_;
};

/// file:// and plain paths to the file transport, http(s) to the http transport.
class SchemeTransport final : public Transport {
 public:
  SchemeTransport(std::unique_ptr<Transport> file, std::unique_ptr<Transport> http)
      : file_(std::move(file)), http_(std::move(http)) {}
  [[nodiscard]] Stats stats() const override { return http_->stats(); }
  void flush() override {
    file_->flush();
    http_->flush();
  }

 private:
  enum class Kind { file, http, other };
  static Kind kind_of(std::string_view url) {
    if (is_local(url)) return Kind::file;
    const std::string lower = util::ascii_lower(url.substr(0, std::min<std::size_t>(url.size(), 8)));
    if (lower.starts_with("http://") || lower.starts_with("https://")) return Kind::http;
    return Kind::other;
  }
  static Error unsupported(const std::string& url) {
    return Error(Errc::unsupported, "unsupported URL scheme: " + redact(url) + " (wheelfit reads file://, http:// and https://)");
  }
  Expected<Response> get_impl(const Request& request) override {
    switch (kind_of(request.url)) {
      case Kind::file: return file_->get(request);
      case Kind::http: return http_->get(request);
      case Kind::other: break;
    }
    return unsupported(request.url);
  }
  std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) override {
    return get_many_hooked_impl(requests, {});
  }
  std::vector<Expected<Response>> get_many_hooked_impl(const std::vector<Request>& requests,
                                                       const AnswerHook& on_answer) override {
    std::vector<std::optional<Expected<Response>>> slots(requests.size());
    std::vector<Request> remote;
    std::vector<std::size_t> where_from;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      switch (kind_of(requests[i].url)) {
        case Kind::file: slots[i].emplace(file_->get(requests[i])); break;
        case Kind::http:
          remote.push_back(requests[i]);
          where_from.push_back(i);
          continue;
        case Kind::other: slots[i].emplace(unsupported(requests[i].url)); break;
      }
      tell(on_answer, i, *slots[i]);
    }
    if (!remote.empty()) {
      AnswerHook mapped;
      if (on_answer) mapped = [&](std::size_t j, const Expected<Response>& a) { on_answer(where_from[j], a); };
      auto answers = http_->get_many(remote, mapped);
      for (std::size_t j = 0; j < answers.size(); ++j) slots[where_from[j]].emplace(std::move(answers[j]));
    }
    std::vector<Expected<Response>> out;
    out.reserve(slots.size());
    for (auto& s : slots) out.push_back(std::move(*s));
    return out;
  }

  std::unique_ptr<Transport> file_, http_;
};

}  // namespace

Expected<std::unique_ptr<transport::Transport>> make_http_transport(HttpOptions options) {
  options.jobs = std::max(1u, options.jobs);
  options.per_host = std::max(1u, options.per_host);
  if (options.proxy_from_env) options.proxy = ProxyConfig::from_env();
  std::string file_source = "the ca_file option", dir_source = "the ca_dir option";
  if (options.ca_from_env) {
    if (const char* f = std::getenv("SSL_CERT_FILE"); f && *f) {
      options.ca_file = f;
      file_source = "SSL_CERT_FILE";
    }
    if (const char* d = std::getenv("SSL_CERT_DIR"); d && *d) {
      options.ca_dir = d;
      dir_source = "SSL_CERT_DIR";
    }
  }
  try {
    ssl::context ctx(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                    ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
    error_code ec;
    namespace fs = std::filesystem;
    if (options.ca_file || options.ca_dir) {
      if (options.ca_file) {
        std::error_code fec;
        if (!fs::is_regular_file(*options.ca_file, fec)) {
          return unexpected(Errc::invalid_input, "the CA file " + *options.ca_file + " (from " + file_source +
                                                     ") does not exist or is not a file");
        }
        ctx.load_verify_file(*options.ca_file, ec);
        if (ec) {
          return unexpected(Errc::invalid_input, "cannot read the CA file " + *options.ca_file + " (from " +
                                                     file_source + "): " + ec.message());
        }
      }
      if (options.ca_dir) {
        std::error_code fec;
        if (!fs::is_directory(*options.ca_dir, fec)) {
          return unexpected(Errc::invalid_input, "the CA directory " + *options.ca_dir + " (from " + dir_source +
                                                     ") does not exist or is not a directory");
        }
        ctx.add_verify_path(*options.ca_dir, ec);
        if (ec) {
          return unexpected(Errc::invalid_input, "cannot use the CA directory " + *options.ca_dir + " (from " +
                                                     dir_source + "): " + ec.message());
        }
      }
    }
    const bool system_roots = !options.ca_file && !options.ca_dir;  // loaded at the first TLS connection
    return std::unique_ptr<transport::Transport>(
        std::make_unique<HttpTransport>(std::move(options), std::move(ctx), system_roots));
  } catch (const std::exception& e) {
    return unexpected(Errc::invalid_input, std::string("cannot set up TLS: ") + e.what());
  }
}

Expected<std::unique_ptr<transport::Transport>> make_transport(HttpOptions options) {
  auto http_t = make_http_transport(std::move(options));
  if (!http_t) return http_t.error();
  return std::unique_ptr<transport::Transport>(
      std::make_unique<SchemeTransport>(make_file_transport(), std::move(*http_t)));
}

}  // namespace wheelfit::transports
