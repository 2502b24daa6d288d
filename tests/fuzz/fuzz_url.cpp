// libFuzzer target: the URL and proxy parsers of the network layer (net_policy). The input is
// split at its first newline: a URL, then a Location or proxy setting judged against it. Besides
// "no crash": a parsed URL's text parses again to the same URL, and redaction never keeps the
// userinfo of a URL's authority.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wheelfit/transports/net_policy.hpp"

namespace t = wheelfit::transports;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto nl = text.find('\n');
  const std::string_view first = text.substr(0, nl);
  const std::string_view second = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);

  auto url = t::parse_url(first);
  if (url) {
    const std::string again_text = url->str();
    auto again = t::parse_url(again_text);
    if (!again || again->str() != again_text || again->host != url->host || again->port != url->port) {
      std::fprintf(stderr, "url round trip failed: '%s'\n", again_text.c_str());
      std::abort();
    }
    // The authority's userinfo must not survive redaction (the same text in a path may).
    if (!url->userinfo.empty() && url->userinfo.find("***") == std::string::npos) {
      auto redacted = t::parse_url(t::redact(first));
      if (redacted && redacted->userinfo == url->userinfo) {
        std::fprintf(stderr, "redact kept the userinfo of '%s'\n", std::string(first).c_str());
        std::abort();
      }
    }
    (void)t::resolve_location(*url, second);
    t::ProxyConfig config;
    config.https_proxy = std::string(second);
    config.http_proxy = std::string(second);
    config.no_proxy = std::string(second);
    (void)t::proxy_for(config, *url);
    (void)t::no_proxy_matches(second, url->host);
  }
  (void)t::redact(text);
  return 0;
}
