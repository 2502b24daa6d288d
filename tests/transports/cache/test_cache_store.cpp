// The cache decorator's store: atomic writes, corrupt and replaced entries, the directory, writes behind the answers.
#ifndef _WIN32
#include <sys/resource.h>
#endif

#include <catch2/catch.hpp>
#ifndef _WIN32
#include <csignal>
#endif
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cache_fixture.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/util/log.hpp"

using namespace wheelfit;
using namespace wheelfit::test_cache;  // the fixture, and the names it uses

#ifndef _WIN32  // RLIMIT_FSIZE: a write that fails part-way, on Linux
TEST_CASE("cache: writes are atomic; a failed write leaves the old entry whole", "[transports][cache][posix]") {
  Fixture f;
  int n = 0;
  f.state->handle([&](const Request& r) -> Expected<Response> {
    ++n;
    if (n == 1) return ok("old body", {{"etag", "\"old\""}});
    if (n == 2) return ok(std::string(64 * 1024, 'n'), {{"etag", "\"new\""}});
    if (header(r, "if-none-match") == "\"old\"") return not_modified();
    return ok("unexpected");
  });
  REQUIRE(f.get(kUrl));

  // Make every write past 1 KiB fail (EFBIG) while the new, larger body is stored.
  rlimit old_limit{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 1024;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto r = f.get(kUrl);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  REQUIRE(r);
  CHECK(r->body.size() == 64 * 1024);  // the caller still gets the answer
  CHECK_FALSE(f.warnings.empty());
  CHECK_THAT(f.warnings.back(), Catch::Contains("could not store"));
  CHECK(f.files(".tmp").empty());
  // The old entry is intact: its validator is sent and a 304 serves the old body.
  auto after = f.get(kUrl);
  REQUIRE(after);
  CHECK(header(f.state->requests().back(), "if-none-match") == "\"old\"");
  CHECK(after->body == "old body");
  CHECK(after->from_cache);
}
#endif

TEST_CASE("cache: make_cache_transport checks its directory", "[transports][cache]") {
  TempDir dir;
  auto state = std::make_shared<test::MemoryOrigin>();
  SECTION("a file where the directory should be") {
    test::write_file(dir / "file", "x");
    auto c = transports::make_cache_transport(test::MemoryOrigin::transport_over(state), {dir / "file", false});
    REQUIRE_FALSE(c);
    CHECK(c.error().is(Errc::io_error));
    CHECK_THAT(c.error().message, Catch::Contains((dir / "file").string()));
  }
  SECTION("no inner transport") {
    auto c = transports::make_cache_transport(nullptr, {dir.path(), false});
    REQUIRE_FALSE(c);
    CHECK(c.error().is(Errc::invalid_input));
  }
#ifndef _WIN32  // XDG_CACHE_HOME and HOME: Linux's default folder (Windows': %LOCALAPPDATA%\wheelfit)
  SECTION("an empty dir means default_cache_dir()") {
    ScopedEnv xdg("XDG_CACHE_HOME", (dir / "xdg").string());
    auto c = transports::make_cache_transport(test::MemoryOrigin::transport_over(state), {});
    REQUIRE(c);
    CHECK(fs::is_directory(dir / "xdg" / "wheelfit" / "v2"));
  }
  SECTION("the default fails when there is no home") {
    ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
    ScopedEnv home("HOME", std::nullopt);
    auto c = transports::make_cache_transport(test::MemoryOrigin::transport_over(state), {});
    REQUIRE_FALSE(c);
    CHECK(c.error().is(Errc::invalid_input));
  }
#endif
}

TEST_CASE("cache: default_cache_dir", "[transports][cache][posix]") {  // XDG_CACHE_HOME and HOME
  struct Row {
    std::optional<std::string> xdg, home;
    std::optional<std::string> expected;  // nullopt: invalid_input
  };
  auto row = GENERATE(values<Row>({
      {"/x/cache", "/home/u", "/x/cache/wheelfit"},
      {std::nullopt, "/home/u", "/home/u/.cache/wheelfit"},
      {"", "/home/u", "/home/u/.cache/wheelfit"},            // blank = unset
      {"relative/cache", "/home/u", "/home/u/.cache/wheelfit"},  // relative XDG is ignored (XDG spec)
      {"/x/cache", std::nullopt, "/x/cache/wheelfit"},
      {std::nullopt, std::nullopt, std::nullopt},
      {"", "", std::nullopt},
      {std::nullopt, "relative/home", std::nullopt},
  }));
  CAPTURE(row.xdg, row.home);
  ScopedEnv xdg("XDG_CACHE_HOME", row.xdg);
  ScopedEnv home("HOME", row.home);
  auto d = transports::default_cache_dir();
  if (row.expected) {
    REQUIRE(d);
    CHECK(d->string() == *row.expected);
  } else {
    REQUIRE_FALSE(d);
    CHECK(d.error().is(Errc::invalid_input));
  }
}

TEST_CASE("cache: a body found corrupt under a 304 is fetched again without validators", "[transports][cache]") {
  Fixture f;
  int n = 0;
  f.state->handle([&](const Request& r) -> Expected<Response> {
    ++n;
    if (header(r, "if-none-match") == "\"v\"") return not_modified();
    return ok(n == 1 ? kPage : "second copy", {{"etag", "\"v\""}, {"cache-control", "max-age=0"}});
  });
  REQUIRE(f.get(kUrl));
  const auto entry = f.files(".entry").front();
  auto [sidecar, body] = split_entry(entry);
  body[0] = static_cast<char>(body[0] ^ 0x20);
  write_entry(entry, sidecar, body);

  auto r = f.get(kUrl);
  REQUIRE(r);
  CHECK(r->body == "second copy");  // never the corrupt bytes
  CHECK_FALSE(r->from_cache);
  REQUIRE(f.state->requests().size() == 3);
  CHECK(header(f.state->requests()[1], "if-none-match") == "\"v\"");  // sent with the bodies still being read
  CHECK(header(f.state->requests()[2], "if-none-match") == "<absent>");
  REQUIRE(f.warnings.size() == 1);
  CHECK_THAT(f.warnings[0], Catch::Contains("sha256") && Catch::Contains(kUrl));
  CHECK(f.cache->stats().cache_revalidated == 0);
  auto again = f.get(kUrl);
  REQUIRE(again);
  CHECK(again->body == "second copy");
  CHECK(again->from_cache);  // the refetched entry was stored, and a 304 serves it
}

TEST_CASE("cache: a 304 rewrites the sidecar only when a later run would read it", "[transports][cache]") {
  struct Row {
    const char* what;
    Headers not_modified_headers;
    bool rewritten;
  };
  auto row = GENERATE(values<Row>({
      {"max-age=0 again: every later run revalidates anyway", {{"cache-control", "max-age=0"}}, false},
      {"nothing new", {}, false},
      {"max-age=600: fresh for later runs", {{"cache-control", "max-age=600"}}, true},
      {"a new ETag", {{"etag", "\"v2\""}}, true},
      {"a new Last-Modified", {{"last-modified", "Thu, 21 Aug 2025 10:00:00 GMT"}}, true},
  }));
  CAPTURE(row.what);
  Fixture f;
  f.state->handle([&](const Request& r) -> Expected<Response> {
    if (header(r, "if-none-match") != "<absent>") return not_modified(row.not_modified_headers);
    return ok(kPage, {{"etag", "\"v1\""}, {"last-modified", "Wed, 20 Aug 2025 10:00:00 GMT"}, {"cache-control", "max-age=0"}});
  });
  REQUIRE(f.get(kUrl));
  const auto entry = f.files(".entry").front();
  const auto before = file_identity(entry);

  auto r = f.get(kUrl);
  REQUIRE(r);
  CHECK(r->from_cache);
  CHECK(r->body == kPage);
  CHECK(f.cache->stats().cache_revalidated == 1);
  CHECK((file_identity(entry) != before) == row.rewritten);  // a rewrite is a new file renamed in place
  if (row.rewritten) {  // the body went along with the refreshed sidecar
    CHECK(split_entry(entry).body == kPage);
    f.reopen(false);
    auto later = f.get(kUrl);
    REQUIRE(later);
    CHECK(later->body == kPage);
  }
  CHECK(f.files(".tmp").empty());
}

TEST_CASE("cache: writes land behind the answers and are finished by the next batch or destruction",
          "[transports][cache]") {
  Fixture f;
  f.state->handle([](const Request& r) -> Expected<Response> {
    return ok("body of " + r.url, {{"cache-control", "max-age=3600"}});
  });
  std::vector<Request> reqs;
  for (int i = 0; i < 20; ++i) reqs.push_back(req("https://idx.example/p" + std::to_string(i) + "/"));
  auto out = f.cache->get_many(reqs);  // no flush
  REQUIRE(out.size() == 20);
  for (std::size_t i = 0; i < out.size(); ++i) {
    REQUIRE(out[i]);
    CHECK(out[i]->body == "body of " + reqs[i].url);
  }

  SECTION("the next batch on the same object reads them") {
    auto again = f.cache->get_many(reqs);
    for (const auto& a : again) {
      REQUIRE(a);
      CHECK(a->from_cache);
    }
    CHECK(f.state->requests().size() == 20);
  }
  SECTION("destruction finishes them") {
    f.cache.reset();
    CHECK(f.files(".entry").size() == 20);
    CHECK(f.files(".tmp").empty());
    f.reopen(false);
    auto again = f.cache->get_many(reqs);
    for (const auto& a : again) {
      REQUIRE(a);
      CHECK(a->from_cache);
    }
    CHECK(f.state->requests().size() == 20);
  }
}

TEST_CASE("cache: an entry replaced by another writer while it is read is a miss, not corruption",
          "[transports][cache]") {
  Fixture f;
  int n = 0;
  fs::path entry;
  f.state->handle([&](const Request& r) -> Expected<Response> {
    ++n;
    if (header(r, "if-none-match") == "\"v\"") {
      // Another process renames a new entry in while this batch reads the old one's body (on the
      // helper thread, before or after this: either way nothing may be called corrupt).
      const auto [sidecar, body] = split_entry(entry);
      const auto tmp = entry.parent_path() / ".tmp-other-process";
      write_entry(tmp, sidecar, "another writer's bytes, not matching this sidecar");
#ifdef _WIN32
      // As the cache's own writers do (util::win::replace): a rename over a file another thread
      // is reading waits for its handle (wine, and Windows without POSIX rename semantics, refuse
      // it meanwhile with "access denied").
      REQUIRE(util::win::replace(tmp, entry));
#else
      fs::rename(tmp, entry);
#endif
      return not_modified();
    }
    return ok(n == 1 ? kPage : "refetched", {{"etag", "\"v\""}, {"cache-control", "max-age=0"}});
  });
  REQUIRE(f.get(kUrl));
  entry = f.files(".entry").front();
  auto r = f.get(kUrl);
  REQUIRE(r);
  CHECK(f.warnings.empty());
  if (r->body == kPage) {
    CHECK(r->from_cache);  // the body was read before the rename: the 304 served it
    CHECK(f.state->requests().size() == 2);
  } else {
    CHECK(r->body == "refetched");  // read after: a plain refetch, no warning
    REQUIRE(f.state->requests().size() == 3);
    CHECK(header(f.state->requests()[2], "if-none-match") == "<absent>");
  }
}
