// The http transport's authentication to a proxy: Basic from the proxy URL's user:password, or
// Negotiate (Kerberos, negotiate.hpp), as HttpOptions::proxy_auth decides; the GSS-API step on a
// thread of its own under the request's time; the errors of a 407; plan_proxy() for `wheelfit
// doctor`. Tokens never reach a message or a log line.
#include <mutex>
#include <thread>

#include <boost/asio/post.hpp>

#include "http_shared.hpp"
#include "wheelfit/transports/system_proxy.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::transports::detail {

namespace {

std::vector<std::string> authenticate_values(const Headers& headers) {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers) {
    if (iequals(k, "proxy-authenticate")) out.push_back(v);
  }
  return out;
}

// One GSS-API call handed to its own thread: the waiting coroutine's timer (while it waits),
// the result, and whether the coroutine gave up on it.
struct GssJob {
  std::mutex m;
  bool done = false;
  bool abandoned = false;
  asio::steady_timer* wake = nullptr;
  GssStep result;
};

}  // namespace

std::string HttpTransport::basic_header(const Url& proxy) const {
  const bool sends = opts_.proxy_auth == ProxyAuth::automatic || opts_.proxy_auth == ProxyAuth::basic;
  return sends && !proxy.userinfo.empty() ? basic_auth(proxy.userinfo) : std::string();
}

bool HttpTransport::negotiate_allowed(const Url& proxy) const {
  return opts_.proxy_auth == ProxyAuth::negotiate ||
         (opts_.proxy_auth == ProxyAuth::automatic && proxy.userinfo.empty());
}

bool HttpTransport::negotiate_first(const Url& proxy) const {
  return opts_.proxy_auth == ProxyAuth::negotiate ||
         (negotiate_allowed(proxy) && negotiate_proxies_.count(proxy.host_port()) > 0);
}

Error HttpTransport::negotiate_error(const Route& route, const std::string& what) const {
  return net_error(NetErrc::proxy, "proxy " + route.proxy->host_port() + " " + what + " (" + redact(route.url.str()) + ")");
}

Error HttpTransport::proxy_auth_error(const Url& proxy, const Url& target, const std::vector<std::string>& offered,
                                      bool negotiated) const {
  const bool sent_basic = !basic_header(proxy).empty();
  const bool offers_negotiate = negotiate_challenge(offered).has_value();
  const std::string mode = "--proxy-auth / WHEELFIT_PROXY_AUTH " + std::string(proxy_auth_name(opts_.proxy_auth));
  std::string what = sent_basic || negotiated ? "rejected the proxy authentication credentials (HTTP 407)"
                                              : "requires proxy authentication (HTTP 407)";
  switch (opts_.proxy_auth) {
    case ProxyAuth::none: what += "; " + mode + " sends none"; break;
    case ProxyAuth::negotiate:
      if (!offers_negotiate) what += "; " + mode + " answers Negotiate (Kerberos) only";
      break;
    case ProxyAuth::basic:
    case ProxyAuth::automatic:
      if (!sent_basic && !offers_negotiate) what += "; put user:password in the proxy URL";
      if (sent_basic && offers_negotiate) what += "; with user:password in the proxy URL wheelfit sends Basic (--proxy-auth negotiate uses Kerberos)";
      if (!sent_basic && offers_negotiate) what += "; " + mode + " does not answer Negotiate (Kerberos)";
      break;
  }
  const std::string schemes = offered_schemes(offered);
  if (!schemes.empty()) what += "; it offers " + schemes;
  if (!offers_negotiate && schemes.find("NTLM") != std::string::npos) what += " (NTLM is not supported: README \"Network\")";
  return net_error(NetErrc::proxy, "proxy " + proxy.host_port() + " " + what + " (" + redact(target.str()) + ")");
}

