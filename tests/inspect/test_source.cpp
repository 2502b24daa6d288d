// Byte sources: the local file (pread), the memory buffer, and the remote source over a scripted
// in-memory transport (Range honoured, ignored, answered wrongly). The same remote source over the
// real http transport and a loopback server is in tests/inspect/remote/.
#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"

using namespace wheelfit;
using namespace wheelfit::inspect;
using namespace wheelfit::test;
namespace tr = wheelfit::net;

namespace {

std::string sample(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

struct RangeCase {
  std::uint64_t offset, length;
  bool ok;
};

const std::vector<RangeCase>& range_cases() {
  static const std::vector<RangeCase> cases = {
      {0, 0, true},      {0, 1, true},   {0, 1000, true},  {999, 1, true},          {1000, 0, true},
      {500, 500, true},  {1000, 1, false}, {999, 2, false}, {0, 1001, false},       {5000, 1, false},
      {~std::uint64_t{0}, 2, false},      {2, ~std::uint64_t{0}, false},           {~std::uint64_t{0}, 0, false},
  };
  return cases;
}

void check_ranges(ByteSource& src, const std::string& bytes) {
  for (const auto& c : range_cases()) {
    CAPTURE(c.offset, c.length);
    auto r = src.read(c.offset, c.length);
    REQUIRE(r.has_value() == c.ok);
    if (c.ok) {
      CHECK(*r == bytes.substr(static_cast<std::size_t>(c.offset), static_cast<std::size_t>(c.length)));
    } else {
      CHECK(r.error().is(Errc::invalid_input));
      CHECK_THAT(r.error().message, Catch::Contains(src.name()));
      CHECK_THAT(r.error().message, Catch::Contains("past the end of the 1000-byte file"));
    }
  }
}

}  // namespace

TEST_CASE("source: memory and file sources read exact ranges and refuse the rest", "[inspect][source]") {
  const std::string bytes = sample(1000);
  SECTION("memory") {
    auto src = memory_source(bytes, "mem.whl");
    CHECK(src->size() == 1000);
    CHECK(src->name() == "mem.whl");
    check_ranges(*src, bytes);
    CHECK_FALSE(src->downloaded_whole());
  }
  SECTION("file") {
    TempDir dir;
    write_file(dir / "f.whl", bytes);
    auto src = open_file_source((dir / "f.whl").string());
    REQUIRE(src);
    CHECK((*src)->size() == 1000);
    CHECK((*src)->name() == (dir / "f.whl").string());
    check_ranges(**src, bytes);
    CHECK((*src)->bytes_fetched() == 0 + 1 + 1000 + 1 + 0 + 500);
  }
}

TEST_CASE("source: file source errors name the path", "[inspect][source]") {
  TempDir dir;
  auto missing = open_file_source((dir / "nope.whl").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().is(Errc::not_found));
  CHECK_THAT(missing.error().message, Catch::Contains("nope.whl"));

  auto folder = open_file_source(dir.path().string());
  REQUIRE_FALSE(folder);
  CHECK(folder.error().is(Errc::io_error));
  CHECK_THAT(folder.error().message, Catch::Contains(dir.path().string()));
}

TEST_CASE("source: a wheel on disk reads through the zip reader", "[inspect][source][zip]") {
  TempDir dir;
  const std::vector<ZipMember> members = {{"a/_x.so", sample(70000), true}, {"a/b.txt", "hello", false}};
  write_file(dir / "w.whl", build_zip(members));
  auto src = open_file_source((dir / "w.whl").string());
  REQUIRE(src);
  auto zd = read_zip_directory(**src);
  REQUIRE(zd);
  REQUIRE(zd->entries.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    auto m = read_zip_member(**src, zd->entries[i]);
    REQUIRE(m);
    CHECK(*m == members[i].data);
  }
}

// --- the remote source over a scripted transport ------------------------------------------------

namespace {

/// Serves one file from memory; `answer` decides how a request is answered.
class FakeTransport final : public tr::Transport {
 public:
  using Answer = std::function<Expected<tr::Response>(const std::string& file, const tr::Request&)>;
  FakeTransport(std::string file, Answer answer) : file_(std::move(file)), answer_(std::move(answer)) {}
  std::vector<tr::Request> seen;

