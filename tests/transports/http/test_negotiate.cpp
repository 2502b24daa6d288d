// Negotiate (SPNEGO) proxy authentication without a KDC: the parsers, the exchange of
// ProxyNegotiation driven by a GSS-API of the test's, and the http transport against loopback
// proxies that ask for Negotiate (one leg, several legs on one connection, mutual
// authentication, failures, the modes of --proxy-auth). The real KDC and squid:
// tests/integration/kerberos/test_kerberos_proxy.cpp.
#include <condition_variable>
#include <thread>

#include "test_http_support.hpp"
#include "wheelfit/transports/negotiate.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::test_http {
namespace {

using transports::base64_decode;
using transports::base64_encode;
using transports::Gss;
using transports::GssContext;
using transports::GssStep;
using transports::ProxyAuth;
using transports::ProxyNegotiation;

/// What the test's GSS-API does. Tokens: the client's "client-<n>" (n-th step), the server's
/// "server-<n>" (another leg wanted) and "server-final" (mutual authentication: completes).
struct FakeGssPlan {
  std::optional<GssStep> failure;  ///< every step fails so
  bool block = false;              ///< steps wait until release() (a KDC that never answers)
  std::mutex m;
  std::condition_variable cv;
  bool released = false;
  int steps = 0;
  std::vector<std::string> services;

  void release() {
    {
      const std::lock_guard lock(m);
      released = true;
    }
    cv.notify_all();
  }
};

class FakeContext final : public GssContext {
 public:
  explicit FakeContext(std::shared_ptr<FakeGssPlan> plan) : plan_(std::move(plan)) {}

 private:
  GssStep step_impl(std::string_view input) override {
    std::unique_lock lock(plan_->m);
    if (plan_->block) plan_->cv.wait(lock, [this] { return plan_->released; });
    ++plan_->steps;
    if (plan_->failure) return *plan_->failure;
    GssStep s;
    ++n_;
    if (input == "server-final") {
      s.state = GssStep::State::complete;
    } else if (input.empty() ? n_ == 1 : input.rfind("server-", 0) == 0) {
      s.state = GssStep::State::continue_needed;
      s.token = "client-" + std::to_string(n_);
    } else {
      s.error = "Invalid token was supplied";
    }
    return s;
  }

  std::shared_ptr<FakeGssPlan> plan_;
  int n_ = 0;
};

class FakeGss final : public Gss {
 public:
  explicit FakeGss(std::shared_ptr<FakeGssPlan> plan) : plan_(std::move(plan)) {}

 private:
  std::unique_ptr<GssContext> start_impl(const std::string& service) override {
    {
      const std::lock_guard lock(plan_->m);
      plan_->services.push_back(service);
    }
    return std::make_unique<FakeContext>(plan_);
  }
  Expected<std::string> credential_impl() override {
    if (plan_->failure) return unexpected(Errc::not_found, plan_->failure->error + ": run kinit");
    return std::string("alice@TEST.LOCAL, valid for 9 h 59 min");
  }

