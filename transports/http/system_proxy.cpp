// The user's system proxy settings: the rules of system_proxy.hpp, and on Windows their reading
// through WinHTTP (winhttp.dll; no request goes through it).
#include "wheelfit/transports/system_proxy.hpp"

#ifdef _WIN32
#include <windows.h>
#include <winhttp.h>

#include "win_text.hpp"
#endif

#include <vector>

#include "wheelfit/util/log.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::transports {

namespace {

/// `list` split at any of `seps`, each item trimmed, empty ones dropped.
std::vector<std::string_view> items(std::string_view list, std::string_view seps) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const std::size_t end = list.find_first_of(seps);
    const std::string_view item = util::trim(list.substr(0, end));
    if (!item.empty()) out.push_back(item);
    list = end == std::string_view::npos ? std::string_view() : list.substr(end + 1);
  }
  return out;
}

/// '*' matches any run of characters (none included); ASCII case-insensitive.
bool wildcard_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && util::ascii::to_lower(pattern[p]) == util::ascii::to_lower(text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

/// An entry's host part: "http://*.corp:8080" -> "*.corp"; "[::1]:80" -> "::1".
std::string_view entry_host(std::string_view e) {
  if (const std::size_t s = e.find("://"); s != std::string_view::npos) e.remove_prefix(s + 3);
  if (!e.empty() && e.front() == '[') {
    const std::size_t close = e.find(']');
    return close == std::string_view::npos ? e.substr(1) : e.substr(1, close - 1);
  }
  if (const std::size_t colon = e.find(':'); colon != std::string_view::npos && e.find(':', colon + 1) == std::string_view::npos) {
    e = e.substr(0, colon);  // one ':' is a port; more is an IPv6 address written bare
  }
  return e;
}

bool is_loopback(std::string_view host) {
  return util::iequals(host, "localhost") || host == "::1" || host.starts_with("127.");
}

}  // namespace

std::string system_proxy_for(std::string_view list, std::string_view scheme) {
  std::string_view every, socks;
  for (const std::string_view item : items(list, "; \t\r\n")) {
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (every.empty()) every = item;
      continue;
    }
    const std::string_view name = util::trim(item.substr(0, eq));
    const std::string_view value = util::trim(item.substr(eq + 1));
    if (value.empty()) continue;
    if (util::iequals(name, scheme)) return std::string(value);
    if (util::iequals(name, "socks") && socks.empty()) socks = value;
  }
  if (!every.empty()) return std::string(every);
  if (!socks.empty()) return socks.find("://") == std::string_view::npos ? "socks://" + std::string(socks) : std::string(socks);
  return {};
}

bool system_bypass_matches(std::string_view bypass, std::string_view host) {
  const std::vector<std::string_view> entries = items(bypass, "; \t\r\n");
  bool loopback_bypassed = true;
  for (const std::string_view e : entries) {
    if (util::iequals(e, "<-loopback>")) loopback_bypassed = false;
  }
  if (loopback_bypassed && is_loopback(host)) return true;
  for (const std::string_view e : entries) {
    if (util::iequals(e, "<-loopback>")) continue;
    if (util::iequals(e, "<local>")) {
      if (host.find('.') == std::string_view::npos && host.find(':') == std::string_view::npos) return true;
      continue;
    }
    const std::string_view pattern = entry_host(e);
    if (!pattern.empty() && wildcard_match(pattern, host)) return true;
  }
  return false;
}

std::string system_auto_config_note(const SystemProxySettings& s) {
  std::string what;
  if (!s.auto_config_url.empty()) what = "a proxy auto-configuration script (PAC, " + s.auto_config_url + ")";
  if (s.auto_detect) what += std::string(what.empty() ? "" : " and ") + "automatic proxy detection (WPAD)";
  if (what.empty()) return {};
  return "the system proxy settings ask for " + what +
         ", which wheelfit does not follow" +
         (s.proxy.empty() ? std::string() : " (it uses the manual proxy setting instead)") +
         ": if this network needs a proxy, set https_proxy and http_proxy to the proxy the script names "
         "(e.g. https_proxy=http://proxy.example:8080), or set it as the manual proxy in the system settings";
}

#ifdef _WIN32

std::optional<SystemProxySettings> read_system_proxy() {
  WINHTTP_CURRENT_USER_IE_PROXY_CONFIG c{};
  if (!WinHttpGetIEProxyConfigForCurrentUser(&c)) {
    const DWORD e = GetLastError();
    log::debug("the system proxy settings cannot be read (WinHttpGetIEProxyConfigForCurrentUser: " +
               detail::windows_error_text(e) + "): none used");
    return std::nullopt;
  }
  SystemProxySettings s;
  s.auto_detect = c.fAutoDetect != FALSE;
  s.auto_config_url = detail::utf8_of(c.lpszAutoConfigUrl);
  s.proxy = detail::utf8_of(c.lpszProxy);
  s.bypass = detail::utf8_of(c.lpszProxyBypass);
  for (wchar_t* p : {c.lpszAutoConfigUrl, c.lpszProxy, c.lpszProxyBypass}) {
    if (p) GlobalFree(p);
  }
  return s;
}

#else

std::optional<SystemProxySettings> read_system_proxy() { return std::nullopt; }

#endif

ProxyConfig user_proxy_config() {
  ProxyConfig config = ProxyConfig::from_env();
  config.system = read_system_proxy();
  return config;
}

}  // namespace wheelfit::transports
