// The http transport's request loop for one resource: the redirects (Location, hop limit, no
// https -> http, credentials dropped across origins) around the retries (decide_retry, RetryPolicy).
#include <random>

#include "http_shared.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::transports::detail {

/// Checks the request; the first URL, or the error.
Expected<Url> HttpTransport::start(const Request& req, Headers& headers) {
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
bool HttpTransport::route_for(const Url& url, Route& route, Slot& result) {
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
  // Credentials: only to their own origin, only over https unless the host is allowed insecure.
  const AuthChoice auth = choose_authorization(opts_.credentials, url);
  if (auth.refused && auth.from_url) {
    result.emplace(Error(Errc::invalid_input, refusal_message(auth, url)));
    return false;
  }
  if (auth.refused && refused_origins_.insert(url.origin()).second) log::warn(refusal_message(auth, url));
  route.url = url;
  route.proxy = std::move(*proxy);
  route.authorization = auth.header;
  return true;
}

/// After the retries: the answer in `result`, or the next URL of a redirect in `url` (true).
bool HttpTransport::finish(Outcome& o, const Request& req, Url& url, Headers& headers, int& hops, Slot& result) const {
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
  const auto location = net::find_header(o.headers, "location");
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
    // Credentials belong to the origin they were given for: only headers known to carry none
    // follow (Authorization, Cookie and any custom token header stay behind).
    std::erase_if(headers, [](const auto& h) { return !survives_cross_origin_redirect(h.first); });
  } else if (target->userinfo.empty()) {
    target->userinfo = url.userinfo;  // "Location: https://same-host/x" keeps the URL's own credentials
  }
  log::debug("redirect " + std::to_string(o.status) + ": " + redact(url.str()) + " -> " + redact(target->str()));
  url = std::move(*target);
  return true;
}

asio::awaitable<void> HttpTransport::fetch(const Request& req, Slot& result) {
  // A streamed body (a wheel) has no overall deadline, only the idle timeout and the low-speed
  // rule: max() is never added to (arm() and the retry check only compare with it). The whole
  // call's max_time bounds both.
  auto deadline = req.sink ? Clock::time_point::max() : Clock::now() + opts_.deadline;
  if (opts_.max_time) deadline = std::min(deadline, opts_.max_time->end);
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
  if (opts_.max_time && opts_.max_time->passed()) {  // queued behind others until the time ran out: no connection
    result.emplace(net_error(NetErrc::deadline, opts_.max_time->name() + " ran out before " + redact(url.str()) + " was requested"));
    co_return;
  }
  for (;;) {
    if (!route_for(url, route, result)) co_return;
    o = Outcome{};
    co_await with_retries(route, req, headers, deadline, o);
    if (!finish(o, req, url, headers, hops, result)) co_return;
  }
}

/// Classifies a complete response: what the caller gets or what a retry decision sees.
void HttpTransport::classify_status(Outcome& o, const Route& route) const {
  const int s = o.status;
  if ((s >= 200 && s < 300) || s == 304 || is_redirect_status(s)) return;
  o.ok = false;
  if (s == 404 || s == 410) {
    o.error = Error(Errc::not_found, "not found: HTTP " + std::to_string(s) + " from " + where(route.url));
  } else if (s == 407 && route.absolute_form()) {
    std::vector<std::string> offered;
    for (const auto& [k, v] : o.headers) {
      if (iequals(k, "proxy-authenticate")) offered.push_back(v);
    }
    o.error = proxy_auth_error(*route.proxy, route.url, offered, false);
  } else {
    o.error = net_error(NetErrc::http_status, "HTTP " + std::to_string(s) + " from " + where(route.url));
  }
}

/// A 403 that says the rate limit is exhausted (GitHub): retried at the reset time.
bool HttpTransport::limited403(const Outcome& o) {
  if (o.status != 403) return false;
  const auto left = net::find_header(o.headers, "x-ratelimit-remaining");
  return left && *left == "0";
}

/// After one attempt: done (o holds the answer or the final error), again (a stale keep-alive
/// connection: reconnect at once, uncharged) or wait `wait` and retry.
HttpTransport::Next HttpTransport::after_attempt(Outcome& o, const Route& route, Counters& n, Clock::time_point deadline,
                                                 milliseconds& wait) {
  if (o.sink_failed) return Next::done;  // the sink's own error (a full disk): a retry cannot cure it
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
  const bool transient = net::is_transient(o.error, o.status);
  if (!d.retry || n.attempt > opts_.retry.retries) {
    if (o.proxy_reset && route.proxy) {
      o.error = net_error(NetErrc::proxy, "proxy " + route.proxy->host_port() + " reset the connection " +
                                              std::to_string(n.proxy_resets) + (n.proxy_resets == 1 ? " time" : " times") +
                                              " (CONNECT " + route.url.host_port() + " for " + redact(route.url.str()) + ")");
    } else if ((transient || limited403(o)) && n.attempt <= opts_.retry.retries) {
      // Retryable, budget left, and still no retry: the wait the server asked for is too long.
      const bool limited = net::is(o.error, NetErrc::http_status) && (o.status == 429 || o.status == 403);
      o.error = Error(limited ? make_error_code(NetErrc::rate_limited) : o.error.code,
                      o.error.message + "; giving up: " + d.reason);
    } else if (n.attempt > 1 && transient) {
      o.error.message += " (after " + std::to_string(n.attempt) + " attempts)";
    }
    return Next::done;
  }
  if (Clock::now() + d.wait >= deadline) {
    o.error = net_error(NetErrc::deadline, deadline_name(deadline) + " for " + redact(route.url.str()) +
                                               " would pass before retry " +
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

void HttpTransport::attempt_headers(const Request& req, const Headers& headers, Headers& out) {
  out = headers;
  if (req.sink) req.sink->prepare(out);
}

asio::awaitable<void> HttpTransport::with_retries(const Route& route, const Request& req, const Headers& headers,
                                                 Clock::time_point deadline, Outcome& o) {
  Counters n;
  milliseconds wait{0};
  asio::steady_timer timer(ioc_);
  error_code ec;
  Headers this_attempt;  // per attempt: a sink's Range follows what it already has
  for (;;) {
    o = Outcome{};
    attempt_headers(req, headers, this_attempt);
    co_await attempt_once(route, req, this_attempt, deadline, o);
    const Next next = after_attempt(o, route, n, deadline, wait);
    if (next == Next::done) co_return;
    if (next == Next::wait && wait.count() > 0) {
      timer.expires_after(wait);
      co_await timer.async_wait(tok(ec));
    }
  }
}

}  // namespace wheelfit::transports::detail
