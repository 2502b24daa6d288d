// The http transport and gzip-compressed bodies (index pages: Request::compressed): what it asks
// for, what it decodes, the limits a decoded body obeys, and the malformed and unsupported cases.
// Bodies are compressed here with zlib itself (gzip wrapper: deflateInit2 with 16 + MAX_WBITS).
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <zlib.h>

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/wheel_builder.hpp"
#include "test_http_support.hpp"
#include "wheelfit/util/text.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;

namespace {

/// One gzip member holding `data`.
std::string gzip(std::string_view data, int level = Z_DEFAULT_COMPRESSION) {
  return wheelfit::test::gzip_compress(data, level);
}

/// Something index-like and compressible, with every byte value in it (exact round trip).
std::string page(std::size_t links) {
  std::string s = "<!DOCTYPE html><html><body>\n";
  for (std::size_t i = 0; i < links; ++i) {
    s += "<a href=\"../../files/pkg-1.0." + std::to_string(i) + "-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=" +
         std::string(64, static_cast<char>('a' + i % 6)) + "\">pkg-1.0." + std::to_string(i) + "</a><br/>\n";
  }
  for (int c = 0; c < 256; ++c) s += static_cast<char>(c);
  return s + "</body></html>\n";
}

net::Request compressed_req(std::string url, std::size_t max_body = 64u << 20, net::Headers headers = {}) {
  auto r = req(std::move(url), max_body, std::move(headers));
  r.compressed = true;
  return r;
}

bool has_header(const net::Headers& h, std::string_view name) { return net::find_header(h, name).has_value(); }

long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST_CASE("http gzip: Accept-Encoding: gzip only for compressed requests", "[transports][http][gzip]") {
  TestServer server(serve([](const HttpRequest&) { return http_response(200, "plain"); }));
  auto t = make();
  const auto a = t->get(req(server.url("/file.whl")));
  const auto b = t->get(compressed_req(server.url("/page/")));
  // A caller's own Accept-Encoding never replaces the transport's.
  const auto c = t->get(req(server.url("/file2.whl"), 1000, {{"Accept-Encoding", "gzip, br"}}));
  const auto d = t->get(compressed_req(server.url("/page2/"), 1000, {{"accept-encoding", "br"}}));
  WHEELFIT_REQUIRE_OK(a);
  WHEELFIT_REQUIRE_OK(b);
  WHEELFIT_REQUIRE_OK(c);
  WHEELFIT_REQUIRE_OK(d);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 4);
  CHECK(reqs[0].header("accept-encoding") == "identity");
  CHECK(reqs[1].header("accept-encoding") == "gzip");
  CHECK(reqs[2].header("accept-encoding") == "identity");
  CHECK(reqs[3].header("accept-encoding") == "gzip");
  for (const auto& r : reqs) {
    int n = 0;
    for (const auto& h : r.headers) n += util::ascii_lower(h.first) == "accept-encoding";
    CHECK(n == 1);
  }
}

TEST_CASE("http gzip: a gzip body is decoded to the exact bytes", "[transports][http][gzip]") {
  const std::string body = page(2000);
  const std::string gz = gzip(body);
  REQUIRE(gz.size() * 5 < body.size());
  const std::string encoding = GENERATE(std::string("gzip"), std::string("x-gzip"), std::string("GZip"),
                                        std::string("identity, gzip"));
  INFO(encoding);
  TestServer server(serve([&](const HttpRequest&) {
    return http_response(200, gz, {{"Content-Type", "text/html"}, {"Content-Encoding", encoding}, {"ETag", "\"e1\""}});
  }));
  auto t = make();
  auto r = t->get(compressed_req(server.url("/pkg/"), body.size()));  // the limit is exactly the decoded size
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->status == 200);
  CHECK(r->body.size() == body.size());
  CHECK(r->body == body);
  CHECK(r->content_type == "text/html");
  // The headers describe the decoded body: no Content-Encoding, no wire Content-Length.
  CHECK_FALSE(has_header(r->headers, "content-encoding"));
  CHECK_FALSE(has_header(r->headers, "content-length"));
  CHECK(net::find_header(r->headers, "etag") == "\"e1\"");
  // Stats::bytes counts the bytes on the wire.
  CHECK(t->stats().bytes == gz.size());
  // The connection stays usable.
  auto again = t->get(compressed_req(server.url("/pkg/")));
  WHEELFIT_REQUIRE_OK(again);
  CHECK(again->body == body);
  CHECK(server.connections() == 1);
}

TEST_CASE("http gzip: concatenated gzip members are one body", "[transports][http][gzip]") {
  const std::string gz = gzip("first half, ") + gzip("second half");
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, gz, {{"Content-Encoding", "gzip"}}); }));
  auto t = make();
  auto r = t->get(compressed_req(server.url("/p/")));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body == "first half, second half");
}