 private:
  Expected<tr::Response> get_impl(const tr::Request& request) override {
    seen.push_back(request);
    auto r = answer_(file_, request);
    if (r && r->body.size() > request.max_body) {
      return unexpected(Errc::too_large, "body above max_body");
    }
    return r;
  }
  std::string file_;
  Answer answer_;
};

/// (first, last) of "bytes=a-b" / "bytes=-n" against `size`.
std::pair<std::uint64_t, std::uint64_t> parse_range(std::string_view v, std::uint64_t size) {
  v.remove_prefix(6);
  const auto dash = v.find('-');
  std::uint64_t a = 0, b = 0;
  if (dash == 0) {
    std::from_chars(v.data() + 1, v.data() + v.size(), b);
    return {size - std::min(size, b), size - 1};
  }
  std::from_chars(v.data(), v.data() + dash, a);
  std::from_chars(v.data() + dash + 1, v.data() + v.size(), b);
  return {a, std::min(b, size - 1)};
}

tr::Response partial(const std::string& file, std::uint64_t first, std::uint64_t last, std::uint64_t cr_first,
                     std::uint64_t cr_total) {
  tr::Response r;
  r.status = 206;
  r.body = file.substr(first, last - first + 1);
  r.headers = {{"content-range", "bytes " + std::to_string(cr_first) + "-" + std::to_string(cr_first + last - first) +
                                     "/" + std::to_string(cr_total)}};
  return r;
}

Expected<tr::Response> honour(const std::string& file, const tr::Request& rq) {
  const auto range = tr::find_header(rq.headers, "Range");
  REQUIRE(range);
  const auto [a, b] = parse_range(*range, file.size());
  return partial(file, a, b, a, file.size());
}

Expected<tr::Response> ignore(const std::string& file, const tr::Request&) {
  tr::Response r;
  r.body = file;
  return r;
}

std::string big_wheel() {
  std::vector<ZipMember> members;
  members.push_back({"pkg/_ext.so", sample(5000), true});
  members.push_back({"pkg/data.bin", random_bytes(300000, 88172645463325252ull), false});
  members.push_back({"pkg/_small.so", sample(100), false});
  return build_zip(members);
}

}  // namespace

TEST_CASE("source: remote source, Range honoured: the tail once, then only what is read", "[inspect][source]") {
  const std::string wheel = big_wheel();
  FakeTransport t(wheel, honour);
  auto src = open_remote_source(t, "https://example.test/w.whl");
  REQUIRE(src);
  CHECK((*src)->size() == wheel.size());
  CHECK((*src)->name() == "https://example.test/w.whl");
  CHECK_FALSE((*src)->downloaded_whole());
  REQUIRE(t.seen.size() == 1);
  CHECK(*tr::find_header(t.seen[0].headers, "Range") == "bytes=-65536");
  CHECK((*src)->bytes_fetched() == 65536);

  auto dir = read_zip_directory(**src);
  REQUIRE(dir);
  CHECK(t.seen.size() == 1);  // the end records and the directory came from the cached tail
  for (const auto& e : dir->entries) {
    if (!e.name.ends_with(".so")) continue;
    auto m = read_zip_member(**src, e);
    REQUIRE(m);
  }
  CHECK(t.seen.size() == 2);  // _ext.so at the start; _small.so lies inside the tail
  CHECK((*src)->bytes_fetched() < 65536 + 6000);
  // A read spanning the start of the tail fetches only what lies before it.
  const std::uint64_t tail_start = wheel.size() - 65536;
  auto span = (*src)->read(tail_start - 10, 20);
  REQUIRE(span);
  CHECK(*span == wheel.substr(tail_start - 10, 20));
  CHECK(*tr::find_header(t.seen.back().headers, "Range") ==
        "bytes=" + std::to_string(tail_start - 10) + "-" + std::to_string(tail_start - 1));
}

TEST_CASE("source: remote source, a small file: the tail request returns it whole", "[inspect][source]") {
  const std::string wheel = build_zip({{"a.so", "x", false}});
  FakeTransport t(wheel, honour);
  auto src = open_remote_source(t, "u");
  REQUIRE(src);
  CHECK((*src)->size() == wheel.size());
  CHECK((*src)->bytes_fetched() == wheel.size());
  auto dir = read_zip_directory(**src);
  REQUIRE(dir);
  CHECK(*read_zip_member(**src, dir->entries[0]) == "x");
  CHECK(t.seen.size() == 1);
}

TEST_CASE("source: remote source, Range ignored: one full download served from memory", "[inspect][source]") {
  const std::string wheel = big_wheel();
  FakeTransport t(wheel, ignore);
  auto src = open_remote_source(t, "u");
  REQUIRE(src);
  CHECK((*src)->downloaded_whole());
  CHECK((*src)->size() == wheel.size());
  CHECK((*src)->bytes_fetched() == wheel.size());
  auto dir = read_zip_directory(**src);
  REQUIRE(dir);
  for (const auto& e : dir->entries) REQUIRE(read_zip_member(**src, e));
  CHECK(t.seen.size() == 1);

  SECTION("above max_download: too_large naming the URL") {
    FakeTransport t2(wheel, ignore);
    auto small = open_remote_source(t2, "https://h/w.whl", 100000);
    REQUIRE_FALSE(small);
    CHECK(small.error().is(Errc::too_large));
    CHECK_THAT(small.error().message, Catch::Contains("https://h/w.whl"));
    CHECK_THAT(small.error().message, Catch::Contains("ignored the Range request"));
  }
}

TEST_CASE("source: remote source, wrong Content-Range answers are protocol errors (N05)", "[inspect][source]") {
  const std::string wheel = big_wheel();
  const std::uint64_t size = wheel.size();
  struct Row {
    const char* what;
    FakeTransport::Answer answer;
    bool fails_at_open;
    const char* message;
  };
  auto on_reads = [](FakeTransport::Answer bad) {
    return [bad](const std::string& file, const tr::Request& rq) -> Expected<tr::Response> {
      if (*tr::find_header(rq.headers, "Range") == "bytes=-65536") return honour(file, rq);
      return bad(file, rq);
    };
  };
  // The honest answer, then `alter`ed.
  auto altered = [](std::function<void(tr::Response&)> alter) {
    return [alter](const std::string& file, const tr::Request& rq) -> Expected<tr::Response> {
      auto r = honour(file, rq);
      alter(*r);
      return r;
    };
  };
  const auto rows = std::vector<Row>{
      {"tail at the wrong offset", [size](const std::string& f, const tr::Request&) -> Expected<tr::Response> {
         return partial(f, size - 65536, size - 1, size - 65536 - 100, size);
       }, true, "expected bytes"},
      {"tail without Content-Range", altered([](tr::Response& r) { r.headers.clear(); }), true, "without Content-Range"},
      {"tail with a malformed Content-Range",
       altered([](tr::Response& r) { r.headers = {{"content-range", "bytes */1000"}}; }), true, "malformed Content-Range"},
      {"tail body shorter than its Content-Range", altered([](tr::Response& r) { r.body.pop_back(); }), true,
       "the body has 65535"},
      {"a 204 to the tail", [](const std::string&, const tr::Request&) -> Expected<tr::Response> {
         tr::Response r;
         r.status = 204;
         return r;
       }, true, "HTTP 204"},
      {"member read at the wrong offset", on_reads([](const std::string& f, const tr::Request& rq) -> Expected<tr::Response> {
         const auto [a, b] = parse_range(*tr::find_header(rq.headers, "Range"), f.size());
         return partial(f, a + 1, b + 1, a + 1, f.size());  // the next bytes, honestly labelled
       }), false, "the server answered Content-Range"},
      {"member read labelled right, total wrong", on_reads([](const std::string& f, const tr::Request& rq) -> Expected<tr::Response> {
         const auto [a, b] = parse_range(*tr::find_header(rq.headers, "Range"), f.size());
         return partial(f, a, b, a, f.size() + 1);
       }), false, "the server answered Content-Range"},
      {"member read, 200 with a partial body", on_reads([](const std::string& f, const tr::Request&) -> Expected<tr::Response> {
         tr::Response r;
         r.body = f.substr(0, 100);
         return r;
       }), false, "answered 200 with 100 bytes"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    FakeTransport t(wheel, row.answer);
    auto src = open_remote_source(t, "https://h/w.whl");
    Error error;
    if (row.fails_at_open) {
      REQUIRE_FALSE(src);
      error = src.error();
    } else {
      REQUIRE(src);
      auto dir = read_zip_directory(**src);
      REQUIRE(dir);
      auto m = read_zip_member(**src, dir->entries[0]);
      REQUIRE_FALSE(m);
      error = m.error();
    }
    CHECK(tr::is(error, tr::NetErrc::protocol));
    CHECK_THAT(error.message, Catch::Contains("https://h/w.whl"));
    CHECK_THAT(error.message, Catch::Contains(row.message));
  }
}

TEST_CASE("source: remote source passes the transport's errors through", "[inspect][source]") {
  FakeTransport t("", [](const std::string&, const tr::Request& rq) -> Expected<tr::Response> {
    return unexpected(Errc::not_found, "not found: HTTP 404 for " + rq.url);
  });
  auto src = open_remote_source(t, "https://h/missing.whl");
  REQUIRE_FALSE(src);
  CHECK(src.error().is(Errc::not_found));
  CHECK_THAT(src.error().message, Catch::Contains("missing.whl"));
}

TEST_CASE("source: remote source pins later reads with If-Range: a strong ETag, else Last-Modified (N13)",
          "[inspect][source]") {
  const std::string wheel = big_wheel();
  struct Row {
    const char* what;
    tr::Headers validators;
    std::optional<std::string> if_range;
  };
  const std::vector<Row> rows{
      {"a strong ETag", {{"etag", "\"abc\""}, {"last-modified", "Mon, 01 Jan 2024 00:00:00 GMT"}}, "\"abc\""},
      {"a weak ETag cannot pin: Last-Modified does", {{"etag", "W/\"abc\""}, {"last-modified", "Mon, 01 Jan 2024 00:00:00 GMT"}},
       "Mon, 01 Jan 2024 00:00:00 GMT"},
      {"a weak ETag alone: no If-Range", {{"etag", "W/\"abc\""}}, std::nullopt},
      {"no validator: no If-Range", {}, std::nullopt},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    FakeTransport t(wheel, [&](const std::string& file, const tr::Request& rq) -> Expected<tr::Response> {
      auto r = honour(file, rq);
      for (const auto& h : row.validators) r->headers.push_back(h);
      return r;
    });
    auto src = open_remote_source(t, "https://h/w.whl");
    REQUIRE(src);
    REQUIRE((*src)->read(0, 10));
    REQUIRE(t.seen.size() == 2);
    const auto sent = tr::find_header(t.seen[1].headers, "If-Range");
    CHECK(sent.has_value() == row.if_range.has_value());
    if (row.if_range && sent) CHECK(*sent == *row.if_range);
    CHECK((*src)->generation() == 0);
  }
}
