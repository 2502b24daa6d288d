// Tests of read_index_with_failover (the Releases API for Pages that cannot be read) and the real
// farm's wheels as release assets.
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
using net::NetErrc;

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
  api_page(t, kFirst, api_page_with({{"flash_attn-latest", wheel("flash_attn", "2.8.3")},
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
      {"reset", net::net_error(NetErrc::reset, "comfy-forge.github.io:443: connection reset by peer")},
      {"503", net::net_error(NetErrc::http_status, "comfy-forge.github.io:443: HTTP 503 after 3 attempts")},
      {"timeout", net::net_error(NetErrc::connect_timeout, "comfy-forge.github.io:443: connect timed out")},
  }));
  CAPTURE(row.what);
  FakeTransport t;
  t.origin().fail(kBase + "packages.json", row.error);
  t.origin().fail(kBase + "flash-attn/", row.error);
  t.origin().fail(kBase + "cumm/", row.error);
  t.origin().fail(kBase + "nvdiffrast/", row.error);
  serve_api(t);

  auto snap = index::read_index_with_failover(t, kBase, {"flash-attn", "cumm", "nvdiffrast"}, api_source());
  CHECK(t.origin().count_prefix(kApi) == 1);
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
  t.origin().fail(kBase + "packages.json", Error(Errc::not_found, "404"));
  html_page(t, kBase + "flash-attn/", kFlashHtml);
  t.origin().fail(kBase + "cumm/", net::net_error(NetErrc::truncated, "comfy-forge.github.io:443: response truncated"));
  serve_api(t);
  auto snap = index::read_index_with_failover(t, kBase, {"flash-attn", "cumm"}, api_source());
  CHECK(t.origin().count_prefix(kApi) == 1);
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
  t.origin().fail(kBase + "packages.json", Error(Errc::not_found, "404"));
  SECTION("a clean 404 page is 'not published', not 'could not be read'") {
    // FakeTransport answers 404 for the pages (no answer scripted).
    auto snap = index::read_index_with_failover(t, kBase, {"flash-attn", "cumm"}, api_source());
    CHECK(t.origin().count_prefix(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::not_published);
    CHECK(snap.projects.at("flash-attn").source == "index");
    CHECK(snap.failover_note.empty());
  }
  SECTION("a page that does not parse is a failure of the index, not of the network") {
    Response bad;
    bad.url = kBase + "flash-attn/";
    bad.content_type = "application/vnd.pypi.simple.v1+json";
    bad.body = "{\"files\": 5";
    t.origin().serve(kBase + "flash-attn/", bad);
    html_page(t, kBase + "cumm/", std::string("<a href='x.whl'>\0</a>", 21));  // a NUL byte: not HTML
    auto snap = index::read_index_with_failover(t, kBase, {"flash-attn", "cumm"}, api_source());
    CHECK(t.origin().count_prefix(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::failed);
    CHECK(snap.projects.at("cumm").status == index::ProjectPage::Status::failed);
    CHECK(snap.projects.at("flash-attn").source == "index");
    CHECK(snap.failover_note.empty());
  }
  SECTION("a body above the limit is no network failure either") {
    t.origin().fail(kBase + "flash-attn/", Error(Errc::too_large, kBase + "flash-attn/: too large"));
    auto snap = index::read_index_with_failover(t, kBase, {"flash-attn"}, api_source());
    CHECK(t.origin().count_prefix(kApi) == 0);
  }
  SECTION("no Releases source: no failover even when the network failed") {
    t.origin().fail(kBase + "flash-attn/", net::net_error(NetErrc::reset, "reset"));
    auto snap = index::read_index_with_failover(t, kBase, {"flash-attn"}, std::nullopt);
    CHECK(t.origin().count_prefix(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::failed);
    CHECK(snap.failover_note.empty());
  }
  SECTION("the index read fine") {
    html_page(t, kBase + "flash-attn/", kFlashHtml);
    auto snap = index::read_index_with_failover(t, kBase, {"flash-attn"}, api_source());
    CHECK(t.origin().count_prefix(kApi) == 0);
    CHECK(snap.projects.at("flash-attn").status == index::ProjectPage::Status::ok);
  }
}

TEST_CASE("failover: the API failing too keeps both errors", "[transports][github]") {
  FakeTransport t;
  const Error pages_error = net::net_error(NetErrc::reset, "comfy-forge.github.io:443: connection reset by peer");
  t.origin().fail(kBase + "packages.json", pages_error);
  t.origin().fail(kBase + "flash-attn/", pages_error);
  auto api_error = GENERATE(
      Error(net::make_error_code(NetErrc::rate_limited), "api.github.com:443: rate limited until 12:00:00Z"),
      Error(net::make_error_code(NetErrc::connect_failed), "api.github.com:443: connection refused"),
      Error(Errc::not_found, "HTTP 404"));
  t.origin().fail(kFirst, api_error);
  auto snap = index::read_index_with_failover(t, kBase, {"flash-attn"}, api_source());
  CHECK(t.origin().count_prefix(kApi) == 1);
  const auto& fa = snap.projects.at("flash-attn");
  CHECK(fa.status == index::ProjectPage::Status::failed);
  CHECK(fa.source == "index");
  CHECK(fa.error == pages_error.message);
  CHECK_THAT(snap.failover_note, Catch::Contains(pages_error.message) && Catch::Contains(api_error.message) &&
                                     Catch::Contains("failed too"));
}

TEST_CASE("failover: torch-free packages are named when packages.json says so", "[transports][github]") {
  FakeTransport t;
  api_page(t, kBase + "packages.json", R"({"schema": 1, "repo": "Comfy-Forge/cuda-wheels", "packages": {
      "cumm": {"torch_free": true, "wheels": []},
      "flash-attn": {"torch_free": false, "wheels": []}}})");
  t.origin().fail(kBase + "cumm/", net::net_error(NetErrc::idle_timeout, "read timed out"));
  t.origin().fail(kBase + "flash-attn/", net::net_error(NetErrc::idle_timeout, "read timed out"));
  serve_api(t);
  auto snap = index::read_index_with_failover(t, kBase, {"cumm", "flash-attn"}, api_source());
  REQUIRE(snap.packages_json);
  CHECK_THAT(snap.failover_note, Catch::Contains("torch-free packages (cumm)"));

  SECTION("and not mentioned when none of the replaced pages is torch-free") {
    FakeTransport t2(std::make_shared<test::MemoryOrigin>(t.origin()));
    t2.origin().drop(kBase + "cumm/");
    auto snap2 = index::read_index_with_failover(t2, kBase, {"cumm", "flash-attn"}, api_source());
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
  REQUIRE(index::parse_releases_page(json::serialize(rs), kFirst, out));
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
