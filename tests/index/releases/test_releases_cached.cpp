// The Releases API through the on-disk cache (docs/network-faults.md G01, last part): a second run sends
// If-None-Match for every page and serves the 304s from the cache, Link headers included.
#include <catch2/catch.hpp>

#include <map>

#include "support/memory_transport.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/index/releases.hpp"

using namespace wheelfit;

namespace {

// An API server in memory: pages with ETags and Link headers; 304 when If-None-Match matches.
// Shared by the transports of both "runs" (its counters outlive them).
struct ReleasesCachedApi {
  std::map<std::string, std::pair<std::string, std::string>> pages;  // url -> (body, next url)
  int requests = 0, conditional = 0;
};

// The API as the memory transport's handler: 404 for a page it lacks, a 304 when If-None-Match matches.
std::unique_ptr<net::Transport> api_transport(ReleasesCachedApi& api) {
  auto origin = std::make_shared<test::MemoryOrigin>();
  origin->handle([&api](const net::Request& r) -> std::optional<Expected<net::Response>> {
    ++api.requests;
    auto it = api.pages.find(r.url);
    if (it == api.pages.end()) return unexpected(Errc::not_found, r.url + ": 404");
    const std::string etag = "\"" + std::to_string(std::hash<std::string>{}(it->second.first)) + "\"";
    net::Response resp{r.url, "application/json", "", 200, {{"etag", etag}, {"cache-control", "max-age=0"}}, false};
    if (!it->second.second.empty()) resp.headers.emplace_back("link", "<" + it->second.second + ">; rel=\"next\"");
    if (auto inm = net::find_header(r.headers, "If-None-Match"); inm && *inm == etag) {
      ++api.conditional;
      resp.status = 304;
      return resp;
    }
    resp.body = it->second.first;
    return resp;
  });
  return test::MemoryOrigin::transport_over(origin);
}

std::string release_json_cached(const std::string& tag, const std::string& wheel) {
  return R"({"tag_name":")" + tag + R"(","assets":[{"name":")" + wheel +
         R"(","browser_download_url":"https://github.com/o/r/releases/download/)" + tag + "/" + wheel +
         R"(","digest":"sha256:)" + std::string(64, 'a') + R"("}]})";
}

}  // namespace

TEST_CASE("Releases API pages are revalidated through the cache, 304s served from it", "[transports][github][cache]") {
  test::TempDir dir;
  ReleasesCachedApi api;
  const std::string base = "https://api.test/repos/o/r/releases?per_page=100";
  api.pages[base] = {"[" + release_json_cached("a-1", "a-1.0-py3-none-any.whl") + "]", base + "&page=2"};
  api.pages[base + "&page=2"] = {"[" + release_json_cached("b-1", "b-1.0-py3-none-any.whl") + "]", ""};
  index::ReleasesSource source;
  source.api_base = "https://api.test";
  source.repo = "o/r";

  auto run = [&] {
    auto t = transports::make_cache_transport(api_transport(api), {dir / "cache", false});
    REQUIRE(t);
    auto wheels = index::list_release_wheels(**t, source);
    REQUIRE(wheels);
    return std::make_pair(std::move(*wheels), (*t)->stats());
  };
  auto [first, first_stats] = run();
  CHECK(first.size() == 2);
  CHECK(api.requests == 2);
  CHECK(api.conditional == 0);

  auto [second, second_stats] = run();
  CHECK(api.requests == 4);
  CHECK(api.conditional == 2);  // both pages, the second found through the cached Link header
  CHECK(second_stats.cache_revalidated == 2);
  REQUIRE(second.size() == 2);
  CHECK(second.at("a").links.at(0).sha256 == std::string(64, 'a'));
  CHECK(second.at("b").links.at(0).url == "https://github.com/o/r/releases/download/b-1/b-1.0-py3-none-any.whl");
}
