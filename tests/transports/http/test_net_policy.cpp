// Tests of the network policy (net_policy.hpp) as tables: URL parsing and Location resolution,
// curl's proxy variables and NO_PROXY rules (docs/network-faults.md P05), retry decisions and waits (N11,
// G02), and redaction of credentials.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/transports/net_policy.hpp"

using namespace wheelfit;
using namespace wheelfit::transports;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using test::check_each;
using test::check_error;
using test::ErrorCase;
using test::TextCase;
using net::NetErrc;

namespace {

Url parse_ok(std::string_view text) {
  auto url = parse_url(text);
  INFO(text);
  if (!url) FAIL("parse_url failed: " << url.error().message);
  return std::move(url).value();
}

// A fixed "now", Wed, 06 Nov 2024 08:49:37 GMT (the RFC's example date moved to a Wednesday 30
// years on), so the dates in the tables are easy to check by hand.
const std::chrono::system_clock::time_point kNow =
    std::chrono::sys_days(std::chrono::year(2024) / 11 / 6) + 8h + 49min + 37s;

Error http_error(int status) { return net::net_error(NetErrc::http_status, "HTTP " + std::to_string(status)); }

std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [&vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

// =============================================================================================
// URLs

TEST_CASE("parse_url splits http and https URLs", "[transports][net_policy]") {
  struct Row {
    std::string_view text, scheme, userinfo, host;
    std::uint16_t port;
    std::string_view target;
    bool ipv6, ip_literal;
    std::string_view host_port, origin, str;
  };
  const Row rows[] = {
      {"https://example.test/simple/", "https", "", "example.test", 443, "/simple/", false, false,
       "example.test:443", "https://example.test", "https://example.test/simple/"},
      {"HTTP://Example.TEST", "http", "", "example.test", 80, "/", false, false, "example.test:80",
       "http://example.test", "http://example.test/"},
      {"http://example.test:8080?q=1#frag", "http", "", "example.test", 8080, "/?q=1", false, false,
       "example.test:8080", "http://example.test:8080", "http://example.test:8080/?q=1"},
      {"https://u%40x:p%3Aw@h.test:443/a%2Bb?x#y", "https", "u@x:p:w", "h.test", 443, "/a%2Bb?x", false, false,
       "h.test:443", "https://h.test", "https://h.test/a%2Bb?x"},
      {"http://127.0.0.1:5000/x", "http", "", "127.0.0.1", 5000, "/x", false, true, "127.0.0.1:5000",
       "http://127.0.0.1:5000", "http://127.0.0.1:5000/x"},
      {"https://[::1]:8443/", "https", "", "::1", 8443, "/", true, true, "[::1]:8443", "https://[::1]:8443",
       "https://[::1]:8443/"},
      {"https://[2001:DB8::1]/p", "https", "", "2001:db8::1", 443, "/p", true, true, "[2001:db8::1]:443",
       "https://[2001:db8::1]", "https://[2001:db8::1]/p"},
      {"http://h.test:/", "http", "", "h.test", 80, "/", false, false, "h.test:80", "http://h.test", "http://h.test/"},
      {"http://256.1.1.1/", "http", "", "256.1.1.1", 80, "/", false, false, "256.1.1.1:80", "http://256.1.1.1",
       "http://256.1.1.1/"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    const Url u = parse_ok(r.text);
    CHECK(u.scheme == r.scheme);
    CHECK(u.userinfo == r.userinfo);
    CHECK(u.host == r.host);
    CHECK(u.port == r.port);
    CHECK(u.target == r.target);
    CHECK(u.ipv6 == r.ipv6);
    CHECK(u.is_ip_literal() == r.ip_literal);
    CHECK(u.host_port() == r.host_port);
    CHECK(u.origin() == r.origin);
    CHECK(u.str() == r.str);
  }
}

TEST_CASE("parse_url rejects hostile and malformed URLs, naming the URL and the problem", "[transports][net_policy]") {
  const std::vector<ErrorCase> rows = {
      {"https://h.test/a\nb", "control character 0x0a at offset 16"},
      {"https://h.test/a\rHost: evil", "control character 0x0d"},
      {std::string("https://h.test/a\0b", 18), "NUL byte at offset 16"},
      {"https://h.test/a\x7f", "control character 0x7f"},
      {"https://h.test/a b", "space at offset 16"},
      {" https://h.test/", "space at offset 0"},
      {"https://h.test\\@evil.test/", "backslash"},
      {"https://h.test/..\\..\\x", "backslash"},
      {"https:///path", "no host"},
      {"https://", "no host"},
      {"https://user:pw@/x", "no host"},
      {"https://user:pa>ss@h.test/", "the userinfo holds a character that must be percent-encoded"},  // fuzz_url
      {"https://user:pa\xcc\xccss@h.test/", "the userinfo holds a character that must be percent-encoded"},
      {"https://us\"er@h.test/", "the userinfo holds a character that must be percent-encoded"},
      {"https://:443/", "no host"},
      {"https:h.test/x", "no host"},
      {"h.test/x", "no scheme"},
      {"/simple/", "no scheme"},
      {"", "no scheme"},
      {"https://h.test:0/", "out of range"},
      {"https://h.test:65536/", "out of range"},
      {"https://h.test:99999/", "out of range"},
      {"https://h.test:123456/", "bad port '123456'"},
      {"https://h.test:8o/", "bad port '8o'"},
      {"https://h.test:-1/", "bad port"},
      {"https://h.test:80:81/", "bad port"},
      {"https://[::1/", "unbalanced '['"},
      {"https://::1]/", "unbalanced ']'"},
      {"https://[::1]]/", "after ']'"},
      {"https://[not-v6]/", "not an IPv6 address"},
      {"https://[1:2:3:4:5:6:7:8:9]/", "not an IPv6 address"},
      {"https://[1::2::3]/", "not an IPv6 address"},
      {"https://h<x>.test/", "invalid character in the host"},
      {"https://h%2etest/", "invalid character in the host"},
      {"https://h.test/" + std::string(9000, 'a'), "longer than 8192 bytes (9015)"},
      {"ftp://h.test/x", "scheme 'ftp' is not supported", Errc::unsupported},
      {"file:///etc/passwd", "scheme 'file'", Errc::unsupported},
      {"javascript:alert(1)", "scheme 'javascript'", Errc::unsupported},
  };
  for (const ErrorCase& r : rows) {
    CAPTURE(r.input);
    const auto url = parse_url(r.input);
    const std::string& message = check_error(url, r);
    CHECK_THAT(message, Contains("URL '"));
    CHECK(message.size() < 400);  // an 8 KiB URL does not make an 8 KiB message
    for (char c : message) CHECK(static_cast<unsigned char>(c) >= 0x20);
  }
}

TEST_CASE("parse_url error messages never show a password", "[transports][net_policy]") {
  const auto url = parse_url("https://alice:s3cret@h.test:0/");
  REQUIRE_FALSE(url);
  CHECK_THAT(url.error().message, !Contains("s3cret"));
  CHECK_THAT(url.error().message, Contains("alice:***@"));
}

TEST_CASE("resolve_location handles every reference form", "[transports][net_policy]") {
  const Url base = parse_ok("https://u:p@a.test/b/c/d;p?q");
  // The URL a Location resolves to, and its userinfo.
  const auto resolved = [&](std::string_view location) {
    CAPTURE(location);
    const auto u = resolve_location(base, location);
    REQUIRE(u);
    return std::pair{u->str(), u->userinfo};
  };
  SECTION("a relative reference keeps the base's authority, userinfo included") {
    const TextCase rows[] = {
        {"g", "https://a.test/b/c/g"},
        {"./g", "https://a.test/b/c/g"},
        {"g/", "https://a.test/b/c/g/"},
        {"../g", "https://a.test/b/g"},
        {"../../../../g", "https://a.test/g"},
        {"./../g/./h/../i", "https://a.test/b/g/i"},
        {"?y", "https://a.test/b/c/d;p?y"},
        {"g?y#s", "https://a.test/b/c/g?y"},
        {"#s", "https://a.test/b/c/d;p?q"},
        {"/g", "https://a.test/g"},
        {"/a/./b/../c", "https://a.test/a/c"},
        {"  /padded  ", "https://a.test/padded"},
        {"g%2Bh", "https://a.test/b/c/g%2Bh"},
    };
    check_each(rows, [&](std::string_view location) {
      const auto [url, userinfo] = resolved(location);
      CHECK(userinfo == "u:p");
      return url;
    });
  }
  SECTION("a reference with its own authority brings its own userinfo, or none, even to the same host") {
    struct Row {
      std::string_view location, url, userinfo;
    };
    for (const Row& row : {Row{"//other.test/x", "https://other.test/x", ""},
                           Row{"//v:w@other.test:8443/x", "https://other.test:8443/x", "v:w"},
                           Row{"http://other.test/y", "http://other.test/y", ""}, Row{"HTTPS://A.TEST/z", "https://a.test/z", ""}}) {
      CAPTURE(row.location);
      const auto [url, userinfo] = resolved(row.location);
      CHECK(url == row.url);
      CHECK(userinfo == row.userinfo);
    }
  }
}

TEST_CASE("resolve_location rejects bad Location headers", "[transports][net_policy]") {
  const Url base = parse_ok("https://a.test/b/");
  const ErrorCase rows[] = {
      {"", "empty Location"},
      {"   ", "empty Location"},
      {"/x\r\nSet-Cookie: a=b", "control character 0x0d"},
      {"/a b", "space"},
      {"/..\\x", "backslash"},
      {"https://[::1/x", "unbalanced"},
      {"https://a.test:0/", "out of range"},
      {"ftp://a.test/x", "ftp", Errc::unsupported},
      {"file:///etc/passwd", "file", Errc::unsupported},
  };
  for (const ErrorCase& r : rows) {
    CAPTURE(r.input);
    check_error(resolve_location(base, r.input), r);
  }
}

// =============================================================================================
// Proxies (docs/network-faults.md P05)

TEST_CASE("ProxyConfig::from_env follows curl's variable names", "[transports][net_policy][P05]") {
  struct Row {
    std::string_view what;
    std::map<std::string, std::string> env;
    ProxyConfig expected;
  };
  const std::vector<Row> rows = {
      {"nothing set", {}, {}},
      {"lower case", {{"http_proxy", "h:1"}, {"https_proxy", "s:2"}, {"all_proxy", "a:3"}, {"no_proxy", "n"}},
       {"h:1", "s:2", "a:3", "n"}},
      {"upper case, HTTP_PROXY ignored (httpoxy)",
       {{"HTTP_PROXY", "evil:1"}, {"HTTPS_PROXY", "S:2"}, {"ALL_PROXY", "A:3"}, {"NO_PROXY", "N"}},
       {"", "S:2", "A:3", "N"}},
      {"lower case wins over upper case",
       {{"https_proxy", "s"}, {"HTTPS_PROXY", "S"}, {"all_proxy", "a"}, {"ALL_PROXY", "A"}, {"no_proxy", "n"},
        {"NO_PROXY", "N"}},
       {"", "s", "a", "n"}},
      {"an empty lower-case variable counts as unset", {{"https_proxy", ""}, {"HTTPS_PROXY", "S"}, {"no_proxy", ""}, {"NO_PROXY", "N"}},
       {"", "S", "", "N"}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const ProxyConfig c = ProxyConfig::from_env(env_of(r.env));
    CHECK(c.http_proxy == r.expected.http_proxy);
    CHECK(c.https_proxy == r.expected.https_proxy);
    CHECK(c.all_proxy == r.expected.all_proxy);
    CHECK(c.no_proxy == r.expected.no_proxy);
  }
}

TEST_CASE("ProxyConfig::from_env reads the process environment by default", "[transports][net_policy][P05]") {
  const test::ScopedEnv restore("no_proxy", "from-the-env.test");
  CHECK(ProxyConfig::from_env().no_proxy == "from-the-env.test");
}

TEST_CASE("no_proxy_matches follows curl's rules", "[transports][net_policy][P05]") {
  struct Rule {
    std::string_view no_proxy;
    std::vector<std::string_view> matches, misses;  ///< hosts it matches, hosts it does not
  };
  const Rule rules[] = {
      {"", {}, {"example.test"}},
      {"*", {"example.test", "127.0.0.1"}, {}},
      {" * ", {"anything"}, {}},
      {"other.test, *", {"example.test"}, {}},
      // 127.0.0.1: no name resolution, curl compares what was written
      {"localhost", {"localhost", "LOCALHOST"}, {"127.0.0.1", "notlocalhost", "localhost.example.test"}},
      {"example.test",
       {"example.test", "pkg.example.test", "a.b.example.test", "pkg.example.test."},
       {"badexample.test", "example.test.evil"}},
      {".example.test", {"example.test", "pkg.example.test"}, {"badexample.test"}},
      {"EXAMPLE.Test", {"pkg.example.TEST"}, {}},
      {"example.test.", {"pkg.example.test"}, {}},
      {"  a.test ,  example.test  ", {"pkg.example.test"}, {}},
      {"a.test,,b.test", {"b.test"}, {"c.test"}},
      {"example.test:8080", {"example.test"}, {}},  // the port is not compared
      {"test", {"example.test"}, {}},  // a bare label matches on a label boundary
      {"10.0.0.0/8", {"10.1.2.3"}, {"11.1.2.3", "10.example.test", "::1"}},
      {"192.168.1.0/24", {"192.168.1.77"}, {"192.168.2.1"}},
      {"192.168.1.128/25", {"192.168.1.200"}, {"192.168.1.127"}},
      {"0.0.0.0/0", {"8.8.8.8"}, {}},
      {"127.0.0.1", {"127.0.0.1"}, {"127.0.0.2"}},
      {"127.0.0.1:3128", {"127.0.0.1"}, {}},
      {"10.0.0.0/33", {}, {"10.0.0.1"}},  // a bad width matches nothing
      {"10.0.0.0/x", {}, {"10.0.0.1"}},
      {"::1", {"::1", "[::1]"}, {}},
      {"[::1]", {"::1"}, {}},
      {"[::1]:8080", {"::1"}, {}},
      {"0:0:0:0:0:0:0:1", {"::1"}, {}},
      {"::1/128", {"::1"}, {"::2"}},
      {"fd00::/8", {"FD12:3456::1"}, {"fe80::1"}},
      {"::/0", {}, {"10.0.0.1"}},  // IPv6 blocks do not match IPv4 hosts
  };
  for (const Rule& r : rules) {
    CAPTURE(r.no_proxy);
    for (std::string_view host : r.matches) {
      CAPTURE(host);
      CHECK(no_proxy_matches(r.no_proxy, host));
    }
    for (std::string_view host : r.misses) {
      CAPTURE(host);
      CHECK_FALSE(no_proxy_matches(r.no_proxy, host));
    }
  }
}

TEST_CASE("proxy_for picks the variable by scheme and honours NO_PROXY", "[transports][net_policy][P05]") {
  const std::map<std::string, std::string> env = {{"http_proxy", "http://hp.test:3128"},
                                                  {"HTTPS_PROXY", "alice:s3cret@sp.test:8080"},
                                                  {"no_proxy", "localhost, .internal.test,10.0.0.0/8 ,::1"}};
  const ProxyConfig config = ProxyConfig::from_env(env_of(env));
  SECTION("through the scheme's proxy, with its userinfo") {
    struct Row {
      std::string_view target, proxy, userinfo;
    };
    for (const Row& r : {Row{"http://pkg.test/", "hp.test:3128", ""}, Row{"https://pkg.test/", "sp.test:8080", "alice:s3cret"},
                         Row{"https://[::2]/", "sp.test:8080", "alice:s3cret"}}) {
      CAPTURE(r.target);
      const auto p = proxy_for(config, parse_ok(r.target));
      REQUIRE(p);
      REQUIRE(p->has_value());
      CHECK((*p)->host_port() == r.proxy);
      CHECK((*p)->userinfo == r.userinfo);
      CHECK((*p)->scheme == "http");
    }
  }
  SECTION("direct where no_proxy names the host, its domain, its block or its address") {
    for (std::string_view target : {"https://localhost:8443/", "https://a.internal.test/", "https://internal.test/",
                                    "https://10.9.8.7/", "https://[::1]:8443/"}) {
      CAPTURE(target);
      const auto p = proxy_for(config, parse_ok(target));
      REQUIRE(p);
      CHECK_FALSE(p->has_value());
    }
  }
}

TEST_CASE("proxy_for falls back to ALL_PROXY and reports bad proxy URLs", "[transports][net_policy][P05]") {
  SECTION("all_proxy serves both schemes when the specific one is unset") {
    const ProxyConfig config{"", "", "all.test:1080", ""};
    for (std::string_view target : {"http://x.test/", "https://x.test/"}) {
      CAPTURE(target);
      const auto p = proxy_for(config, parse_ok(target));
      REQUIRE(p);
      REQUIRE(p->has_value());
      CHECK((*p)->host_port() == "all.test:1080");
    }
  }
  SECTION("the specific variable wins over all_proxy") {
    const ProxyConfig config{"h.test:1", "s.test:2", "all.test:3", ""};
    CHECK((*proxy_for(config, parse_ok("http://x.test/")))->host == "h.test");
    CHECK((*proxy_for(config, parse_ok("https://x.test/")))->host == "s.test");
  }
  SECTION("no proxy configured means direct") {
    const auto p = proxy_for(ProxyConfig{}, parse_ok("https://x.test/"));
    REQUIRE(p);
    CHECK_FALSE(p->has_value());
  }
  SECTION("errors") {
    const ErrorCase rows[] = {
        {"socks5://s.test:1080", "'socks5://' proxies are not supported", Errc::unsupported},
        {"socks5h://s.test:1080", "socks5h", Errc::unsupported},
        {"SOCKS4://s.test:1080", "socks4", Errc::unsupported},
        {"https://s.test:443", "'https://' proxies", Errc::unsupported},
        {"proxy.test:99999", "out of range"},
        {"http://u:pw@[::1:3128", "unbalanced"},
        {"ftp://proxy.test", "ftp", Errc::unsupported},
    };
    for (const ErrorCase& r : rows) {
      CAPTURE(r.input);
      const auto p = proxy_for(ProxyConfig{"", r.input, "", ""}, parse_ok("https://x.test/"));
      CHECK_THAT(check_error(p, r), !Contains(":pw@"));
    }
  }
}

// =============================================================================================
// Retries (docs/network-faults.md N11, G02)

TEST_CASE("RetryPolicy::backoff is jittered exponential with a cap", "[transports][net_policy][N11]") {
  const RetryPolicy policy;  // 1 s base, 30 s cap
  struct Row {
    int attempt;
    double random01;
    std::chrono::milliseconds expected;
  };
  const Row rows[] = {
      {1, 0.0, 500ms},   {1, 0.5, 750ms},    {1, 0.999999, 999ms}, {2, 0.0, 1000ms},  {3, 0.0, 2000ms},
      {4, 0.5, 6000ms},  {5, 0.0, 8000ms},   {6, 0.0, 15000ms},   {6, 0.9999, 29998ms}, {7, 0.0, 15000ms},
      {40, 0.0, 15000ms}, {1000, 0.0, 15000ms}, {0, 0.0, 500ms},     {-3, 0.0, 500ms},
  };
  for (const Row& r : rows) {
    CAPTURE(r.attempt, r.random01);
    CHECK(policy.backoff(r.attempt, r.random01) == r.expected);
  }
  SECTION("always within [d/2, d]") {
    for (int attempt = 1; attempt <= 10; ++attempt) {
      for (double r = 0.0; r < 1.0; r += 0.125) {
        const auto wait = policy.backoff(attempt, r);
        CAPTURE(attempt, r);
        CHECK(wait >= 500ms);
        CHECK(wait <= policy.cap);
      }
    }
  }
}

TEST_CASE("SpeedFloor: windows from the first read; one that closes under the floor fails", "[transports][net_policy][N07]") {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0{};
  struct Read {
    std::chrono::milliseconds at;  ///< since t0
    std::uint64_t bytes;
    bool ok;
  };
  struct Row {
    const char* what;
    std::uint64_t limit;
    std::chrono::milliseconds time;
    std::vector<Read> reads;
  };
  const std::vector<Row> rows{
      {"a trickle of 1 byte / 2 s under 1024 B/s over 5 s", 1024, 5000ms,
       {{0ms, 1, true}, {2000ms, 1, true}, {4000ms, 1, true}, {6000ms, 1, false}}},
      {"fast reads pass; each closed window starts the next", 1000, 1000ms,
       {{0ms, 10, true}, {500ms, 600, true}, {1000ms, 500, true}, {1500ms, 600, true}, {2000ms, 500, true}}},
      {"exactly the floor passes", 100, 1000ms, {{0ms, 0, true}, {1000ms, 100, true}}},
      {"one byte short of the floor fails", 100, 1000ms, {{0ms, 0, true}, {1000ms, 99, false}}},
      {"the first read's bytes count in the first window", 100, 1000ms, {{0ms, 100, true}, {1000ms, 0, true}}},
      {"a window closed late is judged over its whole length", 100, 1000ms, {{0ms, 0, true}, {3000ms, 250, false}}},
      {"the wait before the first read is not judged", 100, 1000ms, {{20000ms, 0, true}, {20500ms, 100, true}}},
      {"a fast window does not excuse a slow one after it", 100, 1000ms,
       {{0ms, 0, true}, {1000ms, 5000, true}, {2000ms, 10, false}}},
      {"limit 0: off", 0, 1000ms, {{0ms, 0, true}, {60000ms, 0, true}}},
      {"time 0: off", 100, 0ms, {{0ms, 0, true}, {60000ms, 0, true}}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    SpeedFloor floor(row.limit, row.time);
    for (const auto& r : row.reads) {
      CAPTURE(r.at.count(), r.bytes);
      CHECK(floor.add(r.bytes, t0 + r.at) == r.ok);
    }
  }
  SECTION("the shortfall names what arrived and the floor") {
    SpeedFloor floor(1024, 5000ms);
    REQUIRE(floor.add(1, t0));
    REQUIRE_FALSE(floor.add(2, t0 + 6000ms));
    CHECK(floor.shortfall() == "3 bytes in 6000 ms, under the floor of 1024 bytes/s over 5000 ms");
  }
}

TEST_CASE("MaxTime names its source and its total", "[transports][net_policy][N07]") {
  CHECK(MaxTime::from_now(5s).name() == "the --max-time of 5 s");
  CHECK(MaxTime::from_now(1500ms, "request.max_time").name() == "the request.max_time of 1500 ms");
  CHECK_FALSE(MaxTime::from_now(60s).passed());
  CHECK(MaxTime::from_now(0ms).passed());
}

TEST_CASE("parse_retry_after reads seconds and all three HTTP date forms", "[transports][net_policy][N11]") {
  SECTION("seconds, or a date: the wait until then (none for the past)") {
    struct Row {
      std::string_view value;
      std::chrono::seconds expected;
    };
    const Row rows[] = {
        {"0", 0s},
        {"5", 5s},
        {" 120 ", 120s},
        {"3600", 3600s},
        {"99999999999999999999", std::chrono::seconds(2147483647)},
        {"Wed, 06 Nov 2024 08:49:47 GMT", 10s},          // IMF-fixdate
        {"Wednesday, 06-Nov-24 08:50:37 GMT", 60s},      // RFC 850
        {"Wed Nov  6 09:49:37 2024", 3600s},             // asctime
        {"Wed Nov 06 08:49:38 2024", 1s},
        {"Wed, 06 Nov 2024 08:49:36 GMT", 0s},           // in the past: no wait
        {"Sun, 06 Nov 1994 08:49:37 GMT", 0s},
        {"Thu, 07 Nov 2024 08:49:37 GMT", 86400s},
    };
    for (const Row& r : rows) {
      CAPTURE(r.value);
      CHECK(parse_retry_after(r.value, kNow) == r.expected);
    }
  }
  SECTION("anything else is no wait at all") {
    for (std::string_view value : {
             "",
             "-5",
             "5.5",
             "5s",
             "soon",
             "Wed, 06 Nov 2024 08:49:47 UTC",
             "Wed, 6 Nov 2024 08:49:47 GMT",
             "Wed, 06 Foo 2024 08:49:47 GMT",
             "Wed, 31 Feb 2024 08:49:47 GMT",
             "Wed, 06 Nov 2024 24:00:00 GMT",
             "Wed, 06 Nov 2024 08:49 GMT",
             "Xyz, 06 Nov 2024 08:49:47 GMT",
             "Wednesday, 06-Nov-2024 08:49:47 GMT",
             "Wed Nov  6 08:49:37",
         }) {
      CAPTURE(value);
      CHECK(parse_retry_after(value, kNow) == std::nullopt);
    }
  }
}

TEST_CASE("decide_retry: which failures are retried, and how long to wait", "[transports][net_policy][N11]") {
  RetryPolicy policy;
  policy.base = 100ms;
  policy.cap = 1000ms;
  policy.max_wait = 60s;
  struct Row {
    std::string_view what;
    Error error;
    int status;
    net::Headers headers;
    int attempt;
    bool retry;
    std::chrono::milliseconds wait;
    std::string_view reason;
  };
  const std::vector<Row> rows = {
      {"503", http_error(503), 503, {}, 1, true, 50ms, "HTTP 503"},
      {"502 second attempt", http_error(502), 502, {}, 2, true, 100ms, "HTTP 502"},
      {"500 third attempt", http_error(500), 500, {}, 3, true, 200ms, "HTTP 500"},
      {"500 past the budget", http_error(500), 500, {}, 4, false, 0ms, "gave up after 4 attempts"},
      {"408", http_error(408), 408, {}, 1, true, 50ms, "HTTP 408"},
      {"520", http_error(520), 520, {}, 1, true, 50ms, "HTTP 520"},
      {"reset", net::net_error(NetErrc::reset, "x"), 0, {}, 1, true, 50ms, "connection reset"},
      {"connect", net::net_error(NetErrc::connect_failed, "x"), 0, {}, 1, true, 50ms, "connection failed"},
      {"truncated", net::net_error(NetErrc::truncated, "x"), 0, {}, 2, true, 100ms, "response truncated"},
      {"idle timeout", net::net_error(NetErrc::idle_timeout, "x"), 0, {}, 1, true, 50ms, "read timed out"},
      {"tls handshake", net::net_error(NetErrc::tls_handshake, "x"), 0, {}, 1, true, 50ms, "TLS handshake"},
      {"certificate", net::net_error(NetErrc::certificate, "x"), 0, {}, 1, false, 0ms, "not retried"},
      {"redirect", net::net_error(NetErrc::redirect, "x"), 0, {}, 1, false, 0ms, "not retried"},
      {"proxy 407", net::net_error(NetErrc::proxy, "x"), 407, {}, 1, false, 0ms, "not retried"},
      {"404", http_error(404), 404, {}, 1, false, 0ms, "HTTP 404 is not retried"},
      {"401", http_error(401), 401, {}, 1, false, 0ms, "HTTP 401 is not retried"},
      {"403 plain", http_error(403), 403, {}, 1, false, 0ms, "HTTP 403 is not retried"},
      {"not_found", Error(Errc::not_found, "x"), 404, {}, 1, false, 0ms, "not retried"},
      {"too large", Error(Errc::too_large, "x"), 0, {}, 1, false, 0ms, "not retried"},
      {"404 with Retry-After", http_error(404), 404, {{"Retry-After", "1"}}, 1, false, 0ms, "not retried"},
      // N11: the server's wait wins over the backoff, in either form.
      {"429 Retry-After seconds", http_error(429), 429, {{"retry-after", "5"}}, 1, true, 5000ms, "HTTP 429, Retry-After 5 s"},
      {"503 Retry-After date", http_error(503), 503, {{"Retry-After", "Wed, 06 Nov 2024 08:50:07 GMT"}}, 1, true, 30000ms,
       "Retry-After 30 s"},
      {"503 Retry-After 0", http_error(503), 503, {{"Retry-After", "0"}}, 1, true, 0ms, "Retry-After 0 s"},
      {"503 malformed Retry-After: backoff", http_error(503), 503, {{"Retry-After", "later"}}, 1, true, 50ms, "HTTP 503"},
      {"503 Retry-After 3600 gives up", http_error(503), 503, {{"Retry-After", "3600"}}, 1, false, 0ms,
       "Retry-After 3600 s exceeds the 60 s cap"},
      {"429 Retry-After date past the cap", http_error(429), 429, {{"Retry-After", "Wed, 06 Nov 2024 09:49:37 GMT"}}, 1,
       false, 0ms, "exceeds the 60 s cap"},
      {"Retry-After at the cap", http_error(503), 503, {{"Retry-After", "60"}}, 1, true, 60000ms, "Retry-After 60 s"},
      {"Retry-After past the budget", http_error(503), 503, {{"Retry-After", "1"}}, 4, false, 0ms, "gave up"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const RetryDecision d = decide_retry(policy, r.attempt, r.error, r.status, r.headers, kNow, 0.0);
    CHECK(d.retry == r.retry);
    CHECK(d.wait == r.wait);
    CHECK_THAT(d.reason, Contains(std::string(r.reason)));
  }
}

TEST_CASE("decide_retry: GitHub rate limits wait for the reset or give up naming it", "[transports][net_policy][G02]") {
  RetryPolicy policy;
  policy.max_wait = 300s;
  const auto epoch = [](std::chrono::seconds from_now) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>((kNow + from_now).time_since_epoch()).count());
  };
  struct Row {
    std::string_view what;
    int status;
    net::Headers headers;
    bool retry;
    std::chrono::milliseconds wait;
    std::string_view reason;
  };
  const std::vector<Row> rows = {
      {"403 remaining 0, reset in 120 s", 403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(120s)}}, true,
       120000ms, "x-ratelimit-reset in 120 s (2024-11-06T08:51:37Z)"},
      {"header names in any case", 403, {{"X-RateLimit-Remaining", " 0 "}, {"X-RateLimit-Reset", epoch(7s)}}, true, 7000ms,
       "HTTP 403"},
      {"429 remaining 0", 429, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(30s)}}, true, 30000ms,
       "x-ratelimit-reset in 30 s"},
      {"reset already passed", 403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(-5s)}}, true, 0ms,
       "x-ratelimit-reset in 0 s"},
      {"reset past the cap", 403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(3600s)}}, false, 0ms,
       "x-ratelimit-reset in 3600 s (2024-11-06T09:49:37Z) exceeds the 300 s cap"},
      {"Retry-After longer than the reset wins", 403,
       {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(10s)}, {"retry-after", "20"}}, true, 20000ms,
       "Retry-After 20 s"},
      {"reset longer than Retry-After wins", 429,
       {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", epoch(50s)}, {"retry-after", "5"}}, true, 50000ms,
       "x-ratelimit-reset in 50 s"},
      {"403 with quota left is a real 403", 403, {{"x-ratelimit-remaining", "10"}, {"x-ratelimit-reset", epoch(5s)}},
       false, 0ms, "HTTP 403 is not retried"},
      {"403 without the headers", 403, {}, false, 0ms, "HTTP 403 is not retried"},
      {"malformed reset falls back to the backoff", 403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "soon"}},
       true, 500ms, "HTTP 403"},
      {"429 with Retry-After 5 (G02)", 429, {{"retry-after", "5"}}, true, 5000ms, "Retry-After 5 s"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const RetryDecision d = decide_retry(policy, 1, http_error(r.status), r.status, r.headers, kNow, 0.0);
    CHECK(d.retry == r.retry);
    CHECK(d.wait == r.wait);
    CHECK_THAT(d.reason, Contains(std::string(r.reason)));
  }
}

