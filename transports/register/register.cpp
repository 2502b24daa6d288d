// The built-in transports into a registry (register.hpp): each factory converts the core's plain
// options (net/options.hpp) into its transport; the services forward to the transports'
// own functions.
#include "wheelfit/transports/register.hpp"

#include <algorithm>

#include "wheelfit/transports/cache_housekeeping.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/transports/credentials.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/trust_store.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::transports {
namespace {

using net::StackOptions;
using TransportPtr = std::unique_ptr<net::Transport>;

// The façade's take_credentials: the URL's userinfo and the bearer token become the origin's
// credential, the environment's (netrc, hosts allowed insecure) read first when asked.
Expected<std::string> take_credentials(const std::string& url, const std::string& what,
                                       const std::optional<std::string>& token, HttpOptions& net) {
  if (net.credentials_from_env) {
    add_credentials_from_env(net.credentials);
    net.credentials_from_env = false;
  }
  auto parsed = parse_url(url);
  if (!parsed) return parsed.error();
  const std::string bearer(token ? util::trim(*token) : std::string_view());
  if (parsed->userinfo.empty() && bearer.empty()) return url;
  if (std::any_of(bearer.begin(), bearer.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return unexpected(Errc::invalid_input, "WHEELFIT_INDEX_TOKEN holds a control character");
  }
  const std::string source = parsed->userinfo.empty() ? "WHEELFIT_INDEX_TOKEN" : what;
  if (!may_send_credentials(net.credentials, *parsed)) {
    AuthChoice refused;
    refused.source = source;
    return unexpected(Errc::invalid_input, refusal_message(refused, *parsed));
  }
  net.credentials.origins.push_back({parsed->origin(), parsed->userinfo, bearer, source});
  return util::without_userinfo(url);
}

}  // namespace

// http and https: read over the network, cached, with credentials and the proxy / TLS rules.
constexpr net::SchemeFacts kHttpFacts{.remote = true, .cacheable = true, .credentials = true, .network_rules = true};

Expected<void> register_transports(net::Registry& registry) {
  const auto file = [](const StackOptions&) -> Expected<TransportPtr> { return make_file_transport(); };
  if (auto r = registry.add_transport({"file", {"file"}, file, net::SchemeFacts{}}); !r) return r;
  const auto http = [](const StackOptions& o) { return make_http_transport(o.network); };
  if (auto r = registry.add_transport({"http", {"http", "https"}, http, kHttpFacts}); !r) return r;
  // The cache wraps the whole stack: it stores http(s) answers and passes the rest through.
  const auto cache = [](TransportPtr inner, const StackOptions& o) -> Expected<TransportPtr> {
    if (!o.cache) return inner;
    auto cached = make_cache_transport(std::move(inner), *o.cache);
    if (!cached) return Error(cached.error().code, "--cache-dir: " + cached.error().message);
    return cached;
  };
  if (auto r = registry.add_decorator({"cache", 10, cache}); !r) return r;

  net::HttpRules rules;
  rules.take_credentials = take_credentials;
  rules.plan_proxy = [](const HttpOptions& net, std::string_view url) { return plan_proxy(net, url); };
  rules.choose_trust = [](const HttpOptions& net) { return choose_trust(net); };
  rules.insecure_allowed = [](const net::Credentials& credentials, std::string_view url) {
    const auto parsed = parse_url(url);
    return parsed && insecure_host_allowed(credentials.insecure_hosts, *parsed);
  };
  if (auto r = registry.set_http_rules(std::move(rules)); !r) return r;

  net::CacheKeeping keeping;
  keeping.default_dir = default_cache_dir;
  keeping.usage = cache_usage;
  keeping.prune = [](const std::filesystem::path& root, std::uint64_t max_bytes) { return prune_cache(root, max_bytes); };
  keeping.clean = clean_cache;
  return registry.set_cache_keeping(std::move(keeping));
}

}  // namespace wheelfit::transports
