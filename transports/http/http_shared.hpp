// Private to the http transport: the declarations its translation units share (the connection,
// route and outcome types, the gzip decoder, the HttpTransport class). The member functions are
// defined by area: http_request_loop.cpp, http_connection.cpp, http_exchange.cpp, http_decode.cpp.
#pragma once

#include <openssl/ssl.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/optional/optional.hpp>

#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/trust_store.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::transports::detail {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using net::Headers;
using net::NetErrc;
using net::net_error;
using net::Request;
using net::Response;
using net::Stats;
using net::Transport;

inline auto tok(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

inline std::string ms_text(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

using util::iequals;

inline bool has_ctl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

inline bool is_redirect_status(int s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

/// "host:port (url)" for messages, the URL redacted.
inline std::string where(const Url& u) { return u.host_port() + " (" + redact(u.str()) + ")"; }

inline bool same_origin(const Url& a, const Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.port == b.port;
}

/// The connection closed or reset (no response byte involved). In http_connection.cpp.
bool is_closed(const error_code& ec);

// The trust store and the client certificate (trust_store.cpp).
/// Loads the chosen trust locations and client certificate into `ctx`; the error names the file
/// and the flag or variable it came from.
Expected<void> load_trust(ssl::context& ctx, const TrustChoice& choice);
/// Loads OpenSSL's default store into `ctx`: an error (NetErrc::certificate) naming it when it
/// could not be loaded or holds no certificate.
std::optional<Error> load_system_roots(ssl::context& ctx);
/// The error for a TLS alert by which the server refused the client certificate, or asked for
/// one that was not `presented`; nullopt for any other error.
std::optional<Error> client_cert_refused(const error_code& ec, const Url& url, bool presented);

/// Beast's string_body for reading responses, except that the reader reserves at most 64 MiB
/// for a Content-Length: a streamed body (a 3 GB wheel, Request::sink) is drained after every
/// read, so reserving its whole length would only risk an allocation failure.
struct ResponseBody {
  using value_type = std::string;
  static constexpr std::uint64_t kMaxReserve = 64u << 20;
  static std::uint64_t size(const value_type& body) { return body.size(); }
  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>& length, error_code& ec) {
      if (length) body_.reserve(static_cast<std::size_t>(std::min(*length, kMaxReserve)));
      ec = {};
    }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, error_code& ec) {
      const std::size_t extra = asio::buffer_size(buffers);
      const std::size_t size = body_.size();
      if (extra > body_.max_size() - size) {
        ec = http::error::buffer_overflow;
        return 0;
      }
      body_.resize(size + extra);
      asio::buffer_copy(asio::buffer(body_.data() + size, extra), buffers);
      ec = {};
      return extra;
    }
    void finish(error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

/// One connection: plain TCP, or TLS over TCP (directly or through a proxy tunnel).
struct Conn {
  explicit Conn(asio::io_context& ioc) { plain.emplace(ioc); }
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

/// The idle timeout and deadline of a body read past the parser: one expiry, moved on by progress
/// (a timer armed for every read costs as much as a small read). The timer's handler holds it, so
/// it outlives the read loop; `done` ends it.
struct BodyWatch {
  explicit BodyWatch(beast::tcp_stream& s) : stream(&s), timer(s.get_executor()) {}
  beast::tcp_stream* stream;
  asio::steady_timer timer;
  Clock::time_point progress;  ///< the last byte's time
  milliseconds idle{0};
  Clock::time_point deadline;
  bool fired = false, by_deadline = false, done = false;
};

/// Where one URL goes: directly, or via a proxy.
struct Route {
  Url url;
  std::optional<Url> proxy;
  std::string authorization;  ///< the Authorization the transport adds for `url` (credentials.hpp), or ""
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

/// The GSS-API steps of one transport running on threads of their own: each thread holds this
/// (shared), counts itself in and out, and wakes a waiter when the last one ends.
struct GssCalls {
  std::mutex m;
  std::condition_variable ended;
  unsigned live = 0;
};

/// Authentication to the proxy on one connection: the Negotiate exchange in progress (when the
/// proxy asked for it or --proxy-auth negotiate) and the Proxy-Authorization to send next.
struct ProxyAuthState {
  std::unique_ptr<ProxyNegotiation> negotiation;
  std::string header;  ///< "Negotiate <base64>" for the next request or CONNECT; "" none
  std::optional<Error> failure;  ///< set when no token could be made
};

/// The result of one attempt: a complete response, or an error.
struct Outcome {
  bool ok = false;
  bool stale = false;        ///< a reused connection failed before any response byte
  bool proxy_reset = false;  ///< the proxy reset / closed the connection during CONNECT
  bool keep = false;         ///< the connection may serve another request
  bool sink_failed = false;  ///< the request's BodySink refused the body: final, never retried
  Error error;
  int status = 0;
  Headers headers;
  std::string body;
  std::string content_type;
};

inline Outcome fail(Error e, int status = 0) {
  Outcome o;
  o.error = std::move(e);
  o.status = status;
  return o;
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
  Status feed(std::string_view in);
  /// After the last input: corrupt when a member is incomplete (an empty body is an empty body).
  Status finish();
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

class HttpTransport final : public Transport {
 public:
  /// `system_roots`: the machine's default trust store is still to be loaded (no other was
  /// chosen). Parsing the system bundle costs ~25 ms, so it waits for the first TLS connection: a
  /// run over file:// or http:// never pays it.
  HttpTransport(HttpOptions options, ssl::context ctx, bool system_roots)
      : opts_(std::move(options)),
        client_cert_(SSL_CTX_get0_certificate(ctx.native_handle()) != nullptr),
        ssl_(std::move(ctx)),
        system_roots_pending_(system_roots) {
    std::random_device rd;
    rng_.seed((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  }
  ~HttpTransport() override {
    idle_.clear();
    wait_gss_calls();
  }

  [[nodiscard]] Stats stats() const override { return stats_; }

 private:
  /// The client_cert_refused error for `ec`.
  [[nodiscard]] std::optional<Error> refused(const error_code& ec, const Url& url) const {
    return client_cert_refused(ec, url, client_cert_);
  }

  struct HostSlot {
    unsigned active = 0;
    std::deque<asio::steady_timer*> waiters;
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

  std::vector<Expected<Response>> run_batch(const Request* reqs, std::size_t n,
                                            const AnswerHook* on_answer = nullptr);
  asio::awaitable<void> worker(const Request* reqs, std::size_t n, std::vector<Slot>& out, std::size_t& next,
                              const AnswerHook* on_answer);

  // ---- one resource: redirects around retries around attempts (http_request_loop.cpp) ----

  struct Counters {
    int attempt = 1;
    int reconnects = 0;
    int proxy_resets = 0;
  };
  enum class Next { done, again, wait };

  static Expected<Url> start(const Request& req, Headers& headers);
  bool route_for(const Url& url, Route& route, Slot& result);
  bool finish(Outcome& o, const Request& req, Url& url, Headers& headers, int& hops, Slot& result) const;
  asio::awaitable<void> fetch(const Request& req, Slot& result);
  void classify_status(Outcome& o, const Route& route) const;
  static bool limited403(const Outcome& o);
  /// A 407 that is not answered: names the proxy, what it offers and why wheelfit sent nothing
  /// more (the mode, no user:password). `negotiated`: a Negotiate token went out.
  [[nodiscard]] Error proxy_auth_error(const Url& proxy, const Url& target, const std::vector<std::string>& offered,
                                       bool negotiated) const;
  Next after_attempt(Outcome& o, const Route& route, Counters& n, Clock::time_point deadline, milliseconds& wait);
  asio::awaitable<void> with_retries(const Route& route, const Request& req, const Headers& headers,
                                    Clock::time_point deadline, Outcome& o);
  /// The headers of the next attempt: `headers`, and what the request's sink adds (Range).
  static void attempt_headers(const Request& req, const Headers& headers, Headers& out);

  // ---- per-origin slots, the keep-alive pool, connecting: TCP, proxy CONNECT, TLS (http_connection.cpp) ----

  /// The state of one connection attempt (kept in one object the coroutine fills in).
  struct Connecting {
    const Route* route = nullptr;
    Clock::time_point until;
    bool by_deadline = false;
    std::string hop_name;
    std::string port_text;
    tcp::resolver::results_type endpoints;
    std::unique_ptr<Conn> conn;
    http::request<http::empty_body> connect_request;
    std::optional<http::response_parser<http::empty_body>> connect_answer;
    ProxyAuthState auth;             ///< Negotiate with the proxy during CONNECT
    std::optional<std::string> challenge;  ///< the 407's Negotiate challenge, to answer next
    bool reusable = false;           ///< the 407's body was drained: the next CONNECT goes on this connection
    Outcome failure;
  };
  enum class Tunnel { open, failed, challenged };

  asio::awaitable<void> acquire(const std::string& key);
  void release(const std::string& key);
  std::unique_ptr<Conn> take_idle(const std::string& key);
  void put_idle(const std::string& key, std::unique_ptr<Conn> c);
  static bool arm(beast::tcp_stream& s, milliseconds limit, Clock::time_point deadline);
  Error connect_timeout_error(const Connecting& k, const char* stage) const;
  Error tcp_error(const Connecting& k, const error_code& ec) const;
  void prepare_connect_request(Connecting& k) const;
  Tunnel tunnel_result(Connecting& k, const error_code& ec);
  asio::awaitable<void> open_tcp(Connecting& k);
  asio::awaitable<void> open_tunnel(Connecting& k);
  /// Reads the rest of a 407 to CONNECT (its Content-Length body) so the connection can carry
  /// the next leg; k.reusable says whether it can.
  asio::awaitable<void> drain_connect_answer(Connecting& k);

  // ---- authentication to the proxy: Basic, Negotiate (http_proxy_auth.cpp) ----

  /// "Basic <base64>" when the mode sends the proxy URL's user:password, else "".
  [[nodiscard]] std::string basic_header(const Url& proxy) const;
  /// Whether a 407 offering Negotiate is answered with it (auto without user:password, negotiate).
  [[nodiscard]] bool negotiate_allowed(const Url& proxy) const;
  /// Whether the first request or CONNECT through `proxy` carries a Negotiate token (negotiate
  /// forced, or the proxy asked for Negotiate before in this transport).
  [[nodiscard]] bool negotiate_first(const Url& proxy) const;
  /// The next Negotiate token for `st` (`challenge`: a 407's, or nullopt before any; reset
  /// here): st.header, or st.failure naming the proxy. The GSS-API step runs on a thread of its
  /// own, bounded by `until`: a KDC that does not answer cannot hold the io thread.
  asio::awaitable<void> negotiate_step(ProxyAuthState& st, const Route& route, std::optional<std::string>& challenge,
                                      Clock::time_point until);
  /// One GSS-API step on a thread of its own (`context` and `input` are moved there): `out` set,
  /// or left empty when `until` passed first (the call then finishes alone, its result dropped,
  /// and the destructor waits for it: wait_gss_calls).
  asio::awaitable<void> gss_call(std::shared_ptr<GssContext>& context, std::string& input, Clock::time_point until,
                                std::optional<GssStep>& out);
  /// After the proxy's final (non-407) answer with these Proxy-Authenticate values: the mutual
  /// authentication check when a Negotiate exchange ran; the error naming the proxy, or nullopt.
  std::optional<Error> negotiate_finish(ProxyAuthState& st, const Route& route, const std::vector<std::string>& values);
  Error negotiate_error(const Route& route, const std::string& what) const;
  /// Waits, up to opts_.gss_wait, for the GSS-API steps still running (their requests gave up on
  /// them); warns about any left running after that.
  void wait_gss_calls() noexcept;
  bool trust_ready(Connecting& k);
  void prepare_tls(Connecting& k);
  Error tls_error(const Connecting& k, const error_code& ec) const;
  asio::awaitable<void> connect(Connecting& k);

  // ---- one attempt: the request written, the response read (http_exchange.cpp) ----

  /// The state of one request / response exchange on a connection.
  struct Exchange {
    Conn* conn = nullptr;
    const Request* req = nullptr;
    const Route* route = nullptr;
    Clock::time_point deadline;
    bool reused = false;
    Outcome* out = nullptr;
    http::request<http::empty_body> request;
    std::optional<http::response_parser<ResponseBody>> parser;
    bool by_deadline = false;
    std::unique_ptr<Gunzip> gunzip;  ///< set when the body is gzip-encoded
    std::uint64_t wire = 0;          ///< body bytes received and already handed to gunzip (or the sink)
    bool streaming = false;          ///< a 2xx body going to req->sink
    SpeedFloor floor;                ///< the low-speed rule over this attempt's reads
    // A streamed body of known length, read past the parser (read_direct):
    std::uint64_t left = 0;          ///< its bytes still to come
    bool lent = false;               ///< the last read went into the sink's room (else into scratch)
    std::unique_ptr<char[]> scratch; ///< where it is read for a sink that lends no room
  };

  void prepare_request(const Route& route, const Request& req, const Headers& headers, const ProxyAuthState& auth,
                       http::request<http::empty_body>& rq) const;
  /// Sets up `x` for one exchange on `c` (fresh parser, decoder and speed floor; `o` emptied).
  void begin_exchange(Exchange& x, Conn& c, const Route& route, const Request& req, Clock::time_point deadline,
                      bool reused, Outcome& o) const;
  /// After an exchange through a proxy in absolute form: true when `o` is a 407 to answer with
  /// Negotiate (its challenge in `challenge`); otherwise the mutual check and the proxy's
  /// authentication headers dropped from the answer.
  bool proxy_challenged(Outcome& o, const Route& route, ProxyAuthState& auth, std::optional<std::string>& challenge);
  asio::awaitable<void> attempt_once(const Route& route, const Request& req, const Headers& headers,
                                    Clock::time_point deadline, Outcome& o);
  Error timeout_error(const Exchange& x, const char* doing) const;
  /// "the deadline of 300000 ms", or max_time's name when `deadline` is its end.
  [[nodiscard]] std::string deadline_name(Clock::time_point deadline) const;
  /// A read of `bytes` completed: false, and the outcome set (NetErrc::too_slow), when the attempt
  /// fell below the low-speed limit.
  bool paced(Exchange& x, std::size_t bytes) const;
  bool written(Exchange& x, const error_code& ec);
  void start_parser(Exchange& x) const;
  template <class Stream>
  asio::awaitable<void> exchange(Stream& s, Exchange& x);
  /// Reads a streamed 2xx body of known length straight into the sink's room (or a scratch
  /// block handed to write()), up to kDirectRead bytes a read: no parser, no copy in between.
  template <class Stream>
  asio::awaitable<void> read_direct(Stream& s, Exchange& x);

  // ---- the response header and body: limits, Content-Encoding, gzip (http_decode.cpp) ----

  bool header_read(Exchange& x, const error_code& ec);
  bool decoding(Exchange& x);
  bool decode_some(Exchange& x, bool last);
  /// Hands what the parser has collected to the request's sink (a streamed 2xx body): false,
  /// and the outcome set (final), when the sink refuses it.
  bool drain_to_sink(Exchange& x);
  /// A 2xx header of a streamed request: tells the sink (false, the outcome set, when it refuses).
  bool begin_sink(Exchange& x);
  void body_read(Exchange& x, const error_code& ec);
  /// The outcome of a body that failed after `received` bytes with `ec`.
  void body_failed(Exchange& x, const error_code& ec, std::uint64_t received);

  // ---- a streamed body of known length, past the parser (http_decode.cpp) ----

  static constexpr std::size_t kDirectRead = 1u << 20;
  /// Whether the body after this header is read by read_direct (a streamed 2xx with a
  /// Content-Length still to come); sets x.left.
  static bool direct_body(Exchange& x);
  /// Hands the sink the body bytes that came with the header: false, the outcome set, when it refuses.
  bool take_buffered(Exchange& x);
  /// Where the next read goes: the sink's room, else the scratch block.
  static std::span<char> body_room(Exchange& x);
  /// `n` bytes were read into body_room()'s `room`: to the sink (false, the outcome set, when it refuses).
  bool body_bytes(Exchange& x, std::span<char> room, std::size_t n);
  /// After read_direct's loop: the outcome.
  void direct_done(Exchange& x, const error_code& ec);
  /// Starts the watch of a body read past the parser (the stream's own expiry off).
  std::shared_ptr<BodyWatch> start_watch(Exchange& x) const;
  static void rewatch(const std::shared_ptr<BodyWatch>& w);
  /// Ends the watch; a read it cancelled becomes beast::error::timeout in `ec`.
  static void stop_watch(Exchange& x, BodyWatch& w, error_code& ec);

  HttpOptions opts_;
  bool client_cert_;  ///< the context presents a client certificate to a server that asks
  asio::io_context ioc_{1};
  ssl::context ssl_;
  bool system_roots_pending_;  ///< set_default_verify_paths before the first TLS stream (one io thread)
  std::optional<Error> system_roots_error_;  ///< the system store could not be used: every https request fails so
  std::map<std::string, std::vector<std::unique_ptr<Conn>>> idle_;
  std::map<std::string, HostSlot> slots_;
  std::set<std::string> refused_origins_;  ///< origins already warned about a credential not sent over http
  std::set<std::string> negotiate_proxies_;  ///< proxies (host:port) that asked for Negotiate: tokens go out first
  std::shared_ptr<Gss> gss_;  ///< opts_.gss, or system_gss() once Negotiate is first needed
  /// The GSS-API steps running on threads of their own (shared with each thread).
  std::shared_ptr<GssCalls> gss_calls_ = std::make_shared<GssCalls>();
  Stats stats_;
  std::mt19937_64 rng_;
};

}  // namespace wheelfit::transports::detail

