// Tests of the Releases API walk: pagination (G01), the token, RFC 8288 Link headers.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "index/releases/releases_support.hpp"
#include "wheelfit/index/releases.hpp"
#include "wheelfit/util/log.hpp"

using namespace wheelfit;
using namespace wheelfit::test::github_api;
using test::ScopedEnv;
using net::NetErrc;

// ---------------------------------------------------------------------------------------------
// G01: pagination

TEST_CASE("releases: G01 250 releases over 3 pages via Link rel=next", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  auto r = index::list_release_wheels(t, source());
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  const auto& page = r->at("flash-attn");
  REQUIRE(page.links.size() == 250);
  CHECK(page.links.front().text == wheel("flash_attn", "2.0.0"));
  CHECK(page.links.back().text == wheel("flash_attn", "2.249.0"));
  CHECK(page.skipped.empty());
  REQUIRE(t.origin().requests().size() == 3);
  CHECK(t.origin().requests()[0].url == kFirst);
  CHECK(t.origin().requests()[1].url == page_url(2));
  CHECK(t.origin().requests()[2].url == page_url(3));
  for (const auto& req : t.origin().requests()) {
    CHECK(header(req, "Accept") == "application/vnd.github+json");
    CHECK(header(req, "X-GitHub-Api-Version") == "2022-11-28");
    CHECK(header(req, "Authorization") == "<absent>");  // no token configured
  }
}

TEST_CASE("releases: G01 a next link looping back to page 1 stops", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  SECTION("back to the first URL") {
    api_page(t, page_url(2), releases_json(100, 200), link("<" + kFirst + ">; rel=\"next\""));
  }
  SECTION("to itself") { api_page(t, page_url(2), releases_json(100, 200), link("<" + page_url(2) + ">; rel=next")); }
  SECTION("an empty target (the page itself)") { api_page(t, page_url(2), releases_json(100, 200), link("<>; rel=next")); }
  auto r = index::list_release_wheels(t, source());
  REQUIRE_FALSE(r);
  CHECK(net::is(r.error(), NetErrc::protocol));
  CHECK_THAT(r.error().message, Catch::Contains("loops"));
  CHECK(t.origin().requests().size() == 2);
}

TEST_CASE("releases: max_pages bounds the walk", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  auto s = source();
  SECTION("fewer pages allowed than there are") {
    s.max_pages = 2;
    auto r = index::list_release_wheels(t, s);
    REQUIRE_FALSE(r);
    CHECK(net::is(r.error(), NetErrc::protocol));
    CHECK_THAT(r.error().message, Catch::Contains("more than 2 pages"));
    CHECK(t.origin().requests().size() == 2);
  }
  SECTION("exactly enough") {
    s.max_pages = 3;
    auto r = index::list_release_wheels(t, s);
    REQUIRE(r);
    CHECK(r->at("flash-attn").links.size() == 250);
  }
  SECTION("an endless chain of fresh URLs ends at the default 100") {
    FakeTransport endless;
    api_page(endless, kFirst, "[]", link("<" + page_url(1) + ">; rel=next"));
    for (int i = 1; i <= 150; ++i) api_page(endless, page_url(i), "[]", link("<" + page_url(i + 1) + ">; rel=next"));
    auto r = index::list_release_wheels(endless, source());
    REQUIRE_FALSE(r);
    CHECK(net::is(r.error(), NetErrc::protocol));
    CHECK(endless.origin().requests().size() == 100);
  }
}

TEST_CASE("releases: the walk's failures", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  SECTION("a transport error on page 2 is passed on, naming the URL") {
    t.origin().fail(page_url(2), net::net_error(NetErrc::reset, "api.github.com:443: connection reset by peer"));
    auto r = index::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(net::is(r.error(), NetErrc::reset));
    CHECK_THAT(r.error().message, Catch::Contains(page_url(2)) && Catch::Contains("connection reset"));
  }
  SECTION("a 404 (no such repository) stays not_found") {
    FakeTransport empty;
    auto r = index::list_release_wheels(empty, source());
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::not_found));
  }
  SECTION("a malformed Link header is a protocol error, not a silent stop") {
    api_page(t, page_url(2), releases_json(100, 200), link("<" + page_url(3) + "; rel=next"));
    auto r = index::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(net::is(r.error(), NetErrc::protocol));
    CHECK_THAT(r.error().message, Catch::Contains(page_url(2)) && Catch::Contains("Link header"));
  }
  SECTION("a next link to another scheme is refused") {
    api_page(t, page_url(2), releases_json(100, 200), link("<file:///etc/passwd>; rel=next"));
    auto r = index::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(net::is(r.error(), NetErrc::protocol));
    CHECK(t.origin().requests().size() == 2);
  }
  SECTION("a bad page stops the walk with the page's URL and JSON path") {
    api_page(t, page_url(2), R"([{"tag_name": "x", "assets": 5}])");
    auto r = index::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK_THAT(r.error().message, Catch::Contains(page_url(2)) && Catch::Contains("releases[0].assets: not an array"));
  }
  SECTION("a relative next link resolves against the page") {
    api_page(t, page_url(2), releases_json(100, 200), link("</repositories/912345678/releases?per_page=100&page=3>; rel=next"));
    auto r = index::list_release_wheels(t, source());
    REQUIRE(r);
    CHECK(r->at("flash-attn").links.size() == 250);
  }
  SECTION("a repository that is not owner/name") {
    auto s = source();
    for (const std::string bad : {"", "noslash", "a/b/c", "../x", "a/..", "a b/c", "a/b?x=1"}) {
      s.repo = bad;
      auto r = index::list_release_wheels(t, s);
      REQUIRE_FALSE(r);
      CHECK(r.error().is(Errc::invalid_input));
    }
    CHECK(t.origin().requests().empty());
  }
}

