// deliver::download over the http and file transports: verified, idempotent, resumable, atomic.
// docs/network-faults.md rows N02 (a body cut mid-way continues with Range + If-Range; parts of
// an earlier run too), N04 (a body cut short without Content-Length: the digest catches it) and
// S01 (the bytes changed upstream: both digests named, nothing left).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "deliver/download_support.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;
using namespace wheelfit::test_deliver;
using deliver::Delivered;
using deliver::Progress;
using test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("download: a whole file is fetched, verified and renamed into place", "[deliver][download]") {
  const Served file{random_bytes(300000, 1)};
  TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TempDir dir;
  auto t = make();
  auto got = deliver::download(*t, {wanted(server.url("/f/" + kName), kName, file.body)}, options_for(dir / "out"));
  REQUIRE(got.size() == 1);
  check_delivered(got[0], dir / "out", file.body);
  CHECK_FALSE(got[0].resumed);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].header("accept-encoding") == "identity");
  CHECK_FALSE(reqs[0].header("range"));
  CHECK(t->stats().bytes == file.body.size());
}

TEST_CASE("download: a file already in place is kept; a wrong one is replaced", "[deliver][download]") {
  ServedFile s(5000, 2);
  SECTION("the right digest: present, no request") {
    test::write_file(s.dir / kName, s.file.body);
    check_delivered(s.download().at(0), s.dir.path(), s.file.body, Delivered::Status::present);
    CHECK(s.server.requests().empty());
  }
  SECTION("a wrong digest: fetched again and replaced") {
    test::write_file(s.dir / kName, "stale bytes");
    check_delivered(s.download().at(0), s.dir.path(), s.file.body);
    CHECK(s.server.requests().size() == 1);
  }
}

TEST_CASE("download: S01 a digest mismatch names both digests and leaves nothing", "[deliver][download]") {
  ServedFile s(4000, 3);
  auto w = wanted(s.server.url("/" + kName), kName, "what the index promised");
  SECTION("fresh") {}
  SECTION("over a wrong file in place") { test::write_file(s.dir / kName, "older"); }
  auto got = deliver::download(*s.t, {w}, options_for(s.dir.path()));
  const Delivered& d = got.at(0);
  REQUIRE(d.status == Delivered::Status::failed);
  REQUIRE(d.error);
  INFO(d.error->message);
  CHECK(test_http::contains(d.error->message, kName));
  CHECK(test_http::contains(d.error->message, *w.sha256));
  CHECK(test_http::contains(d.error->message, sha(s.file.body)));
  CHECK(test_http::contains(d.error->message, "a stale proxy or cache in between is the usual cause"));
  CHECK_FALSE(fs::exists(s.dir / kName));
  CHECK_FALSE(fs::exists(s.dir / ("." + kName + ".part")));
  CHECK_FALSE(fs::exists(s.dir / ("." + kName + ".part.meta")));
}

TEST_CASE("download: N04 a body without Content-Length cut short is caught by the digest", "[deliver][download]") {
  const Served file{random_bytes(50000, 9)};
  TestServer server([&](Conn& c) {
    if (!c.read_request()) return;
    c.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + file.body.substr(0, 20000));
    c.close();  // a clean end: to the client, the body is complete
  });
  TempDir dir;
  auto t = make();
  auto got = download_one(*t, server, file, dir.path());
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  REQUIRE(got[0].error);
  INFO(got[0].error->message);
  CHECK(test_http::contains(got[0].error->message, sha(file.body)));
  CHECK(test_http::contains(got[0].error->message, sha(file.body.substr(0, 20000))));
  CHECK(test_http::contains(got[0].error->message, "changed upstream"));
  CHECK(names_in(dir.path()) == std::vector<std::string>{".wheelfit.lock"});  // no final file, no part, no meta
}

