// The http transport over TLS and through CONNECT / forwarding proxies: docs/network-faults.md rows T01, T02,
// T03, T05 and P01-P04.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "support/test_support.hpp"
#include "test_http_support.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;

namespace {

TestServer::Options tls_options_http_tls(const TlsFiles& files) {
  TestServer::Options o;
  o.tls = files;
  return o;
}

transports::HttpOptions trusting(const TestCa& ca) {
  auto o = fast_options();
  o.ca_file = ca.cert().string();
  return o;
}

/// A test CA in a temporary folder.
struct Pki {
  wheelfit::test::TempDir dir;
  TestCa ca{dir.path()};

  /// An https server whose leaf (localhost, 127.0.0.1) this CA issued.
  TestServer server(ConnScript script) { return TestServer(std::move(script), tls_options_http_tls(ca.issue("leaf"))); }
  /// An https origin answering every request with 200 and `body`.
  TestServer origin(std::string body) {
    return server(serve([body](const HttpRequest&) { return http_response(200, body); }));
  }
  /// A transport trusting this CA that reaches https origins through `proxy`.
  std::unique_ptr<net::Transport> via(const TestProxy& proxy) const {
    auto o = trusting(ca);
    o.proxy.https_proxy = proxy.url();
    return make(o);
  }
};

/// Answers every request with 200 and "<prefix><target>".
ConnScript echo_target(std::string prefix) {
  return serve([prefix](const HttpRequest& r) { return http_response(200, prefix + r.target); });
}

/// The CONNECT target's port ("127.0.0.1:443" -> 443).
std::uint16_t connect_port(const HttpRequest& r) {
  const auto colon = r.target.rfind(':');
  return static_cast<std::uint16_t>(std::stoi(r.target.substr(colon + 1)));
}

/// Answers CONNECT with `answer` and splices the client with 127.0.0.1:<port> until either side
/// closes (a proxy whose 200 carries extra headers).
void splice_tunnel(Conn& c, const HttpRequest& r, std::string_view answer) {
  const int up = ::socket(AF_INET, SOCK_STREAM, 0);
  if (up < 0) return;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(connect_port(r));
  if (::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || !c.write(answer)) {
    ::close(up);
    return;
  }
  const int down = c.fd();
  char buf[16384];
  for (;;) {
    pollfd p[2] = {{down, POLLIN, 0}, {up, POLLIN, 0}};
    if (::poll(p, 2, 10000) <= 0) break;
    bool done = false;
    for (int i = 0; i < 2 && !done; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
      if (n <= 0) {
        done = true;
        break;
      }
      const int to = i == 0 ? up : down;
      ssize_t off = 0;
      while (off < n) {
        const ssize_t w = ::write(to, buf + off, static_cast<std::size_t>(n - off));
        if (w <= 0) {
          done = true;
          break;
        }
        off += w;
      }
    }
    if (done) break;
  }
  ::close(up);
}

}  // namespace

