// The cache decorator and its caller's answer hook (decision 0020): an answer of the inner
// transport that the cache returns unchanged is told while the inner batch runs; fresh entries,
// 304s and refetches after it. Either way the hook sees what get_many returns, once.
#include "cache_fixture.hpp"

using namespace wheelfit;
using namespace wheelfit::test_cache;

TEST_CASE("cache: the caller's hook hears each passed-on answer as it comes, the rest after the batch",
          "[transports][cache][hook]") {
  Fixture f;
  const std::string fresh = "https://idx.example/fresh/";
  const std::string stale = "https://idx.example/stale/";
  const std::string miss = "https://idx.example/miss/";
  const std::string gone = "https://idx.example/gone/";
  const std::string local = "file:///srv/local/";
  const Headers validator{{"etag", "\"s\""}};
  f.state->handle([&](const Request& r) -> Expected<Response> {
    if (r.url == gone) return unexpected(Errc::not_found, r.url + ": 404");
    if (r.url != stale) return ok(r.url == fresh ? "fresh" : "body of " + r.url, {{"cache-control", r.url == fresh ? "max-age=3600" : "no-cache"}});
    return header(r, "if-none-match") == "\"s\"" ? Expected<Response>(not_modified()) : Expected<Response>(ok("stale", validator));
  });
  REQUIRE(f.get(fresh));
  REQUIRE(f.get(stale));

  std::vector<Request> reqs;
  for (const auto& u : {fresh, miss, stale, local, gone}) reqs.push_back(req(u));
  std::vector<int> during(reqs.size(), -1);  // 1: told while the inner batch ran
  std::vector<std::string> seen(reqs.size());
  auto out = f.cache->get_many(reqs, [&](std::size_t i, const Expected<Response>& a) {
    CHECK(during.at(i) == -1);  // once
    during.at(i) = f.state->telling() ? 1 : 0;
    seen.at(i) = a ? a->body : a.error().message;
  });
  CHECK(during == std::vector<int>{0, 1, 0, 1, 1});  // fresh and the 304 after; miss, local, 404 as they came
  for (std::size_t i = 0; i < out.size(); ++i) {
    CAPTURE(i);
    CHECK(seen[i] == (out[i] ? out[i]->body : out[i].error().message));
  }
  CHECK(seen[2] == "stale");  // the stored body the 304 confirmed, not the 304's empty one
}