// ---------------------------------------------------------------------------------------------
// The token goes to the API host only

TEST_CASE("releases: Authorization only to the API host, over https unless allowed", "[transports][github]") {
  struct Row {
    std::string api_base;
    std::string next;
    bool token_on_next;
    bool http_allowed = true;  ///< token_over_http: the API host named with --allow-insecure-host
  };
  auto row = GENERATE(values<Row>({
      {"https://api.github.com", "https://api.github.com/repositories/1/releases?page=2", true},
      {"https://api.github.com/", "https://API.GitHub.com/repositories/1/releases?page=2", true},
      {"https://api.github.com", "https://api.github.com:443/repositories/1/releases?page=2", true},
      {"https://api.github.com", "https://evil.example/releases?page=2", false},
      {"https://api.github.com", "https://api.github.com.evil.example/releases?page=2", false},
      {"https://api.github.com", "https://api.github.com@evil.example/releases?page=2", false},
      {"https://api.github.com", "http://api.github.com/repositories/1/releases?page=2", false},  // plaintext
      {"https://api.github.com", "https://api.github.com:8443/repositories/1/releases?page=2", false},
      {"http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api/repositories/1/releases?page=2", true},
      {"http://127.0.0.1:8080/api", "http://127.0.0.1:9090/api/repositories/1/releases?page=2", false},
      {"http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api/repositories/1/releases?page=2", false, false},
      {"https://ghe.corp.example/api/v3", "https://ghe.corp.example/api/v3/x?page=2", true},
  }));
  CAPTURE(row.api_base, row.next);
  FakeTransport t;
  ReleasesSource s = source("ghp_secret123");
  s.api_base = row.api_base;
  s.token_over_http = row.http_allowed;
  std::string base = row.api_base;
  if (base.back() == '/') base.pop_back();
  const std::string first = base + "/repos/" + kRepoReleases + "/releases?per_page=100";
  api_page(t, first, releases_json(0, 1), link("<" + row.next + ">; rel=\"next\""));
  api_page(t, row.next, releases_json(1, 2));
  auto r = index::list_release_wheels(t, s);
  REQUIRE(r);
  REQUIRE(t.origin().requests().size() == 2);
  const bool first_gets_it = row.api_base.starts_with("https://") || row.http_allowed;
  CHECK(header(t.origin().requests()[0], "Authorization") == (first_gets_it ? "Bearer ghp_secret123" : "<absent>"));
  CHECK(header(t.origin().requests()[1], "Authorization") == (row.token_on_next ? "Bearer ghp_secret123" : "<absent>"));
  CHECK(header(t.origin().requests()[1], "Accept") == "application/vnd.github+json");
}

TEST_CASE("releases: from_env", "[transports][github]") {
  struct Row {
    std::optional<std::string> api, token;
    std::string expected_api;
    std::optional<std::string> expected_token;
  };
  auto row = GENERATE(values<Row>({
      {std::nullopt, std::nullopt, "https://api.github.com", std::nullopt},
      {"", "", "https://api.github.com", std::nullopt},
      {"   ", " \t", "https://api.github.com", std::nullopt},
      {"http://127.0.0.1:9/api/", "ghp_x", "http://127.0.0.1:9/api", "ghp_x"},
      {"https://ghe.example/api/v3", " ghp_y\n", "https://ghe.example/api/v3", "ghp_y"},  // trimmed
      {std::nullopt, "ghp_a\r\nX-Evil: 1", "https://api.github.com", std::nullopt},        // header injection: dropped
  }));
  ScopedEnv api("WHEELFIT_GITHUB_API", row.api);
  ScopedEnv token("GITHUB_TOKEN", row.token);
  const auto s = ReleasesSource::from_env("owner/name");
  CHECK(s.repo == "owner/name");
  CHECK(s.api_base == row.expected_api);
  CHECK(s.token == row.expected_token);
  CHECK(s.max_pages == 100);
}