TEST_CASE("https: T02 SSL_CERT_FILE names the trusted roots; a missing file is a clear error",
          "[transports][http][tls]") {
  wheelfit::test::TempDir dir;
  TestCa ca(dir.path());
  TestServer server(serve([](const HttpRequest& r) { return http_response(200, "secure " + r.target); }),
                    tls_options_http_tls(ca.issue("leaf")));
  const CleanTrustEnv clean;  // PIP_CERT, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE would come first
  SECTION("the test CA through SSL_CERT_FILE: success, by name and by IP literal, one connection") {
    wheelfit::test::ScopedEnv env("SSL_CERT_FILE", ca.cert().string());
    wheelfit::test::ScopedEnv env_dir("SSL_CERT_DIR", std::nullopt);
    auto o = fast_options();
    o.ca_from_env = true;
    auto t = make(o);
    auto by_name = t->get(req(server.url("/a/", "localhost")));
    WHEELFIT_REQUIRE_OK(by_name);
    CHECK(by_name->body == "secure /a/");
    CHECK(by_name->url == server.url("/a/", "localhost"));
    auto by_ip = t->get(req(server.url("/b/")));  // 127.0.0.1: no SNI, the IP SAN is checked
    WHEELFIT_REQUIRE_OK(by_ip);
    CHECK(by_ip->body == "secure /b/");
    auto again = t->get(req(server.url("/c/", "localhost")));
    WHEELFIT_REQUIRE_OK(again);
    CHECK(t->stats().connections == 2);  // one per origin (localhost, 127.0.0.1), kept alive
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[2].connection == reqs[0].connection);
    CHECK(reqs[0].header("host") == "localhost:" + std::to_string(server.port()));
  }
  SECTION("a missing SSL_CERT_FILE fails to make the transport, naming the file and the variable") {
    const auto missing = (dir / "no-such-ca.pem").string();
    wheelfit::test::ScopedEnv env("SSL_CERT_FILE", missing);
    auto o = fast_options();
    o.ca_from_env = true;
    auto t = transports::make_http_transport(o);
    REQUIRE_FALSE(t);
    CHECK(t.error().is(Errc::invalid_input));
    CHECK(contains(t.error().message, missing));
    CHECK(contains(t.error().message, "SSL_CERT_FILE"));
  }
}

TEST_CASE("https: T01/T03 certificate failures are reported at once and never retried, directly or through a proxy",
          "[transports][http][tls]") {
  wheelfit::test::TempDir dir;
  TestCa ca(dir / "ca", "wheelfit trusted CA");
  TestCa other(dir / "other", "wheelfit untrusted CA");
  struct Row {
    const char* name;
    int which;  // 0 untrusted CA, 1 wrong SAN, 2 expired
  };
  const Row row = GENERATE(Row{"T01 a leaf from an untrusted CA", 0}, Row{"T03 a wrong SAN", 1},
                           Row{"T03 an expired leaf", 2});
  const bool proxied = GENERATE(false, true);  // T03 through a CONNECT tunnel too
  INFO(row.name << (proxied ? ", through a CONNECT proxy" : ""));
  TlsFiles files;
  if (row.which == 0) {
    files = other.issue("untrusted");
  } else if (row.which == 1) {
    TestCa::Leaf leaf;
    leaf.dns = {"other.test"};
    leaf.ips = {};
    files = ca.issue("wrong-san", leaf);
  } else {
    TestCa::Leaf leaf;
    leaf.not_before = -std::chrono::hours(48);
    leaf.not_after = -std::chrono::hours(24);
    files = ca.issue("expired", leaf);
  }
  TestServer server(serve([](const HttpRequest&) { return http_response(200, "should not be read"); }),
                    tls_options_http_tls(files));
  TestProxy proxy;
  auto o = trusting(ca);
  if (proxied) o.proxy.https_proxy = proxy.url();
  auto t = make(o);
  auto r = t->get(req(server.url("/p/", "localhost")));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), NetErrc::certificate));
  CHECK_FALSE(net::is_transient(r.error()));
  CHECK(contains(r.error().message, "localhost:" + std::to_string(server.port())));
  CHECK(server.connections() == 1);
  CHECK(server.requests().empty());
  CHECK(t->stats().retries == 0);
  CHECK(proxy.connections() == (proxied ? 1 : 0));
  if (proxied) {
    const auto connects = proxy.requests();
    REQUIRE(connects.size() == 1);
    CHECK(connects[0].method == "CONNECT");
    CHECK(connects[0].target == "localhost:" + std::to_string(server.port()));
  }
}

