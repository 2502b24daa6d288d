// Request::sink over http: the body streams to the sink (Response::body empty), prepare() before
// every attempt, a sink's error is final (never retried), no overall deadline, max_body applies; a
// body of known length is read into the room a sink lends, and its cut is told as before.
#include <catch2/catch.hpp>

#include <thread>

#include "support/memory_sink.hpp"
#include "test_http_support.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;
using test::MemorySink;

namespace {
net::Request streamed(std::string url, MemorySink& sink, std::size_t max_body = 64u << 20) {
  auto r = req(std::move(url), max_body);
  r.sink = &sink;
  return r;
}
}  // namespace

TEST_CASE("sink: a 2xx body streams to the sink, not into the response", "[transports][http][sink]") {
  const std::string body(300000, 'w');
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, body, {{"ETag", "\"e\""}}); }));
  auto t = make();
  MemorySink sink;
  auto r = t->get(streamed(server.url("/f.whl"), sink));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body.empty());
  CHECK(r->status == 200);
  CHECK(sink.body == body);
  CHECK(sink.begins == std::vector<int>{200});
  CHECK(sink.prepares == 1);
  CHECK(net::find_header(sink.begin_headers.at(0), "etag") == "\"e\"");
  CHECK(t->stats().bytes == body.size());
}

TEST_CASE("sink: prepare() runs before every attempt and redirect hop", "[transports][http][sink]") {
  int calls = 0;
  TestServer server(serve([&](const HttpRequest& r) {
    if (r.target == "/moved") return http_response(302, "", {{"Location", "/f"}});
    if (++calls == 1) return http_response(503, "busy");
    return http_response(206, "tail", {{"Content-Range", "bytes 6-9/10"}});
  }));
  auto t = make();
  MemorySink sink;
  sink.range = 6;
  auto r = t->get(streamed(server.url("/moved"), sink));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->status == 206);
  CHECK(sink.body == "tail");
  CHECK(sink.prepares == 3);  // the first hop, the 503, its retry
  for (const auto& q : server.requests()) CHECK(q.header("range") == "bytes=6-");
  CHECK(sink.begins == std::vector<int>{206});  // not for the 302 or the 503
}

TEST_CASE("sink: an error from the sink ends the request at once, unretried", "[transports][http][sink]") {
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, std::string(100000, 'x')); }));
  auto t = make();
  MemorySink sink;
  const bool at_begin = GENERATE(true, false);
  CAPTURE(at_begin);
  (at_begin ? sink.fail_begin : sink.fail_write) = Error(Errc::io_error, "disk full");
  auto r = t->get(streamed(server.url("/f"), sink));
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::io_error));
  CHECK(r.error().message == "disk full");
  CHECK(server.requests().size() == 1);
  CHECK(t->stats().retries == 0);
}

TEST_CASE("sink: a streamed body has no overall deadline, only the idle timeout", "[transports][http][sink]") {
  TestServer server([](Conn& c) {
    if (!c.read_request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
    for (int i = 0; i < 10; ++i) {  // 10 bytes over ~400 ms, past the 150 ms deadline
      std::this_thread::sleep_for(40ms);
      if (!c.write("x")) return;
    }
  });
  auto o = fast_options(0);
  o.deadline = 150ms;
  auto t = make(o);
  MemorySink sink;
  auto r = t->get(streamed(server.url("/slow"), sink));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(sink.body == std::string(10, 'x'));
}

TEST_CASE("sink: max_body still limits one attempt", "[transports][http][sink]") {
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, std::string(5000, 'x')); }));
  auto t = make();
  MemorySink sink;
  auto r = t->get(streamed(server.url("/big"), sink, 1000));
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::too_large));
}

