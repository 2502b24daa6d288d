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
#include "wheelfit/transports/releases.hpp"
#include "wheelfit/util/log.hpp"

using namespace wheelfit;
namespace json = boost::json;
using test::ScopedEnv;
using transport::Headers;
using transport::NetErrc;
using transport::Request;
using transport::Response;
using transports::ReleasesSource;

namespace {

// An in-memory transport: answers by exact URL (anything else is a 404), records every request.
class FakeTransport final : public transport::Transport {
 public:
  std::map<std::string, Expected<Response>> answers;
  std::vector<Request> requests;

  void page(const std::string& url, std::string body, Headers headers = {}) {
    Response r;
    r.url = url;
    r.content_type = "application/json; charset=utf-8";
    r.body = std::move(body);
    r.headers = std::move(headers);
    answers.insert_or_assign(url, Expected<Response>(std::move(r)));
  }
  void html(const std::string& url, std::string body) {
    Response r;
    r.url = url;
    r.content_type = "text/html";
    r.body = std::move(body);
    answers.insert_or_assign(url, Expected<Response>(std::move(r)));
  }
  void fail(const std::string& url, Error e) { answers.insert_or_assign(url, Expected<Response>(std::move(e))); }
  [[nodiscard]] std::size_t count(std::string_view prefix) const {
    std::size_t n = 0;
    for (const auto& r : requests) n += r.url.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }

