// The http transport over plain http on loopback: keep-alive, request and response headers,
// concurrency limits, retries and the docs/network-faults.md rows N01, N03, N06-N12, H02 and H04 as they
// apply to pages and JSON. (N02, N04 and N05 are about wheel downloads to disk: out of scope.)
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <ctime>
#include <thread>

#include "support/test_support.hpp"
#include "test_http_support.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/util/text.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;

TEST_CASE("http: keep-alive reuse, request headers, lower-cased response headers", "[transports][http]") {
  TestServer server(serve([](const HttpRequest& r) {
    return http_response(200, "page " + r.target, {{"Content-Type", "text/html; charset=UTF-8"}, {"X-Custom", "Yes"}});
  }));
  auto t = make();
  auto a = t->get(req(server.url("/a/"), 1000, {{"Accept", "text/html"}}));
  auto b = t->get(req(server.url("/b/")));
  WHEELFIT_REQUIRE_OK(a);
  WHEELFIT_REQUIRE_OK(b);
  CHECK(a->status == 200);
  CHECK(a->body == "page /a/");
  CHECK(b->body == "page /b/");
  CHECK(a->url == server.url("/a/"));
  CHECK(a->content_type == "text/html");
  bool lower_custom = false;
  for (const auto& [k, v] : a->headers) {
    CHECK(k == util::ascii_lower(k));
    if (k == "x-custom") lower_custom = v == "Yes";
  }
  CHECK(lower_custom);

  CHECK(server.connections() == 1);
  const auto st = t->stats();
  CHECK(st.connections == 1);
  CHECK(st.requests == 2);
  CHECK(st.retries == 0);
  CHECK(st.bytes == a->body.size() + b->body.size());

  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].method == "GET");
  CHECK(reqs[0].target == "/a/");
  CHECK(reqs[0].header("host") == loopback(server.port()));
  CHECK(reqs[0].header("user-agent").value_or("").rfind("wheelfit/", 0) == 0);
  CHECK(reqs[0].header("accept-encoding") == "identity");
  CHECK(reqs[0].header("accept") == "text/html");
  CHECK(reqs[1].header("accept-encoding") == "identity");
  CHECK(reqs[1].connection == 0);
}

TEST_CASE("http: H02 the content type is reported as served, whatever it is", "[transports][http]") {
  // The index reader decides what a wrong type or a proxy's "blocked" page means; the transport
  // reports status, type and body faithfully.
  TestServer server(serve([](const HttpRequest& r) {
    if (r.target == "/blocked/") return http_response(200, "<html>Access blocked by policy</html>", {{"Content-Type", "text/html"}});
    return http_response(200, "{}", {{"Content-Type", "Text/Plain ; charset=ascii"}});
  }));
  auto t = make();
  auto plain = t->get(req(server.url("/json/")));
  WHEELFIT_REQUIRE_OK(plain);
  CHECK(plain->content_type == "text/plain");
  auto blocked = t->get(req(server.url("/blocked/")));
  WHEELFIT_REQUIRE_OK(blocked);
  CHECK(blocked->status == 200);
  CHECK(blocked->content_type == "text/html");
}

TEST_CASE("http: a conditional request answered 304 has status 304 and no body", "[transports][http]") {
  TestServer server(serve([](const HttpRequest& r) {
    if (r.header("if-none-match") == "\"v1\"") return std::string("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n");
    return http_response(200, "fresh", {{"ETag", "\"v1\""}});
  }));
  auto t = make();
  auto full = t->get(req(server.url("/p/")));
  WHEELFIT_REQUIRE_OK(full);
  CHECK(full->status == 200);
  auto cond = t->get(req(server.url("/p/"), 1000, {{"If-None-Match", "\"v1\""}}));
  WHEELFIT_REQUIRE_OK(cond);
  CHECK(cond->status == 304);
  CHECK(cond->body.empty());
  CHECK(server.connections() == 1);  // the 304 left the connection reusable
}

