// The tests' in-memory transport (tests/support/memory_transport.hpp): the table, the statuses it
// maps to errors, the faults (the Nth request, a URL, all, a truncated body), the handler and the
// inner transport, the records, a hooked batch's order, and a shared origin.
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/memory_sink.hpp"
#include "support/memory_transport.hpp"

using namespace wheelfit;
using test::MemoryOrigin;
using test::MemoryReply;
using test::MemoryTransport;
using net::NetErrc;
using net::Request;
using net::Response;

namespace {

Request mem_req(std::string url) {
  Request r;
  r.url = std::move(url);
  return r;
}

std::vector<Request> mem_reqs(const std::vector<std::string>& urls) {
  std::vector<Request> out;
  for (const auto& u : urls) out.push_back(mem_req(u));
  return out;
}

}  // namespace

TEST_CASE("memory transport: answers from its table by exact URL, a 404 for the rest", "[transport][memory]") {
  MemoryTransport t;
  t.origin().serve("https://m.test/a/", "page a").serve("https://m.test/j", "{}", "application/json", {{"etag", "\"1\""}});
  auto a = t.get(mem_req("https://m.test/a/"));
  REQUIRE(a);
  CHECK(a->body == "page a");
  CHECK(a->content_type == "text/html");
  CHECK(a->url == "https://m.test/a/");
  CHECK(a->status == 200);
  auto j = t.get(mem_req("https://m.test/j"));
  REQUIRE(j);
  CHECK(j->content_type == "application/json");
  CHECK(net::find_header(j->headers, "ETag") == "\"1\"");

  auto missing = t.get(mem_req("https://m.test/a"));  // no trailing slash: another URL
  REQUIRE_FALSE(missing);
  CHECK(missing.error().is(Errc::not_found));
  CHECK(missing.error().message == "https://m.test/a: 404");
  t.origin().missing(": HTTP 404 Not Found");
  CHECK(t.get(mem_req("https://m.test/b")).error().message == "https://m.test/b: HTTP 404 Not Found");

  t.origin().drop("https://m.test/a/");
  CHECK(t.get(mem_req("https://m.test/a/")).error().is(Errc::not_found));
}

TEST_CASE("memory transport: statuses, limits and redirects as a network transport reports them", "[transport][memory]") {
  struct Row {
    const char* what;
    MemoryReply reply;
    std::size_t max_body;
    int status;          // the answer's status, 0: an error
    const char* error;   // the error's message, when one
  };
  const std::vector<Row> rows = {
      {"a 200", {"body"}, 64, 200, ""},
      {"a 304 keeps its status", {"", "text/html", {}, 304}, 64, 304, ""},
      {"a 206", {"dy", "text/html", {}, 206}, 64, 206, ""},
      {"a 404 is not found", {"gone", "text/html", {}, 404}, 64, 0, "mem://x: 404"},
      {"a 410 is not found", {"gone", "text/html", {}, 410}, 64, 0, "mem://x: 404"},
      {"a 503 is an HTTP status error", {"busy", "text/html", {}, 503}, 64, 0, "mem://x: HTTP 503"},
      {"a body above max_body", {"12345"}, 4, 0, "mem://x: body above its limit"},
      {"a redirect's final URL", {"moved", "text/html", {}, 200, "mem://y"}, 64, 200, ""},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    MemoryTransport t;
    t.origin().serve("mem://x", row.reply);
    Request r = mem_req("mem://x");
    r.max_body = row.max_body;
    auto got = t.get(r);
    if (row.status == 0) {
      REQUIRE_FALSE(got);
      CHECK(got.error().message == row.error);
      continue;
    }
    REQUIRE(got);
    CHECK(got->status == row.status);
    CHECK(got->url == (row.reply.url.empty() ? "mem://x" : row.reply.url));
  }
  MemoryTransport t;
  t.origin().serve("mem://404", MemoryReply{"", "text/html", {}, 404});
  t.origin().serve("mem://500", MemoryReply{"", "text/html", {}, 500});
  CHECK(t.get(mem_req("mem://404")).error().is(Errc::not_found));
  CHECK(net::is(t.get(mem_req("mem://500")).error(), NetErrc::http_status));
  t.origin().serve("mem://big", "12345");
  Request big = mem_req("mem://big");
  big.max_body = 4;
  CHECK(t.get(big).error().is(Errc::too_large));
}

