// One attempt of the http transport: a pooled or new connection for the route, the request
// written, the response header and body read under the idle timeout and the deadline.
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "http_shared.hpp"

namespace wheelfit::transports::detail {

namespace {

/// The Host header: host[:port], brackets for IPv6, default port omitted.
std::string host_header(const Url& u) {
  const std::string origin = u.origin();
  const auto p = origin.find("://");
  return p == std::string::npos ? u.host_port() : origin.substr(p + 3);
}

}  // namespace

void HttpTransport::prepare_request(const Route& route, const Request& req, const Headers& headers,
                                    const ProxyAuthState& auth, http::request<http::empty_body>& rq) const {
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
  if (!has_auth && !route.authorization.empty()) rq.set(http::field::authorization, route.authorization);
  if (route.absolute_form()) {
    const std::string proxy_auth = auth.header.empty() ? basic_header(*route.proxy) : auth.header;
    if (!proxy_auth.empty()) rq.set(http::field::proxy_authorization, proxy_auth);
  }
}

void HttpTransport::begin_exchange(Exchange& x, Conn& c, const Route& route, const Request& req,
                                   Clock::time_point deadline, bool reused, Outcome& o) const {
  x.conn = &c;
  x.req = &req;
  x.route = &route;
  x.deadline = deadline;
  x.reused = reused;
  o = Outcome{};
  x.out = &o;
  x.request = {};
  x.parser.reset();
  x.by_deadline = false;
  x.gunzip.reset();
  x.wire = 0;
  x.streaming = false;
  x.floor = SpeedFloor(opts_.speed_limit, opts_.speed_time);
}

// GCC 12 inlines Asio's frame allocation (aligned_alloc) into this coroutine's ramp and then takes
// the frame's own operator delete for a mismatched one: a false positive, seen since this
// coroutine sits in a translation unit small enough for GCC to inline that far.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
asio::awaitable<void> HttpTransport::attempt_once(const Route& route, const Request& req, const Headers& headers,
                                                 Clock::time_point deadline, Outcome& o) {
  const std::string key = route.key();
  std::unique_ptr<Conn> c;
  Connecting k;
  Exchange x;
  bool reused = false;
  ProxyAuthState auth;
  std::optional<std::string> challenge;

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

  // Through a proxy in absolute form: a Negotiate token first when the proxy wants one, and
  // each 407 offering Negotiate answered on this connection (or a new one when it closes).
  if (route.absolute_form() && negotiate_first(*route.proxy)) {
    co_await negotiate_step(auth, route, challenge, std::min(deadline, Clock::now() + opts_.idle_timeout));
  }
  for (;;) {
    if (auth.failure) {
      o = fail(std::move(*auth.failure), 407);
      break;
    }
    begin_exchange(x, *c, route, req, deadline, reused, o);
    prepare_request(route, req, headers, auth, x.request);
    if (c->tls) {
      co_await exchange(*c->tls, x);
    } else {
      co_await exchange(*c->plain, x);
    }
    if (!proxy_challenged(o, route, auth, challenge)) break;
    co_await negotiate_step(auth, route, challenge, std::min(deadline, Clock::now() + opts_.idle_timeout));
    if (o.keep || auth.failure) continue;
    if (auth.negotiation->legs() > 1) {  // a multi-leg context cannot move to another connection
      auth.failure = negotiate_error(route, "closed the connection in the middle of a Negotiate exchange");
      continue;
    }
    c->close();
    k.route = &route;
    k.until = deadline;
    k.failure = Outcome{};
    co_await connect(k);
    if (!k.conn) {
      o = std::move(k.failure);
      co_return;
    }
    c = std::move(k.conn);
    reused = false;
  }
  if (o.ok && o.keep) {
    put_idle(key, std::move(c));
  } else {
    c->close();
  }
}
#pragma GCC diagnostic pop

Error HttpTransport::timeout_error(const Exchange& x, const char* doing) const {
  if (x.by_deadline) {
    return net_error(NetErrc::deadline, deadline_name(x.deadline) + " passed while " + doing + " " + where(x.route->url));
  }
  return net_error(NetErrc::idle_timeout, std::string(doing) + " " + where(x.route->url) + " timed out after " +
                                              ms_text(opts_.idle_timeout));
}

std::string HttpTransport::deadline_name(Clock::time_point deadline) const {
  if (opts_.max_time && deadline == opts_.max_time->end) return opts_.max_time->name();
  return "the deadline of " + ms_text(opts_.deadline);
}

bool HttpTransport::paced(Exchange& x, std::size_t bytes) const {
  if (x.floor.add(bytes, Clock::now())) return true;
  *x.out = fail(net_error(NetErrc::too_slow, "the response from " + where(x.route->url) + " is too slow: " +
                                                 x.floor.shortfall() + " (the low-speed limit)"));
  return false;
}

/// After writing the request: false (and the outcome set) on an error.
bool HttpTransport::written(Exchange& x, const error_code& ec) {
  ++stats_.requests;
  if (!ec) return true;
  if (auto r = refused(ec, x.route->url)) {
    *x.out = fail(std::move(*r));
  } else if (ec == beast::error::timeout) {
    *x.out = fail(timeout_error(x, "sending the request to"));
  } else {
    *x.out = fail(net_error(NetErrc::reset, "connection to " + where(x.route->url) +
                                                " failed while sending the request: " + ec.message()));
    x.out->stale = x.reused;
  }
  return false;
}

void HttpTransport::start_parser(Exchange& x) const {
  // Beast sizes each socket read by the buffer's spare capacity (at least 512 bytes, at most
  // 64 KiB); the parser drains the buffer, so without this it never grows and a 7 MB page
  // costs ~20,000 tiny reads. 64 KiB of room makes every read as large as Beast allows.
  x.conn->buffer.reserve(x.conn->buffer.size() + (64u << 10));
  x.parser.emplace();
  x.parser->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(opts_.max_header_bytes, UINT32_MAX)));
  x.parser->body_limit(static_cast<std::uint64_t>(x.req->max_body));
}