TEST_CASE("http: get_many answers in order within the jobs and per-host limits", "[transports][http]") {
  std::atomic<int> in_flight{0}, max_in_flight{0};
  auto handler = [&](const HttpRequest& r) {
    const int now = ++in_flight;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(20ms);
    --in_flight;
    return http_response(200, r.target);
  };

  SECTION("per_host bounds the connections to one origin, and they are reused") {
    TestServer server(serve(handler));
    auto o = fast_options();
    o.jobs = 6;
    o.per_host = 2;
    auto t = make(o);
    std::vector<net::Request> reqs;
    for (int i = 0; i < 12; ++i) reqs.push_back(req(server.url("/p" + std::to_string(i))));
    auto out = t->get_many(reqs);
    REQUIRE(out.size() == 12);
    for (int i = 0; i < 12; ++i) {
      WHEELFIT_REQUIRE_OK(out[static_cast<std::size_t>(i)]);
      CHECK(out[static_cast<std::size_t>(i)]->body == "/p" + std::to_string(i));
    }
    CHECK(server.connections() <= 2);
    CHECK(max_in_flight.load() <= 2);
    CHECK(max_in_flight.load() >= 1);
    CHECK(t->stats().requests == 12);
  }
  SECTION("jobs bounds the requests in flight across origins") {
    TestServer s1(serve(handler)), s2(serve(handler));
    auto o = fast_options();
    o.jobs = 3;
    o.per_host = 8;
    auto t = make(o);
    std::vector<net::Request> reqs;
    for (int i = 0; i < 8; ++i) {
      reqs.push_back(req(s1.url("/a" + std::to_string(i))));
      reqs.push_back(req(s2.url("/b" + std::to_string(i))));
    }
    auto out = t->get_many(reqs);
    REQUIRE(out.size() == 16);
    for (std::size_t i = 0; i < out.size(); ++i) {
      WHEELFIT_REQUIRE_OK(out[i]);
      CHECK(out[i]->url == reqs[i].url);
    }
    CHECK(max_in_flight.load() <= 3);
    CHECK(max_in_flight.load() >= 2);  // really concurrent
    CHECK(s1.connections() <= 3);
    CHECK(s2.connections() <= 3);
  }
}

TEST_CASE("http: N01 resets before any byte are retried and logged", "[transports][http]") {
  TestServer server(serve([](const HttpRequest& r) {
    if (r.connection < 2) return std::string();  // RST
    return http_response(200, "ok");
  }));
  LogCapture logs;
  auto t = make();
  check_answer(t->get(req(server.url("/cumm/"))), *t, "ok", 2);
  CHECK(t->stats().reconnects == 0);
  CHECK(server.connections() == 3);
  const auto lines = logs.find(log::Level::info, server.url("/cumm/"));
  CHECK(lines.size() == 2);
  for (const auto& l : lines) CHECK(contains(l, "retry"));
}