TEST_CASE("http gzip: a gzip bomb stops at max_body, memory bounded", "[transports][http][gzip]") {
  // 1 GiB of zeros: 1,024 members of 1 MiB each (~1 MiB on the wire), against a 4 MiB limit.
  const std::string member = gzip(std::string(1u << 20, '\0'), 9);
  std::string bomb;
  bomb.reserve(member.size() * 1024);
  for (int i = 0; i < 1024; ++i) bomb += member;
  const std::size_t limit = 4u << 20;
  REQUIRE(bomb.size() < limit);  // the compressed size alone passes
  const bool chunked = GENERATE(false, true);
  INFO((chunked ? "chunked" : "Content-Length"));
  const std::string response =
      chunked ? [&] {
        std::string s = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n";
        for (std::size_t i = 0; i < bomb.size(); i += 8192) {
          const std::size_t n = std::min<std::size_t>(8192, bomb.size() - i);
          char head[32];
          std::snprintf(head, sizeof head, "%zx\r\n", n);
          s += head;
          s.append(bomb, i, n);
          s += "\r\n";
        }
        return s + "0\r\n\r\n";
      }()
              : http_response(200, bomb, {{"Content-Encoding", "gzip"}});
  TestServer server(serve([&](const HttpRequest&) { return response; }));
  auto t = make();
  const long rss_before = max_rss_kib();
  auto r = t->get(compressed_req(server.url("/bomb/"), limit));
  const long rss_after = max_rss_kib();
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(r.error().is(Errc::too_large));
  CHECK(contains(r.error().message, loopback(server.port())));
  CHECK(contains(r.error().message, std::to_string(limit)));
  CHECK(server.requests().size() == 1);  // never retried
  // Decoding stops at the limit: far less than the 1 GiB the bomb expands to.
  CHECK(rss_after - rss_before < 256L * 1024);
  CHECK(t->stats().bytes < bomb.size());  // it stopped reading early
}

TEST_CASE("http gzip: a corrupt or truncated gzip body is a protocol error, not retried", "[transports][http][gzip]") {
  const std::string body = page(500);
  const std::string gz = gzip(body);
  struct Row {
    const char* name;
    std::string bytes;
  };
  std::string flipped = gz;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x55);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] = static_cast<char>(bad_crc[bad_crc.size() - 6] ^ 0x01);  // CRC32 trailer
  const Row row = GENERATE_COPY(Row{"not gzip at all", body}, Row{"a flipped byte", flipped}, Row{"a wrong CRC", bad_crc},
                                Row{"truncated: the last 20 bytes missing", gz.substr(0, gz.size() - 20)},
                                Row{"truncated: only the gzip header", gz.substr(0, 10)},
                                Row{"trailing garbage after the stream", gz + "garbage!"});
  INFO(row.name);
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, row.bytes, {{"Content-Encoding", "gzip"}}); }));
  auto t = make();
  auto r = t->get(compressed_req(server.url("/pkg/")));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), NetErrc::protocol));
  CHECK(contains(r.error().message, "gzip body from " + loopback(server.port())));
  CHECK(contains(r.error().message, server.url("/pkg/")));
  CHECK_FALSE(net::is_transient(r.error()));
  CHECK(server.requests().size() == 1);
  CHECK(t->stats().retries == 0);
}

TEST_CASE("http gzip: an unsupported Content-Encoding is a protocol error", "[transports][http][gzip]") {
  const std::string encoding = GENERATE(std::string("br"), std::string("deflate"), std::string("compress"),
                                        std::string("zstd"), std::string("gzip, gzip"), std::string("gzip, br"));
  const bool compressed = GENERATE(true, false);
  INFO(encoding << (compressed ? " (compressed request)" : " (identity request)"));
  const std::string gz = gzip("payload");
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, gz, {{"Content-Encoding", encoding}}); }));
  auto t = make();
  auto r = t->get(compressed ? compressed_req(server.url("/p/")) : req(server.url("/p/")));
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), NetErrc::protocol));
  CHECK(contains(r.error().message, "unsupported Content-Encoding"));
  CHECK(contains(r.error().message, loopback(server.port())));
  CHECK(server.requests().size() == 1);
}

