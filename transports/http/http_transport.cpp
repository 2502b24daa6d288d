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
// Streamed bodies (Request::sink) of known length skip the parser: read 1 MiB at a time straight
// into the room the sink lends (BodySink::room; else a block of the exchange's, then write()),
// under one idle expiry moved on by each read's progress (BodyWatch) instead of a timer per read.
// Chunked and close-delimited bodies, and every body kept in memory, go through the parser.
// The parts: http_request_loop.cpp (redirects, retries), http_connection.cpp (slots, keep-alive
// pool, connecting), http_exchange.cpp (one attempt), http_decode.cpp (header limits, gzip),
// http_shared.hpp (what they share); this file holds the batch runner and the factories.
#include "wheelfit/transports/http_transport.hpp"

#include <openssl/ssl.h>

#include <exception>

#include <boost/asio/co_spawn.hpp>

#include "http_shared.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/transports/system_proxy.hpp"
#include "wheelfit/transports/trust_store.hpp"

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "0"
#endif

namespace wheelfit::transports {


namespace detail {

std::vector<Expected<Response>> HttpTransport::run_batch(const Request* reqs, std::size_t n,
                                                         const AnswerHook* on_answer) {
  std::vector<Slot> slots(n);
  std::size_t next = 0;
  const std::size_t workers = std::min<std::size_t>(std::max(1u, opts_.jobs), n);
  for (std::size_t w = 0; w < workers; ++w) {
    asio::co_spawn(ioc_, worker(reqs, n, slots, next, on_answer), [](const std::exception_ptr&) {});
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

asio::awaitable<void> HttpTransport::worker(const Request* reqs, std::size_t n, std::vector<Slot>& out,
                                           std::size_t& next, const AnswerHook* on_answer) {
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

namespace {

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

}  // namespace detail

namespace ssl = detail::ssl;

Expected<std::unique_ptr<net::Transport>> make_http_transport(HttpOptions options) {
  options.jobs = std::max(1u, options.jobs);
  options.per_host = std::max(1u, options.per_host);
  if (options.proxy_from_env) options.proxy = user_proxy_config();  // the variables, then (Windows) the system settings
  if (options.credentials_from_env) add_credentials_from_env(options.credentials);
  const TrustChoice trust = choose_trust(options);
  try {
    ssl::context ctx(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                    ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
    if (auto loaded = detail::load_trust(ctx, trust); !loaded) return loaded.error();
    const bool system_roots = trust.locations.empty();  // loaded at the first TLS connection
    return std::unique_ptr<net::Transport>(
        std::make_unique<detail::HttpTransport>(std::move(options), std::move(ctx), system_roots));
  } catch (const std::exception& e) {
    return unexpected(Errc::invalid_input, std::string("cannot set up TLS: ") + e.what());
  }
}

Expected<std::unique_ptr<net::Transport>> make_transport(HttpOptions options) {
  auto http_t = make_http_transport(std::move(options));
  if (!http_t) return http_t.error();
  return std::unique_ptr<net::Transport>(
      std::make_unique<detail::SchemeTransport>(make_file_transport(), std::move(*http_t)));
}

}  // namespace wheelfit::transports