TEST_CASE("http: N03 a truncated body is retried on a new connection", "[transports][http]") {
  struct Row {
    const char* name;
    std::string bad;
  };
  const Row row = GENERATE(Row{"Content-Length 1000, 600 sent, FIN",
                               "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + std::string(600, 'x')},
                           Row{"chunked without the terminating chunk",
                               "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"});
  INFO(row.name);
  const int bad_connections = GENERATE(1, 100);
  auto good = serve([](const HttpRequest&) { return http_response(200, "whole"); });
  TestServer server([&, good](Conn& c) {
    if (c.index() < bad_connections) {
      if (c.read_request()) c.write(row.bad);
      c.close();
      return;
    }
    good(c);
  });
  auto t = make(fast_options(2));
  auto r = t->get(req(server.url("/p/")));
  if (bad_connections == 1) {
    check_answer(r, *t, "whole", 1);
    CHECK(server.connections() == 2);  // the cut connection was not reused
  } else {
    check_failure(r, NetErrc::truncated, {loopback(server.port())});
    CHECK(server.connections() == 3);
    CHECK(t->stats().retries == 2);
  }
}

TEST_CASE("http: N06 a server that stops answering hits the idle timeout per attempt", "[transports][http]") {
  const bool mid_body = GENERATE(false, true);
  INFO((mid_body ? "stalls mid-body" : "never answers"));
  TestServer server([mid_body](Conn& c) {
    if (!c.read_request()) return;
    if (mid_body) c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
    (void)c.read_some(10s);  // until the client gives up and closes
  });
  auto o = fast_options(2);
  o.idle_timeout = 200ms;
  auto t = make(o);
  Stopwatch sw;
  check_failure(t->get(req(server.url("/slow/"))), NetErrc::idle_timeout, {loopback(server.port())});
  CHECK(server.requests().size() == 3);
  CHECK(sw.elapsed() < 5s);  // 3 x 200 ms, generous margin
}

TEST_CASE("http: N07 a trickling body is stopped by the overall deadline", "[transports][http]") {
  std::atomic<bool> stop{false};
  TestServer server([&](Conn& c) {
    if (!c.read_request()) return;
    if (!c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")) return;
    for (int i = 0; i < 1000 && !stop; ++i) {
      if (!c.write("x")) return;
      std::this_thread::sleep_for(50ms);
    }
  });
  auto o = fast_options();
  o.idle_timeout = 1s;
  o.deadline = 600ms;
  auto t = make(o);
  Stopwatch sw;
  auto r = t->get(req(server.url("/trickle/")));
  stop = true;
  check_failure(r, NetErrc::deadline, {"deadline", loopback(server.port())});
  CHECK(t->stats().retries == 0);
  CHECK(sw.elapsed() < 5s);
}

namespace {
/// Opens connections to 127.0.0.1:port until one does not complete within 200 ms (the accept
/// queue is full); returns the sockets, or an empty vector when the kernel kept completing them.
std::vector<int> fill_backlog(std::uint16_t port) {
  std::vector<int> fds;
  for (int i = 0; i < 256; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    fds.push_back(fd);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) continue;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 200) == 0) return fds;  // this SYN was dropped: the queue is full
  }
  for (int fd : fds) ::close(fd);
  return {};
}
}  // namespace

TEST_CASE("http: N08 a listener that never accepts hits the connect timeout", "[transports][http]") {
  TestServer::Options so;
  so.accept = false;
  so.backlog = 1;
  TestServer server([](Conn&) {}, so);
  const auto fds = fill_backlog(server.port());
  if (fds.empty()) {
    WARN("SKIPPED: the kernel kept completing connections to a full accept queue, so no connect timeout can be provoked");
    return;
  }
  auto o = fast_options(1);
  o.connect_timeout = 300ms;
  auto t = make(o);
  Stopwatch sw;
  auto r = t->get(req(server.url("/x/")));
  for (int fd : fds) ::close(fd);
  check_failure(r, NetErrc::connect_timeout, {loopback(server.port())});
  CHECK(t->stats().retries == 1);
  CHECK(sw.elapsed() < 5s);
}

TEST_CASE("http: N09 nothing listening is retried, then fails with 'connection refused to host:port'", "[transports][http]") {
  // docs/network-faults.md N09: retried as any transient failure (--retries), then the error.
  const auto port = unused_port();
  const int retries = GENERATE(0, 2);
  CAPTURE(retries);
  auto t = make(fast_options(retries));
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/cumm/";
  check_failure(t->get(req(url)), NetErrc::connect_failed, {"connection refused to " + loopback(port) + " (" + url + ")"});
  CHECK(t->stats().connections == 0);
  CHECK(t->stats().retries == static_cast<std::uint64_t>(retries));
}