TEST_CASE("memory transport: fails the Nth request, a URL, or every request", "[transport][memory][faults]") {
  MemoryTransport t;
  t.origin().serve("mem://a", "a").serve("mem://b", "b");
  SECTION("the Nth request, counted over every request the origin saw") {
    t.origin().fail_nth(2, net::net_error(NetErrc::reset, "{url}: connection reset"));
    CHECK(t.get(mem_req("mem://a")));
    auto second = t.get(mem_req("mem://a"));
    REQUIRE_FALSE(second);
    CHECK(net::is(second.error(), NetErrc::reset));
    CHECK(second.error().message == "mem://a: connection reset");
    CHECK(t.get(mem_req("mem://a")));  // the third is served again
    t.origin().forget().fail_nth(1, Error(Errc::io_error, "disk"));  // forget: counted from here
    CHECK(t.get(mem_req("mem://b")).error().is(Errc::io_error));
  }
  SECTION("a URL, every time, before the table") {
    t.origin().fail("mem://b", net::net_error(NetErrc::idle_timeout, "read timed out"));
    CHECK(t.get(mem_req("mem://a")));
    for (int i = 0; i < 2; ++i) CHECK(net::is(t.get(mem_req("mem://b")).error(), NetErrc::idle_timeout));
  }
  SECTION("every request, until told to stop") {
    t.origin().fail_all(net::net_error(NetErrc::offline, "{url} is not cached"));
    CHECK(t.get(mem_req("mem://a")).error().message == "mem://a is not cached");
    CHECK(t.get(mem_req("mem://nowhere")).error().message == "mem://nowhere is not cached");
    t.origin().fail_all(std::nullopt);
    CHECK(t.get(mem_req("mem://a")));
  }
  CHECK_FALSE(t.origin().requests().empty());  // a failed request is still a request seen
}

TEST_CASE("memory transport: a truncated body is NetErrc::truncated, after the bytes a sink was given",
          "[transport][memory][faults]") {
  MemoryTransport t;
  t.origin().serve("mem://wheel", "0123456789").truncate("mem://wheel", 4);
  auto plain = t.get(mem_req("mem://wheel"));
  REQUIRE_FALSE(plain);
  CHECK(net::is(plain.error(), NetErrc::truncated));
  CHECK(net::is_transient(plain.error()));
  CHECK(plain.error().message == "mem://wheel: the body ended after 4 bytes");

  test::MemorySink sink;
  Request streamed = mem_req("mem://wheel");
  streamed.sink = &sink;
  auto cut = t.get(streamed);
  REQUIRE_FALSE(cut);
  CHECK(net::is(cut.error(), NetErrc::truncated));
  CHECK(sink.body == "0123");
  CHECK(sink.begins == std::vector<int>{200});
}

TEST_CASE("memory transport: a sink receives a 2xx body, the answer's body stays empty", "[transport][memory]") {
  MemoryTransport t;
  t.origin().serve("mem://f", "file bytes").serve("mem://nm", MemoryReply{"", "text/html", {}, 304});
  test::MemorySink sink;
  Request r = mem_req("mem://f");
  r.sink = &sink;
  auto got = t.get(r);
  REQUIRE(got);
  CHECK(got->body.empty());
  CHECK(sink.body == "file bytes");
  CHECK(sink.prepares == 1);
  CHECK(sink.begins == std::vector<int>{200});

  SECTION("a sink's refusal ends the request with its error") {
    test::MemorySink refusing;
    refusing.fail_write = Error(Errc::io_error, "disk full");
    Request w = mem_req("mem://f");
    w.sink = &refusing;
    auto failed = t.get(w);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message == "disk full");
  }
  SECTION("a 304 is not streamed") {
    test::MemorySink untouched;
    Request c = mem_req("mem://nm");
    c.sink = &untouched;
    auto nm = t.get(c);
    REQUIRE(nm);
    CHECK(nm->status == 304);
    CHECK(untouched.begins.empty());
  }
}

TEST_CASE("memory transport: the handler answers first, nullopt leaves the request to the table", "[transport][memory]") {
  MemoryTransport t;
  t.origin().serve("mem://a", "from the table").serve("mem://b", "table b");
  t.origin().handle([](const Request& r) -> std::optional<Expected<Response>> {
    if (r.url != "mem://a") return std::nullopt;
    return Response{r.url, "text/plain", "from the handler", 200, {}, false};
  });
  CHECK(t.get(mem_req("mem://a"))->body == "from the handler");
  CHECK(t.get(mem_req("mem://b"))->body == "table b");
  CHECK(t.get(mem_req("mem://c")).error().is(Errc::not_found));
}

