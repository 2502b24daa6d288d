// An index read through the http transport that was moved (redirected) or hands out hostile
// links: relative hrefs resolve against the URL that answered, after the redirects
// (docs/network-faults.md R03), and a remote page links only https, or http from an http page
// (H05); the rest is skipped with a warning naming the page.
#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "test_http_support.hpp"
#include "wheelfit/index/index_client.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;

namespace {

const std::string kLinks =
    "<a href='pkg-1.0-py3-none-any.whl#sha256=" + std::string(64, 'a') + "'>pkg-1.0-py3-none-any.whl</a>\n"
    "<a href='../../elsewhere/pkg-1.1-py3-none-any.whl'>pkg-1.1-py3-none-any.whl</a>\n"
    "<a href='https://cdn.test/pkg-1.2-py3-none-any.whl'>pkg-1.2-py3-none-any.whl</a>\n"
    "<a href='http://cdn.test/pkg-1.3-py3-none-any.whl'>pkg-1.3-py3-none-any.whl</a>\n"
    "<a href='file:///etc/pkg-1.4-py3-none-any.whl'>pkg-1.4-py3-none-any.whl</a>\n"
    "<a href='ftp://cdn.test/pkg-1.5-py3-none-any.whl'>pkg-1.5-py3-none-any.whl</a>\n";

std::vector<std::string> urls(const index::ProjectPage& page) {
  std::vector<std::string> out;
  for (const auto& l : page.page.links) out.push_back(l.url);
  return out;
}

std::string redirect_to(const std::string& location) { return http_response(302, "moved", {{"Location", location}}); }

}  // namespace

TEST_CASE("index: R03 a page redirected to another path resolves its hrefs there; H05 http links from http, never file",
          "[transports][http][redirect][index]") {
  TestServer server(serve([](const HttpRequest& r) {
    if (r.target == "/simple/pkg/") return redirect_to("/mirror/v2/pkg/");
    if (r.target == "/mirror/v2/pkg/") return http_response(200, kLinks, {{"Content-Type", "text/html"}});
    return http_response(404, "no");
  }));
  auto t = make();
  const auto snap = index::read_index(*t, server.url("/simple/"), {"pkg"});
  const auto& page = snap.projects.at("pkg");
  REQUIRE(page.status == index::ProjectPage::Status::ok);
  CHECK(page.url == server.url("/simple/pkg/"));
  CHECK(page.final_url == server.url("/mirror/v2/pkg/"));
  CHECK(urls(page) == std::vector<std::string>{server.url("/mirror/v2/pkg/pkg-1.0-py3-none-any.whl"),
                                               server.url("/mirror/elsewhere/pkg-1.1-py3-none-any.whl"),
                                               "https://cdn.test/pkg-1.2-py3-none-any.whl",
                                               "http://cdn.test/pkg-1.3-py3-none-any.whl"});
  REQUIRE(page.page.skipped.size() == 2);
  CHECK(contains(page.page.skipped[0], "file:///etc/pkg-1.4"));
  CHECK(contains(page.page.skipped[0], "local file link on a remote page"));
  CHECK(contains(page.page.skipped[1], "scheme 'ftp'"));
  REQUIRE(snap.warnings.size() == 1);
  CHECK(contains(snap.warnings[0], server.url("/simple/pkg/") + " (answered by " + server.url("/mirror/v2/pkg/") + ")"));
  CHECK(contains(snap.warnings[0], "2 links skipped"));
}

TEST_CASE("index: R03 an http index redirected to https yields https wheel URLs; H05 an https page links only https",
          "[transports][http][redirect][index][tls]") {
  wheelfit::test::TempDir dir;
  TestCa ca(dir.path());
  TestServer::Options so;
  so.tls = ca.issue("leaf");
  TestServer secure(serve([](const HttpRequest& r) {
                      if (r.target == "/simple/pkg/") return http_response(200, kLinks, {{"Content-Type", "text/html"}});
                      return http_response(404, "no");
                    }),
                    so);
  TestServer plain(serve([&](const HttpRequest& r) { return redirect_to(secure.url(r.target, "localhost")); }));
  auto o = fast_options();
  o.ca_file = ca.cert().string();
  auto t = make(o);
  const auto snap = index::read_index(*t, plain.url("/simple/"), {"pkg"});
  const auto& page = snap.projects.at("pkg");
  REQUIRE(page.status == index::ProjectPage::Status::ok);
  CHECK(page.final_url == secure.url("/simple/pkg/", "localhost"));
  CHECK(urls(page) == std::vector<std::string>{secure.url("/simple/pkg/pkg-1.0-py3-none-any.whl", "localhost"),
                                               secure.url("/elsewhere/pkg-1.1-py3-none-any.whl", "localhost"),
                                               "https://cdn.test/pkg-1.2-py3-none-any.whl"});
  REQUIRE(page.page.skipped.size() == 3);
  CHECK(contains(page.page.skipped[0], "http://cdn.test/pkg-1.3"));
  CHECK(contains(page.page.skipped[0], "a downgrade"));
  REQUIRE(snap.warnings.size() == 1);
  CHECK(contains(snap.warnings[0], "3 links skipped"));
}