 private:
  Expected<Response> get_impl(const Request& r) override {
    requests.push_back(r);
    const auto it = answers.find(r.url);
    if (it == answers.end()) return unexpected(Errc::not_found, r.url + ": HTTP 404 Not Found");
    return it->second;
  }
};

std::string header(const Request& r, std::string_view name) {
  auto v = transport::find_header(r.headers, name);
  return v ? std::string(*v) : std::string("<absent>");
}

const std::string kApi = "https://api.github.com";
const std::string kRepoReleases = "Comfy-Forge/cuda-wheels";
const std::string kFirst = kApi + "/repos/" + kRepoReleases + "/releases?per_page=100";
std::string page_url(int n) {
  return kApi + "/repositories/912345678/releases?per_page=100&page=" + std::to_string(n);
}
const std::string kDownload = "https://github.com/Comfy-Forge/cuda-wheels/releases/download/";
const std::string kHexA = "2f70d7bf803353f47d13d535934b50f6df7ec7fe38144015eb80a4d36e1b3ded";
const std::string kHexB = "6a3605b804da5ca56d0826a2e77b413f7e7050aab859a946ea435ab651687b29";

/// One asset as the API returns it; `digest` absent when nullopt.
json::object asset_with(const std::string& tag, const std::string& name, std::optional<json::value> digest) {
  std::string encoded;
  for (char c : name) encoded += c == '+' ? std::string("%2B") : std::string(1, c);
  static int id = 280000000;
  json::object a{
      {"url", "https://api.github.com/repos/Comfy-Forge/cuda-wheels/releases/assets/" + std::to_string(++id)},
      {"id", id},
      {"name", name},
      {"label", ""},
      {"content_type", name.ends_with(".whl") ? "application/zip" : "application/gzip"},
      {"state", "uploaded"},
      {"size", 123456},
      {"download_count", 7},
      {"created_at", "2026-08-22T10:00:00Z"},
      {"updated_at", "2026-08-22T10:00:00Z"},
      {"browser_download_url", kDownload + tag + "/" + encoded},
  };
  if (digest) a["digest"] = std::move(*digest);
  return a;
}
json::object asset(const std::string& tag, const std::string& name) { return asset_with(tag, name, std::nullopt); }
json::object asset(const std::string& tag, const std::string& name, const std::string& digest) {
  return asset_with(tag, name, json::value(digest));
}
json::object asset(const std::string& tag, const std::string& name, std::nullptr_t) {
  return asset_with(tag, name, json::value(nullptr));
}

json::object release(const std::string& tag, json::array assets) {
  static int id = 230000000;
  return json::object{
      {"url", "https://api.github.com/repos/Comfy-Forge/cuda-wheels/releases/" + std::to_string(++id)},
      {"html_url", "https://github.com/Comfy-Forge/cuda-wheels/releases/tag/" + tag},
      {"id", id},
      {"tag_name", tag},
      {"target_commitish", "main"},
      {"name", tag},
      {"draft", false},
      {"prerelease", false},
      {"created_at", "2026-08-22T09:00:00Z"},
      {"published_at", "2026-08-22T09:30:00Z"},
      {"assets", std::move(assets)},
      {"tarball_url", "https://api.github.com/repos/Comfy-Forge/cuda-wheels/tarball/" + tag},
      {"body", "Built by CI"},
  };
}

std::string wheel(const std::string& project, const std::string& version) {
  return project + "-" + version + "+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
}

/// Releases i in [from, to): flash_attn 2.<i>.0 wheels and a source tarball per release.
std::string releases_json(int from, int to) {
  json::array rs;
  for (int i = from; i < to; ++i) {
    const std::string tag = "flash_attn-2." + std::to_string(i) + ".0";
    rs.push_back(release(tag, json::array{asset(tag, wheel("flash_attn", "2." + std::to_string(i) + ".0"),
                                                "sha256:" + kHexA),
                                          asset(tag, "flash_attn-2." + std::to_string(i) + ".0.tar.gz")}));
  }
  return json::serialize(rs);
}

Headers link(std::string value) { return {{"link", std::move(value)}}; }

/// The three pages of G01, linked the way GitHub does it.
void serve_three_pages(FakeTransport& t) {
  t.page(kFirst, releases_json(0, 100),
         link("<" + page_url(2) + ">; rel=\"next\", <" + page_url(3) + ">; rel=\"last\""));
  t.page(page_url(2), releases_json(100, 200),
         link("<" + page_url(1) + ">; rel=\"prev\", <" + page_url(3) + ">; rel=\"next\", <" + page_url(3) +
              ">; rel=\"last\", <" + page_url(1) + ">; rel=\"first\""));
  t.page(page_url(3), releases_json(200, 250),
         link("<" + page_url(2) + ">; rel=\"prev\", <" + page_url(1) + ">; rel=\"first\""));
}

ReleasesSource source(std::optional<std::string> token = std::nullopt) {
  ReleasesSource s;
  s.repo = kRepoReleases;
  s.token = std::move(token);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// G01: pagination

TEST_CASE("releases: G01 250 releases over 3 pages via Link rel=next", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  auto r = transports::list_release_wheels(t, source());
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  const auto& page = r->at("flash-attn");
  REQUIRE(page.links.size() == 250);
  CHECK(page.links.front().text == wheel("flash_attn", "2.0.0"));
  CHECK(page.links.back().text == wheel("flash_attn", "2.249.0"));
  CHECK(page.skipped.empty());
  REQUIRE(t.requests.size() == 3);
  CHECK(t.requests[0].url == kFirst);
  CHECK(t.requests[1].url == page_url(2));
  CHECK(t.requests[2].url == page_url(3));
  for (const auto& req : t.requests) {
    CHECK(header(req, "Accept") == "application/vnd.github+json");
    CHECK(header(req, "X-GitHub-Api-Version") == "2022-11-28");
    CHECK(header(req, "Authorization") == "<absent>");  // no token configured
  }
}

TEST_CASE("releases: G01 a next link looping back to page 1 stops", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  SECTION("back to the first URL") {
    t.page(page_url(2), releases_json(100, 200), link("<" + kFirst + ">; rel=\"next\""));
  }
  SECTION("to itself") { t.page(page_url(2), releases_json(100, 200), link("<" + page_url(2) + ">; rel=next")); }
  SECTION("an empty target (the page itself)") { t.page(page_url(2), releases_json(100, 200), link("<>; rel=next")); }
  auto r = transports::list_release_wheels(t, source());
  REQUIRE_FALSE(r);
  CHECK(transport::is(r.error(), NetErrc::protocol));
  CHECK_THAT(r.error().message, Catch::Contains("loops"));
  CHECK(t.requests.size() == 2);
}

TEST_CASE("releases: max_pages bounds the walk", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  auto s = source();
  SECTION("fewer pages allowed than there are") {
    s.max_pages = 2;
    auto r = transports::list_release_wheels(t, s);
    REQUIRE_FALSE(r);
    CHECK(transport::is(r.error(), NetErrc::protocol));
    CHECK_THAT(r.error().message, Catch::Contains("more than 2 pages"));
    CHECK(t.requests.size() == 2);
  }
  SECTION("exactly enough") {
    s.max_pages = 3;
    auto r = transports::list_release_wheels(t, s);
    REQUIRE(r);
    CHECK(r->at("flash-attn").links.size() == 250);
  }
  SECTION("an endless chain of fresh URLs ends at the default 100") {
    FakeTransport endless;
    endless.page(kFirst, "[]", link("<" + page_url(1) + ">; rel=next"));
    for (int i = 1; i <= 150; ++i) endless.page(page_url(i), "[]", link("<" + page_url(i + 1) + ">; rel=next"));
    auto r = transports::list_release_wheels(endless, source());
    REQUIRE_FALSE(r);
    CHECK(transport::is(r.error(), NetErrc::protocol));
    CHECK(endless.requests.size() == 100);
  }
}

TEST_CASE("releases: the walk's failures", "[transports][github]") {
  FakeTransport t;
  serve_three_pages(t);
  SECTION("a transport error on page 2 is passed on, naming the URL") {
    t.fail(page_url(2), transport::net_error(NetErrc::reset, "api.github.com:443: connection reset by peer"));
    auto r = transports::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(transport::is(r.error(), NetErrc::reset));
    CHECK_THAT(r.error().message, Catch::Contains(page_url(2)) && Catch::Contains("connection reset"));
  }
  SECTION("a 404 (no such repository) stays not_found") {
    FakeTransport empty;
    auto r = transports::list_release_wheels(empty, source());
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::not_found));
  }
  SECTION("a malformed Link header is a protocol error, not a silent stop") {
    t.page(page_url(2), releases_json(100, 200), link("<" + page_url(3) + "; rel=next"));
    auto r = transports::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(transport::is(r.error(), NetErrc::protocol));
    CHECK_THAT(r.error().message, Catch::Contains(page_url(2)) && Catch::Contains("Link header"));
  }
  SECTION("a next link to another scheme is refused") {
    t.page(page_url(2), releases_json(100, 200), link("<file:///etc/passwd>; rel=next"));
    auto r = transports::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(transport::is(r.error(), NetErrc::protocol));
    CHECK(t.requests.size() == 2);
  }
  SECTION("a bad page stops the walk with the page's URL and JSON path") {
    t.page(page_url(2), R"([{"tag_name": "x", "assets": 5}])");
    auto r = transports::list_release_wheels(t, source());
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK_THAT(r.error().message, Catch::Contains(page_url(2)) && Catch::Contains("releases[0].assets: not an array"));
  }
  SECTION("a relative next link resolves against the page") {
    t.page(page_url(2), releases_json(100, 200), link("</repositories/912345678/releases?per_page=100&page=3>; rel=next"));
    auto r = transports::list_release_wheels(t, source());
    REQUIRE(r);
    CHECK(r->at("flash-attn").links.size() == 250);
  }
  SECTION("a repository that is not owner/name") {
    auto s = source();
    for (const std::string bad : {"", "noslash", "a/b/c", "../x", "a/..", "a b/c", "a/b?x=1"}) {
      s.repo = bad;
      auto r = transports::list_release_wheels(t, s);
      REQUIRE_FALSE(r);
      CHECK(r.error().is(Errc::invalid_input));
    }
    CHECK(t.requests.empty());
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
  t.page(first, releases_json(0, 1), link("<" + row.next + ">; rel=\"next\""));
  t.page(row.next, releases_json(1, 2));
  auto r = transports::list_release_wheels(t, s);
  REQUIRE(r);
  REQUIRE(t.requests.size() == 2);
  const bool first_gets_it = row.api_base.starts_with("https://") || row.http_allowed;
  CHECK(header(t.requests[0], "Authorization") == (first_gets_it ? "Bearer ghp_secret123" : "<absent>"));
  CHECK(header(t.requests[1], "Authorization") == (row.token_on_next ? "Bearer ghp_secret123" : "<absent>"));
  CHECK(header(t.requests[1], "Accept") == "application/vnd.github+json");
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
    test::check_each(rows, [](std::string_view url) { return transports::repo_of_pages_url(url); });
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
      CHECK(transports::repo_of_pages_url(url) == std::nullopt);
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
      CHECK(transports::link_next(row.header) == row.next);
    }
  }
  // Each header of `headers` has no next link.
  const auto check_none = [](std::initializer_list<std::string> headers) {
    for (const std::string& header : headers) {
      CAPTURE(header);
      CHECK(transports::link_next(header) == std::nullopt);
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
  CHECK_FALSE(transports::link_next(many));
  CHECK(transports::link_next(many + "<https://x/next>; rel=next") == std::optional<std::string>("https://x/next"));
  CHECK_FALSE(transports::link_next(std::string(1 << 20, ',')));
  CHECK_FALSE(transports::link_next(std::string(1 << 20, '<')));
  CHECK_FALSE(transports::link_next("<a>; t=\"" + std::string(1 << 20, 'x')));
}

// ---------------------------------------------------------------------------------------------
// Parsing a page; G04 digests

TEST_CASE("releases: G04 digests: valid, null, absent, malformed", "[transports][github]") {
  const std::string tag = "flash_attn-latest";
  json::array assets{
      asset(tag, wheel("flash_attn", "2.8.3"), "sha256:" + kHexA),
      asset(tag, wheel("flash_attn", "2.8.2"), nullptr),
      asset(tag, wheel("flash_attn", "2.8.1")),
      asset(tag, wheel("flash_attn", "2.8.0"), "sha256:" + std::string("ABCDEF") + kHexB.substr(6)),
      asset(tag, wheel("flash_attn", "2.7.4"), "sha256:xyz"),
      asset(tag, wheel("flash_attn", "2.7.3"), "sha512:" + kHexA + kHexB),
      asset(tag, wheel("flash_attn", "2.7.2"), "sha256:" + kHexA.substr(1)),
      asset(tag, wheel("flash_attn", "2.7.1"), ""),
      asset(tag, "SHA256SUMS", "sha256:" + kHexB),
  };
  std::map<std::string, index::Page> out;
  auto ok = transports::parse_releases_page(json::serialize(json::array{release(tag, assets)}), kFirst, out);
  REQUIRE(ok);
  REQUIRE(out.size() == 1);
  const auto& page = out.at("flash-attn");
  REQUIRE(page.links.size() == 8);  // malformed digests keep the link; SHA256SUMS is no wheel
  CHECK(page.links[0].sha256 == kHexA);
  CHECK_FALSE(page.links[1].sha256);
  CHECK_FALSE(page.links[2].sha256);
  CHECK(page.links[3].sha256 == std::string("abcdef") + kHexB.substr(6));  // lower-cased
  for (std::size_t i = 4; i < 8; ++i) CHECK_FALSE(page.links[i].sha256);
  REQUIRE(page.skipped.size() == 4);
  CHECK_THAT(page.skipped[0], Catch::Contains("releases[0].assets[4]") && Catch::Contains("sha256:xyz") &&
                                  Catch::Contains("kept without a hash"));
  CHECK_THAT(page.skipped[1], Catch::Contains("sha512:"));
}

TEST_CASE("releases: links carry the asset name, the download URL and its decoded file name", "[transports][github]") {
  const std::string tag = "cumm-latest";
  const std::string name = "cumm-0.8.2+cu128torch2.11-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  std::map<std::string, index::Page> out;
  REQUIRE(transports::parse_releases_page(json::serialize(json::array{release(tag, {asset(tag, name)})}), kFirst, out));
  const auto& l = out.at("cumm").links.at(0);
  CHECK(l.text == name);
  CHECK(l.url == kDownload + tag + "/cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl");
  CHECK(l.filename == name);
  CHECK_FALSE(l.yanked);
  CHECK_FALSE(l.requires_python);
}

TEST_CASE("releases: grouping, duplicates and skipped assets", "[transports][github]") {
  json::array rs{
      release("flash_attn-latest", {asset("flash_attn-latest", wheel("flash_attn", "2.8.3")),
                                    asset("flash_attn-latest", wheel("Flash.Attn", "2.8.2")),
                                    asset("flash_attn-latest", "flash_attn-notaversion!-cp312-cp312-linux_x86_64.whl"),
                                    asset("flash_attn-latest", "flash_attn-2.8.3.tar.gz")}),
      release("nvdiffrast-v0.3.3", {asset("nvdiffrast-v0.3.3", wheel("nvdiffrast", "0.3.3"))}),
      release("flash_attn-latest-dup", {}),
      release("empty", json::array{}),
  };
  // The same asset listed by two releases (e.g. a "-latest" tag and a versioned one): one link.
  rs[2].as_object()["assets"] = rs[0].as_object()["assets"];
  json::object no_assets = release("no-assets", {});
  no_assets.erase("assets");
  rs.push_back(no_assets);
  json::object null_assets = release("null-assets", {});
  null_assets["assets"] = nullptr;
  rs.push_back(null_assets);
  // A hostile download URL and a hostile name.
  json::object hostile_url = asset("x", wheel("cumesh", "1.0"));
  hostile_url["browser_download_url"] = "file:///etc/passwd";
  json::object hostile_name = asset("x", wheel("cumesh", "1.1"));
  hostile_name["name"] = "cumesh-1.1-cp312-cp312-linux_x86_64/../../evil.whl";
  rs.push_back(release("x", {hostile_url, hostile_name}));
  json::object not_wheel_no_url{{"name", "notes.txt"}};  // non-wheel assets are not looked at further
  rs.push_back(release("y", {not_wheel_no_url}));

  std::map<std::string, index::Page> out;
  REQUIRE(transports::parse_releases_page(json::serialize(rs), kFirst, out));
  CHECK(out.size() == 3);
  const auto& fa = out.at("flash-attn");
  REQUIRE(fa.links.size() == 2);  // Flash.Attn normalises to flash-attn; the duplicates dropped
  CHECK(fa.links[1].text == wheel("Flash.Attn", "2.8.2"));
  REQUIRE(fa.skipped.size() == 2);  // the bad name, once per release listing it
  CHECK_THAT(fa.skipped[0], Catch::Contains("releases[0].assets[2]") && Catch::Contains("notaversion"));
  CHECK_THAT(fa.skipped[1], Catch::Contains("releases[2].assets[2]"));
  CHECK(out.at("nvdiffrast").links.size() == 1);
  const auto& cm = out.at("cumesh");
  CHECK(cm.links.empty());
  REQUIRE(cm.skipped.size() == 2);
  CHECK_THAT(cm.skipped[0], Catch::Contains("file:///etc/passwd"));
  CHECK_THAT(cm.skipped[1], Catch::Contains("'/'"));

  SECTION("a second page appends") {
    REQUIRE(transports::parse_releases_page(
        json::serialize(json::array{release("z", {asset("z", wheel("flash_attn", "2.9.0"))})}), page_url(2), out));
    CHECK(out.at("flash-attn").links.size() == 3);
  }
}

TEST_CASE("releases: a hostile file name (the asset's, or its download URL's) is refused with a warning",
          "[transports][github][names]") {
  struct Row {
    const char* what;
    std::string name;  ///< the asset's "name"
    std::string url;   ///< its browser_download_url (its last segment decoded is the file name)
    const char* shown; ///< how the message quotes the hostile part: escaped, never raw
  };
  const std::string good = wheel("cumesh", "1.0");
  const std::string tag = "cumesh-latest/";
  const std::vector<Row> rows{
      {"ESC in the name", "cumesh-1.0\x1b[2J-cp312-cp312-linux_x86_64.whl", kDownload + tag + good, "\\x1b[2J"},
      {"CR in the name", "cumesh-1.0\r-cp312-cp312-linux_x86_64.whl", kDownload + tag + good, "\\x0d"},
      {"a backslash in the name", "cumesh-1.0-cp312-cp312-linux_x86_64\\..\\evil.whl", kDownload + tag + good, "\\..\\evil"},
      {"ESC in the URL's file name", good, kDownload + tag + "cumesh-1.0%1B%5B2J-cp312-cp312-linux_x86_64.whl", "\\x1b[2J"},
      {"CR in the URL's file name", good, kDownload + tag + "cumesh-1.0%0D-cp312-cp312-linux_x86_64.whl", "\\x0d"},
      {"a backslash in the URL's file name", good, kDownload + tag + "..%5C..%5Cevil.whl", "..\\..\\evil.whl"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    std::vector<std::string> warnings;
    const auto previous = log::set_sink([&](log::Level level, std::string_view m) {
      if (level == log::Level::warn) warnings.emplace_back(m);
    });
    json::object hostile = asset(tag, row.name);
    hostile["browser_download_url"] = row.url;
    std::map<std::string, index::Page> out;
    const bool parsed = static_cast<bool>(
        transports::parse_releases_page(json::serialize(json::array{release("cumesh-latest", {hostile, asset("x", good)})}),
                                        kFirst, out));
    log::set_sink(previous);
    REQUIRE(parsed);
    // The good asset stays; the hostile one is no link, and says why.
    REQUIRE(out.count("cumesh") == 1);
    const auto& page = out.at("cumesh");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].filename == good);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains("releases[0].assets[0]") && Catch::Contains("skipped") &&
                                Catch::Contains("'/', '\\' or a control character") && Catch::Contains(row.shown));
    for (unsigned char c : warnings[0]) CHECK((c >= 0x20 && c != 0x7f));  // escaped, not raw
    REQUIRE(page.skipped.size() == 1);
    for (unsigned char c : page.skipped[0]) CHECK((c >= 0x20 && c != 0x7f));
  }
}

