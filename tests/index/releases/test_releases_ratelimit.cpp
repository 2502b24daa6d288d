// G02 over a real socket (docs/network-faults.md): the Releases API on a loopback server answers
// with GitHub's rate-limit signals, read through the real http transport. An exhausted limit
// (403, x-ratelimit-remaining: 0) is waited out until x-ratelimit-reset, or given up at once,
// naming the reset time, when that is past the cap; a 429's retry-after is waited for.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "support/net/test_server.hpp"
#include "transports/http/test_http_support.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/index/releases.hpp"

using namespace wheelfit;
using namespace std::chrono_literals;
using net::NetErrc;
using wheelfit::testing::http_response;
using wheelfit::testing::HttpRequest;
using wheelfit::testing::TestServer;

namespace {

using SysClock = std::chrono::system_clock;

const std::string kRepoReleasesRatelimit = "example/wheels";
const std::string kReleases =
    R"([{"tag_name": "v1", "assets": [{"name": "pkg-1.0+cu128torch2.8-cp312-cp312-linux_x86_64.whl",)"
    R"( "browser_download_url": "https://example.test/dl/v1/pkg-1.0%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl",)"
    R"( "digest": null}]}])";

std::int64_t epoch(SysClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

/// The API on loopback: the first `limited` requests get `limited_answer`, the rest the releases.
/// When each request arrived is recorded.
struct ReleasesRatelimitApi {
  std::mutex mu;
  std::vector<SysClock::time_point> arrivals;
  std::atomic<int> limited{1};
  std::function<std::string()> limited_answer;
  TestServer server{wheelfit::testing::serve([this](const HttpRequest& r) {
    {
      const std::lock_guard lock(mu);
      arrivals.push_back(SysClock::now());
    }
    if (r.target != "/api/repos/" + kRepoReleasesRatelimit + "/releases?per_page=100") return http_response(404, "{}");
    if (limited-- > 0) return limited_answer();
    return http_response(200, kReleases, {{"Content-Type", "application/json"}});
  })};

  [[nodiscard]] index::ReleasesSource source() const {
    index::ReleasesSource s;
    s.repo = kRepoReleasesRatelimit;
    s.api_base = server.url("/api");
    return s;
  }
  [[nodiscard]] std::vector<SysClock::time_point> requests() {
    const std::lock_guard lock(mu);
    return arrivals;
  }
};

std::unique_ptr<net::Transport> http(std::chrono::seconds max_wait) {
  auto o = test_http::fast_options();
  o.retry.max_wait = max_wait;
  return test_http::make(std::move(o));
}

std::string exhausted(std::int64_t reset_epoch) {
  return http_response(403, R"({"message": "API rate limit exceeded"})",
                       {{"Content-Type", "application/json"},
                        {"x-ratelimit-limit", "60"},
                        {"x-ratelimit-remaining", "0"},
                        {"x-ratelimit-used", "60"},
                        {"x-ratelimit-reset", std::to_string(reset_epoch)}});
}

}  // namespace

TEST_CASE("releases: G02 an exhausted rate limit resetting in 120 s fails at once, naming the reset time",
          "[transports][github][network]") {
  ReleasesRatelimitApi api;
  const auto reset = epoch(SysClock::now()) + 120;
  api.limited = 1000;
  api.limited_answer = [&] { return exhausted(reset); };
  auto t = http(60s);
  const auto start = std::chrono::steady_clock::now();
  auto r = index::list_release_wheels(*t, api.source());
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), NetErrc::rate_limited));
  CHECK_THAT(r.error().message, Catch::Contains("HTTP 403") && Catch::Contains("x-ratelimit-reset in 12") &&
                                    Catch::Contains("exceeds the 60 s cap") && Catch::Contains("Z)"));
  CHECK(api.requests().size() == 1);  // nothing sent before the reset
  CHECK(t->stats().retries == 0);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("releases: G02 an exhausted rate limit resetting soon: the next request waits for the reset",
          "[transports][github][network]") {
  ReleasesRatelimitApi api;
  const auto reset = epoch(SysClock::now()) + 2;
  api.limited_answer = [&] { return exhausted(reset); };
  auto t = http(60s);
  auto r = index::list_release_wheels(*t, api.source());
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r);
  CHECK(r->count("pkg") == 1);
  const auto arrivals = api.requests();
  REQUIRE(arrivals.size() == 2);
  CHECK(epoch(arrivals[1]) >= reset);  // no request before the reset time
  CHECK(t->stats().retries == 1);
}

TEST_CASE("releases: G02 a 429 with retry-after is waited for, then answered", "[transports][github][network]") {
  ReleasesRatelimitApi api;
  api.limited_answer = [] { return http_response(429, R"({"message": "slow down"})", {{"retry-after", "2"}}); };
  auto t = http(60s);
  auto r = index::list_release_wheels(*t, api.source());
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r);
  const auto arrivals = api.requests();
  REQUIRE(arrivals.size() == 2);
  CHECK(arrivals[1] - arrivals[0] >= 1900ms);  // at least the 2 s asked (clock rounding aside)
  CHECK(t->stats().retries == 1);

  SECTION("a retry-after past the cap gives up at once and says so") {
    ReleasesRatelimitApi far;
    far.limited = 1000;
    far.limited_answer = [] { return http_response(429, "{}", {{"retry-after", "5"}}); };
    auto quick = http(2s);
    auto refused = index::list_release_wheels(*quick, far.source());
    REQUIRE_FALSE(refused);
    CHECK(net::is(refused.error(), NetErrc::rate_limited));
    CHECK_THAT(refused.error().message, Catch::Contains("Retry-After 5 s exceeds the 2 s cap"));
    CHECK(far.requests().size() == 1);
  }
}
