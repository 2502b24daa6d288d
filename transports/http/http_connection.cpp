// The http transport's connections: per-origin slots, the keep-alive pool, and opening one
// (resolve, TCP connect, proxy CONNECT tunnel, TLS with peer and host-name verification).
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <array>
#include <charconv>

#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "http_shared.hpp"

namespace wheelfit::transports::detail {

bool is_closed(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated ||
         ec == asio::error::not_connected || ec == asio::error::bad_descriptor;
}

asio::awaitable<void> HttpTransport::acquire(const std::string& key) {
  HostSlot& slot = slots_[key];
  asio::steady_timer wake(ioc_);
  error_code ec;
  while (slot.active >= std::max(1u, opts_.per_host)) {
    wake.expires_at(asio::steady_timer::time_point::max());
    slot.waiters.push_back(&wake);
    co_await wake.async_wait(tok(ec));
    // release() popped us (or we were woken for another reason): look again.
    std::erase(slot.waiters, &wake);
  }
  ++slot.active;
}

void HttpTransport::release(const std::string& key) {
  HostSlot& slot = slots_[key];
  if (slot.active > 0) --slot.active;
  if (!slot.waiters.empty()) {
    asio::steady_timer* t = slot.waiters.front();
    slot.waiters.pop_front();
    t->cancel();
  }
}

std::unique_ptr<Conn> HttpTransport::take_idle(const std::string& key) {
  auto it = idle_.find(key);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  auto c = std::move(it->second.back());
  it->second.pop_back();
  return c;
}

void HttpTransport::put_idle(const std::string& key, std::unique_ptr<Conn> c) {
  auto& list = idle_[key];
  if (list.size() >= std::max(1u, opts_.per_host)) return;  // closes c
  c->tcp().expires_never();
  list.push_back(std::move(c));
}

/// Sets the stream's expiry to the nearer of now + limit and the deadline; true when the
/// deadline is the nearer one.
bool HttpTransport::arm(beast::tcp_stream& s, milliseconds limit, Clock::time_point deadline) {
  const auto until = Clock::now() + limit;
  const bool by_deadline = deadline <= until;
  s.expires_at(by_deadline ? deadline : until);
  return by_deadline;
}

Error HttpTransport::connect_timeout_error(const Connecting& k, const char* stage) const {
  if (k.by_deadline) {
    return net_error(NetErrc::deadline, deadline_name(k.until) + " passed while " + stage + " " + k.hop_name + " (" + redact(k.route->url.str()) + ")");
  }
  return net_error(NetErrc::connect_timeout, std::string(stage) + " " + k.hop_name + " timed out after " +
                                                 ms_text(opts_.connect_timeout) + " (" + redact(k.route->url.str()) + ")");
}

Error HttpTransport::tcp_error(const Connecting& k, const error_code& ec) const {
  if (ec == beast::error::timeout) return connect_timeout_error(k, "connecting to");
  if (ec == asio::error::connection_refused) {
    return net_error(NetErrc::connect_failed, "connection refused to " + k.hop_name + " (" + redact(k.route->url.str()) + ")");
  }
  return net_error(NetErrc::connect_failed, "cannot connect to " + k.hop_name + ": " + ec.message() + " (" +
                                                redact(k.route->url.str()) + ")");
}

void HttpTransport::prepare_connect_request(Connecting& k) const {
  const Route& route = *k.route;
  auto& rq = k.connect_request;
  rq.method(http::verb::connect);
  rq.target(route.url.host_port());
  rq.version(11);
  rq.set(http::field::host, route.url.host_port());
  rq.set(http::field::user_agent, opts_.user_agent);
  const std::string auth = k.auth.header.empty() ? basic_header(*route.proxy) : k.auth.header;
  if (auth.empty()) {
    rq.erase(http::field::proxy_authorization);
  } else {
    rq.set(http::field::proxy_authorization, auth);
  }
  k.connect_answer.emplace();
  k.connect_answer->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(opts_.max_header_bytes, UINT32_MAX)));
  k.connect_answer->skip(true);
}