TEST_CASE("releases: parse_releases_page rejects what is not a list of releases", "[transports][github]") {
  struct Row {
    std::string body;
    std::string message;
  };
  auto row = GENERATE(values<Row>({
      {"", "not valid JSON"},
      {"not json", "not valid JSON"},
      {"[{\"assets\": []}", "not valid JSON"},
      {"[1,]", "not valid JSON"},
      {"{}", "not a list of releases (an object)"},
      {R"({"message": "API rate limit exceeded for 1.2.3.4.", "documentation_url": "https://docs.github.com"})",
       "message: \"API rate limit exceeded"},
      {"\"releases\"", "not a list of releases (a string)"},
      {"null", "not a list of releases (null)"},
      {"[1]", "releases[0]: not an object (a number)"},
      {"[{}, []]", "releases[1]: not an object (an array)"},
      {R"([{"assets": {}}])", "releases[0].assets: not an array (an object)"},
      {R"([{"assets": "x"}])", "releases[0].assets: not an array (a string)"},
      {R"([{"assets": [1]}])", "releases[0].assets[0]: not an object (a number)"},
      {R"([{"assets": [{}]}])", "releases[0].assets[0].name: not a string"},
      {R"([{"assets": [{"name": 5}]}])", "releases[0].assets[0].name: not a string"},
      {R"([{"assets": [{"name": "a-1.0-py3-none-any.whl"}]}])", "releases[0].assets[0].browser_download_url: not a string"},
      {R"([{"assets": [{"name": "a-1.0-py3-none-any.whl", "browser_download_url": ["x"]}]}])",
       "releases[0].assets[0].browser_download_url: not a string"},
      {R"([{}, {}, {}, {"assets": [{"name": "a-1.0-py3-none-any.whl", "browser_download_url": "https://x/a-1.0-py3-none-any.whl", "digest": 5}]}])",
       "releases[3].assets[0].digest: not a string"},
      {R"([{"assets": [{"name": "a-1.0-py3-none-any.whl", "browser_download_url": "https://x/a.whl", "digest": {"sha256": "x"}}]}])",
       "releases[0].assets[0].digest: not a string"},
  }));
  CAPTURE(row.body);
  std::map<std::string, index::Page> out;
  out["keep"].links.push_back(index::Link{});
  auto r = transports::parse_releases_page(row.body, kFirst, out);
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::invalid_input));
  CHECK_THAT(r.error().message, Catch::StartsWith(kFirst + ": ") && Catch::Contains(row.message));
  CHECK(out.size() == 1);  // a failed page adds nothing
  CHECK(out.at("keep").links.size() == 1);
}

