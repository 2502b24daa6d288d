// The cache keeps no secret: entries keyed and written without userinfo or credential query
// parameters (so a changed password finds the same entry), no Set-Cookie stored, folders 0700 and
// files 0600, and a corrupt entry's warning shows no secret either.
#ifndef _WIN32
#include <sys/stat.h>
#endif

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/memory_transport.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/util/log.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {

// Answers every request with one page (Cache-Control: max-age=600, a Set-Cookie), counting them.
std::unique_ptr<net::Transport> origin_page(int& count) {
  auto origin = std::make_shared<test::MemoryOrigin>();
  origin->handle([&count](const net::Request& r) -> std::optional<Expected<net::Response>> {
    ++count;
    return net::Response{r.url, "text/html", "<a href=\"pkg-1.0.whl\">pkg</a>", 200,
                               {{"cache-control", "max-age=600"}, {"set-cookie", "session=COOKIE-SECRET"}, {"etag", "\"v1\""}},
                               false};
  });
  return test::MemoryOrigin::transport_over(origin);
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

std::unique_ptr<net::Transport> cache_over(int& count, const fs::path& root) {
  auto c = transports::make_cache_transport(origin_page(count), {root, false});
  REQUIRE(c);
  return std::move(*c);
}

net::Request req_cache_secrets(std::string url) {
  net::Request r;
  r.url = std::move(url);
  return r;
}

}  // namespace

TEST_CASE("cache: entries carry no secret, keys ignore them, folders 0700 and files 0600", "[transports][cache][secrets]") {
  test::TempDir dir;
  const fs::path root = dir / "wheelfit" / "http";
  int count = 0;
  {
    auto cache = cache_over(count, root);
    auto first = cache->get(req_cache_secrets("https://alice:PW-ONE@idx.test/simple/pkg/?token=TOKEN-ONE"));
    REQUIRE(first);
    cache->flush();
    // Another password and token for the same page: the same entry, fresh, no request.
    auto second = cache->get(req_cache_secrets("https://alice:PW-TWO@idx.test/simple/pkg/?token=TOKEN-TWO"));
    REQUIRE(second);
    CHECK(second->from_cache);
    CHECK(second->url == "https://idx.test/simple/pkg/");
  }
  CHECK(count == 1);
#ifndef _WIN32  // no mode bits on Windows: the folder under %LOCALAPPDATA% is the user's by its ACL
  CHECK(test::file_mode(dir / "wheelfit") == 0700);
  CHECK(test::file_mode(root) == 0700);
  CHECK(test::file_mode(root / "v2") == 0700);
#endif
  const auto files = entries(root / "v2");
  REQUIRE(files.size() == 1);
#ifndef _WIN32
  CHECK(test::file_mode(files[0]) == 0600);
#endif
  const std::string text = test::read_file(files[0]);
  for (const char* secret : {"PW-ONE", "PW-TWO", "TOKEN-ONE", "TOKEN-TWO", "COOKIE-SECRET", "alice"}) {
    CAPTURE(secret);
    CHECK_THAT(text, !Catch::Contains(secret));
  }
  CHECK_THAT(text, Catch::Contains("\"etag\""));
}

#ifndef _WIN32
TEST_CASE("cache: an existing open v2 folder is made private", "[transports][cache][secrets][posix]") {
  test::TempDir dir;
  fs::create_directories(dir / "c" / "v2");
  ::chmod((dir / "c" / "v2").c_str(), 0755);
  int count = 0;
  auto cache = cache_over(count, dir / "c");
  CHECK(test::file_mode(dir / "c" / "v2") == 0700);
}
#endif

TEST_CASE("cache: a corrupt entry's warning shows no secret", "[transports][cache][secrets]") {
  test::TempDir dir;
  int count = 0;
  {
    auto cache = cache_over(count, dir / "c");
    REQUIRE(cache->get(req_cache_secrets("https://idx.test/simple/")));
  }
  const auto files = entries(dir / "c" / "v2");
  REQUIRE(files.size() == 1);
  // An entry written by an older wheelfit, for another request, with the secrets in its URL.
  std::string text = test::read_file(files[0]);
  const std::string plain = "\"url\":\"https://idx.test/simple/\"";
  REQUIRE(text.find(plain) != std::string::npos);
  text.replace(text.find(plain), plain.size(), "\"url\":\"https://bob:OLD-SECRET@idx.test/x/?access_token=OLD-TOKEN\"");
  test::write_file(files[0], text);

  std::vector<std::string> warnings;
  auto previous = log::set_sink([&](log::Level level, std::string_view m) {
    if (level == log::Level::warn) warnings.emplace_back(m);
  });
  {
    auto cache = cache_over(count, dir / "c");
    auto again = cache->get(req_cache_secrets("https://idx.test/simple/"));
    REQUIRE(again);
  }
  log::set_sink(previous);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("discarded the corrupt entry"));
  CHECK_THAT(warnings[0], !Catch::Contains("OLD-SECRET"));
  CHECK_THAT(warnings[0], !Catch::Contains("OLD-TOKEN"));
  CHECK(count == 2);
}
