#include "wheelfit/transport/transport.hpp"

#include "wheelfit/model/url.hpp"

#include "wheelfit/util/text.hpp"

namespace wheelfit::transport {

SchemeFacts default_facts(std::string_view url) {
  if (model::url::is_http(url)) return {.remote = true, .cacheable = true, .credentials = true, .network_rules = true};
  return {};
}

namespace {
class NetCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "wheelfit.transport"; }
  std::string message(int ev) const override {
    switch (static_cast<NetErrc>(ev)) {
      case NetErrc::connect_failed: return "connection failed";
      case NetErrc::connect_timeout: return "connect timed out";
      case NetErrc::reset: return "connection reset";
      case NetErrc::truncated: return "response truncated";
      case NetErrc::idle_timeout: return "read timed out";
      case NetErrc::deadline: return "deadline exceeded";
      case NetErrc::tls_handshake: return "TLS handshake failed";
      case NetErrc::certificate: return "certificate verification failed";
      case NetErrc::http_status: return "HTTP error status";
      case NetErrc::rate_limited: return "rate limited";
      case NetErrc::proxy: return "proxy refused";
      case NetErrc::redirect: return "redirect refused";
      case NetErrc::protocol: return "malformed response";
      case NetErrc::offline: return "not in the cache (offline)";
      case NetErrc::too_slow: return "transfer too slow";
    }
    return "unknown transport error";
  }
};
}  // namespace

const std::error_category& net_category() noexcept {
  static const NetCategory category;
  return category;
}

bool is_transient(const Error& error, int status) {
  if (error.code.category() != net_category()) return false;
  switch (static_cast<NetErrc>(error.code.value())) {
    case NetErrc::connect_failed:
    case NetErrc::connect_timeout:
    case NetErrc::reset:
    case NetErrc::truncated:
    case NetErrc::idle_timeout:
    case NetErrc::too_slow:
    case NetErrc::tls_handshake:
      return true;
    case NetErrc::http_status:
      return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504 ||
             (status >= 520 && status <= 527);
    default:
      return false;
  }
}

std::optional<std::string_view> find_header(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() != name.size()) continue;
    if (util::ascii_lower(k) == util::ascii_lower(name)) return std::string_view(v);
  }
  return std::nullopt;
}

}  // namespace wheelfit::transport