TEST_CASE("download: N02 a body cut mid-way continues with Range and If-Range", "[deliver][download]") {
  const Served file{random_bytes(200000, 4)};
  const std::size_t cut = 70000;
  const bool reset = GENERATE(true, false);  // an RST, or a clean close (truncated)
  CAPTURE(reset);
  std::atomic<int> conns{0};
  TestServer server([&](Conn& c) {
    if (conns++ == 0) {
      if (!c.read_request()) return;
      const std::string whole = http_response(200, file.body, {{"ETag", file.etag}});
      c.write(std::string_view(whole).substr(0, whole.size() - file.body.size() + cut));
      std::this_thread::sleep_for(200ms);  // the client has read what was sent
      if (reset) c.reset();
      else c.close();
      return;
    }
    serve([&](const HttpRequest& r) { return answer(r, file); })(c);
  });
  TempDir dir;
  auto t = make();
  auto got = download_one(*t, server, file, dir.path());
  check_delivered(got.at(0), dir.path(), file.body);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[1].header("range") == "bytes=" + std::to_string(cut) + "-");
  CHECK(reqs[1].header("if-range") == file.etag);
  CHECK(t->stats().retries == 1);
  CHECK(got[0].continued);      // a 206 was taken ...
  CHECK_FALSE(got[0].resumed);  // ... but no earlier run left a part
}

TEST_CASE("download: N07 a trickling body is cut by the low-speed limit and continued with Range", "[deliver][download][speed]") {
  const Served file{random_bytes(50000, 7)};
  const std::size_t head = 20000;  // sent at once; then a byte every 50 ms
  std::atomic<int> conns{0};
  std::atomic<std::size_t> trickled{0};
  TestServer server([&](Conn& c) {
    if (conns++ == 0) {
      if (!c.read_request()) return;
      const std::string whole = http_response(200, file.body, {{"ETag", file.etag}});
      if (!c.write(std::string_view(whole).substr(0, whole.size() - file.body.size() + head))) return;
      for (std::size_t i = head; i < head + 100; ++i) {  // bounded: a failing test does not hang
        std::this_thread::sleep_for(50ms);
        if (!c.write(std::string_view(file.body).substr(i, 1))) return;
        ++trickled;
      }
      return;
    }
    serve([&](const HttpRequest& r) { return answer(r, file); })(c);
  });
  TempDir dir;
  auto o = fast_options();
  o.speed_limit = 1000;  // bytes/s; the trickle is 20
  o.speed_time = 300ms;
  auto t = make(o);
  LogCapture logs;
  auto got = download_one(*t, server, file, dir.path());
  check_delivered(got.at(0), dir.path(), file.body);
  CHECK_FALSE(logs.find(log::Level::info, "too slow").empty());  // the retry's reason
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 2);
  const auto range = reqs[1].header("range").value_or("");
  REQUIRE(range.starts_with("bytes="));
  const std::size_t from = std::stoul(range.substr(6));
  CHECK(from >= head);  // where the cut body stopped, not from zero ...
  CHECK(from <= head + trickled.load());
  CHECK(from < head + 100);  // ... and cut before the server's trickle ran out
  CHECK(reqs[1].header("if-range") == file.etag);
  CHECK(t->stats().retries == 1);
  CHECK(got[0].continued);
}

TEST_CASE("download: N02 a part from an earlier run", "[deliver][download]") {
  Served file{random_bytes(100000, 5)};
  const std::size_t had = 40000;
  TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TempDir dir;
  auto t = make();
  const auto w = wanted(server.url("/" + kName), kName, file.body);
  struct Case {
    const char* what;
    std::string part;       // its bytes
    std::string validator;  // its meta
    bool ignore_range;
    std::optional<std::string> range;  // what the last request asks for (the first asks for the rest)
    bool resumed;
    std::size_t requests;
  };
  const auto prefix = file.body.substr(0, had);
  const std::string wrong = random_bytes(had, 99);
  const std::string from = "bytes=" + std::to_string(had) + "-";
  auto c = GENERATE_COPY(values<Case>({
      {"is continued with Range and If-Range", prefix, "\"v1\"", false, from, true, 1},
      {"is continued without a meta (Range alone)", prefix, "", false, from, true, 1},
      {"restarts when the server ignores the range (200)", prefix, "\"v1\"", true, from, false, 1},
      {"restarts when the validator changed (If-Range: 200)", prefix, "\"v0\"", false, from, false, 1},
      {"with wrong bytes: the mismatch refetches it once from zero", wrong, "\"v1\"", false, std::nullopt, false, 2},
  }));
  CAPTURE(c.what);
  file.ignore_range = c.ignore_range;
  leave_part(dir.path(), kName, c.part, c.validator);
  auto got = deliver::download(*t, {w}, options_for(dir.path()));
  check_delivered(got.at(0), dir.path(), file.body);
  CHECK(got[0].resumed == c.resumed);
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == c.requests);
  CHECK(reqs[0].header("range") == from);
  if (!c.validator.empty()) CHECK(reqs[0].header("if-range") == c.validator);
  CHECK(reqs.back().header("range") == c.range);
}