TEST_CASE("http: N10 an idle keep-alive socket reset by the server is reconnected, not retried",
          "[transports][http]") {
  auto good = serve([](const HttpRequest& r) { return http_response(200, "again " + r.target); });
  TestServer server([good](Conn& c) {
    if (c.index() == 0) {
      if (auto r = c.read_request()) c.write(http_response(200, "first"));
      std::this_thread::sleep_for(30ms);
      c.reset();
      return;
    }
    good(c);
  });
  LogCapture logs;
  auto t = make();
  auto a = t->get(req(server.url("/1")));
  WHEELFIT_REQUIRE_OK(a);
  std::this_thread::sleep_for(200ms);  // the RST has arrived
  auto b = t->get(req(server.url("/2")));
  WHEELFIT_REQUIRE_OK(b);
  CHECK(b->body == "again /2");
  const auto st = t->stats();
  CHECK(st.reconnects == 1);
  CHECK(st.retries == 0);
  CHECK(st.connections == 2);
  CHECK(server.connections() == 2);
  CHECK(logs.find(log::Level::info, "retry").empty());
}

TEST_CASE("http: N11 5xx are retried; Retry-After is obeyed, or refused past the cap", "[transports][http]") {
  SECTION("503, 502, 500, then 200") {
    std::atomic<int> n{0};
    TestServer server(serve([&](const HttpRequest&) {
      switch (n++) {
        case 0: return http_response(503, "busy");
        case 1: return http_response(502, "bad gateway");
        case 2: return http_response(500, "oops");
        default: return http_response(200, "finally");
      }
    }));
    LogCapture logs;
    auto t = make();
    check_answer(t->get(req(server.url("/p/"))), *t, "finally", 3);
    CHECK(server.requests().size() == 4);
    CHECK(server.connections() == 1);  // the error answers kept the connection
    CHECK(logs.find(log::Level::info, "HTTP 503").size() == 1);
    CHECK(logs.find(log::Level::info, "HTTP 500").size() == 1);
  }
  SECTION("429 / 503 with Retry-After in seconds and as an HTTP date") {
    const bool as_date = GENERATE(false, true);
    const int status = as_date ? 503 : 429;
    std::atomic<int> n{0};
    TestServer server(serve([&](const HttpRequest&) {
      if (n++ == 0) {
        std::string value = "1";
        if (as_date) {
          const std::time_t when = std::time(nullptr) + 2;
          std::tm tm{};
          gmtime_r(&when, &tm);
          char buf[64];
          std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
          value = buf;
        }
        return http_response(status, "wait", {{"Retry-After", value}});
      }
      return http_response(200, "done");
    }));
    auto t = make();
    Stopwatch sw;
    auto r = t->get(req(server.url("/p/")));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == "done");
    CHECK(t->stats().retries == 1);
    CHECK(sw.elapsed() >= 900ms);  // waited as asked (at least a second, minus clock rounding)
  }
  SECTION("Retry-After 3600 gives up at once and says why") {
    const int status = GENERATE(503, 429);
    TestServer server(serve([&](const HttpRequest&) { return http_response(status, "later", {{"Retry-After", "3600"}}); }));
    auto t = make();
    Stopwatch sw;
    auto r = t->get(req(server.url("/p/")));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(net::is(r.error(), status == 429 ? NetErrc::rate_limited : NetErrc::http_status));
    CHECK(contains(r.error().message, "3600"));
    CHECK(contains(r.error().message, "HTTP " + std::to_string(status)));
    CHECK(server.requests().size() == 1);
    CHECK(t->stats().retries == 0);
    CHECK(sw.elapsed() < 3s);
  }
}

TEST_CASE("http: N12 404/410 are not_found, 403/401 fail at once", "[transports][http]") {
  const int status = GENERATE(404, 410, 403, 401);
  TestServer server(serve([&](const HttpRequest&) { return http_response(status, "no"); }));
  auto t = make();
  auto r = t->get(req(server.url("/flash-attn/")));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  if (status == 404 || status == 410) {
    CHECK(r.error().is(Errc::not_found));
  } else {
    CHECK(net::is(r.error(), NetErrc::http_status));
    CHECK_FALSE(net::is_transient(r.error(), status));
  }
  CHECK(contains(r.error().message, "HTTP " + std::to_string(status)));
  CHECK(contains(r.error().message, loopback(server.port())));
  CHECK(server.requests().size() == 1);
  CHECK(t->stats().retries == 0);
}