TEST_CASE("releases: parse_releases_page accepts an empty list and deep nesting fails cleanly", "[transports][github]") {
  std::map<std::string, index::Page> out;
  CHECK(transports::parse_releases_page("[]", kFirst, out));
  CHECK(transports::parse_releases_page(" [ ] \n", kFirst, out));
  CHECK(out.empty());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = transports::parse_releases_page(deep, kFirst, out);
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::invalid_input));
}

// ---------------------------------------------------------------------------------------------
// read_index_with_failover

namespace {

const std::string kBase = "https://comfy-forge.github.io/cuda-wheels/";

std::string api_page_with(const std::vector<std::pair<std::string, std::string>>& tag_and_wheel) {
  json::array rs;
  for (const auto& [tag, w] : tag_and_wheel) rs.push_back(release(tag, {asset(tag, w, "sha256:" + kHexA)}));
  return json::serialize(rs);
}

void serve_api(FakeTransport& t) {
  t.page(kFirst, api_page_with({{"flash_attn-latest", wheel("flash_attn", "2.8.3")},
                                {"cumm-latest", "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl"},
                                {"flash_attn-old", wheel("flash_attn", "2.7.4")}}));
}

const std::string kFlashHtml =
    "<a href='https://github.com/Comfy-Forge/cuda-wheels/releases/download/flash_attn-latest/"
    "flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl'>flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_"
    "x86_64.whl</a>";

std::optional<ReleasesSource> api_source() { return source(); }

}  // namespace

