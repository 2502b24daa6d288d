// Response decoding for the http transport: header limits (size, line, field count, huge
// Content-Length), the body size limit, Content-Encoding (gzip only, decoded while it is read).
#include <climits>

#include <boost/beast/http/error.hpp>

#include "http_shared.hpp"

namespace wheelfit::transports::detail {

namespace {

// Limits on single header lines and on the number of header fields (FAULTS H04: a 9 KiB line,
// 2,000 headers), on top of HttpOptions::max_header_bytes for the whole header.
constexpr std::size_t kMaxHeaderLine = 8u << 10;
constexpr std::size_t kMaxHeaderFields = 256;

const error_code& http_error_sample() {
  static const error_code ec = http::make_error_code(http::error::end_of_stream);
  return ec;
}
bool is_http_error(const error_code& ec) { return ec.category() == http_error_sample().category(); }

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

}  // namespace

/// Decodes `in` (any amount) and appends to out(); `why` says what went wrong.
Gunzip::Status Gunzip::feed(std::string_view in) {
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
Gunzip::Status Gunzip::finish() {
  if (fed_ && !ended_) return corrupt("the gzip stream is truncated (it ends before its trailer)");
  return Status::ok;
}

/// After reading the header: false (and the outcome set) on an error or a header over a limit.
bool HttpTransport::header_read(Exchange& x, const error_code& ec) {
  const Url& url = x.route->url;
  Outcome& o = *x.out;
  auto& p = *x.parser;
  if (ec) {
    const auto too_long = [&] {
      o = fail(Error(Errc::too_large, "the Content-Length of the response from " + where(url) +
                                          " exceeds the limit of " + std::to_string(x.req->max_body) + " bytes"));
    };
    if (auto r = refused(ec, url)) {
      o = fail(std::move(*r));  // TLS 1.3: the server judges the client certificate after the handshake
    } else if (ec == beast::error::timeout) {
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
  // Through an http proxy a 407 is the proxy's own answer, not the origin's.
  const std::string from = o.status == 407 && x.route->absolute_form()
                               ? "proxy " + x.route->proxy->host_port() + " (its 407 for " + redact(url.str()) + ")"
                               : where(url);
  std::size_t fields = 0;
  for (const auto& f : p.get()) {
    ++fields;
    if (f.name_string().size() + f.value().size() + 4 > kMaxHeaderLine) {
      o = fail(Error(Errc::too_large, "a response header line from " + from + " exceeds " +
                                          std::to_string(kMaxHeaderLine) + " bytes"));
      return false;
    }
    o.headers.emplace_back(util::ascii_lower(std::string_view(f.name_string().data(), f.name_string().size())),
                           std::string(f.value()));
  }
  if (fields > kMaxHeaderFields) {
    o = fail(Error(Errc::too_large, "the response from " + from + " has " + std::to_string(fields) +
                                        " header fields (at most " + std::to_string(kMaxHeaderFields) + ")"));
    return false;
  }
  if (const auto ct = net::find_header(o.headers, "content-type")) o.content_type = media_type(*ct);
  return decoding(x);
}

/// After the header: prepares decoding the body of a 2xx (false, and the outcome set, for a
/// coding other than gzip). Other statuses keep their meaning: their bodies are never used.
bool HttpTransport::decoding(Exchange& x) {
  Outcome& o = *x.out;
  if (o.status == 304) {
    // No body; the body a cache revalidates with it was decoded, so no coding is claimed.
    std::erase_if(o.headers, [](const auto& h) { return h.first == "content-encoding"; });
    return true;
  }
  if (o.status < 200 || o.status >= 300) return true;
  // A streamed body (a file, asked for with identity) goes to the sink as sent: the caller's
  // digest judges those bytes, so a coding is neither decoded nor refused.
  if (x.req->sink) return begin_sink(x);
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
bool HttpTransport::decode_some(Exchange& x, bool last) {
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

bool HttpTransport::begin_sink(Exchange& x) {
  x.streaming = true;
  auto ok = x.req->sink->begin(x.out->status, x.out->headers);
  if (ok) return true;
  const int status = x.out->status;
  *x.out = fail(ok.error(), status);
  x.out->sink_failed = true;
  return false;
}

bool HttpTransport::drain_to_sink(Exchange& x) {
  if (!x.streaming) return true;
  auto& body = x.parser->get().body();
  if (body.empty()) return true;
  x.wire += body.size();
  stats_.bytes += body.size();
  auto ok = x.req->sink->write(body);
  body.clear();
  if (ok) return true;
  *x.out = fail(ok.error());
  x.out->sink_failed = true;
  return false;
}

/// After the body loop: the outcome.
void HttpTransport::body_read(Exchange& x, const error_code& ec) {
  Outcome& o = *x.out;
  auto& p = *x.parser;
  // What arrived before a cut goes to the sink too: the retry's Range starts after it.
  if (!drain_to_sink(x)) return;
  const std::uint64_t received = x.wire + p.get().body().size();
  if (ec) {
    stats_.bytes += p.get().body().size();
    body_failed(x, ec, received);
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

void HttpTransport::body_failed(Exchange& x, const error_code& ec, std::uint64_t received) {
  const Url& url = x.route->url;
  Outcome& o = *x.out;
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
}

bool HttpTransport::direct_body(Exchange& x) {
  const auto& p = *x.parser;
  if (!x.streaming || p.is_done() || p.chunked()) return false;
  const auto left = p.content_length_remaining();
  if (!left) return false;
  x.left = *left;
  return true;
}

bool HttpTransport::take_buffered(Exchange& x) {
  if (!drain_to_sink(x)) return false;  // what the parser took with the header, if anything
  auto& buffer = x.conn->buffer;
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), x.left));
  if (n == 0) return true;
  const auto* first = static_cast<const char*>(buffer.data().data());
  x.wire += n;
  x.left -= n;
  stats_.bytes += n;
  auto ok = x.req->sink->write(std::string_view(first, n));
  buffer.consume(n);
  if (ok) return true;
  *x.out = fail(ok.error());
  x.out->sink_failed = true;
  return false;
}

std::span<char> HttpTransport::body_room(Exchange& x) {
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(x.left, kDirectRead));
  const auto room = x.req->sink->room(want);
  x.lent = !room.empty();
  if (x.lent) return room;
  if (!x.scratch) x.scratch = std::make_unique_for_overwrite<char[]>(kDirectRead);
  return {x.scratch.get(), want};
}

bool HttpTransport::body_bytes(Exchange& x, std::span<char> room, std::size_t n) {
  x.wire += n;
  x.left -= n;
  stats_.bytes += n;
  auto ok = x.lent ? x.req->sink->commit(n) : x.req->sink->write(std::string_view(room.data(), n));
  if (ok) return true;
  *x.out = fail(ok.error());
  x.out->sink_failed = true;
  return false;
}

std::shared_ptr<BodyWatch> HttpTransport::start_watch(Exchange& x) const {
  auto w = std::make_shared<BodyWatch>(x.conn->tcp());
  x.conn->tcp().expires_never();
  w->progress = Clock::now();
  w->idle = opts_.idle_timeout;
  w->deadline = x.deadline;
  rewatch(w);
  return w;
}

void HttpTransport::rewatch(const std::shared_ptr<BodyWatch>& w) {
  const auto idle_end = w->progress + w->idle;
  w->timer.expires_at(std::min(idle_end, w->deadline));
  w->timer.async_wait([w](const error_code& ec) {
    if (ec || w->done) return;
    const auto now = Clock::now();
    if (now < w->progress + w->idle && now < w->deadline) {
      rewatch(w);  // bytes came since: the expiry moves on
      return;
    }
    w->fired = true;
    w->by_deadline = now >= w->deadline;
    w->stream->cancel();
  });
}

void HttpTransport::stop_watch(Exchange& x, BodyWatch& w, error_code& ec) {
  w.done = true;
  w.timer.cancel();
  if (w.fired && ec) {
    ec = beast::error::timeout;
    x.by_deadline = w.by_deadline;
  }
}

void HttpTransport::direct_done(Exchange& x, const error_code& ec) {
  if (x.left > 0) {
    body_failed(x, ec ? ec : error_code(asio::error::eof), x.wire);
    return;
  }
  x.conn->tcp().expires_never();
  x.out->keep = !ec && x.parser->get().keep_alive() && x.conn->buffer.size() == 0;
  x.out->ok = true;
}

}  // namespace wheelfit::transports::detail
