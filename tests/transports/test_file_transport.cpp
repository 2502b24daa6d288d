#include <catch2/catch.hpp>

#include <stdexcept>

#include "support/memory_sink.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
using test::TempDir;
using test::write_file;

TEST_CASE("file transport reads file:// URLs and plain paths", "[transports][file]") {
  TempDir dir;
  write_file(dir / "idx" / "pkg" / "index.html", "<a href='x'>x</a>");
  write_file(dir / "idx" / "packages.json", "{}");
  write_file(dir / "with space" / "a.html", "spaced");
  auto t = transports::make_file_transport();

  SECTION("a directory URL reads its index.html") {
    auto r = t->get({.url = transports::to_url((dir / "idx" / "pkg").string(), true)});
    REQUIRE(r);
    CHECK(r->body == "<a href='x'>x</a>");
    CHECK(r->content_type == "text/html");
  }
  SECTION("a plain path works too") {
    auto r = t->get({.url = (dir / "idx" / "packages.json").string()});
    REQUIRE(r);
    CHECK(r->content_type == "application/json");
  }
  SECTION("reserved characters are percent-encoded and decoded once") {
    const auto url = transports::to_url((dir / "with space" / "a.html").string(), false);
    CHECK(url.find("with%20space") != std::string::npos);
    auto r = t->get({.url = url});
    REQUIRE(r);
    CHECK(r->body == "spaced");
  }
}

TEST_CASE("file transport errors are typed", "[transports][file]") {
  TempDir dir;
  write_file(dir / "big.html", std::string(2048, 'x'));
  std::filesystem::create_directories(dir / "empty");
  auto t = transports::make_file_transport();
  struct Row {
    std::string url;
    Errc code;
  };
  const std::string root = dir.path().string();
  auto row = GENERATE_COPY(values<Row>({
      {transports::to_url(root + "/missing.html", false), Errc::not_found},
      {transports::to_url(root + "/nopkg", true), Errc::not_found},
      {transports::to_url(root + "/empty", true), Errc::not_found},
      {"file://remote.example/x", Errc::invalid_input},
      {"https://example.test/x", Errc::unsupported},
      {"file:///tmp/%00x", Errc::invalid_input},
  }));
  CAPTURE(row.url);
  auto r = t->get({.url = row.url});
  REQUIRE_FALSE(r);
  CHECK(r.error().is(row.code));
  CHECK_THAT(r.error().message, Catch::Contains(row.url));
}

TEST_CASE("file transport refuses a file above the limit before reading it", "[transports][file]") {
  TempDir dir;
  write_file(dir / "big.html", std::string(2048, 'x'));
  auto t = transports::make_file_transport();
  auto r = t->get({.url = (dir / "big.html").string(), .max_body = 1024});
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::too_large));
  CHECK_THAT(r.error().message, Catch::Contains("2048"));
}

TEST_CASE("read_index keeps 'not published' apart from unreadable pages", "[transports][index]") {
  TempDir dir;
  write_file(dir / "idx" / "good" / "index.html", "<a href='good-1.0-py3-none-any.whl'>good-1.0-py3-none-any.whl</a>");
  write_file(dir / "idx" / "bad" / "index.html", std::string("\0binary", 7));
  auto t = transports::make_file_transport();
  auto snap = index::read_index(*t, transports::to_url((dir / "idx").string(), true), {"good", "bad", "gone", "good"});
  REQUIRE(snap.projects.size() == 3);
  CHECK(snap.projects.at("good").status == index::ProjectPage::Status::ok);
  CHECK(snap.projects.at("good").page.links.size() == 1);
  CHECK(snap.projects.at("gone").status == index::ProjectPage::Status::not_published);
  CHECK(snap.projects.at("bad").status == index::ProjectPage::Status::failed);
  CHECK_FALSE(snap.packages_json);
  CHECK_THAT(snap.packages_json_note, Catch::Contains("no packages.json"));
}

TEST_CASE("a transport without its own hooked batch tells the hook every answer, in order", "[transports][file]") {
  TempDir dir;
  write_file(dir / "a.html", "a");
  auto t = transports::make_file_transport();
  std::vector<std::pair<std::size_t, bool>> heard;
  auto out = t->get_many({{.url = (dir / "a.html").string()}, {.url = (dir / "missing.html").string()}},
                         [&](std::size_t i, const Expected<net::Response>& a) { heard.emplace_back(i, a.has_value()); });
  REQUIRE(out.size() == 2);
  CHECK(heard == std::vector<std::pair<std::size_t, bool>>{{0, true}, {1, false}});
  auto despite = t->get_many({{.url = (dir / "a.html").string()}},
                             [](std::size_t, const Expected<net::Response>&) { throw std::runtime_error("hook"); });
  REQUIRE(despite.size() == 1);  // a hook that throws loses only its own work
  REQUIRE(despite[0]);
  CHECK(despite[0]->body == "a");
  t->flush();  // nothing deferred: a no-op
  auto none = t->get_many({}, [&](std::size_t, const Expected<net::Response>&) { FAIL("no answers, no calls"); });
  CHECK(none.empty());
}

TEST_CASE("file transport streams to a sink, from the Range it asks for", "[transports][file][sink]") {
  TempDir dir;
  std::string body(3u << 20, '\0');  // three 1 MiB blocks
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 31 % 251);
  write_file(dir / "w.whl", body);
  auto t = transports::make_file_transport();
  test::MemorySink sink;
  net::Request rq{.url = (dir / "w.whl").string()};
  rq.sink = &sink;
  SECTION("whole: 200") {
    auto r = t->get(rq);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body.empty());
    CHECK(sink.begins == std::vector<int>{200});
    CHECK(sink.body == body);
    CHECK(sink.writes == 3);
  }
  SECTION("from byte N: 206 with a Content-Range") {
    sink.range = 1000;
    auto r = t->get(rq);
    REQUIRE(r);
    CHECK(r->status == 206);
    CHECK(sink.begins == std::vector<int>{206});
    CHECK(net::find_header(sink.begin_headers.at(0), "content-range") ==
          "bytes 1000-" + std::to_string(body.size() - 1) + "/" + std::to_string(body.size()));
    CHECK(sink.body == body.substr(1000));
  }
  SECTION("max_body applies to what is sent") {
    rq.max_body = 1000;
    auto r = t->get(rq);
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::too_large));
    CHECK(sink.begins.empty());
  }
}