TEST_CASE("failover: Pages that cannot be read are replaced by the Releases API", "[transports][github]") {
  struct Row {
    std::string what;
    Error error;
  };
  auto row = GENERATE(values<Row>({
      {"reset", transport::net_error(NetErrc::reset, "comfy-forge.github.io:443: connection reset by peer")},
      {"503", transport::net_error(NetErrc::http_status, "comfy-forge.github.io:443: HTTP 503 after 3 attempts")},
      {"timeout", transport::net_error(NetErrc::connect_timeout, "comfy-forge.github.io:443: connect timed out")},
  }));
  CAPTURE(row.what);
  FakeTransport t;
  t.fail(kBase + "packages.json", row.error);
  t.fail(kBase + "flash-attn/", row.error);
  t.fail(kBase + "cumm/", row.error);
  t.fail(kBase + "nvdiffrast/", row.error);
  serve_api(t);

  auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn", "cumm", "nvdiffrast"}, api_source());
  CHECK(t.count(kApi) == 1);
  REQUIRE(snap.projects.size() == 3);
  const auto& fa = snap.projects.at("flash-attn");
  CHECK(fa.status == index::ProjectPage::Status::ok);
  CHECK(fa.source == "releases-api");
  CHECK(fa.error.empty());
  REQUIRE(fa.page.links.size() == 2);
  CHECK(fa.page.links[0].text == wheel("flash_attn", "2.8.3"));  // the API's order
  CHECK(fa.page.links[0].sha256 == kHexA);
  CHECK(fa.url == kBase + "flash-attn/");
  CHECK(snap.projects.at("cumm").status == index::ProjectPage::Status::ok);
  const auto& nv = snap.projects.at("nvdiffrast");
  CHECK(nv.status == index::ProjectPage::Status::not_published);
  CHECK(nv.source == "releases-api");
  CHECK_THAT(nv.error, Catch::Contains("no wheels among the releases") && Catch::Contains(row.error.message));
  CHECK_THAT(snap.failover_note, Catch::Contains("could not be read") && Catch::Contains(row.error.message) &&
                                     Catch::Contains("Releases API") && Catch::Contains("2 page(s) replaced") &&
                                     Catch::Contains("nvdiffrast") && Catch::Contains("torch-free"));
  CHECK_THAT(snap.packages_json_note, Catch::Contains("could not be read"));
}

