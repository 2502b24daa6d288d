// The user's system proxy settings (system_proxy.hpp; Windows' Internet Options through WinHTTP)
// as tables: the proxy list per scheme, the bypass list, their place after the proxy variables
// in proxy_for, and what `wheelfit doctor --url` says of them (PAC / WPAD not followed). Pure:
// the settings are given as the struct WinHTTP's reading fills in, so they run on every platform.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "support/checks.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/net_policy.hpp"
#include "wheelfit/transports/system_proxy.hpp"

using namespace wheelfit;
using namespace wheelfit::transports;
using Catch::Matchers::Contains;

namespace {

Url url_of(std::string_view text) {
  auto url = parse_url(text);
  INFO(text);
  REQUIRE(url);
  return std::move(url).value();
}

ProxyConfig with_system(std::string proxy, std::string bypass) {
  ProxyConfig c;
  c.system = SystemProxySettings{false, "", std::move(proxy), std::move(bypass)};
  return c;
}

/// "host:port" of the proxy proxy_for picks, "direct", or "error: <message>".
std::string route(const ProxyConfig& config, std::string_view target) {
  const auto p = proxy_for(config, url_of(target));
  if (!p) return "error: " + p.error().message;
  return *p ? (*p)->host_port() : "direct";
}

net::ProxyPlan plan_ok(const HttpOptions& o, std::string_view url) {
  auto p = plan_proxy(o, url);
  INFO(url << ": " << (p ? std::string() : p.error().message));
  REQUIRE(p);
  return std::move(p).value();
}

}  // namespace

TEST_CASE("system_proxy_for reads Windows' proxy list per scheme", "[transports][system_proxy]") {
  struct Row {
    std::string_view list, scheme, expected;
  };
  const Row rows[] = {
      {"proxy.corp:8080", "http", "proxy.corp:8080"},
      {"proxy.corp:8080", "https", "proxy.corp:8080"},
      {"http=a:1;https=b:2", "http", "a:1"},
      {"http=a:1;https=b:2", "https", "b:2"},
      {"http=a:1", "https", ""},  // per scheme, https not named: direct (as Windows)
      {"http=a:1 https=b:2", "https", "b:2"},
      {" HTTPS=b:2 ; ", "https", "b:2"},
      {"https=http://b:2", "https", "http://b:2"},
      {"ftp=f:21;c:3", "https", "c:3"},
      {"https=b:2;c:3", "http", "c:3"},
      {"https=;c:3", "https", "c:3"},
      {"socks=s:1080", "https", "socks://s:1080"},
      {"http=a:1;socks=s:1080", "https", "socks://s:1080"},
      {"", "https", ""},
      {" ; ;\t", "http", ""},
  };
  test::check_rows(rows, [](const Row& r) {
    CAPTURE(r.list, r.scheme);
    CHECK(system_proxy_for(r.list, r.scheme) == r.expected);
  });
}

TEST_CASE("system_bypass_matches follows Windows' bypass list", "[transports][system_proxy]") {
  struct Row {
    std::string_view bypass, host;
    bool bypassed;
  };
  const Row rows[] = {
      {"<local>", "intranet", true},
      {"<local>", "pypi.org", false},
      {"<local>", "10.0.0.1", false},
      {"<local>", "fe80::1", false},
      {"*.corp.example", "pkg.corp.example", true},
      {"*.corp.example", "corp.example", false},
      {"*.CORP.Example", "a.b.corp.example", true},
      {"corp.example", "corp.example", true},
      {"corp.example", "a.corp.example", false},
      {"10.*", "10.1.2.3", true},
      {"10.*", "110.1.2.3", false},
      {"*corp*", "mycorpnet.test", true},
      {"http://*.corp.example:8080", "a.corp.example", true},
      {"a.test; b.test", "b.test", true},
      {"a.test;b.test", "c.test", false},
      {"fe80::*", "fe80::1", true},
      {"[fe80::1]:443", "fe80::1", true},
      // loopback is bypassed unless the list says <-loopback>, as Windows does
      {"", "localhost", true},
      {"", "127.0.0.1", true},
      {"", "127.8.9.10", true},
      {"", "::1", true},
      {"<-loopback>", "127.0.0.1", false},
      {"<-loopback>", "localhost", false},
      {"<-loopback>;<local>", "localhost", true},
      {"", "pypi.org", false},
      {";;", "pypi.org", false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.bypass, r.host);
    CHECK(system_bypass_matches(r.bypass, r.host) == r.bypassed);
  }
}