TEST_CASE("memory transport: counts and forwards to an inner transport, a batch whole", "[transport][memory]") {
  MemoryTransport inner;
  inner.origin().serve("mem://a", "a").serve("mem://b", "b");
  MemoryTransport counting(static_cast<net::Transport&>(inner));  // not a copy: a wrapper
  CHECK(counting.get(mem_req("mem://a"))->body == "a");
  std::vector<std::size_t> told;
  auto out = counting.get_many(mem_reqs({"mem://a", "mem://b", "mem://c"}),
                               [&](std::size_t i, const Expected<Response>&) { told.push_back(i); });
  REQUIRE(out.size() == 3);
  CHECK(out[1]->body == "b");
  CHECK(out[2].error().is(Errc::not_found));
  CHECK(told == std::vector<std::size_t>{0, 1, 2});
  CHECK(counting.origin().calls() == 2);
  CHECK(counting.origin().requests().size() == 4);
  CHECK(inner.origin().batches() == std::vector<std::vector<std::string>>{{"mem://a", "mem://b", "mem://c"}});

  SECTION("a batch holding a URL the outer origin answers is answered request by request") {
    counting.origin().serve("mem://b", "outer b");
    auto mixed = counting.get_many(mem_reqs({"mem://a", "mem://b"}));
    CHECK(mixed[0]->body == "a");
    CHECK(mixed[1]->body == "outer b");
    CHECK(inner.origin().batches().size() == 1);  // no second batch: what it cannot answer goes on alone
    CHECK(inner.origin().calls() == 3);
  }
  SECTION("an owned inner transport") {
    auto owned = std::make_shared<MemoryTransport>();
    owned->origin().serve("mem://o", "owned");
    MemoryTransport wrapper;
    wrapper.origin().forward_to(owned);
    owned.reset();  // the origin keeps it
    CHECK(wrapper.get(mem_req("mem://o"))->body == "owned");
  }
}

TEST_CASE("memory transport: records requests, batches and counts", "[transport][memory]") {
  MemoryTransport t;
  t.origin().serve("mem://p/1", "1").serve("mem://p/2", "2").serve("mem://q", "q");
  Request with_header = mem_req("mem://q");
  with_header.headers = {{"If-None-Match", "\"v\""}};
  (void)t.get(with_header);
  (void)t.get_many(mem_reqs({"mem://p/1", "mem://p/2", "mem://p/1"}));
  (void)t.get_many(mem_reqs({"mem://q"}));
  const auto& seen = t.origin().requests();
  REQUIRE(seen.size() == 5);
  CHECK(net::find_header(seen[0].headers, "if-none-match") == "\"v\"");
  CHECK(t.origin().count("mem://p/1") == 2);
  CHECK(t.origin().count("mem://p") == 0);
  CHECK(t.origin().count_prefix("mem://p") == 3);
  CHECK(t.origin().batch_sizes() == std::vector<std::size_t>{3, 1});
  CHECK(t.origin().largest_batch() == 3);
  CHECK(t.origin().calls() == 3);
  CHECK(t.stats().requests == 5);
  t.origin().forget();
  CHECK(t.origin().requests().empty());
  CHECK(t.origin().batches().empty());
  CHECK(t.stats().requests == 0);
}

TEST_CASE("memory transport: a hooked batch tells every answer before it returns, in the order asked",
          "[transport][memory]") {
  const auto order = GENERATE(test::HookOrder::in_order, test::HookOrder::reversed);
  MemoryTransport t;
  t.origin().serve("mem://0", "0").serve("mem://1", "1").serve("mem://2", "2").hook_order(order);
  std::vector<std::size_t> told;
  std::vector<bool> telling;
  auto out = t.get_many(mem_reqs({"mem://0", "mem://1", "mem://2"}), [&](std::size_t i, const Expected<Response>& a) {
    told.push_back(i);
    telling.push_back(t.origin().telling());
    CHECK(a->body == std::to_string(i));
    if (i == 1) throw std::runtime_error("a hook that throws loses only its own work");
  });
  CHECK(told == (order == test::HookOrder::in_order ? std::vector<std::size_t>{0, 1, 2} : std::vector<std::size_t>{2, 1, 0}));
  CHECK(telling == std::vector<bool>{true, true, true});
  CHECK_FALSE(t.origin().telling());
  REQUIRE(out.size() == 3);
  CHECK(out[1]->body == "1");  // the answer stands
}

TEST_CASE("memory transport: transports over one origin share its table and records", "[transport][memory]") {
  auto origin = std::make_shared<MemoryOrigin>();
  origin->serve("mem://s", "shared");
  {
    auto first = MemoryOrigin::transport_over(origin);
    CHECK(first->get(mem_req("mem://s"))->body == "shared");
  }
  MemoryTransport second(origin);
  CHECK(second.get(mem_req("mem://s"))->body == "shared");
  CHECK(origin->requests().size() == 2);  // the counters outlive the first transport
  CHECK(&second.origin() == origin.get());
  CHECK(second.shared_origin() == origin);
  MemoryTransport copy(std::make_shared<MemoryOrigin>(*origin));  // a copy: the same table, its own records after
  copy.origin().drop("mem://s");
  CHECK(copy.get(mem_req("mem://s")).error().is(Errc::not_found));
  CHECK(second.get(mem_req("mem://s")));
}
