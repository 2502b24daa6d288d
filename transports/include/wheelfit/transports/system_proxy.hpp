#pragma once
// The user's system proxy settings (Windows: Settings > Network > Proxy, the Internet Options):
// read through WinHTTP (WinHttpGetIEProxyConfigForCurrentUser, no request goes through WinHTTP)
// and applied after the proxy variables (net_policy.hpp proxy_for; docs/decisions/0034). The
// rules are pure functions of the settings, so they are tested as tables on every platform; only
// read_system_proxy() touches the system. A PAC script or WPAD is not followed: doctor says so.
//
// The proxy list, as Windows writes it: "proxy:8080" (every scheme), or entries per scheme
// "http=a:3128;https=b:3128" (';' or white space between them; a value may carry "http://").
// The bypass list: ';'-separated, ASCII case-insensitive, '*' a wildcard ("*.corp.example",
// "10.*"); "<local>" names every host without a dot; loopback (localhost, 127.0.0.0/8, ::1) is
// bypassed unless the list holds "<-loopback>", as Windows does. A ":port" or "scheme://" on an
// entry is ignored (the host is what is compared).
// Thread safety: pure functions, except read_system_proxy (reads the user's settings).

#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/net/options.hpp"

namespace wheelfit::transports {

using net::ProxyConfig;
using net::SystemProxySettings;

/// The current user's settings (Windows); nullopt elsewhere, or when WinHTTP cannot read them.
std::optional<SystemProxySettings> read_system_proxy();

/// ProxyConfig::from_env() and, on Windows, the system settings beside it: what the http
/// transport uses when HttpOptions::proxy_from_env.
ProxyConfig user_proxy_config();

/// The proxy the list gives for `scheme` ("http", "https"): its "<scheme>=" entry, else an entry
/// without "=" (every scheme), else a "socks=" entry as "socks://host:port" (refused by
/// proxy_for: SOCKS is not supported); "" when none (a direct connection).
std::string system_proxy_for(std::string_view list, std::string_view scheme);

/// Whether the bypass list sends `host` (lower-case, IPv6 without brackets) directly.
bool system_bypass_matches(std::string_view bypass, std::string_view host);

/// For doctor: "" when the settings ask for no automatic configuration; else that a PAC script
/// (its URL) or WPAD is set and not followed, and which variable to set instead.
std::string system_auto_config_note(const SystemProxySettings& settings);

}  // namespace wheelfit::transports