TEST_CASE("proxy_for: the variables first, then the system settings", "[transports][system_proxy][P05]") {
  const ProxyConfig system = with_system("http=h.corp:1;https=s.corp:2", "*.corp.example;<local>");
  struct Row {
    std::string_view target, expected;
  };
  SECTION("the system settings alone") {
    const Row rows[] = {
        {"https://pypi.org/simple/", "s.corp:2"},
        {"http://pypi.org/simple/", "h.corp:1"},
        {"https://pkg.corp.example/", "direct"},
        {"https://intranet/", "direct"},
        {"https://127.0.0.1:8443/", "direct"},
        {"https://[::1]:8443/", "direct"},
    };
    for (const Row& r : rows) {
      CAPTURE(r.target);
      CHECK(route(system, r.target) == r.expected);
    }
  }
  SECTION("a variable for the scheme wins; no_proxy wins over both") {
    ProxyConfig c = system;
    c.https_proxy = "v.test:9";
    c.no_proxy = "pypi.test";
    CHECK(route(c, "https://pypi.org/") == "v.test:9");
    CHECK(route(c, "http://pypi.org/") == "h.corp:1");  // no http_proxy: the system's for http
    CHECK(route(c, "https://pypi.test/") == "direct");
    CHECK(route(c, "https://pkg.corp.example/") == "v.test:9");  // the system's bypass is for the system's proxy
    c = system;
    c.all_proxy = "all.test:3";
    CHECK(route(c, "http://pypi.org/") == "all.test:3");
  }
  SECTION("loopback through the system proxy when the list says <-loopback>") {
    CHECK(route(with_system("p.corp:3128", "<-loopback>"), "https://127.0.0.1:8443/") == "p.corp:3128");
    CHECK(route(with_system("p.corp:3128", ""), "https://127.0.0.1:8443/") == "direct");
  }
  SECTION("no system proxy for the scheme: direct") {
    CHECK(route(with_system("http=h.corp:1", ""), "https://pypi.org/") == "direct");
    CHECK(route(with_system("", ""), "https://pypi.org/") == "direct");
  }
  SECTION("a system proxy wheelfit cannot use is an error naming the system settings") {
    CHECK_THAT(route(with_system("socks=s.corp:1080", ""), "https://pypi.org/"),
               Contains("error: proxy 'socks://s.corp:1080' (from the system proxy settings): 'socks://' proxies are not supported"));
    CHECK_THAT(route(with_system("https=https://s.corp:443", ""), "https://pypi.org/"), Contains("from the system proxy settings"));
    CHECK_THAT(route(with_system("s.corp:99999", ""), "https://pypi.org/"), Contains("the system proxy setting: "));
    CHECK_THAT(route(with_system("s.corp:99999", ""), "https://pypi.org/"), Contains("out of range"));
  }
}

TEST_CASE("plan_proxy names the system settings as the proxy's source (wheelfit doctor --url)", "[transports][system_proxy]") {
  HttpOptions o;
  o.proxy_from_env = false;
  o.proxy_auth = ProxyAuth::basic;  // no Negotiate: no GSS-API / SSPI asked
  o.proxy = with_system("http=h.corp:1;https=s.corp:2", "*.corp.example");
  auto p = plan_ok(o, "https://pypi.org/simple/");
  CHECK(p.proxy == "http://s.corp:2");
  CHECK(p.source == "the system proxy settings, a CONNECT tunnel");
  CHECK(p.note.empty());
  p = plan_ok(o, "http://pypi.org/simple/");
  CHECK(p.source == "the system proxy settings");
  p = plan_ok(o, "https://pkg.corp.example/simple/");
  CHECK_FALSE(p.proxy);
  CHECK(p.source == "the system proxy settings bypass the host");
  o.proxy = with_system("http=h.corp:1", "");
  p = plan_ok(o, "https://pypi.org/simple/");
  CHECK(p.source == "no proxy variable or system proxy setting for https");
  o.proxy.https_proxy = "http://v.test:9";
  p = plan_ok(o, "https://pypi.org/simple/");
  CHECK(p.source == "HttpOptions::proxy");
  SECTION("a PAC script or WPAD is named as not followed, with what to set instead") {
    o.proxy = with_system("", "");
    o.proxy.system->auto_config_url = "http://wpad.corp.example/proxy.pac";
    o.proxy.system->auto_detect = true;
    p = plan_ok(o, "https://pypi.org/simple/");
    CHECK_FALSE(p.proxy);
    CHECK_THAT(p.note, Contains("a proxy auto-configuration script (PAC, http://wpad.corp.example/proxy.pac) and automatic "
                                 "proxy detection (WPAD), which wheelfit does not follow"));
    CHECK_THAT(p.note, Contains("set https_proxy and http_proxy"));
  }
}

TEST_CASE("system_auto_config_note: nothing to say without PAC or WPAD", "[transports][system_proxy]") {
  CHECK(system_auto_config_note(SystemProxySettings{}).empty());
  CHECK(system_auto_config_note(SystemProxySettings{false, "", "p.corp:1", "<local>"}).empty());
  const std::string wpad = system_auto_config_note(SystemProxySettings{true, "", "p.corp:1", ""});
  CHECK_THAT(wpad, Contains("automatic proxy detection (WPAD)"));
  CHECK_THAT(wpad, Contains("it uses the manual proxy setting instead"));
  CHECK_THAT(wpad, !Contains("PAC"));
}

TEST_CASE("read_system_proxy: none outside Windows", "[transports][system_proxy][posix]") {
#ifndef _WIN32
  CHECK_FALSE(read_system_proxy().has_value());
  CHECK_FALSE(user_proxy_config().system.has_value());
#endif
}