TEST_CASE("failover: only the failed pages are replaced", "[transports][github]") {
  FakeTransport t;
  t.fail(kBase + "packages.json", Error(Errc::not_found, "404"));
  t.html(kBase + "flash-attn/", kFlashHtml);
  t.fail(kBase + "cumm/", transport::net_error(NetErrc::truncated, "comfy-forge.github.io:443: response truncated"));
  serve_api(t);
  auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn", "cumm"}, api_source());
  CHECK(t.count(kApi) == 1);
  const auto& fa = snap.projects.at("flash-attn");
  CHECK(fa.source == "index");
  REQUIRE(fa.page.links.size() == 1);
  CHECK_FALSE(fa.page.links[0].sha256);
  const auto& cm = snap.projects.at("cumm");
  CHECK(cm.status == index::ProjectPage::Status::ok);
  CHECK(cm.source == "releases-api");
  CHECK_THAT(snap.failover_note, Catch::Contains("1 of 2 pages failed"));
}

TEST_CASE("failover: the API is not asked when the index was read", "[transports][github]") {
  FakeTransport t;
  serve_api(t);
  t.fail(kBase + "packages.json", Error(Errc::not_found, "404"));
  SECTION("a clean 404 page is 'not published', not 'could not be read'") {
    // FakeTransport answers 404 for the pages (no answer scripted).
    auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn", "cumm"}, api_source());
    CHECK(t.count(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::not_published);
    CHECK(snap.projects.at("flash-attn").source == "index");
    CHECK(snap.failover_note.empty());
  }
  SECTION("a page that does not parse is a failure of the index, not of the network") {
    Response bad;
    bad.url = kBase + "flash-attn/";
    bad.content_type = "application/vnd.pypi.simple.v1+json";
    bad.body = "{\"files\": 5";
    t.answers.insert_or_assign(kBase + "flash-attn/", Expected<Response>(bad));
    t.html(kBase + "cumm/", std::string("<a href='x.whl'>\0</a>", 21));  // a NUL byte: not HTML
    auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn", "cumm"}, api_source());
    CHECK(t.count(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::failed);
    CHECK(snap.projects.at("cumm").status == index::ProjectPage::Status::failed);
    CHECK(snap.projects.at("flash-attn").source == "index");
    CHECK(snap.failover_note.empty());
  }
  SECTION("a body above the limit is no network failure either") {
    t.fail(kBase + "flash-attn/", Error(Errc::too_large, kBase + "flash-attn/: too large"));
    auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn"}, api_source());
    CHECK(t.count(kApi) == 0);
  }
  SECTION("no Releases source: no failover even when the network failed") {
    t.fail(kBase + "flash-attn/", transport::net_error(NetErrc::reset, "reset"));
    auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn"}, std::nullopt);
    CHECK(t.count(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::failed);
    CHECK(snap.failover_note.empty());
  }
  SECTION("the index read fine") {
    t.html(kBase + "flash-attn/", kFlashHtml);
    auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn"}, api_source());
    CHECK(t.count(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::ok);
  }
}

TEST_CASE("failover: the API failing too keeps both errors", "[transports][github]") {
  FakeTransport t;
  const Error pages_error = transport::net_error(NetErrc::reset, "comfy-forge.github.io:443: connection reset by peer");
  t.fail(kBase + "packages.json", pages_error);
  t.fail(kBase + "flash-attn/", pages_error);
  auto api_error = GENERATE(
      Error(transport::make_error_code(NetErrc::rate_limited), "api.github.com:443: rate limited until 12:00:00Z"),
      Error(transport::make_error_code(NetErrc::connect_failed), "api.github.com:443: connection refused"),
      Error(Errc::not_found, "HTTP 404"));
  t.fail(kFirst, api_error);
  auto snap = transports::read_index_with_failover(t, kBase, {"flash-attn"}, api_source());
  CHECK(t.count(kApi) == 1);
  const auto& fa = snap.projects.at("flash-attn");
  CHECK(fa.status == index::ProjectPage::Status::failed);
  CHECK(fa.source == "index");
  CHECK(fa.error == pages_error.message);
  CHECK_THAT(snap.failover_note, Catch::Contains(pages_error.message) && Catch::Contains(api_error.message) &&
                                     Catch::Contains("failed too"));
}

TEST_CASE("failover: torch-free packages are named when packages.json says so", "[transports][github]") {
  FakeTransport t;
  t.page(kBase + "packages.json", R"({"schema": 1, "repo": "Comfy-Forge/cuda-wheels", "packages": {
      "cumm": {"torch_free": true, "wheels": []},
      "flash-attn": {"torch_free": false, "wheels": []}}})");
  t.fail(kBase + "cumm/", transport::net_error(NetErrc::idle_timeout, "read timed out"));
  t.fail(kBase + "flash-attn/", transport::net_error(NetErrc::idle_timeout, "read timed out"));
  serve_api(t);
  auto snap = transports::read_index_with_failover(t, kBase, {"cumm", "flash-attn"}, api_source());
  REQUIRE(snap.packages_json);
  CHECK_THAT(snap.failover_note, Catch::Contains("torch-free packages (cumm)"));

  SECTION("and not mentioned when none of the replaced pages is torch-free") {
    FakeTransport t2;
    t2.answers = t.answers;
    t2.answers.erase(kBase + "cumm/");
    auto snap2 = transports::read_index_with_failover(t2, kBase, {"cumm", "flash-attn"}, api_source());
    CHECK_THAT(snap2.failover_note, !Catch::Contains("torch-free"));
  }
}

// ---------------------------------------------------------------------------------------------
// The real farm's wheels, as the Releases API would list them

TEST_CASE("releases: the farm's packages.json wheels as release assets", "[transports][github][fixtures]") {
  const auto path = test::farm_index_dir() / "packages.json";
  const auto pj = index::parse_packages_json(test::read_file(path), path.string());
  REQUIRE(pj);
  // Group the wheels by their release tag (the URL's path segment before the file name).
  std::map<std::string, json::array> by_tag;
  std::size_t total = 0;
  for (const auto& [name, entry] : pj->packages) {
    for (const auto& w : entry.wheels) {
      const auto slash = w.url.rfind('/');
      const auto tag_start = w.url.rfind('/', slash - 1) + 1;
      const std::string tag = w.url.substr(tag_start, slash - tag_start);
      json::object a = asset_with(tag, w.filename, w.sha256 ? json::value("sha256:" + *w.sha256) : json::value(nullptr));
      a["browser_download_url"] = w.url;
      by_tag[tag].push_back(std::move(a));
      ++total;
    }
  }
  json::array rs;
  for (auto& [tag, assets] : by_tag) rs.push_back(release(tag, std::move(assets)));
  std::map<std::string, index::Page> out;
  REQUIRE(transports::parse_releases_page(json::serialize(rs), kFirst, out));
  std::size_t links = 0;
  for (const auto& [name, entry] : pj->packages) {
    CAPTURE(name);
    REQUIRE(out.count(name) == 1);
    const auto& page = out.at(name);
    CHECK(page.skipped.empty());
    CHECK(page.links.size() == entry.wheels.size());
    for (const auto& l : page.links) {
      CHECK(l.sha256 == pj->sha256_for(l.url, l.filename));
      CHECK(l.filename == l.text);
    }
    links += page.links.size();
  }
  CHECK(links == total);
  CHECK(out.size() == pj->packages.size());
}