TEST_CASE("releases: repo_of_pages_url", "[transports][github]") {
  SECTION("a project page URL of <owner>.github.io names <owner>/<repo>") {
    const test::TextCase rows[] = {
        {"https://comfy-forge.github.io/cuda-wheels/", "comfy-forge/cuda-wheels"},
        {"https://comfy-forge.github.io/cuda-wheels", "comfy-forge/cuda-wheels"},
        {"https://Comfy-Forge.GitHub.IO/cuda-wheels/", "comfy-forge/cuda-wheels"},
        {"HTTPS://comfy-forge.github.io/cuda-wheels/cu128/torch2.8/", "comfy-forge/cuda-wheels"},
        {"https://comfy-forge.github.io/cuda-wheels?x=1", "comfy-forge/cuda-wheels"},
        {"https://comfy-forge.github.io/cuda-wheels#frag", "comfy-forge/cuda-wheels"},
        {"https://o.github.io/repo.name_x-1/", "o/repo.name_x-1"},
    };
    test::check_each(rows, [](std::string_view url) { return index::repo_of_pages_url(url); });
  }
  SECTION("anything else names no repo") {
    for (const std::string url : {
             "http://comfy-forge.github.io/cuda-wheels/",
             "https://comfy-forge.github.io/",
             "https://comfy-forge.github.io",
             "https://github.io/cuda-wheels/",
             "https://.github.io/cuda-wheels/",
             "https://a.b.github.io/cuda-wheels/",
             "https://comfy-forge.github.io.evil.example/cuda-wheels/",
             "https://evil.example/comfy-forge.github.io/cuda-wheels/",
             "https://user@comfy-forge.github.io/cuda-wheels/",
             "https://comfy-forge.github.io:8443/cuda-wheels/",
             "https://comfy-forge.github.io/../x/",
             "https://comfy-forge.github.io/%2e%2e/x/",
             "https://comfy-forge.github.io//x/",
             "https://comfy-forge.github.com/cuda-wheels/",
             "file:///srv/cuda-wheels/",
             "",
         }) {
      CAPTURE(url);
      CHECK(index::repo_of_pages_url(url) == std::nullopt);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// RFC 8288

TEST_CASE("releases: link_next", "[transports][github]") {
  SECTION("the first rel=next link") {
    struct Row {
      std::string header, next;
    };
    const Row rows[] = {
        // GitHub's own shape
        {"<https://api.github.com/repositories/1/releases?page=2>; rel=\"next\", "
         "<https://api.github.com/repositories/1/releases?page=3>; rel=\"last\"",
         "https://api.github.com/repositories/1/releases?page=2"},
        {"<a>; rel=\"last\", <b>; rel=\"next\"", "b"},
        {"<a>; rel=next", "a"},
        {"<a>;rel=next", "a"},
        {"  <a>  ;  rel = \"next\"  ,  ", "a"},
        {"<a>; REL=\"NEXT\"", "a"},
        {"<a>; rel=\"prev next\"", "a"},
        {"<a>; rel=\"next\tlast\"", "a"},
        {"<a>; title=\"x, rel=next\"; rel=\"prev\", <b>; rel=next", "b"},  // a comma inside quotes
        {"<a>; title=\"say \\\"hi\\\"\"; rel=next", "a"},                // escapes in quoted strings
        {"<a,b;c>; rel=next", "a,b;c"},                                  // ',' and ';' inside <>
        {"<a>; anchor=\"#x\"; rel=next; type=\"text/html\"", "a"},
        {"<a>; hreflang; rel=next", "a"},                                // a parameter without value
        {",,<a>; rel=next", "a"},
        {"<>; rel=next", ""},
        {"<a>; rel=\"next\", <b>; rel=\"next\"", "a"},  // the first wins
    };
    for (const Row& row : rows) {
      CAPTURE(row.header);
      CHECK(index::link_next(row.header) == row.next);
    }
  }
  // Each header of `headers` has no next link.
  const auto check_none = [](std::initializer_list<std::string> headers) {
    for (const std::string& header : headers) {
      CAPTURE(header);
      CHECK(index::link_next(header) == std::nullopt);
    }
  };
  SECTION("no next link") {
    check_none({
        "",
        "<a>; rel=\"last\"",
        "<a>; rel=\"nextpage\"",
        "<a>; rel=\"prev\"; rel=\"next\"",  // only the first rel counts (RFC 8288 3.3)
        "<a>; title=\"rel=next\"",
        "<a>",
    });
  }
  SECTION("a hostile or malformed header has no next link") {
    check_none({
        "rel=next",
        "https://x; rel=next",
        "<a; rel=next",
        "<a>; rel=\"next",
        "<a>; rel=\"next\\",
        "<a b>; rel=next",
        "<a>; rel=next junk",
        "<a>; rel=next\r\nX-Injected: 1",
        "<a>;; rel=next",
        "<a>; =next",
        "<a\x01>; rel=next",
        std::string("<a>; rel=next\0", 14),
    });
  }
}

TEST_CASE("releases: link_next on huge headers stays linear", "[transports][github]") {
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "<https://x/" + std::to_string(i) + ">; rel=\"prev\", ";
  CHECK_FALSE(index::link_next(many));
  CHECK(index::link_next(many + "<https://x/next>; rel=next") == std::optional<std::string>("https://x/next"));
  CHECK_FALSE(index::link_next(std::string(1 << 20, ',')));
  CHECK_FALSE(index::link_next(std::string(1 << 20, '<')));
  CHECK_FALSE(index::link_next("<a>; t=\"" + std::string(1 << 20, 'x')));
}