/// After the proxy's answer to CONNECT: open, failed (k.failure set), or challenged (a 407 to
/// answer with Negotiate: k.challenge).
HttpTransport::Tunnel HttpTransport::tunnel_result(Connecting& k, const error_code& ec) {
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
    return Tunnel::failed;
  }
  const auto& answer = k.connect_answer->get();
  const int s = answer.result_int();
  std::vector<std::string> offered;
  for (auto [it, end] = answer.equal_range(http::field::proxy_authenticate); it != end; ++it) {
    offered.emplace_back(it->value());
  }
  if (s == 407) {
    k.challenge = negotiate_allowed(proxy) ? negotiate_challenge(offered) : std::nullopt;
    if (k.challenge) return Tunnel::challenged;
    k.failure = fail(proxy_auth_error(proxy, route.url, offered, k.auth.negotiation != nullptr), s);
    return Tunnel::failed;
  }
  if (s < 200 || s >= 300) {
    const std::string msg = "proxy " + proxy.host_port() + " refused the tunnel to " + route.url.host_port() +
                            ": HTTP " + std::to_string(s) + " " + std::string(answer.reason()) + " (" +
                            redact(route.url.str()) + ")";
    const bool transient = s == 502 || s == 503 || s == 504 || s == 408 || s == 429;
    k.failure = fail(net_error(transient ? NetErrc::http_status : NetErrc::proxy, msg), s);
    return Tunnel::failed;
  }
  if (auto mutual = negotiate_finish(k.auth, route, offered)) {
    k.failure = fail(std::move(*mutual), s);
    return Tunnel::failed;
  }
  k.conn->buffer.consume(k.conn->buffer.size());
  return Tunnel::open;
}

/// Before the first https connection: the system store, when no other was chosen (loaded now, not
/// at start-up: a run over file:// or http:// never pays for it). False (and the failure set)
/// when it cannot be used: the request fails naming it, before any connection.
bool HttpTransport::trust_ready(Connecting& k) {
  if (system_roots_pending_) {
    system_roots_pending_ = false;
    system_roots_error_ = load_system_roots(ssl_);
  }
  if (!system_roots_error_) return true;
  const Url& url = k.route->url;
  k.failure = fail(net_error(NetErrc::certificate, "cannot verify " + url.host_port() + ": " +
                                                       system_roots_error_->message + " (" + redact(url.str()) + ")"));
  return false;
}