  std::shared_ptr<FakeGssPlan> plan_;
};

/// The value, or a default one with the error shown (Expected has no operator==).
template <class T>
T value_of(const Expected<T>& r) {
  if (r) return *r;
  UNSCOPED_INFO(r.error().message);
  return T{};
}

/// "Negotiate <base64 of the n-th client token>".
std::string client_token(int n) { return "Negotiate " + base64_encode("client-" + std::to_string(n)); }

GssStep no_ticket() {
  GssStep s;
  s.error = "No Kerberos credentials available (default cache: FILE:/tmp/none.cc)";
  s.no_credential = true;
  return s;
}

/// HttpOptions whose Negotiate uses `plan`.
transports::HttpOptions negotiating(const std::shared_ptr<FakeGssPlan>& plan, ProxyAuth auth = ProxyAuth::automatic) {
  auto o = fast_options(0);
  o.gss = std::make_shared<FakeGss>(plan);
  o.proxy_auth = auth;
  return o;
}

const std::string kNegotiate407Body(3000, 'x');  // squid's 407 carries ~3 KB of HTML

/// A proxy for absolute-form http requests (it answers them itself): 407 "Negotiate" without a
/// Proxy-Authorization; 407 "Negotiate server-<n>" for client-<n> below `legs`; then 200 "proxied"
/// (with "Proxy-Authenticate: Negotiate <final>" when `final_token` is not empty).
ConnScript negotiate_proxy_script(int legs, std::string final_token = "", bool keep_alive = true) {
  return serve([=](const HttpRequest& r) {
    const auto auth = r.header("proxy-authorization");
    for (int n = 1; n < legs; ++n) {
      if (auth == client_token(n)) {
        return http_response(407, kNegotiate407Body,
                             {{"Proxy-Authenticate", "Negotiate " + base64_encode("server-" + std::to_string(n))}}, keep_alive);
      }
    }
    if (auth == client_token(legs)) {
      if (final_token.empty()) return http_response(200, "proxied");
      return http_response(200, "proxied", {{"Proxy-Authenticate", "Negotiate " + base64_encode(final_token)}});
    }
    return http_response(407, kNegotiate407Body, {{"Proxy-Authenticate", "Negotiate"}, {"Proxy-Authenticate", "Basic realm=\"x\""}},
                         keep_alive);
  });
}

}  // namespace

TEST_CASE("parse_proxy_auth takes the four methods and names the source otherwise", "[negotiate][proxy]") {
  CHECK(value_of(transports::parse_proxy_auth("auto", "--proxy-auth")) == ProxyAuth::automatic);
  CHECK(value_of(transports::parse_proxy_auth("Negotiate", "--proxy-auth")) == ProxyAuth::negotiate);
  CHECK(value_of(transports::parse_proxy_auth("basic", "--proxy-auth")) == ProxyAuth::basic);
  CHECK(value_of(transports::parse_proxy_auth("none", "--proxy-auth")) == ProxyAuth::none);
  for (const char* bad : {"", "ntlm", "kerberos", "auto,basic"}) {
    CAPTURE(bad);
    const auto r = transports::parse_proxy_auth(bad, "WHEELFIT_PROXY_AUTH");
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "WHEELFIT_PROXY_AUTH"));
    CHECK(contains(r.error().message, "auto, basic, negotiate, none"));
  }
}

TEST_CASE("negotiate_challenge and offered_schemes read Proxy-Authenticate values", "[negotiate][proxy]") {
  using V = std::vector<std::string>;
  CHECK(transports::negotiate_challenge(V{"Negotiate"}) == "");
  CHECK(transports::negotiate_challenge(V{"Basic realm=\"a, b\"", "negotiate YIIabc=="}) == "YIIabc==");
  CHECK(transports::negotiate_challenge(V{"Basic realm=\"x\", Negotiate"}) == "");
  CHECK(transports::negotiate_challenge(V{"NTLM", "Basic realm=x"}) == std::nullopt);
  CHECK(transports::negotiate_challenge(V{}) == std::nullopt);
  CHECK(transports::negotiate_challenge(V{"NegotiateX abc"}) == std::nullopt);
  CHECK(transports::offered_schemes(V{"Negotiate", "NTLM", "Basic realm=\"a,b\", negotiate"}) == "Negotiate, NTLM, Basic");
  CHECK(transports::offered_schemes(V{}) == "");
}

TEST_CASE("base64 round-trips any bytes and refuses what is not base64", "[negotiate]") {
  for (const std::string& s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                              std::string("\x60\x82\x02\x00\xff", 5), std::string(300, '\x01')}) {
    CAPTURE(s.size());
    CHECK(base64_decode(base64_encode(s)) == s);
  }
  CHECK(base64_encode("user:pass") == "dXNlcjpwYXNz");
  for (const char* bad : {"a", "abc", "ab=c", "a===", "ab!d", "=abc", "ab==abcd"}) {
    CAPTURE(bad);
    CHECK_FALSE(base64_decode(bad));
  }
}