// =============================================================================================
// Secrets

TEST_CASE("redact hides passwords, Authorization values and token query values", "[transports][net_policy]") {
  const TextCase rows[] = {
      {"https://u:secret@h.test/x", "https://u:***@h.test/x"},
      {"fetching https://u:secret@h.test:8443?a=1 failed", "fetching https://u:***@h.test:8443?a=1 failed"},
      {"proxy http://alice:p%40ss@proxy.test:3128", "proxy http://alice:***@proxy.test:3128"},
      {"https://:pw@h.test/", "https://:***@h.test/"},
      {"https://ghp_abc123@github.test/x", "https://***@github.test/x"},
      {"'https://a:b@h1/' and 'https://c:d@h2/'", "'https://a:***@h1/' and 'https://c:***@h2/'"},
      {"https://h.test/path@v1", "https://h.test/path@v1"},
      {"mail me at bob@example.test", "mail me at bob@example.test"},
      {"Authorization: Bearer abc.def", "Authorization: Bearer ***"},
      {"authorization:token xyz\r\nAccept: */*", "authorization:token ***\r\nAccept: */*"},
      {"Proxy-Authorization: Basic dTpw\nHost: h", "Proxy-Authorization: Basic ***\nHost: h"},
      {"AUTHORIZATION: rawsecret", "AUTHORIZATION: ***"},
      {"https://h.test/x?token=abc&y=1", "https://h.test/x?token=***&y=1"},
      {"https://h.test/x?a=1&access_token=abc#f", "https://h.test/x?a=1&access_token=***#f"},
      {"https://h.test/x?ACCESS_TOKEN=abc", "https://h.test/x?ACCESS_TOKEN=***"},
      {"https://s.test/a?X-Amz-Signature=deadbeef&X-Amz-Date=1", "https://s.test/a?X-Amz-Signature=***&X-Amz-Date=1"},
      {"https://h.test/x?tokens=abc&mytoken=def", "https://h.test/x?tokens=abc&mytoken=def"},
      {"https://h.test/x?token=", "https://h.test/x?token="},
      {"nothing secret here", "nothing secret here"},
      {"", ""},
  };
  check_each(rows, [](std::string_view text) { return redact(text); });
}

TEST_CASE("basic_auth encodes userinfo as base64", "[transports][net_policy]") {
  const TextCase rows[] = {
      {"", "Basic "},
      {"a", "Basic YQ=="},
      {"ab", "Basic YWI="},
      {"abc", "Basic YWJj"},
      {"user:password", "Basic dXNlcjpwYXNzd29yZA=="},
      {"Aladdin:open sesame", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="},
      {"\xff\xfe\xfd", "Basic //79"},
  };
  check_each(rows, [](std::string_view userinfo) { return basic_auth(userinfo); });
}