/// Wraps the TCP stream in TLS: SNI (not for IP literals), peer and host-name verification.
void HttpTransport::prepare_tls(Connecting& k) {
  Conn& c = *k.conn;
  const Url& url = k.route->url;
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

Error HttpTransport::tls_error(const Connecting& k, const error_code& ec) const {
  const Conn& c = *k.conn;
  const Url& url = k.route->url;
  const long vr = SSL_get_verify_result(const_cast<Conn&>(c).tls->native_handle());
  const bool cert = !c.verify_failure.empty() || vr != X509_V_OK ||
                    (ec.category() == asio::error::get_ssl_category() &&
                     ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED);
  if (auto refused_cert = refused(ec, url)) return *refused_cert;
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

/// A TCP connection to the first hop (k.endpoints): k.conn, or k.failure.
asio::awaitable<void> HttpTransport::open_tcp(Connecting& k) {
  error_code ec;
  k.conn = std::make_unique<Conn>(ioc_);
  k.conn->plain->expires_at(k.until);
  co_await k.conn->plain->async_connect(k.endpoints, tok(ec));
  if (ec) {
    k.failure = fail(tcp_error(k, ec));
    k.conn.reset();
    co_return;
  }
  ++stats_.connections;
  k.conn->plain->socket().set_option(tcp::no_delay(true), ec);
}

/// CONNECT through the proxy on k.conn, answering its Negotiate challenges (each leg on the same
/// connection when the proxy keeps it, else on a new one): the tunnel open, or k.conn reset and
/// k.failure set.
asio::awaitable<void> HttpTransport::open_tunnel(Connecting& k) {
  error_code ec;
  if (negotiate_first(*k.route->proxy)) {
    co_await negotiate_step(k.auth, *k.route, k.challenge, k.until);
  }
  for (;;) {
    if (k.auth.failure) {
      k.failure = fail(std::move(*k.auth.failure), 407);
      k.conn.reset();
      co_return;
    }
    prepare_connect_request(k);
    k.conn->plain->expires_at(k.until);
    co_await http::async_write(*k.conn->plain, k.connect_request, tok(ec));
    if (!ec) {
      k.conn->plain->expires_at(k.until);
      co_await http::async_read_header(*k.conn->plain, k.conn->buffer, *k.connect_answer, tok(ec));
    }
    const Tunnel t = tunnel_result(k, ec);
    if (t == Tunnel::open) co_return;
    if (t == Tunnel::failed) {
      k.conn.reset();
      co_return;
    }
    co_await drain_connect_answer(k);
    if (k.auth.failure) continue;
    co_await negotiate_step(k.auth, *k.route, k.challenge, k.until);
    if (!k.reusable && !k.auth.failure) {
      if (k.auth.negotiation && k.auth.negotiation->legs() > 1) {
        // The context's state lives on the old connection: a multi-leg exchange cannot move.
        k.auth.failure = negotiate_error(*k.route, "closed the connection in the middle of a Negotiate exchange");
        continue;
      }
      k.conn->close();
      co_await open_tcp(k);
      if (!k.conn) co_return;
    }
  }
}

asio::awaitable<void> HttpTransport::drain_connect_answer(Connecting& k) {
  error_code ec;
  std::array<char, 4096> scratch{};
  const auto& answer = k.connect_answer->get();
  const auto length = answer.find(http::field::content_length);
  std::uint64_t left = 0;
  k.reusable = answer.keep_alive() && length != answer.end() && answer.find(http::field::transfer_encoding) == answer.end();
  if (k.reusable) {
    const auto text = length->value();
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), left);
    k.reusable = parsed.ec == std::errc() && parsed.ptr == text.data() + text.size() && left <= (1u << 20);
  }
  if (!k.reusable) co_return;
  const std::uint64_t buffered = std::min<std::uint64_t>(left, k.conn->buffer.size());
  k.conn->buffer.consume(static_cast<std::size_t>(buffered));
  left -= buffered;
  while (left > 0) {
    k.conn->plain->expires_at(k.until);
    const std::size_t got = co_await k.conn->plain->async_read_some(
        asio::buffer(scratch.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, scratch.size()))), tok(ec));
    if (ec) {
      k.reusable = false;
      // A 407 whose body trickles past the time: the proxy's answer timed out, not the KDC.
      if (ec == beast::error::timeout) k.auth.failure = connect_timeout_error(k, "reading the body of the 407 answer to CONNECT from");
      co_return;
    }
    left -= got;
  }
}

asio::awaitable<void> HttpTransport::connect(Connecting& k) {
  const Route& route = *k.route;
  const Url& hop = route.proxy ? *route.proxy : route.url;
  const auto connect_until = Clock::now() + opts_.connect_timeout;
  error_code ec;
  tcp::resolver resolver(ioc_);
  k.by_deadline = k.until <= connect_until;
  if (!k.by_deadline) k.until = connect_until;
  k.hop_name = (route.proxy ? "proxy " : "") + hop.host_port();
  k.port_text = std::to_string(hop.port);
  if (route.url.scheme == "https" && !trust_ready(k)) co_return;

  k.endpoints = co_await resolver.async_resolve(hop.host, k.port_text, tok(ec));
  if (ec) {
    k.failure = fail(net_error(NetErrc::connect_failed, "cannot resolve " + k.hop_name + ": " + ec.message() + " (" +
                                                            redact(route.url.str()) + ")"));
    co_return;
  }
  co_await open_tcp(k);
  if (!k.conn) co_return;
  if (route.tunnel()) {
    co_await open_tunnel(k);
    if (!k.conn) co_return;
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

}  // namespace wheelfit::transports::detail
