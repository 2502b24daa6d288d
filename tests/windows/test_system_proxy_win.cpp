// read_system_proxy() on Windows (system_proxy.hpp): the current user's proxy settings, written
// to the registry as the Settings app keeps them and read back through WinHTTP, each form the
// rules of test_system_proxy.cpp apply to; the user's own value is put back after each case.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/system_proxy.hpp"
#include "windows/system_proxy_registry.hpp"

using namespace wheelfit;
using namespace wheelfit::transports;
using Catch::Matchers::Contains;

TEST_CASE("read_system_proxy reads the user's settings back through WinHTTP", "[windows][system_proxy]") {
  struct Row {
    std::string what;
    std::uint32_t flags;  // 1 direct, 2 manual proxy, 4 PAC URL, 8 WPAD
    std::string proxy, bypass, pac;
    bool auto_detect;
  };
  const Row rows[] = {
      {"a manual proxy per scheme and a bypass list", 0x3, "http=127.0.0.1:3128;https=127.0.0.1:3129",
       "<local>;*.corp.example", "", false},
      {"one proxy for every scheme", 0x3, "proxy.corp.example:8080", "", "", false},
      {"a PAC script and WPAD", 0x1 | 0x4 | 0x8, "", "", "http://wpad.corp.example/proxy.pac", true},
      {"a direct connection", 0x1, "", "", "", false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const test::SystemProxyRegistry saved;
    test::write_system_proxy(r.flags, r.proxy, r.bypass, r.pac);
    const auto s = read_system_proxy();
    REQUIRE(s);
    CHECK(s->auto_detect == r.auto_detect);
    CHECK(s->auto_config_url == r.pac);
    CHECK(s->proxy == r.proxy);
    CHECK(s->bypass == r.bypass);
    const ProxyConfig c = user_proxy_config();  // the variables, then these
    REQUIRE(c.system);
    CHECK(c.system->proxy == r.proxy);
  }
}

TEST_CASE("doctor --url names a PAC script read from the settings as not followed", "[windows][system_proxy]") {
  const test::SystemProxyRegistry saved;
  test::write_system_proxy(0x1 | 0x4, "", "", "http://wpad.corp.example/proxy.pac");
  HttpOptions o;
  o.proxy_auth = ProxyAuth::basic;
  const auto plan = plan_proxy(o, "https://pypi.test/simple/");
  REQUIRE(plan);
  CHECK_THAT(plan->note, Contains("(PAC, http://wpad.corp.example/proxy.pac)"));
  CHECK_THAT(plan->note, Contains("wheelfit does not follow"));
}
