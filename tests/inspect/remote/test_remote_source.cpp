// open_remote_source over the real http transport against loopback servers: Range honoured
// (206 + Content-Range), ignored (200, the whole body), answered at the wrong offset (FAULTS N05:
// a protocol error, never misplaced bytes), and a 404.
#include <catch2/catch.hpp>

#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "support/net/test_server.hpp"
#include "support/wheel_builder.hpp"
#include "transports/http/test_http_support.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"
#include "wheelfit/transports/http_transport.hpp"

using namespace wheelfit;
using namespace wheelfit::inspect;
using namespace wheelfit::testing;
using namespace std::chrono_literals;
namespace tr = wheelfit::transport;

namespace {

std::unique_ptr<tr::Transport> http() {
  auto o = test_http::fast_options(1);
  o.retry.cap = 5ms;
  o.idle_timeout = 5s;
  return test_http::make(std::move(o));
}

std::string wheel_bytes() {
  return test::build_zip({{"pkg/_ext.cpython-312-x86_64-linux-gnu.so", std::string("\x7f" "ELF", 4) + std::string(3000, 'e'), true},
                          {"pkg/big.dat", test::random_bytes(400000, 0x9E3779B97F4A7C15ull), false},
                          {"pkg/__init__.py", "", false},
                          {"pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n", true}});
}

enum class Mode { honour, ignore, wrong_offset_tail, wrong_offset_reads, missing };

/// "bytes=a-b" / "bytes=-n" -> [first, last] within `size`.
bool parse_range(const std::string& v, std::uint64_t size, std::uint64_t& first, std::uint64_t& last) {
  if (v.rfind("bytes=", 0) != 0) return false;
  const auto dash = v.find('-');
  std::uint64_t a = 0, b = 0;
  if (dash == 6) {
    std::from_chars(v.data() + 7, v.data() + v.size(), b);
    first = size - std::min<std::uint64_t>(size, b);
    last = size - 1;
    return true;
  }
  std::from_chars(v.data() + 6, v.data() + dash, a);
  std::from_chars(v.data() + dash + 1, v.data() + v.size(), b);
  first = a;
  last = std::min<std::uint64_t>(b, size - 1);
  return first <= last;
}

ConnScript wheel_server(std::string wheel, Mode mode) {
  return serve([wheel = std::move(wheel), mode](const HttpRequest& rq) -> std::string {
    if (mode == Mode::missing) return http_response(404, "no such wheel");
    const auto range = rq.header("Range");
    if (mode == Mode::ignore || !range) return http_response(200, wheel, {{"Content-Type", "application/octet-stream"}});
    std::uint64_t first = 0, last = 0;
    if (!parse_range(*range, wheel.size(), first, last)) return http_response(416, "");
    std::uint64_t label = first;
    const bool tail = range->rfind("bytes=-", 0) == 0;
    if ((mode == Mode::wrong_offset_tail && tail) || (mode == Mode::wrong_offset_reads && !tail)) {
      label = first + 7;  // claims other bytes than it sends, or sends other bytes than asked
    }
    const std::string body = wheel.substr(first, last - first + 1);
    return http_response(206, body,
                         {{"Content-Range", "bytes " + std::to_string(label) + "-" + std::to_string(label + body.size() - 1) +
                                                "/" + std::to_string(wheel.size())}});
  });
}

}  // namespace

TEST_CASE("remote source: a server that honours Range serves the directory and the .so only",
          "[inspect][source][remote]") {
  const std::string wheel = wheel_bytes();
  TestServer server(wheel_server(wheel, Mode::honour));
  auto t = http();
  auto src = open_remote_source(*t, server.url("/w.whl"));
  INFO((src ? std::string() : src.error().message));
  REQUIRE(src);
  CHECK_FALSE((*src)->downloaded_whole());
  CHECK((*src)->size() == wheel.size());
  auto dir = read_zip_directory(**src);
  REQUIRE(dir);
  REQUIRE(dir->entries.size() == 4);
  for (const auto& e : dir->entries) {
    if (!e.name.ends_with(".so")) continue;
    auto m = read_zip_member(**src, e);
    INFO((m ? std::string() : m.error().message));
    REQUIRE(m);
    CHECK(m->substr(0, 4) == "\x7f" "ELF");
  }
  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);  // the tail (holding the directory), then the .so
  CHECK(requests[0].header("Range") == "bytes=-65536");
  CHECK(requests[1].header("Range").value_or("").rfind("bytes=0-", 0) == 0);
  CHECK((*src)->bytes_fetched() == t->stats().bytes);
  CHECK((*src)->bytes_fetched() < 65536 + 4000);
  CHECK((*src)->bytes_fetched() < wheel.size() / 4);
}

TEST_CASE("remote source: a server that ignores Range: one full download", "[inspect][source][remote]") {
  const std::string wheel = wheel_bytes();
  TestServer server(wheel_server(wheel, Mode::ignore));
  auto t = http();
  auto src = open_remote_source(*t, server.url("/w.whl"));
  REQUIRE(src);
  CHECK((*src)->downloaded_whole());
  CHECK((*src)->bytes_fetched() == wheel.size());
  auto dir = read_zip_directory(**src);
  REQUIRE(dir);
  for (const auto& e : dir->entries) REQUIRE(read_zip_member(**src, e));
  CHECK(server.requests().size() == 1);

  auto capped = open_remote_source(*t, server.url("/w.whl"), 100000);
  REQUIRE_FALSE(capped);
  CHECK(capped.error().is(Errc::too_large));
  CHECK_THAT(capped.error().message, Catch::Contains(server.url("/w.whl")));
}

TEST_CASE("remote source: a 206 at the wrong offset is a protocol error, never misplaced bytes (N05)",
          "[inspect][source][remote]") {
  const std::string wheel = wheel_bytes();
  SECTION("the tail") {
    TestServer server(wheel_server(wheel, Mode::wrong_offset_tail));
    auto t = http();
    auto src = open_remote_source(*t, server.url("/w.whl"));
    REQUIRE_FALSE(src);
    CHECK(tr::is(src.error(), tr::NetErrc::protocol));
    CHECK_THAT(src.error().message, Catch::Contains("Content-Range"));
  }
  SECTION("a member") {
    TestServer server(wheel_server(wheel, Mode::wrong_offset_reads));
    auto t = http();
    auto src = open_remote_source(*t, server.url("/w.whl"));
    REQUIRE(src);
    auto dir = read_zip_directory(**src);
    REQUIRE(dir);
    auto m = read_zip_member(**src, dir->entries[0]);
    REQUIRE_FALSE(m);
    CHECK(tr::is(m.error(), tr::NetErrc::protocol));
    CHECK_THAT(m.error().message, Catch::Contains(server.url("/w.whl")));
    CHECK_THAT(m.error().message, Catch::Contains("the server answered Content-Range 'bytes 7-"));
  }
}

TEST_CASE("remote source: a 404 is not_found", "[inspect][source][remote]") {
  TestServer server(wheel_server("", Mode::missing));
  auto t = http();
  auto src = open_remote_source(*t, server.url("/gone.whl"));
  REQUIRE_FALSE(src);
  CHECK(src.error().is(Errc::not_found));
  CHECK_THAT(src.error().message, Catch::Contains("gone.whl"));
}