template <class Stream>
asio::awaitable<void> HttpTransport::exchange(Stream& s, Exchange& x) {
  error_code ec;
  std::size_t got = 0;
  x.by_deadline = arm(x.conn->tcp(), opts_.idle_timeout, x.deadline);
  co_await http::async_write(s, x.request, tok(ec));
  if (!written(x, ec)) co_return;

  // The whole header under one expiry (a header trickled a byte at a time meets the idle
  // timeout); the low-speed rule starts with it.
  start_parser(x);
  x.by_deadline = arm(x.conn->tcp(), opts_.idle_timeout, x.deadline);
  got = co_await http::async_read_header(s, x.conn->buffer, *x.parser, tok(ec));
  if (!header_read(x, ec) || !paced(x, got)) co_return;
  if (direct_body(x)) {
    co_await read_direct(s, x);
    co_return;
  }

  while (!x.parser->is_done()) {
    x.by_deadline = arm(x.conn->tcp(), opts_.idle_timeout, x.deadline);
    got = co_await http::async_read_some(s, x.conn->buffer, *x.parser, tok(ec));
    if (ec) break;
    if (!decode_some(x, false) || !drain_to_sink(x) || !paced(x, got)) co_return;
  }
  body_read(x, ec);
}

template <class Stream>
asio::awaitable<void> HttpTransport::read_direct(Stream& s, Exchange& x) {
  error_code ec;
  std::size_t got = 0;
  std::span<char> room;
  std::shared_ptr<BodyWatch> watch;
  bool ended = false;  // the sink refused the bytes or the speed floor cut them: the outcome is set
  if (!take_buffered(x)) co_return;
  watch = start_watch(x);
  while (x.left > 0) {
    room = body_room(x);
    got = co_await s.async_read_some(asio::buffer(room.data(), room.size()), tok(ec));
    if (got > 0) watch->progress = Clock::now();
    if (got > 0 && !body_bytes(x, room, got)) {
      ended = true;
      break;
    }
    if (ec) break;
    if (!paced(x, got)) {
      ended = true;
      break;
    }
  }
  stop_watch(x, *watch, ec);
  if (!ended) direct_done(x, ec);
}

}  // namespace wheelfit::transports::detail