asio::awaitable<void> HttpTransport::gss_call(std::shared_ptr<GssContext>& context, std::string& input,
                                             Clock::time_point until, std::optional<GssStep>& out) {
  auto job = std::make_shared<GssJob>();
  asio::steady_timer wake(ioc_);
  error_code ec;
  wake.expires_at(until);
  job->wake = &wake;
  {
    const std::lock_guard lock(gss_calls_->m);
    ++gss_calls_->live;
  }
  std::thread([job, calls = gss_calls_, context = std::move(context), input = std::move(input), ex = ioc_.get_executor()] {
    GssStep r = context->step(input);
    {
      const std::lock_guard lock(job->m);
      job->result = std::move(r);
      job->done = true;
      if (!job->abandoned) {
        asio::post(ex, [job] {
          const std::lock_guard wake_lock(job->m);
          if (job->wake) job->wake->cancel();
        });
      }
    }
    const std::lock_guard lock(calls->m);
    if (--calls->live == 0) calls->ended.notify_all();
  }).detach();
  co_await wake.async_wait(tok(ec));
  const std::lock_guard lock(job->m);
  job->wake = nullptr;
  if (job->done) {
    out = std::move(job->result);
  } else {
    job->abandoned = true;
  }
}

void HttpTransport::wait_gss_calls() noexcept {
  std::unique_lock lock(gss_calls_->m);
  if (gss_calls_->live == 0) return;
  log::debug("waiting up to " + ms_text(opts_.gss_wait) + " for " + std::to_string(gss_calls_->live) +
             " GSS-API (Kerberos) step(s) still running past their request's time");
  if (gss_calls_->ended.wait_for(lock, opts_.gss_wait, [this] { return gss_calls_->live == 0; })) return;
  log::warn(std::to_string(gss_calls_->live) + " GSS-API (Kerberos) step(s) still running " + ms_text(opts_.gss_wait) +
            " after their request gave up (is the KDC reachable?); left to finish on their own");
}

asio::awaitable<void> HttpTransport::negotiate_step(ProxyAuthState& st, const Route& route,
                                                   std::optional<std::string>& challenge, Clock::time_point until) {
  const auto started = Clock::now();
  std::optional<GssStep> step;
  std::shared_ptr<GssContext> context;
  std::string bytes;
  const Url& proxy = *route.proxy;
  if (!st.negotiation) {
    if (!gss_) gss_ = opts_.gss ? opts_.gss : system_gss();
    st.negotiation = std::make_unique<ProxyNegotiation>(gss_, proxy.host);
    if (challenge) negotiate_proxies_.insert(proxy.host_port());
  }
  auto input = st.negotiation->next_input(challenge ? std::optional<std::string_view>(*challenge) : std::nullopt);
  challenge.reset();
  st.header.clear();
  if (!input) {
    st.failure = negotiate_error(route, input.error().message);
    co_return;
  }
  log::debug("proxy " + proxy.host_port() + ": Negotiate (Kerberos) token " + std::to_string(st.negotiation->legs() + 1) +
             " for " + st.negotiation->service());
  if (started >= until) {  // the proxy's answer took all the time: no GSS-API call could answer in none
    st.failure = negotiate_error(route, "asked for Negotiate (Kerberos), but the request's time had run out before "
                                        "GSS-API was asked for a token");
    co_return;
  }
  context = st.negotiation->context();
  bytes = std::move(*input);
  co_await gss_call(context, bytes, until, step);
  if (!step) {
    const auto waited = std::chrono::duration_cast<milliseconds>(until - started);
    st.failure = negotiate_error(route, st.negotiation->timeout_text(ms_text(waited)));
    co_return;
  }
  auto header = st.negotiation->header_after(std::move(*step));
  if (!header) {
    st.failure = negotiate_error(route, header.error().message);
    co_return;
  }
  st.header = std::move(*header);
}

std::optional<Error> HttpTransport::negotiate_finish(ProxyAuthState& st, const Route& route,
                                                     const std::vector<std::string>& values) {
  st.header.clear();
  if (!st.negotiation) return std::nullopt;
  const auto final_token = negotiate_challenge(values);
  auto done = st.negotiation->finish(final_token ? std::optional<std::string_view>(*final_token) : std::nullopt);
  if (!done) return negotiate_error(route, done.error().message);
  log::debug("proxy " + route.proxy->host_port() + " accepted the Negotiate (Kerberos) authentication for " +
             st.negotiation->service() + (final_token && !final_token->empty() ? " (mutual)" : ""));
  return std::nullopt;
}

