// open_remote_source over the real http transport against loopback servers: Range honoured
// (206 + Content-Range), ignored (200, the whole body), answered at the wrong offset (FAULTS N05:
// a protocol error, never misplaced bytes), a 404, and a wheel replaced on the server while it is
// read (docs/network-faults.md N13: pinned with If-Range, read again whole, never mixed).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "support/backend_support.hpp"
#include "support/net/test_server.hpp"
#include "support/wheel_builder.hpp"
#include "transports/http/test_http_support.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"
#include "wheelfit/transports/http_transport.hpp"

using namespace wheelfit;
using namespace wheelfit::inspect;
using namespace wheelfit::testing;
using namespace std::chrono_literals;
namespace tr = wheelfit::net;

namespace {

std::unique_ptr<tr::Transport> http() {
  auto o = test_http::fast_options(1);
  o.retry.cap = 5ms;
  o.idle_timeout = 5s;
  return test_http::make(std::move(o));
}

std::string wheel_bytes(const std::string& module = "pkg/_ext.cpython-312-x86_64-linux-gnu.so",
                        std::uint64_t seed = 0x9E3779B97F4A7C15ull) {
  return test::build_zip({{module, std::string("\x7f" "ELF", 4) + std::string(3000, 'e'), true},
                          {"pkg/big.dat", test::random_bytes(400000, seed), false},
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

namespace {

/// How a server that replaces the wheel after the first (tail) request treats If-Range.
enum class Replace {
  none,             ///< the file stays: 206 answers, validators match
  honour_etag,      ///< ETag pin; If-Range with an old ETag -> 200 with the new file
  honour_modified,  ///< Last-Modified pin (no ETag); an old date -> 200 with the new file
  ignore_if_range,  ///< answers 206 of the new file whatever If-Range says (a new ETag)
};

/// Serves `v1` until the tail has been read, then `v2` (each with its own validators), honouring
/// Range; records every request's If-Range.
ConnScript replacing_server(std::string v1, std::string v2, Replace mode, std::shared_ptr<std::atomic<int>> version) {
  return serve([v1 = std::move(v1), v2 = std::move(v2), mode, version](const HttpRequest& rq) -> std::string {
    const bool second = mode != Replace::none && version->load() > 0;
    const std::string& wheel = second ? v2 : v1;
    TestHeaders validators;
    if (mode != Replace::honour_modified) validators.emplace_back("ETag", second ? "\"v2\"" : "\"v1\"");
    validators.emplace_back("Last-Modified", second ? "Tue, 02 Jan 2024 00:00:00 GMT" : "Mon, 01 Jan 2024 00:00:00 GMT");
    const auto range = rq.header("Range");
    const auto if_range = rq.header("If-Range");
    const bool stale = if_range && *if_range != validators[0].second && mode != Replace::ignore_if_range;
    version->store(1);  // the first answer (the tail) is of v1; every later one of v2
    if (!range || stale) return http_response(200, wheel, validators);
    std::uint64_t first = 0, last = 0;
    if (!parse_range(*range, wheel.size(), first, last)) return http_response(416, "");
    TestHeaders headers = validators;
    headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                              std::to_string(wheel.size()));
    return http_response(206, wheel.substr(first, last - first + 1), headers);
  });
}

machine::Machine linux_machine() {
  machine::Machine m;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"os", "linux"}, {"cpu_arch", "x86_64"},
                                                                             {"python", "3.12"}}) {
    REQUIRE(machine::set_fact(m, k, v, "test"));
  }
  return m;
}

}  // namespace

TEST_CASE("remote source: N13 a wheel replaced while it is read is read again whole, never mixed",
          "[inspect][source][remote]") {
  const std::string v1 = wheel_bytes("pkg/_old.cpython-312-x86_64-linux-gnu.so", 1);
  const std::string v2 = wheel_bytes("pkg/_new.cpython-312-x86_64-linux-gnu.so", 2);
  struct Row {
    const char* what;
    Replace mode;
    const char* if_range;  // what the reads after the tail carry
    std::size_t requests;  // the tail, then the reads
  };
  const std::vector<Row> rows{
      {"unchanged: the reads are pinned and served as 206", Replace::none, "\"v1\"", 2},
      {"ETag: If-Range answers 200 with the new wheel", Replace::honour_etag, "\"v1\"", 2},
      {"Last-Modified: If-Range answers 200 with the new wheel", Replace::honour_modified,
       "Mon, 01 Jan 2024 00:00:00 GMT", 2},
      {"If-Range ignored: a 206 of another ETag, then the whole new wheel", Replace::ignore_if_range, "\"v1\"", 3},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto version = std::make_shared<std::atomic<int>>(0);
    TestServer server(replacing_server(v1, v2, row.mode, version));
    auto t = http();
    auto src = open_remote_source(*t, server.url("/pkg-1.0-cp312-cp312-linux_x86_64.whl"));
    REQUIRE(src);
    CHECK((*src)->size() == v1.size());
    auto explained = explain_wheel(**src, "pkg-1.0-cp312-cp312-linux_x86_64.whl", linux_machine(), test::cuda_policy());
    INFO((explained ? std::string() : explained.error().message));
    REQUIRE(explained);
    const auto requests = server.requests();
    REQUIRE(requests.size() == row.requests);
    CHECK_FALSE(requests[0].header("If-Range"));
    CHECK(requests[1].header("If-Range") == row.if_range);
    REQUIRE(explained->files.size() == 1);
    if (row.mode == Replace::none) {
      CHECK(explained->files[0].path == "pkg/_old.cpython-312-x86_64-linux-gnu.so");
      CHECK((*src)->generation() == 0);
      CHECK(explained->wheel_size == v1.size());
      continue;
    }
    // Only the new wheel's members, its size, and a warning saying why it was read twice.
    CHECK(explained->files[0].path == "pkg/_new.cpython-312-x86_64-linux-gnu.so");
    CHECK(explained->wheel_size == v2.size());
    CHECK((*src)->generation() == 1);
    CHECK((*src)->downloaded_whole());
    CHECK(std::any_of(explained->warnings.begin(), explained->warnings.end(),
                      [](const std::string& w) { return w.find("changed while it was read") != std::string::npos; }));
    if (row.mode == Replace::ignore_if_range) CHECK_FALSE(requests[2].header("Range"));
  }
}