namespace {
/// A server whose every answer is a 200 header with Content-Length 1000 and then a trickle: a
/// byte every 50 ms, at most `bytes` of them (so that a test that fails does not hang).
ConnScript sink_trickle(int bytes) {
  return [bytes](Conn& c) {
    if (!c.read_request()) return;
    if (!c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")) return;
    for (int i = 0; i < bytes; ++i) {
      std::this_thread::sleep_for(50ms);
      if (!c.write("x")) return;
    }
  };
}
}  // namespace

TEST_CASE("sink: N07 a body under the low-speed limit is cut as transient and retried", "[transports][http][sink][speed]") {
  TestServer server(sink_trickle(100));  // 20 bytes/s, each byte well within the idle timeout
  auto o = fast_options(1);
  o.speed_limit = 100;  // bytes/s
  o.speed_time = 300ms;
  auto t = make(o);
  MemorySink sink;
  auto r = t->get(streamed(server.url("/slow.whl"), sink));
  check_failure(r, NetErrc::too_slow, {"too slow", "under the floor of 100 bytes/s", loopback(server.port())});
  CHECK(net::is_transient(r.error()));
  CHECK(server.requests().size() == 2);  // cut, retried, cut
  CHECK(t->stats().retries == 1);
  CHECK(sink.prepares == 2);             // each attempt asked the sink for its Range
  CHECK_FALSE(sink.body.empty());        // what arrived before the cut reached the sink
}

TEST_CASE("sink: max_time (--max-time) ends a streamed body, and nothing starts after it", "[transports][http][sink][speed]") {
  TestServer server(sink_trickle(100));
  auto o = fast_options(3);
  o.speed_limit = 0;  // off: only the whole call's bound is left
  o.max_time = transports::MaxTime::from_now(600ms);
  auto t = make(o);
  MemorySink sink;
  check_failure(t->get(streamed(server.url("/slow.whl"), sink)), NetErrc::deadline,
                {"the --max-time of 600 ms passed while reading the body from", loopback(server.port())});
  CHECK(server.requests().size() == 1);  // a deadline is not retried
  const int before = server.connections();
  MemorySink later;
  check_failure(t->get(streamed(server.url("/next.whl"), later)), NetErrc::deadline,
                {"the --max-time of 600 ms ran out before", "/next.whl"});
  CHECK(server.connections() == before);  // not even a connection
  CHECK(later.prepares == 0);
}

namespace {
/// A body of `n` bytes that differ from their neighbours (a misplaced run shows).
std::string counting_body(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 251) & 0xff);
  return s;
}
}  // namespace

TEST_CASE("sink: a body of known length is read into the room the sink lends", "[transports][http][sink]") {
  const std::string body = counting_body(700000);
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, body); }));
  auto t = make();
  SECTION("lent room: the bytes go straight in, in order") {
    MemorySink sink;
    sink.lend = 4096;
    auto r = t->get(streamed(server.url("/f.whl"), sink));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(sink.body == body);
    CHECK(sink.commits > 0);
    CHECK(sink.writes <= 1);  // at most the bytes that came with the header
  }
  SECTION("no room lent: written from the transport's block") {
    MemorySink sink;
    auto r = t->get(streamed(server.url("/f.whl"), sink));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(sink.body == body);
    CHECK(sink.commits == 0);
  }
  SECTION("the connection serves the next request (keep-alive)") {
    MemorySink a, b;
    a.lend = b.lend = 1u << 20;
    WHEELFIT_REQUIRE_OK(t->get(streamed(server.url("/a.whl"), a)));
    WHEELFIT_REQUIRE_OK(t->get(streamed(server.url("/b.whl"), b)));
    CHECK(a.body == body);
    CHECK(b.body == body);
    CHECK(t->stats().connections == 1);
  }
  CHECK(t->stats().bytes >= body.size());
}

TEST_CASE("sink: N02 a body of known length cut mid-way is truncated after what arrived", "[transports][http][sink]") {
  const std::string body = counting_body(200000);
  TestServer server([&](Conn& c) {
    if (!c.read_request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 50000));
  });
  auto t = make(fast_options(0));
  MemorySink sink;
  sink.lend = 8192;
  auto r = t->get(streamed(server.url("/cut.whl"), sink));
  check_failure(r, NetErrc::truncated, {"was cut short after 50000 body bytes", loopback(server.port())});
  CHECK(sink.body == body.substr(0, 50000));  // every byte before the cut reached the sink
  CHECK(t->stats().bytes == 50000);
}

TEST_CASE("sink: an error from commit() ends the request at once, unretried", "[transports][http][sink]") {
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, counting_body(300000)); }));
  auto t = make(fast_options(3));
  MemorySink sink;
  sink.lend = 1024;
  sink.fail_write = Error(Errc::io_error, "disk full");
  auto r = t->get(streamed(server.url("/f.whl"), sink));
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "disk full");
  CHECK(server.requests().size() == 1);
}