TEST_CASE("http: H04 oversized headers and bodies are rejected early", "[transports][http]") {
  struct Row {
    const char* name;
    std::string head;  // written after the request is read; the server then waits
    std::size_t max_body;
    std::size_t max_header = 64u << 10;
  };
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  std::string big_header;
  for (int i = 0; i < 10; ++i) big_header += "X-Big" + std::to_string(i) + ": " + std::string(1000, 'b') + "\r\n";
  const Row row = GENERATE_COPY(
      Row{"a 9 KiB header line", "HTTP/1.1 200 OK\r\nX-Long: " + std::string(9 << 10, 'a') + "\r\nContent-Length: 2\r\n\r\nok", 1 << 20},
      Row{"2,000 headers", "HTTP/1.1 200 OK\r\n" + many + "Content-Length: 2\r\n\r\nok", 1 << 20},
      Row{"Content-Length 2^65", "HTTP/1.1 200 OK\r\nContent-Length: 36893488147419103232\r\n\r\n", 1 << 20},
      Row{"Content-Length 100 MB over a 1 MiB limit", "HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n", 1 << 20},
      Row{"a chunked body over the limit",
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n" + std::string(5000, 'c') + "\r\n", 1000},
      Row{"a whole header over max_header_bytes", "HTTP/1.1 200 OK\r\n" + big_header + "Content-Length: 2\r\n\r\nok", 1 << 20, 8000});
  INFO(row.name);
  TestServer server([&](Conn& c) {
    if (!c.read_request()) return;
    c.write(row.head);
    (void)c.read_some(10s);
  });
  auto o = fast_options();
  o.max_header_bytes = row.max_header;
  o.idle_timeout = 3s;
  auto t = make(o);
  Stopwatch sw;
  auto r = t->get(req(server.url("/big/"), row.max_body));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(r.error().is(Errc::too_large));
  CHECK(contains(r.error().message, loopback(server.port())));
  CHECK(server.requests().size() == 1);
  CHECK(sw.elapsed() < 2500ms);  // before the idle timeout: nothing waited for the body
}

TEST_CASE("http: bad input is an error value, never an exception", "[transports][http]") {
  TestServer server(serve([](const HttpRequest&) { return http_response(200, "x"); }));
  auto t = make();
  SECTION("a malformed URL") {
    auto r = t->get(req("http://exa mple.test/"));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().is(Errc::invalid_input));
  }
  SECTION("a header with a line break") {
    auto r = t->get(req(server.url("/"), 1000, {{"X-Evil", "a\r\nInjected: 1"}}));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK(server.requests().empty());
  }
  SECTION("a malformed status line is a protocol error") {
    TestServer bad([](Conn& c) {
      if (c.read_request()) c.write("HTTX/9 what\r\n\r\n");
    });
    auto r = t->get(req(bad.url("/")));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(net::is(r.error(), NetErrc::protocol));
  }
  SECTION("get_many with nothing to do") { CHECK(t->get_many({}).empty()); }
}

TEST_CASE("make_transport dispatches by scheme", "[transports][http]") {
  wheelfit::test::TempDir dir;
  wheelfit::test::write_file(dir / "idx" / "pkg" / "index.html", "local page");
  TestServer server(serve([](const HttpRequest&) { return http_response(200, "remote page"); }));
  auto made = transports::make_transport(fast_options());
  WHEELFIT_REQUIRE_OK(made);
  auto& t = **made;
  auto out = t.get_many({req(transports::to_url((dir / "idx" / "pkg").string(), true)), req(server.url("/pkg/")),
                         req((dir / "idx" / "pkg" / "index.html").string()), req("ftp://example.test/pkg/")});
  REQUIRE(out.size() == 4);
  WHEELFIT_REQUIRE_OK(out[0]);
  CHECK(out[0]->body == "local page");
  WHEELFIT_REQUIRE_OK(out[1]);
  CHECK(out[1]->body == "remote page");
  WHEELFIT_REQUIRE_OK(out[2]);
  CHECK(out[2]->body == "local page");
  REQUIRE_FALSE(out[3]);
  INFO(out[3].error().message);
  CHECK(out[3].error().is(Errc::unsupported));
  CHECK(contains(out[3].error().message, "ftp://example.test/pkg/"));
  CHECK(t.stats().requests == 1);
}