TEST_CASE("ProxyNegotiation answers one leg, several legs, and checks mutual authentication", "[negotiate][proxy]") {
  auto plan = std::make_shared<FakeGssPlan>();
  ProxyNegotiation n(std::make_shared<FakeGss>(plan), "proxy.corp.test");
  CHECK(n.service() == "HTTP@proxy.corp.test");

  SECTION("one leg, no final token (squid's 200)") {
    CHECK(value_of(n.respond(std::string_view())) == client_token(1));
    CHECK(n.legs() == 1);
    CHECK(n.finish(std::nullopt));
  }
  SECTION("a token before any challenge") {
    CHECK(value_of(n.respond(std::nullopt)) == client_token(1));
  }
  SECTION("two legs, then the proxy's final token completes the context") {
    CHECK(value_of(n.respond(std::string_view())) == client_token(1));
    CHECK(value_of(n.respond(base64_encode("server-1"))) == client_token(2));
    CHECK(n.finish(base64_encode("server-final")));
    CHECK(plan->services == std::vector<std::string>{"HTTP@proxy.corp.test"});
  }
  SECTION("a final token GSS-API does not accept fails mutual authentication") {
    REQUIRE(n.respond(std::string_view()));
    const auto r = n.finish(base64_encode("forged"));
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "mutual authentication failed"));
    CHECK(contains(r.error().message, "Invalid token was supplied"));
  }
  SECTION("a bare Negotiate after our token: the proxy refused the ticket") {
    REQUIRE(n.respond(std::string_view()));
    const auto r = n.respond(std::string_view());
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "refused the Kerberos ticket"));
    CHECK(contains(r.error().message, "HTTP/<its host name>"));
  }
  SECTION("a challenge that is not base64, and too many legs") {
    REQUIRE(n.respond(std::string_view()));
    CHECK(contains(n.respond("not base64!").error().message, "not base64"));
    for (int i = 1; i < ProxyNegotiation::kMaxLegs; ++i) REQUIRE(n.respond(base64_encode("server-" + std::to_string(i))));
    const auto r = n.respond(base64_encode("server-9"));
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "did not accept it after 5 tokens"));
  }
}

TEST_CASE("ProxyNegotiation's failures say Negotiate (Kerberos), GSS-API's words and what to do", "[negotiate][proxy]") {
  auto plan = std::make_shared<FakeGssPlan>();
  ProxyNegotiation n(std::make_shared<FakeGss>(plan), "localhost");
  SECTION("no ticket") {
    plan->failure = no_ticket();
    const auto r = n.respond(std::string_view());
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(contains(r.error().message, "asked for Negotiate (Kerberos) authentication (HTTP 407) for the service HTTP@localhost"));
    CHECK(contains(r.error().message, "No Kerberos credentials available"));
    CHECK(contains(r.error().message, "run kinit"));
  }
  SECTION("a service the KDC does not know") {
    GssStep s;
    s.error = "Server HTTP/127.0.0.1@TEST.LOCAL not found in Kerberos database";
    s.unknown_service = true;
    plan->failure = s;
    const auto r = n.respond(std::string_view());
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "not found in Kerberos database"));
    CHECK(contains(r.error().message, "must match its service principal"));
  }
  SECTION("the timeout text") {
    CHECK(contains(n.timeout_text("2000 ms"), "GSS-API gave no token within 2000 ms (is the KDC reachable?)"));
  }
}

TEST_CASE("redact hides Negotiate tokens in headers and text, keeping the scheme word", "[negotiate][secrets]") {
  const std::string token = base64_encode(std::string(64, '\x60'));
  CHECK(util::redact("Proxy-Authorization: Negotiate " + token) == "Proxy-Authorization: Negotiate ***");
  CHECK(util::redact("Proxy-Authenticate: Negotiate " + token + "\r\nX: y") == "Proxy-Authenticate: Negotiate ***\r\nX: y");
  CHECK(util::redact("WWW-Authenticate: Negotiate") == "WWW-Authenticate: Negotiate");
  CHECK(util::redact("sent Negotiate " + token + " to the proxy") == "sent Negotiate *** to the proxy");
  CHECK(util::redact("asked for Negotiate (Kerberos) authentication") == "asked for Negotiate (Kerberos) authentication");
  CHECK(util::is_credential_header("Proxy-Authenticate"));
}

