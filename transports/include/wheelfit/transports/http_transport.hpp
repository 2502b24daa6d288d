#pragma once
// The http:// and https:// transport: Boost.Beast + OpenSSL on one io_context, owned by the
// transport and run inside get()/get_many() (callers never see Asio). get_many fetches
// concurrently, at most `jobs` requests at once and `per_host` connections per origin, with
// keep-alive reuse; answers come back in request order.
//
// Behaviour (docs/network-faults.md): retries per RetryPolicy with every retry logged (log::info: the URL
// redacted, the reason, the wait); a stale keep-alive connection (reset / EOF before any response
// byte on a reused connection) is reconnected at once and not charged; connect / idle / overall
// timeouts; the low-speed rule; the whole call's max_time; header and body limits (Content-Length above Request::max_body refused before the
// body is read); redirects (at most 10, never https -> http; across origins only the headers
// credentials.hpp names as safe follow); credentials (credentials.hpp: URL userinfo, per-origin
// credentials, netrc; https only unless the host is allowed insecure); TLS 1.2+, peer and
// host-name verification, SNI except for IP literals, the trust store of trust_store.hpp (a
// client certificate when one is given); proxies from ProxyConfig (CONNECT tunnels for https,
// TLS verified against the origin; absolute-form requests for http; Basic or Negotiate
// (Kerberos, negotiate.hpp) auth to the proxy only, per `proxy_auth`). 404 / 410 -> Errc::not_found; other non-2xx -> NetErrc::http_status (after retries for
// the transient ones), the status in the message ("HTTP 403 from host:port for URL").
// 304 (conditional requests) -> a Response with status 304 and an empty body.
// Thread safety: one caller at a time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "wheelfit/net/options.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/transports/credentials.hpp"
#include "wheelfit/transports/negotiate.hpp"
#include "wheelfit/transports/net_policy.hpp"

namespace wheelfit::transports {

/// The options (options.hpp: plain structs of the core, as the façade's requests carry them).
using net::default_user_agent;
using net::HttpOptions;

/// Errc::invalid_input when the options are unusable: a trust store or client certificate that
/// cannot be loaded (missing, unreadable, no certificate in it, a folder without hashed
/// certificates, a key that is missing, encrypted or not the certificate's) names the file and the
/// flag or variable it came from. The system store is loaded at the first https connection;
/// when it holds no certificate, each https request fails with NetErrc::certificate naming it.
Expected<std::unique_ptr<net::Transport>> make_http_transport(HttpOptions options = {});

/// What the transport would do for a URL (`wheelfit doctor --url`; options.hpp).
using net::ProxyPlan;

/// The plan for `url` under `options` (the proxy variables read as make_http_transport reads
/// them). Errors: the URL or the proxy URL does not parse (Errc::invalid_input / unsupported).
Expected<ProxyPlan> plan_proxy(const HttpOptions& options, std::string_view url);

/// One transport for every scheme: file:// URLs and plain paths to the file transport, http(s)
/// to an http transport made from `options`. Errc::unsupported (naming the URL) for other
/// schemes. Errors: those of make_http_transport.
Expected<std::unique_ptr<net::Transport>> make_transport(HttpOptions options = {});

}  // namespace wheelfit::transports
