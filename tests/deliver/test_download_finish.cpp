// deliver::download's finishing (digest, fsync, read back, rename) on threads of its own while the
// transport receives the other files: every result and progress event is as before, the events
// still on the calling thread; bodies of several 1 MiB blocks, read into the part's own blocks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <thread>

#include "support/test_support.hpp"
#include "transports/http/test_http_support.hpp"
#include "wheelfit/deliver/download.hpp"

namespace wheelfit {
namespace {

using deliver::Delivered;
using Kind = deliver::Progress::Kind;
using test_http::TestServer;

/// `n` bytes of a seeded generator: a block misplaced or lost shows.
std::string finish_bytes(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::string s(n, '\0');
  std::generate(s.begin(), s.end(), [&] { return static_cast<char>(gen()); });
  return s;
}

std::string finish_sha(std::string_view s) {
  deliver::Sha256 h;
  h.update(s);
  return h.hex();
}

}  // namespace

TEST_CASE("download: files finish beside the transfers; progress stays on the calling thread",
          "[deliver][download][finish]") {
  // Sizes across the 1 MiB blocks: below one, exactly one, a few and a remainder.
  const std::vector<std::size_t> sizes = {1000, 1u << 20, (3u << 20) + 4321, (2u << 20) - 1};
  std::vector<std::string> bodies;
  for (std::size_t i = 0; i < sizes.size(); ++i) bodies.push_back(finish_bytes(sizes[i], 40 + static_cast<unsigned>(i)));
  const std::string wrong = "the file upstream changed";
  TestServer server(test_http::serve([&](const test_http::HttpRequest& r) {
    const auto i = static_cast<std::size_t>(r.target[1] - '0');
    return test_http::http_response(200, i < bodies.size() ? bodies[i] : wrong);
  }));
  test::TempDir dir;
  auto o = test_http::fast_options();
  o.jobs = 5;
  o.per_host = 5;
  auto t = test_http::make(o);
  std::vector<deliver::Wanted> ws;
  for (std::size_t i = 0; i <= bodies.size(); ++i) {
    deliver::Wanted w;
    w.url = server.url("/" + std::to_string(i));
    w.filename = "fin" + std::to_string(i) + "-1.0-py3-none-any.whl";
    w.sha256 = finish_sha(i < bodies.size() ? bodies[i] : "what the index said");
    ws.push_back(std::move(w));
  }
  const auto caller = std::this_thread::get_id();
  bool elsewhere = false;
  std::vector<std::pair<std::size_t, Kind>> events;
  std::vector<Delivered::Status> outcomes(ws.size(), Delivered::Status::fetched);
  deliver::DownloadOptions d;
  d.dir = dir.path();
  d.progress = [&](const deliver::Progress& p) {
    if (std::this_thread::get_id() != caller) elsewhere = true;
    events.emplace_back(p.index, p.kind);
    if (p.kind == Kind::finished) outcomes.at(p.index) = p.outcome;
  };
  const auto got = deliver::download(*t, ws, d);
  CHECK_FALSE(elsewhere);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    CAPTURE(i);
    INFO((got[i].error ? got[i].error->message : std::string("ok")));
    REQUIRE(got[i].status == Delivered::Status::fetched);
    CHECK(got[i].sha256 == finish_sha(bodies[i]));
    CHECK(test::read_file(dir / ws[i].filename) == bodies[i]);
    CHECK_FALSE(std::filesystem::exists(dir / ("." + ws[i].filename + ".part")));
  }
  const std::size_t bad = bodies.size();
  REQUIRE(got[bad].status == Delivered::Status::failed);
  CHECK(got[bad].error->message.find("sha256 mismatch") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / ws[bad].filename));
  CHECK(outcomes[bad] == Delivered::Status::failed);
  // Every file: started first, finished once and last.
  for (std::size_t i = 0; i < ws.size(); ++i) {
    CAPTURE(i);
    std::vector<Kind> mine;
    for (const auto& [index, kind] : events) {
      if (index == i) mine.push_back(kind);
    }
    REQUIRE(mine.size() >= 2);
    CHECK(mine.front() == Kind::started);
    CHECK(mine.back() == Kind::finished);
    CHECK(std::count(mine.begin(), mine.end(), Kind::finished) == 1);
  }
}

}  // namespace wheelfit
