// Scheme facts declared at registration (transport.hpp's SchemeFacts, registry.hpp's
// TransportEntry::facts; decision 0039): a toy scheme registered as local behaves as file://
// does, one registered as remote and cacheable as http(s) does, for the stack, the cache and the
// gate of the Releases failover and credentials (Registry::facts).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/transports/register.hpp"

using namespace wheelfit;
using net::SchemeFacts;

namespace {

constexpr SchemeFacts kNone{};
constexpr SchemeFacts kAll{.remote = true, .cacheable = true, .credentials = true, .network_rules = true};

// Answers every URL with a page that may be cached an hour, counting the requests it saw.
class CountingTransport final : public net::Transport {
 public:
  explicit CountingTransport(int& count) : count_(count) {}

 private:
  Expected<net::Response> get_impl(const net::Request& request) override {
    ++count_;
    return net::Response{request.url, "text/html", "<a href=\"x\">x</a>", 200, {{"cache-control", "max-age=3600"}}, false};
  }
  int& count_;
};

net::TransportEntry counting(std::string name, std::vector<std::string> schemes, int& count,
                                   std::optional<SchemeFacts> facts) {
  return {std::move(name), std::move(schemes),
          [&count](const net::StackOptions&) -> Expected<std::unique_ptr<net::Transport>> {
            return std::unique_ptr<net::Transport>(std::make_unique<CountingTransport>(count));
          },
          facts};
}

// Reads `url` twice through a stack with the on-disk cache.
void read_twice_cached(const net::Registry& reg, const std::string& url, const test::TempDir& dir) {
  net::StackOptions options;
  options.cache = net::CacheOptions{dir.path() / "cache", false, net::kDefaultCacheMaxSize};
  auto stack = reg.make(url, options);
  REQUIRE(stack);
  for (int i = 0; i < 2; ++i) {
    auto r = (*stack)->get({url});
    REQUIRE(r);
    CHECK(r->status == 200);
  }
}

}  // namespace

TEST_CASE("net::default_facts: http(s) has every fact, anything else none", "[transport][facts]") {
  struct Row {
    std::string url;
    SchemeFacts facts;
  };
  const std::vector<Row> rows = {{"https://h/simple/", kAll}, {"HTTP://h/", kAll},      {"file:///srv/x", kNone},
                                 {"/srv/index", kNone},       {"mem://i/", kNone},      {"s3://bucket/k", kNone},
                                 {"httpx://h/", kNone},       {"http:/no-slashes", kNone}};
  for (const auto& row : rows) {
    CAPTURE(row.url);
    CHECK(net::default_facts(row.url) == row.facts);
  }
}

TEST_CASE("net::Registry::facts: what each transport declared", "[transport][facts]") {
  net::Registry reg;
  REQUIRE(transports::register_transports(reg));
  int local_count = 0, remote_count = 0, plain_count = 0;
  REQUIRE(reg.add_transport(counting("memory", {"mem"}, local_count, SchemeFacts{})));
  REQUIRE(reg.add_transport(counting("store", {"store"}, remote_count, SchemeFacts{.remote = true, .cacheable = true})));
  REQUIRE(reg.add_transport(counting("plain", {"plain"}, plain_count, std::nullopt)));
  CHECK(reg.facts("https://h/") == kAll);
  CHECK(reg.facts("http://h/") == kAll);
  CHECK(reg.facts("file:///x") == kNone);
  CHECK(reg.facts("relative/dir") == kNone);  // a plain path: the file transport's
  CHECK(reg.facts("mem://i/simple/") == reg.facts("file:///srv/simple/"));
  CHECK(reg.facts("STORE://b/") == SchemeFacts{.remote = true, .cacheable = true});
  CHECK(reg.facts("plain://x/") == kNone);     // declared none: default_facts
  CHECK(reg.facts("ftp://h/x") == kNone);      // read by no transport
  SECTION("a stack answers the same facts, through its decorators") {
    auto stack = reg.make(net::StackOptions{});
    REQUIRE(stack);
    CHECK((*stack)->facts("mem://i/") == kNone);
    CHECK((*stack)->facts("store://b/") == SchemeFacts{.remote = true, .cacheable = true});
    CHECK((*stack)->facts("https://h/") == kAll);
  }
}

TEST_CASE("a toy scheme registered local is not cached, as file:// is not", "[transport][facts]") {
  const test::TempDir dir;
  net::Registry reg;
  REQUIRE(transports::register_transports(reg));
  int count = 0;
  REQUIRE(reg.add_transport(counting("memory", {"mem"}, count, SchemeFacts{})));
  read_twice_cached(reg, "mem://i/simple/a/", dir);
  CHECK(count == 2);  // both reads reached the transport: the cache passed them through
  const auto facts = reg.facts("mem://i/simple/a/");
  CHECK_FALSE(facts.remote);       // no Releases failover, no local-link refusal
  CHECK_FALSE(facts.credentials);  // its URLs are not handed to the http rules
}

TEST_CASE("a toy scheme registered remote and cacheable is cached, as http(s) is", "[transport][facts]") {
  const test::TempDir dir;
  net::Registry reg;
  REQUIRE(transports::register_transports(reg));
  int count = 0;
  REQUIRE(reg.add_transport(counting("store", {"store"}, count, SchemeFacts{.remote = true, .cacheable = true})));
  read_twice_cached(reg, "store://bucket/simple/a/", dir);
  CHECK(count == 1);  // the second read came from the cache (max-age=3600)
  const auto facts = reg.facts("store://bucket/simple/a/");
  CHECK(facts.remote);              // the façade's gate of the Releases failover
  CHECK_FALSE(facts.credentials);   // declared without: not parsed as an http URL
  CHECK_FALSE(facts.network_rules);
}