TEST_CASE("http: the answer hook hears each answer while the rest of the batch is still out",
          "[transports][http]") {
  // /slow/ answers only once the hook has heard the other two (or after 5 s): a hook called at the
  // end of the batch would make this take the full 5 s and see /slow/'s late answer.
  std::atomic<int> heard_others{0};
  TestServer server(serve([&](const HttpRequest& r) {
    if (r.target == "/slow/") {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (heard_others < 2 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      return http_response(200, heard_others == 2 ? "after the hook" : "late");
    }
    if (r.target == "/missing/") return http_response(404, "no");
    return http_response(200, "page " + r.target);
  }));
  auto t = make();
  std::vector<std::pair<std::size_t, std::string>> heard;
  const auto out = t->get_many({req(server.url("/slow/")), req(server.url("/fast/")), req(server.url("/missing/"))},
                               [&](std::size_t i, const Expected<net::Response>& a) {
                                 heard.emplace_back(i, a ? a->body : "error: " + a.error().message);
                                 if (i != 0) ++heard_others;
                               });
  REQUIRE(out.size() == 3);
  WHEELFIT_REQUIRE_OK(out[0]);
  CHECK(out[0]->body == "after the hook");
  REQUIRE(heard.size() == 3);  // once each
  CHECK(heard.back().first == 0);  // /slow/ last: it waited for the hook
  std::vector<std::size_t> order;
  for (const auto& [i, body] : heard) order.push_back(i);
  std::sort(order.begin(), order.end());
  CHECK(order == std::vector<std::size_t>{0, 1, 2});
  for (const auto& [i, body] : heard) {
    if (i == 1) CHECK(body == "page /fast/");
    if (i == 2) CHECK_FALSE(out[2]);  // the hook saw the error get_many returns
  }

  SECTION("a hook that throws loses nothing but its own work") {
    const auto again = t->get_many({req(server.url("/a/")), req(server.url("/b/"))},
                                   [](std::size_t, const Expected<net::Response>&) { throw std::runtime_error("hook"); });
    REQUIRE(again.size() == 2);
    WHEELFIT_REQUIRE_OK(again[0]);
    WHEELFIT_REQUIRE_OK(again[1]);
    CHECK(again[1]->body == "page /b/");
  }
}

TEST_CASE("make_transport: the answer hook gets each answer under its own index", "[transports][http]") {
  wheelfit::test::TempDir dir;
  wheelfit::test::write_file(dir / "idx" / "pkg" / "index.html", "local page");
  TestServer server(serve([](const HttpRequest& r) { return http_response(200, "remote " + r.target); }));
  auto made = transports::make_transport(fast_options());
  WHEELFIT_REQUIRE_OK(made);
  std::map<std::size_t, std::string> heard;
  auto out = (*made)->get_many({req(server.url("/one/")), req(transports::to_url((dir / "idx" / "pkg").string(), true)),
                                req("ftp://example.test/pkg/"), req(server.url("/two/"))},
                               [&](std::size_t i, const Expected<net::Response>& a) {
                                 CHECK(heard.count(i) == 0);
                                 heard[i] = a ? a->body : "error";
                               });
  REQUIRE(out.size() == 4);
  CHECK(heard == std::map<std::size_t, std::string>{{0, "remote /one/"}, {1, "local page"}, {2, "error"}, {3, "remote /two/"}});
}