bool HttpTransport::proxy_challenged(Outcome& o, const Route& route, ProxyAuthState& auth,
                                     std::optional<std::string>& challenge) {
  if (!o.ok || !route.absolute_form()) return false;
  const std::vector<std::string> values = authenticate_values(o.headers);
  if (o.status == 407) {
    challenge = negotiate_allowed(*route.proxy) ? negotiate_challenge(values) : std::nullopt;
    if (challenge) return true;
    if (auth.negotiation) o = fail(proxy_auth_error(*route.proxy, route.url, values, true), 407);
    return false;
  }
  if (auto mutual = negotiate_finish(auth, route, values)) {
    o = fail(std::move(*mutual), o.status);
    return false;
  }
  // The proxy's own headers are not the origin's: they stay out of the answer (and the cache).
  std::erase_if(o.headers, [](const auto& h) {
    return iequals(h.first, "proxy-authenticate") || iequals(h.first, "proxy-authentication-info");
  });
  return false;
}

}  // namespace wheelfit::transports::detail

namespace wheelfit::transports {

namespace {

// Where proxy_for found the proxy for `target` (curl's order).
std::string proxy_source(const HttpOptions& options, const ProxyConfig& config, const Url& target) {
  const bool https = target.scheme == "https";
  if (util::trim(https ? config.https_proxy : config.http_proxy).empty() && util::trim(config.all_proxy).empty()) {
    return std::string("the system proxy settings") + (https ? ", a CONNECT tunnel" : "");  // no variable: Windows'
  }
  if (!options.proxy_from_env) return "HttpOptions::proxy";
  if (https) return !config.https_proxy.empty() ? "https_proxy, a CONNECT tunnel" : "all_proxy, a CONNECT tunnel";
  return !config.http_proxy.empty() ? "http_proxy" : "all_proxy";
}

// Why `target` goes directly.
std::string direct_source(const ProxyConfig& config, const Url& target) {
  if (no_proxy_matches(config.no_proxy, target.ipv6 ? "[" + target.host + "]" : target.host)) return "no_proxy names the host";
  if (!config.system) return "no proxy variable for " + target.scheme;
  if (system_bypass_matches(config.system->bypass, target.host) && !system_proxy_for(config.system->proxy, target.scheme).empty()) {
    return "the system proxy settings bypass the host";
  }
  return "no proxy variable or system proxy setting for " + target.scheme;
}

std::string proxy_method(ProxyAuth auth, const Url& proxy) {
  const bool userinfo = !proxy.userinfo.empty();
  switch (auth) {
    case ProxyAuth::none: return "none (--proxy-auth none)";
    case ProxyAuth::basic:
      return userinfo ? "basic (the proxy URL's user:password)" : "basic, but the proxy URL has no user:password: none is sent";
    case ProxyAuth::negotiate: return "negotiate (Kerberos), with the first request";
    case ProxyAuth::automatic: break;
  }
  return userinfo ? "basic (the proxy URL's user:password)"
                  : "negotiate (Kerberos) when the proxy asks for it (407 Proxy-Authenticate: Negotiate), else none";
}

}  // namespace

Expected<ProxyPlan> plan_proxy(const HttpOptions& options, std::string_view url) {
  auto target = parse_url(url);
  if (!target) return target.error();
  const ProxyConfig config = options.proxy_from_env ? user_proxy_config() : options.proxy;
  auto proxy = proxy_for(config, *target);
  if (!proxy) return proxy.error();
  ProxyPlan plan;
  plan.url = util::strip_credentials(target->str());
  if (config.system) plan.note = system_auto_config_note(*config.system);
  if (!*proxy) {
    plan.source = direct_source(config, *target);
    plan.method = "none (a direct connection)";
    return plan;
  }
  const Url& p = **proxy;
  plan.proxy = redact("http://" + (p.userinfo.empty() ? std::string() : p.userinfo + "@") + p.host_port());
  plan.source = proxy_source(options, config, *target);
  plan.method = proxy_method(options.proxy_auth, p);
  const bool negotiate = options.proxy_auth == ProxyAuth::negotiate ||
                         (options.proxy_auth == ProxyAuth::automatic && p.userinfo.empty());
  if (negotiate) {
    const auto gss = options.gss ? options.gss : system_gss();
    auto credential = gss->credential();
    plan.detail = "service HTTP@" + p.host + " (the proxy's principal must be HTTP/" + p.host + "@REALM); credential: " +
                  (credential ? *credential : "none: " + credential.error().message);
  }
  return plan;
}

}  // namespace wheelfit::transports