TEST_CASE("http gzip: chunked transfer of a gzip body", "[transports][http][gzip]") {
  const std::string body = page(3000);
  const std::string gz = gzip(body);
  const std::size_t chunk = GENERATE(1u, 7u, 1000u, 1u << 16);
  INFO("chunk " << chunk);
  std::string wire = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t i = 0; i < gz.size(); i += chunk) {
    const std::size_t n = std::min(chunk, gz.size() - i);
    char head[32];
    std::snprintf(head, sizeof head, "%zx\r\n", n);
    wire += head;
    wire.append(gz, i, n);
    wire += "\r\n";
  }
  wire += "0\r\n\r\n";
  TestServer server(serve([&](const HttpRequest&) { return wire; }));
  auto t = make();
  auto r = t->get(compressed_req(server.url("/pkg/")));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body == body);
  CHECK_FALSE(has_header(r->headers, "content-encoding"));
  CHECK(t->stats().bytes == gz.size());
  // And a second request on the same connection still works.
  const auto again = t->get(compressed_req(server.url("/pkg/")));
  WHEELFIT_REQUIRE_OK(again);
  CHECK(server.connections() == 1);
}

TEST_CASE("http gzip: the compressed size is capped by max_body too", "[transports][http][gzip]") {
  const std::string gz = gzip(page(200), Z_NO_COMPRESSION);
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, gz, {{"Content-Encoding", "gzip"}}); }));
  auto t = make();
  auto r = t->get(compressed_req(server.url("/p/"), gz.size() - 1));
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::too_large));
}

TEST_CASE("http gzip: an identity answer to a compressed request keeps the plain body", "[transports][http][gzip]") {
  const std::string body = page(100);
  const bool say_identity = GENERATE(false, true);
  TestServer server(serve([&](const HttpRequest&) {
    testing::TestHeaders h{{"Content-Type", "text/html"}};
    if (say_identity) h.emplace_back("Content-Encoding", "identity");
    return http_response(200, body, h);
  }));
  auto t = make();
  auto r = t->get(compressed_req(server.url("/pkg/")));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body == body);
  CHECK(t->stats().bytes == body.size());
}

TEST_CASE("http gzip: a gzip answer to an identity request is decoded as well", "[transports][http][gzip]") {
  // A server that compresses although asked for identity: the body is decoded all the same, so
  // a Response body is never encoded (and the cache never stores an encoded body).
  const std::string body = page(100);
  const std::string gz = gzip(body);
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, gz, {{"Content-Encoding", "gzip"}}); }));
  auto t = make();
  auto r = t->get(req(server.url("/pkg/")));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body == body);
  CHECK_FALSE(has_header(r->headers, "content-encoding"));
  CHECK(server.requests().at(0).header("accept-encoding") == "identity");
}

TEST_CASE("http gzip: 304 answers are unaffected", "[transports][http][gzip]") {
  const bool encoding_on_304 = GENERATE(false, true);
  TestServer server(serve([&](const HttpRequest& r) {
    if (r.header("If-None-Match") == "\"v1\"") {
      testing::TestHeaders h{{"ETag", "\"v1\""}, {"Cache-Control", "max-age=60"}};
      if (encoding_on_304) h.emplace_back("Content-Encoding", "gzip");
      return http_response(304, "", h);
    }
    return http_response(200, gzip("fresh page"), {{"ETag", "\"v1\""}, {"Content-Encoding", "gzip"}});
  }));
  auto t = make();
  auto first = t->get(compressed_req(server.url("/pkg/")));
  WHEELFIT_REQUIRE_OK(first);
  CHECK(first->body == "fresh page");
  auto r = t->get(compressed_req(server.url("/pkg/"), 1000, {{"If-None-Match", "\"v1\""}}));
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->status == 304);
  CHECK(r->body.empty());
  CHECK(net::find_header(r->headers, "etag") == "\"v1\"");
  CHECK(net::find_header(r->headers, "cache-control") == "max-age=60");
  // A 304 never claims an encoding for the (decoded) body a cache holds.
  CHECK_FALSE(has_header(r->headers, "content-encoding"));
}

TEST_CASE("http gzip: error statuses keep their meaning whatever the encoding", "[transports][http][gzip]") {
  // A 404 / 503 with a (broken) gzip body: not_found / http_status, never a gzip error.
  TestServer server(serve([&](const HttpRequest& r) {
    if (r.target == "/gone/") return http_response(404, "not gzip", {{"Content-Encoding", "gzip"}});
    return http_response(503, "not gzip either", {{"Content-Encoding", "br"}});
  }));
  auto o = fast_options();
  o.retry.retries = 1;
  auto t = make(o);
  auto gone = t->get(compressed_req(server.url("/gone/")));
  REQUIRE_FALSE(gone);
  CHECK(gone.error().is(Errc::not_found));
  auto busy = t->get(compressed_req(server.url("/busy/")));
  REQUIRE_FALSE(busy);
  INFO(busy.error().message);
  CHECK(net::is(busy.error(), NetErrc::http_status));
  CHECK(t->stats().retries == 1);
}