TEST_CASE("download: N02 a part that is already whole (416) is fetched again from zero", "[deliver][download]") {
  ServedFile s(3000, 6);
  leave_part(s.dir.path(), kName, s.file.body, s.file.etag);
  check_delivered(s.download().at(0), s.dir.path(), s.file.body);
  CHECK(s.server.requests().size() == 2);
}

TEST_CASE("download: a redirect to another origin is followed without the credential", "[deliver][download]") {
  const Served file{random_bytes(20000, 7)};
  TestServer objects(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TestServer releases(serve([&](const HttpRequest&) {
    return http_response(302, "", {{"Location", objects.url("/blob/" + kName, "localhost")}});
  }));
  auto o = fast_options();
  const std::string origin = "http://127.0.0.1:" + std::to_string(releases.port());
  o.credentials.origins.push_back({origin, "", "s3cret", "test"});
  o.credentials.insecure_hosts = {"127.0.0.1"};
  auto t = make(o);
  TempDir dir;
  auto got = deliver::download(*t, {wanted(releases.url("/download/" + kName), kName, file.body)}, options_for(dir.path()));
  check_delivered(got.at(0), dir.path(), file.body);
  REQUIRE(releases.requests().size() == 1);
  CHECK(releases.requests()[0].header("authorization") == "Bearer s3cret");
  REQUIRE(objects.requests().size() == 1);
  CHECK_FALSE(objects.requests()[0].header("authorization"));
}

TEST_CASE("download: offline, only present files", "[deliver][download]") {
  TestServer server(serve([&](const HttpRequest&) { return http_response(200, "x"); }));
  TempDir dir;
  auto t = make();
  test::write_file(dir / "here.whl", "here");
  auto o = options_for(dir.path());
  o.offline = true;
  auto got = deliver::download(*t, {wanted(server.url("/here.whl"), "here.whl", "here"),
                                    wanted(server.url("/gone.whl"), "gone.whl", "gone")}, o);
  check_delivered(got.at(0), dir.path(), "here", Delivered::Status::present);
  REQUIRE(got.at(1).status == Delivered::Status::failed);
  REQUIRE(got[1].error);
  INFO(got[1].error->message);
  CHECK(net::is(*got[1].error, NetErrc::offline));
  CHECK(test_http::contains(got[1].error->message, "gone.whl"));
  CHECK(server.requests().empty());
}

TEST_CASE("download: several files go through one get_many, concurrently", "[deliver][download]") {
  std::vector<Served> files;
  for (unsigned i = 0; i < 6; ++i) files.push_back({random_bytes(50000 + i * 1000, 10 + i)});
  TestServer server(serve([&](const HttpRequest& r) {
    std::this_thread::sleep_for(20ms);
    return answer(r, files.at(static_cast<std::size_t>(r.target[1] - '0')));
  }));
  TempDir dir;
  auto inner = make();
  CountingTransport t(*inner);
  std::vector<deliver::Wanted> ws;
  for (std::size_t i = 0; i < files.size(); ++i) {
    ws.push_back(wanted(server.url("/" + std::to_string(i)), "f" + std::to_string(i) + "-1.0-py3-none-any.whl", files[i].body));
  }
  ws[2].sha256.reset();  // fetched and hashed, not verified
  std::vector<Progress> events;
  auto o = options_for(dir.path());
  o.progress = [&](const Progress& p) { events.push_back(p); };
  auto got = deliver::download(t, ws, o);
  CHECK(t.origin().calls() == 1);
  CHECK(t.origin().largest_batch() == files.size());
  CHECK(server.connections() > 1);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i == 2) {
      CHECK(got[i].status == Delivered::Status::fetched);
      CHECK_FALSE(got[i].verified);
      CHECK(got[i].sha256 == sha(files[i].body));
      continue;
    }
    check_delivered(got[i], dir.path(), files[i].body);
  }
  // Progress: per file one started first, one finished last, bytes never going back.
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(i);
    std::vector<Progress> mine;
    for (const auto& e : events) {
      if (e.index == i) mine.push_back(e);
    }
    REQUIRE(mine.size() >= 3);
    CHECK(mine.front().kind == Progress::Kind::started);
    CHECK(mine.back().kind == Progress::Kind::finished);
    CHECK(mine.back().done == files[i].body.size());
    std::uint64_t last = 0;
    for (std::size_t k = 1; k + 1 < mine.size(); ++k) {
      CHECK(mine[k].kind == Progress::Kind::bytes);
      CHECK(mine[k].done >= last);
      CHECK(mine[k].total == files[i].body.size());
      last = mine[k].done;
    }
  }
}