TEST_CASE("https: T05 close without close_notify: after a complete body fine; mid-body, or ending a body delimited "
          "by the close, truncation (retried)",
          "[transports][http][tls]") {
  wheelfit::test::TempDir dir;
  TestCa ca(dir.path());
  const std::string to_close = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n";
  struct Row {
    const char* what;
    std::string first;     // the first connection's answer
    bool first_notify;     // ... then close_notify before the close?
    std::string later;     // every later connection's, closed with close_notify ("": as the first)
    const char* body;      // nullptr: the request fails as truncated
    std::uint64_t retries;
  };
  const std::vector<Row> rows{
      {"Content-Length complete, no close_notify", http_response(200, "complete", {}, false), false, "", "complete", 0},
      {"Content-Length 1000, 500 sent, no close_notify", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + std::string(500, 'x'),
       false, http_response(200, "whole"), "whole", 1},
      {"delimited by the close, with close_notify", to_close + "every byte", true, "", "every byte", 0},
      {"delimited by the close, no close_notify", to_close + "the first half", false, to_close + "the whole body",
       "the whole body", 1},
      {"delimited by the close, never a close_notify", to_close + "a half", false, "", nullptr, 1},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    TestServer server(
        [&row](Conn& c) {
          if (!c.read_request()) return;
          const bool first = c.index() == 0 || row.later.empty();
          c.write(first ? row.first : row.later);
          c.close(first ? row.first_notify : true);
        },
        tls_options_http_tls(ca.issue("leaf")));
    auto o = trusting(ca);
    o.retry.retries = 1;
    auto t = make(o);
    auto r = t->get(req(server.url("/p/", "localhost")));
    CHECK(t->stats().retries == row.retries);
    if (!row.body) {
      REQUIRE_FALSE(r);
      INFO(r.error().message);
      CHECK(net::is(r.error(), NetErrc::truncated));
      continue;
    }
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == row.body);
  }
}

TEST_CASE("proxy: P01 CONNECT resets are retried within the budget, then named", "[transports][http][proxy]") {
  Pki pki;
  TestServer origin = pki.origin("through");
  const int resets = GENERATE(3, 1000);
  std::atomic<int> n{0};
  TestProxy proxy([&](Conn& c, const HttpRequest&) {
    if (n++ < resets) {
      c.reset();
      return false;
    }
    return true;
  });
  auto t = pki.via(proxy);
  auto r = t->get(req(origin.url("/p/")));
  if (resets == 3) {
    check_answer(r, *t, "through", 3);
    CHECK(origin.connections() == 1);
  } else {
    check_failure(r, NetErrc::proxy, {"proxy " + loopback(proxy.port()) + " reset the connection 4 times"});
    CHECK(origin.connections() == 0);
  }
}

TEST_CASE("proxy: P02 407 fails fast; credentials go to the proxy only", "[transports][http][proxy]") {
  Pki pki;
  TestServer origin = pki.origin("authorised");
  TestServer plain_origin(serve([](const HttpRequest&) { return http_response(200, "plain authorised"); }));
  TestProxy proxy([](Conn& c, const HttpRequest& r) {
    if (r.header("proxy-authorization") != "Basic dXNlcjpwYXNz") {  // user:pass
      c.write(http_response(407, "who are you", {{"Proxy-Authenticate", "Basic realm=\"test\""}}, false));
      return false;
    }
    return true;
  });
  SECTION("without credentials: fails fast naming proxy authentication") {
    const bool https = GENERATE(true, false);
    auto o = trusting(pki.ca);
    o.proxy.https_proxy = proxy.url();
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    auto r = t->get(req(https ? origin.url("/p/") : plain_origin.url("/p/")));
    check_failure(r, NetErrc::proxy, {"proxy authentication", "407", loopback(proxy.port())});
    CHECK(proxy.connections() == 1);
    CHECK(t->stats().retries == 0);
  }
  SECTION("with user:pass in the proxy URL: https through a CONNECT tunnel") {
    auto o = trusting(pki.ca);
    o.proxy.https_proxy = proxy.url("user:pass");
    auto t = make(o);
    auto r = t->get(req(origin.url("/p/"), 1000, {{"Authorization", "Bearer origin-token"}}));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == "authorised");
    const auto preqs = proxy.requests();
    REQUIRE(preqs.size() == 1);
    CHECK(preqs[0].method == "CONNECT");
    CHECK(preqs[0].target == loopback(origin.port()));
    CHECK(preqs[0].header("proxy-authorization") == "Basic dXNlcjpwYXNz");
    CHECK_FALSE(preqs[0].header("authorization"));  // the origin's token stays inside the tunnel
    const auto oreqs = origin.requests();
    REQUIRE(oreqs.size() == 1);
    CHECK_FALSE(oreqs[0].header("proxy-authorization"));
    CHECK(oreqs[0].header("authorization") == "Bearer origin-token");
  }
  SECTION("with user:pass: plain http in absolute form through the proxy") {
    auto o = fast_options();
    o.proxy.http_proxy = proxy.url("user:pass");
    auto t = make(o);
    auto r = t->get(req(plain_origin.url("/q/")));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == "plain authorised");
    const auto preqs = proxy.requests();
    REQUIRE(preqs.size() == 1);
    CHECK(preqs[0].method == "GET");
    CHECK(preqs[0].target == plain_origin.url("/q/"));
    CHECK(preqs[0].header("proxy-authorization") == "Basic dXNlcjpwYXNz");
  }
}

