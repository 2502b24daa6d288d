// The few functions of the transports' plain option structs (options.hpp).
#include "wheelfit/net/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "wheelfit/util/text.hpp"
#include "wheelfit/version.hpp"

namespace wheelfit::net {

std::string default_user_agent() { return std::string("wheelfit/") + WHEELFIT_VERSION_STRING; }

std::chrono::milliseconds RetryPolicy::backoff(int attempt, double random01) const {
  const double doublings = std::clamp(attempt, 1, 62) - 1;
  const double full = std::min(static_cast<double>(cap.count()), static_cast<double>(base.count()) * std::exp2(doublings));
  const double r = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::floor(full / 2 + r * (full - full / 2))));
}

MaxTime MaxTime::from_now(std::chrono::milliseconds total, std::string source) {
  return MaxTime{std::chrono::steady_clock::now() + total, total, std::move(source)};
}

std::string MaxTime::name() const {
  const auto ms = total.count();
  return "the " + source + " of " + (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms");
}

ProxyConfig ProxyConfig::from_env(const std::function<const char*(const char*)>& getenv) {
  // curl treats a set-but-empty variable as unset, so an empty lower-case one lets the
  // upper-case one through.
  const auto read = [&](const char* name) -> std::string {
    const char* value = getenv ? getenv(name) : std::getenv(name);
    return value ? std::string(value) : std::string();
  };
  const auto either = [&](const char* lower_name, const char* upper_name) {
    std::string value = read(lower_name);
    return value.empty() ? read(upper_name) : value;
  };
  ProxyConfig config;
  config.http_proxy = read("http_proxy");  // never HTTP_PROXY: a CGI request can set it ("httpoxy")
  config.https_proxy = either("https_proxy", "HTTPS_PROXY");
  config.all_proxy = either("all_proxy", "ALL_PROXY");
  config.no_proxy = either("no_proxy", "NO_PROXY");
  return config;
}

const NetrcEntry* Netrc::find(std::string_view host) const {
  const NetrcEntry* fallback = nullptr;
  for (const auto& e : entries) {
    if (!e.is_default && util::iequals(e.machine, host)) return &e;
    if (e.is_default && !fallback) fallback = &e;
  }
  return fallback;
}

std::string TrustChoice::source() const {
  if (locations.empty()) return "system";
  std::string out;
  for (const auto& l : locations) {
    if (out.find(l.source) == std::string::npos) out += (out.empty() ? "" : " + ") + l.source;
  }
  return out;
}

std::string TrustChoice::describe() const {
  if (locations.empty()) return "the system store";
  std::string out;
  for (const auto& l : locations) out += (out.empty() ? "" : ", ") + l.path + " (" + l.source + ")";
  return out;
}

}  // namespace wheelfit::net