TEST_CASE("A proxy's 407 Negotiate is answered on the same connection (absolute form)", "[negotiate][proxy][http]") {
  auto plan = std::make_shared<FakeGssPlan>();
  LogCapture logs;

  SECTION("one leg: 407, then the token, one connection; later requests send the token first") {
    TestServer proxy(negotiate_proxy_script(1));
    auto o = negotiating(plan);
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    auto r = t->get(req("http://origin.test/simple/"));
    check_answer(r, *t, "proxied", 0);
    CHECK(proxy.connections() == 1);
    auto seen = proxy.requests();
    REQUIRE(seen.size() == 2);
    CHECK_FALSE(seen[0].header("proxy-authorization"));
    CHECK(seen[1].header("proxy-authorization") == client_token(1));
    CHECK(plan->services == std::vector<std::string>{"HTTP@127.0.0.1"});
    r = t->get(req("http://origin.test/simple/b/"));
    check_answer(r, *t, "proxied", 0);
    seen = proxy.requests();
    REQUIRE(seen.size() == 3);  // the proxy wanted Negotiate: the next request carries a token at once
    CHECK(seen[2].header("proxy-authorization") == client_token(1));
  }
  SECTION("two legs, then the proxy's final token (mutual authentication)") {
    TestServer proxy(negotiate_proxy_script(2, "server-final"));
    auto o = negotiating(plan);
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    const auto r = t->get(req("http://origin.test/simple/"));
    check_answer(r, *t, "proxied", 0);
    CHECK(proxy.connections() == 1);
    CHECK(proxy.requests().size() == 3);
    CHECK_FALSE(net::find_header(r->headers, "proxy-authenticate"));  // the proxy's, not the origin's
  }
  SECTION("a final token that does not complete the context fails, naming the proxy") {
    TestServer proxy(negotiate_proxy_script(1, "forged"));
    auto o = negotiating(plan);
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    check_failure(t->get(req("http://origin.test/simple/")), NetErrc::proxy,
                  {"proxy 127.0.0.1:", "mutual authentication failed", "http://origin.test/simple/"});
  }
  SECTION("a proxy that closes after its 407: the token goes on a new connection") {
    TestServer proxy(negotiate_proxy_script(1, "", false));
    auto o = negotiating(plan);
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    check_answer(t->get(req("http://origin.test/simple/")), *t, "proxied", 0);
    CHECK(proxy.connections() == 2);
  }
  SECTION("no ticket: exit-4 kind, GSS-API's words, one 407 and no more requests") {
    plan->failure = no_ticket();
    TestServer proxy(negotiate_proxy_script(1));
    auto o = negotiating(plan);
    o.retry.retries = 3;
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    check_failure(t->get(req("http://origin.test/simple/")), NetErrc::proxy,
                  {"proxy 127.0.0.1:", "asked for Negotiate (Kerberos)", "No Kerberos credentials available", "run kinit"});
    CHECK(proxy.requests().size() == 1);
  }
  for (const auto& line : logs.find(log::Level::debug, "")) {
    CHECK_FALSE(contains(line, base64_encode("client-1")));
  }
}

TEST_CASE("--proxy-auth decides what answers a 407", "[negotiate][proxy][http]") {
  auto plan = std::make_shared<FakeGssPlan>();
  TestServer proxy(negotiate_proxy_script(1));
  SECTION("none and basic do not answer Negotiate, and say so") {
    const ProxyAuth auth = GENERATE(ProxyAuth::none, ProxyAuth::basic);
    auto o = negotiating(plan, auth);
    o.proxy.http_proxy = proxy.url();
    auto t = make(o);
    check_failure(t->get(req("http://origin.test/simple/")), NetErrc::proxy,
                  {"requires proxy authentication (HTTP 407)", "--proxy-auth / WHEELFIT_PROXY_AUTH",
                   "it offers Negotiate, Basic"});
    CHECK(plan->steps == 0);
  }
  SECTION("auto with user:password in the proxy URL sends Basic, not Negotiate") {
    auto o = negotiating(plan);
    o.proxy.http_proxy = "http://user:pass@" + loopback(proxy.port());
    auto t = make(o);
    check_failure(t->get(req("http://origin.test/simple/")), NetErrc::proxy,
                  {"rejected the proxy authentication credentials", "--proxy-auth negotiate uses Kerberos"});
    CHECK(proxy.requests().at(0).header("proxy-authorization") == "Basic dXNlcjpwYXNz");
  }
  SECTION("negotiate sends a token with the first request and never the URL's password") {
    auto o = negotiating(plan, ProxyAuth::negotiate);
    o.proxy.http_proxy = "http://user:pass@" + loopback(proxy.port());
    auto t = make(o);
    check_answer(t->get(req("http://origin.test/simple/")), *t, "proxied", 0);
    REQUIRE(proxy.requests().size() == 1);
    CHECK(proxy.requests()[0].header("proxy-authorization") == client_token(1));
  }
}