TEST_CASE("proxy: P03 a 200 with extra headers works; a 403 page is the proxy's status, not TLS",
          "[transports][http][proxy]") {
  Pki pki;
  TestServer origin = pki.origin("tunnelled");
  SECTION("200 Connection established with extra headers") {
    TestProxy proxy([](Conn& c, const HttpRequest& r) {
      splice_tunnel(c, r, "HTTP/1.1 200 Connection established\r\nProxy-Agent: test/1.0\r\nX-Extra: yes\r\n\r\n");
      return false;
    });
    auto t = pki.via(proxy);
    auto r = t->get(req(origin.url("/p/")));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == "tunnelled");
  }
  SECTION("403 with an HTML page") {
    TestProxy proxy([](Conn& c, const HttpRequest&) {
      c.write(http_response(403, "<html><body>Blocked by corporate policy</body></html>", {{"Content-Type", "text/html"}}, false));
      return false;
    });
    auto t = pki.via(proxy);
    check_failure(t->get(req(origin.url("/p/"))), NetErrc::proxy, {"HTTP 403", loopback(proxy.port())});
    CHECK(proxy.connections() == 1);
    CHECK(origin.connections() == 0);
  }
}

TEST_CASE("proxy: P04 a reset during the TLS handshake through the tunnel is retried", "[transports][http][proxy]") {
  Pki pki;
  TestServer origin = pki.origin("second time lucky");
  std::atomic<int> n{0};
  TestProxy proxy([&](Conn& c, const HttpRequest&) {
    if (n++ == 0) {
      c.write("HTTP/1.1 200 Connection established\r\n\r\n");
      (void)c.read_some(2s);  // the ClientHello
      c.reset();
      return false;
    }
    return true;
  });
  auto t = pki.via(proxy);
  check_answer(t->get(req(origin.url("/p/"))), *t, "second time lucky", 1);
  CHECK(proxy.connections() == 2);
}

TEST_CASE("https: T01 with the system trust store (loaded at the first TLS connection) a test CA is not trusted",
          "[transports][http][tls]") {
  Pki pki;
  TestServer server = pki.server(echo_target("secure "));
  TestServer plain(echo_target("plain "));
  auto o = fast_options();
  o.ca_from_env = false;  // no ca_file / ca_dir: the machine's roots, loaded lazily
  auto t = make(o);
  auto before = t->get(req(plain.url("/p/")));  // plain http first: no trust store needed yet
  WHEELFIT_REQUIRE_OK(before);
  CHECK(before->body == "plain /p/");
  for (int i = 0; i < 2; ++i) {  // the first TLS connection loads the roots; the second reuses them
    auto r = t->get(req(server.url("/s/", "localhost")));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(net::is(r.error(), NetErrc::certificate));
  }
  CHECK(server.requests().empty());
}
