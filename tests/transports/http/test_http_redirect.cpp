// Redirects: docs/network-faults.md rows R01 (https -> http refused, a loop stops at the limit, relative
// Location resolved) and R02 (Authorization dropped when the host changes).
#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "test_http_support.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;

namespace {
std::string redirect_to(int status, const std::string& location) {
  return http_response(status, "moved", {{"Location", location}});
}
}  // namespace

TEST_CASE("redirects: R01 each redirect status is followed, relative Locations resolved", "[transports][http][redirect]") {
  const int status = GENERATE(301, 302, 303, 307, 308);
  TestServer server(serve([&](const HttpRequest& r) {
    if (r.target == "/simple/pkg") return redirect_to(status, "pkg/");  // relative to /simple/
    if (r.target == "/simple/pkg/") return redirect_to(status, "../../mirror/pkg/?page=1");
    if (r.target == "/mirror/pkg/?page=1") return http_response(200, "arrived");
    return http_response(404, "no");
  }));
  auto t = make();
  auto r = t->get(req(server.url("/simple/pkg")));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body == "arrived");
  CHECK(r->url == server.url("/mirror/pkg/?page=1"));
  CHECK(server.requests().size() == 3);
  CHECK(server.connections() == 1);
}

TEST_CASE("redirects: R01 a loop stops at max_redirects", "[transports][http][redirect]") {
  TestServer server(serve([](const HttpRequest& r) {
    const int n = r.target.size() > 3 ? std::stoi(r.target.substr(3)) : 0;  // "/r/<n>"
    return redirect_to(302, "/r/" + std::to_string(n + 1));
  }));
  auto t = make();
  auto r = t->get(req(server.url("/r/0")));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), NetErrc::redirect));
  CHECK(contains(r.error().message, "10"));
  CHECK(server.requests().size() == 11);  // the first request and 10 hops
  CHECK(t->stats().retries == 0);
}

TEST_CASE("redirects: R01 https -> http is refused", "[transports][http][redirect]") {
  wheelfit::test::TempDir dir;
  TestCa ca(dir.path());
  TestServer plain(serve([](const HttpRequest&) { return http_response(200, "downgraded"); }));
  TestServer::Options so;
  so.tls = ca.issue("leaf");
  TestServer secure(serve([&](const HttpRequest&) { return redirect_to(302, plain.url("/pkg/")); }), so);
  auto o = fast_options();
  o.ca_file = ca.cert().string();
  auto t = make(o);
  auto r = t->get(req(secure.url("/pkg/", "localhost")));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), NetErrc::redirect));
  CHECK(contains(r.error().message, "https to http"));
  CHECK(plain.requests().empty());
}

TEST_CASE("redirects: R02 Authorization is dropped when the host changes", "[transports][http][redirect]") {
  TestServer other(serve([](const HttpRequest&) { return http_response(200, "on the other host"); }));
  TestServer first(serve([&](const HttpRequest& r) {
    if (r.target == "/same") return redirect_to(302, "/landing");
    if (r.target == "/landing") return http_response(200, "same host");
    return redirect_to(302, other.url("/elsewhere", "localhost"));
  }));
  auto t = make();
  const net::Headers auth = {{"Authorization", "Bearer s3cret"}, {"Accept", "application/json"}};
  SECTION("a same-origin hop keeps the token") {
    auto r = t->get(req(first.url("/same"), 1000, auth));
    WHEELFIT_REQUIRE_OK(r);
    const auto reqs = first.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[1].header("authorization") == "Bearer s3cret");
  }
  SECTION("a cross-host hop drops it") {
    auto r = t->get(req(first.url("/away"), 1000, auth));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == "on the other host");
    CHECK(r->url == other.url("/elsewhere", "localhost"));
    REQUIRE(first.requests().size() == 1);
    CHECK(first.requests()[0].header("authorization") == "Bearer s3cret");
    const auto reqs = other.requests();
    REQUIRE(reqs.size() == 1);
    CHECK_FALSE(reqs[0].header("authorization"));
    CHECK(reqs[0].header("accept") == "application/json");  // other headers stay
  }
}