TEST_CASE("CONNECT answers a 407 Negotiate on the same connection, draining its body", "[negotiate][proxy][http]") {
  wheelfit::test::TempDir dir;
  TestCa ca(dir.path());
  TestServer::Options tls;
  tls.tls = ca.issue("negotiate-leaf");
  TestServer origin(serve([](const HttpRequest&) { return http_response(200, "tunnelled"); }), tls);
  auto plan = std::make_shared<FakeGssPlan>();
  TestProxy proxy(
      [](Conn& c, const HttpRequest& r) {
        if (r.header("proxy-authorization") == client_token(1)) return true;
        c.write(http_response(407, kNegotiate407Body, {{"Proxy-Authenticate", "Negotiate"}}));
        return false;
      },
      true);
  auto o = negotiating(plan);
  o.ca_file = ca.cert().string();
  o.proxy.https_proxy = proxy.url();

  SECTION("the tunnel opens after one leg, on one connection") {
    auto t = make(o);
    check_answer(t->get(req(origin.url("/simple/"))), *t, "tunnelled", 0);
    CHECK(proxy.connections() == 1);
    REQUIRE(proxy.requests().size() == 2);
    CHECK(proxy.requests()[1].method == "CONNECT");
  }
  SECTION("a GSS-API that never answers fails within the connect timeout, naming the KDC") {
    plan->block = true;
    struct ReleaseAtEnd {
      FakeGssPlan& plan;
      ~ReleaseAtEnd() { plan.release(); }
    } release_at_end{*plan};
    o.connect_timeout = std::chrono::milliseconds(300);
    auto t = make(o);
    check_failure(t->get(req(origin.url("/simple/"))), NetErrc::proxy,
                  {"asked for Negotiate (Kerberos)", "GSS-API gave no token within", "is the KDC reachable?"});
  }
}

/// A CONNECT proxy that answers every CONNECT with a 407 Negotiate whose 3000-byte body comes
/// 10 bytes every 50 ms (about 15 s in all: far past any test's connect timeout).
TestProxy::Gate trickling_407() {
  return [](Conn& c, const HttpRequest&) {
    if (!c.write("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Negotiate\r\n"
                 "Content-Length: 3000\r\n\r\n")) {
      return false;
    }
    for (int sent = 0; sent < 3000; sent += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (!c.write(std::string(10, 'x'))) break;
    }
    return false;
  };
}

TEST_CASE("A 407 to CONNECT whose body trickles past the time is the proxy's timeout, not the KDC's",
          "[negotiate][proxy][http]") {
  auto plan = std::make_shared<FakeGssPlan>();
  TestProxy proxy(trickling_407(), true);
  auto o = negotiating(plan);
  o.proxy.https_proxy = proxy.url();
  o.connect_timeout = std::chrono::milliseconds(300);
  auto t = make(o);
  const auto r = t->get(req("https://origin.test/simple/"));
  check_failure(r, NetErrc::connect_timeout,
                {"reading the body of the 407 answer to CONNECT from proxy 127.0.0.1:", "timed out after 300 ms"});
  CHECK_FALSE(contains(r.error().message, "KDC"));
  CHECK(plan->steps == 0);
}

