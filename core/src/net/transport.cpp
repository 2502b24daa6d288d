#include "wheelfit/net/transport.hpp"

#include <iterator>

#include "wheelfit/model/url.hpp"
#include "wheelfit/util/error_category.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::net {

SchemeFacts default_facts(std::string_view url) {
  if (model::url::is_http(url)) return {.remote = true, .cacheable = true, .credentials = true, .network_rules = true};
  return {};
}

namespace {
// By NetErrc value, from 1; a new enumerator adds its message here (tests/util/test_error_categories.cpp
// checks every one has its own).
constexpr const char* kNetMessages[] = {
    "connection failed",                // connect_failed
    "connect timed out",                // connect_timeout
    "connection reset",                 // reset
    "response truncated",               // truncated
    "read timed out",                   // idle_timeout
    "deadline exceeded",                // deadline
    "TLS handshake failed",             // tls_handshake
    "certificate verification failed",  // certificate
    "HTTP error status",                // http_status
    "rate limited",                     // rate_limited
    "proxy refused",                    // proxy
    "redirect refused",                 // redirect
    "malformed response",               // protocol
    "not in the cache (offline)",       // offline
    "transfer too slow",                // too_slow
};
static_assert(std::size(kNetMessages) == static_cast<std::size_t>(NetErrc::too_slow));
}  // namespace

const std::error_category& net_category() noexcept {
  static const util::TableCategory category("wheelfit.transport", kNetMessages, "unknown transport error");
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

}  // namespace wheelfit::net