TEST_CASE("download: a file in place is read once; its recorded digest serves re-runs while the file is unchanged",
          "[deliver][download][record]") {
  // Issue 21 item 7: a re-run where nothing changed reads no file whole. The record
  // (.<file>.sha256) holds the digest and the file's size, mtime, inode and device.
  const Served file{random_bytes(40000, 31)};
  TestServer server(serve([&](const HttpRequest& r) { return answer(r, file); }));
  TempDir dir;
  auto t = make();
  const auto w = wanted(server.url("/" + kName), kName, file.body);
  check_delivered(deliver::download(*t, {w}, options_for(dir.path())).at(0), dir.path(), file.body);
  const fs::path record = dir / ("." + kName + ".sha256");
  REQUIRE(fs::exists(record));
  CHECK(slurp(record).starts_with(sha(file.body) + " 40000 "));

  SECTION("unchanged: present, from the record") {
    check_delivered(deliver::download(*t, {w}, options_for(dir.path())).at(0), dir.path(), file.body, Delivered::Status::present);
    CHECK(server.requests().size() == 1);
  }
  SECTION("the record trusts size, mtime and inode: bytes changed behind them are not read (the quick check's limit)") {
    struct stat before {};
    REQUIRE(::stat((dir / kName).c_str(), &before) == 0);
    {
      const int fd = ::open((dir / kName).c_str(), O_WRONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      REQUIRE(::pwrite(fd, "X", 1, 0) == 1);
      const struct timespec times[2] = {before.st_atim, before.st_mtim};
      REQUIRE(::futimens(fd, times) == 0);
      ::close(fd);
    }
    CHECK(deliver::download(*t, {w}, options_for(dir.path())).at(0).status == Delivered::Status::present);
    CHECK(server.requests().size() == 1);
  }
  SECTION("written since (a new mtime): read again, found wrong, fetched again") {
    test::write_file(dir / kName, "X" + file.body.substr(1));
    check_delivered(deliver::download(*t, {w}, options_for(dir.path())).at(0), dir.path(), file.body);
    CHECK(server.requests().size() == 2);
  }
  SECTION("a forged or broken record is not believed") {
    test::write_file(record, "not a record\n");
    check_delivered(deliver::download(*t, {w}, options_for(dir.path())).at(0), dir.path(), file.body, Delivered::Status::present);
    CHECK(slurp(record).starts_with(sha(file.body)));  // rewritten after the read
  }
  SECTION("the file gone: its record goes with the next run") {
    fs::remove(dir / kName);
    auto other = wanted(server.url("/" + kName), "other-1.0-py3-none-any.whl", file.body);
    (void)deliver::download(*t, {other}, options_for(dir.path()));
    CHECK_FALSE(fs::exists(record));
  }
}