TEST_CASE("A GSS-API step left running past its request is waited for before the transport goes",
          "[negotiate][proxy][http]") {
  auto plan = std::make_shared<FakeGssPlan>();
  plan->block = true;
  LogCapture logs;
  wheelfit::test::TempDir dir;
  TestCa ca(dir.path());
  TestProxy proxy(
      [](Conn& c, const HttpRequest&) {
        c.write(http_response(407, kNegotiate407Body, {{"Proxy-Authenticate", "Negotiate"}}));
        return false;
      },
      true);
  auto o = negotiating(plan);
  o.proxy.https_proxy = proxy.url();
  o.connect_timeout = std::chrono::milliseconds(300);

  SECTION("a step that ends after the request gave up: the transport's end waits for it") {
    o.gss_wait = std::chrono::seconds(30);
    auto t = make(o);
    check_failure(t->get(req("https://origin.test/simple/")), NetErrc::proxy, {"GSS-API gave no token within"});
    std::thread releaser([plan] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      plan->release();
    });
    t.reset();  // returns only once the step has ended: no thread of the transport outlives it
    {
      const std::lock_guard lock(plan->m);
      CHECK(plan->steps == 1);
    }
    releaser.join();
    CHECK(logs.find(log::Level::warn, "GSS-API").empty());
  }
  SECTION("a step that never ends within gss_wait: the end goes on, with a warning") {
    o.gss_wait = std::chrono::milliseconds(100);
    auto t = make(o);
    check_failure(t->get(req("https://origin.test/simple/")), NetErrc::proxy, {"GSS-API gave no token within"});
    t.reset();
    {
      const std::lock_guard lock(plan->m);
      CHECK(plan->steps == 0);
    }
    const auto warned = logs.find(log::Level::warn, "GSS-API (Kerberos) step(s) still running 100 ms after");
    CHECK(warned.size() == 1);
    plan->release();  // the step ends on its own thread, which holds what it uses
  }
}

TEST_CASE("A 407 with a header line over the limit through an http proxy names the proxy, not the origin",
          "[negotiate][proxy][http]") {
  TestServer proxy(serve([](const HttpRequest&) {
    return http_response(407, "no", {{"Proxy-Authenticate", "Negotiate " + std::string(60000, 'A')}});
  }));
  auto o = fast_options(0);
  o.proxy.http_proxy = proxy.url();
  auto t = make(o);
  const auto r = t->get(req("http://origin.test/simple/"));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(r.error().is(Errc::too_large));
  CHECK(contains(r.error().message, "a response header line from proxy 127.0.0.1:"));
  CHECK(contains(r.error().message, "(its 407 for http://origin.test/simple/)"));
  CHECK_FALSE(contains(r.error().message, "from origin.test"));
}

TEST_CASE("plan_proxy names the proxy, its variable and the method (wheelfit doctor --url)", "[negotiate][proxy]") {
  auto plan = std::make_shared<FakeGssPlan>();
  auto o = negotiating(plan);
  o.proxy.https_proxy = "http://localhost:3128";
  o.proxy.no_proxy = "internal.test";
  auto p = transports::plan_proxy(o, "https://pypi.test/simple/");
  WHEELFIT_REQUIRE_OK(p);
  CHECK(p->proxy == "http://localhost:3128");
  CHECK(p->method == "negotiate (Kerberos) when the proxy asks for it (407 Proxy-Authenticate: Negotiate), else none");
  CHECK(contains(p->detail, "service HTTP@localhost"));
  CHECK(contains(p->detail, "alice@TEST.LOCAL"));
  o.proxy.https_proxy = "http://user:secret@localhost:3128";
  p = transports::plan_proxy(o, "https://pypi.test/simple/");
  WHEELFIT_REQUIRE_OK(p);
  CHECK(p->proxy == "http://user:***@localhost:3128");
  CHECK(p->method == "basic (the proxy URL's user:password)");
  CHECK(p->detail.empty());
  p = transports::plan_proxy(o, "https://internal.test/x");
  WHEELFIT_REQUIRE_OK(p);
  CHECK_FALSE(p->proxy);
  CHECK(p->source == "no_proxy names the host");
  plan->failure = no_ticket();
  o.proxy_auth = ProxyAuth::negotiate;
  p = transports::plan_proxy(o, "https://pypi.test/simple/");
  WHEELFIT_REQUIRE_OK(p);
  CHECK(contains(p->detail, "credential: none: No Kerberos credentials available"));
}

}  // namespace wheelfit::test_http
