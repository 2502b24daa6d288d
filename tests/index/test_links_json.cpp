// Tests of wheelfit::index's JSON pages: PEP 691 project pages and the farm's packages.json.

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "index/links_support.hpp"
#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/links.hpp"

using namespace wheelfit;
using namespace wheelfit::index;
using Catch::Matchers::StartsWith;
using test::ErrorCase;
using test::kSha2;

namespace {

/// Each row's body through `parse(body, where)`: an error of the row's code whose message starts
/// with "<where>: " and holds the row's part.
template <class Parse>
void check_rejects(const std::vector<ErrorCase>& rows, const std::string& where, Parse parse) {
  for (const ErrorCase& row : rows) {
    CAPTURE(row.input);
    const auto parsed = parse(row.input, where);
    CHECK_THAT(test::check_error(parsed, row), StartsWith(where + ": "));
  }
}

}  // namespace

// =============================================================================================
// PEP 691 JSON

TEST_CASE("parse_simple_json reads a PEP 691 project page", "[index][json]") {
  const std::string body = R"({
  "meta": {"api-version": "1.1"},
  "name": "foo",
  "files": [
    {"filename": "foo-1.0-py3-none-any.whl", "url": "https://files.example.org/foo-1.0-py3-none-any.whl",
     "hashes": {"sha256": ")" + std::string(64, 'A') + R"(", "md5": "00"}, "requires-python": ">=3.10",
     "yanked": false},
    {"filename": "foo-1.1+cu128-py3-none-any.whl", "url": "../../files/foo-1.1%2Bcu128-py3-none-any.whl",
     "hashes": {}, "yanked": "bad build"},
    {"filename": "foo-1.2.tar.gz", "url": "foo-1.2.tar.gz", "yanked": true, "requires-python": null,
     "dist-info-metadata": false, "size": 12},
    {"filename": "foo-1.3.tar.gz", "url": "foo-1.3.tar.gz#sha256=)" + kSha2 + R"(", "yanked": null}
  ]
})";
  auto page = parse_simple_json(body, "https://example.org/simple/foo/");
  REQUIRE(page);
  REQUIRE(page->links.size() == 4);
  CHECK(page->skipped.empty());
  const Link& a = page->links[0];
  CHECK(a.text == "foo-1.0-py3-none-any.whl");
  CHECK(a.filename == "foo-1.0-py3-none-any.whl");
  CHECK(a.url == "https://files.example.org/foo-1.0-py3-none-any.whl");
  CHECK(a.sha256 == std::string(64, 'a'));
  CHECK(a.requires_python == ">=3.10");
  CHECK_FALSE(a.yanked);
  const Link& b = page->links[1];
  CHECK(b.url == "https://example.org/files/foo-1.1%2Bcu128-py3-none-any.whl");
  CHECK(b.filename == "foo-1.1+cu128-py3-none-any.whl");
  CHECK(b.text == "foo-1.1+cu128-py3-none-any.whl");
  CHECK_FALSE(b.sha256);
  CHECK(b.yanked);
  CHECK(b.yank_reason == "bad build");
  const Link& c = page->links[2];
  CHECK(c.url == "https://example.org/simple/foo/foo-1.2.tar.gz");
  CHECK(c.yanked);
  CHECK(c.yank_reason.empty());
  CHECK_FALSE(c.requires_python);
  CHECK(c.size == 12u);  // PEP 700
  CHECK_FALSE(a.size);   // none given
  const Link& d = page->links[3];
  CHECK(d.url == "https://example.org/simple/foo/foo-1.3.tar.gz");
  CHECK(d.sha256 == kSha2);
  CHECK_FALSE(d.yanked);
}

TEST_CASE("parse_simple_json reads PEP 700's size up to INT64_MAX, null as unknown", "[index][json]") {
  struct Row {
    std::string size;
    std::optional<std::uint64_t> read;
  };
  const std::vector<Row> rows = {{"0", 0u}, {"1234", 1234u}, {"9223372036854775807", 9223372036854775807u}, {"null", std::nullopt}};
  for (const auto& row : rows) {
    CAPTURE(row.size);
    auto page = parse_simple_json(R"({"meta":{"api-version":"1.1"},"name":"x","files":[{"filename":"x-1.whl","url":"x-1.whl","size":)" +
                                      row.size + "}]}",
                                  "https://example.org/simple/x/");
    REQUIRE(page);
    REQUIRE(page->links.size() == 1);
    CHECK(page->links[0].size == row.read);
  }
}

TEST_CASE("parse_simple_json skips a file whose URL names an unsafe file", "[index][json]") {
  auto page = parse_simple_json(
      R"({"meta":{"api-version":"1.0"},"name":"x","files":[
          {"filename":"x-1.whl","url":"..%2F..%2Fx-1.whl"},
          {"filename":"y-1.whl","url":"y-1.whl"}]})",
      "https://example.org/simple/x/");
  REQUIRE(page);
  REQUIRE(page->links.size() == 1);
  CHECK(page->links[0].filename == "y-1.whl");
  REQUIRE(page->skipped.size() == 1);
  CHECK_THAT(page->skipped[0], StartsWith("files[0].url '..%2F..%2Fx-1.whl': file name '../../x-1.whl' holds"));
}

TEST_CASE("parse_simple_json accepts any 1.x api-version and an empty file list", "[index][json]") {
  for (std::string_view v : {"1.0", "1.1", "1.4", "1.99"}) {
    CAPTURE(v);
    auto page = parse_simple_json(R"({"meta":{"api-version":")" + std::string(v) + R"("},"name":"x","files":[]})",
                                  "https://example.org/simple/x/");
    REQUIRE(page);
    CHECK(page->links.empty());
  }
}

TEST_CASE("parse_simple_json rejects malformed pages, naming the page and the field", "[index][json]") {
  const std::string file_ok = R"({"filename":"a-1.whl","url":"a-1.whl"})";
  auto with_files = [&](const std::string& files) {
    return R"({"meta":{"api-version":"1.0"},"name":"x","files":[)" + files + "]}";
  };
  check_rejects({
      {"", "invalid JSON"},
      {"{", "invalid JSON"},
      {"<html></html>", "invalid JSON"},
      {R"({"meta":{"api-version":"1.0"},"files":[]} x)", "invalid JSON"},
      {"[]", "top level: not an object (got an array)"},
      {R"({"files":[]})", "meta: missing"},
      {R"({"meta":1,"files":[]})", "meta: not an object"},
      {R"({"meta":{},"files":[]})", "meta.api-version: missing"},
      {R"({"meta":{"api-version":1.0},"files":[]})", "meta.api-version: not a string"},
      {R"({"meta":{"api-version":"one"},"files":[]})", "meta.api-version: 'one' is not"},
      {R"({"meta":{"api-version":"1"},"files":[]})", "meta.api-version: '1' is not"},
      {R"({"meta":{"api-version":"2.0"},"files":[]})", "meta.api-version: version 2.0 is not supported", Errc::unsupported},
      {R"({"meta":{"api-version":"1.0"}})", "files: missing"},
      {R"({"meta":{"api-version":"1.0"},"files":{}})", "files: not an array (got an object)"},
      {with_files("1"), "files[0]: not an object (got a number)"},
      {with_files(file_ok + "," + file_ok + "," + file_ok + R"(,{"filename":"d-1.whl","url":3})"),
       "files[3].url: not a string (got a number)"},
      {with_files(R"({"url":"a-1.whl"})"), "files[0].filename: missing"},
      {with_files(R"({"filename":"a-1.whl"})"), "files[0].url: missing"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","hashes":[]})"),
       "files[0].hashes: not an object"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","hashes":{"sha256":"abc"}})"),
       "files[0].hashes.sha256: 'abc' is not 64 hex digits"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","hashes":{"sha256":7}})"),
       "files[0].hashes.sha256: not a string"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","requires-python":3})"),
       "files[0].requires-python: not a string"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","yanked":1})"),
       "files[0].yanked: not a boolean or a string (got a number)"},
      // PEP 700's size: bytes, an integer a TOML integer holds (pylock.toml writes it), never guessed.
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","size":"12"})"), "files[0].size: not an integer (got a string)"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","size":true})"), "files[0].size: not an integer (got a boolean)"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","size":12.5})"), "files[0].size: 1.25E1 is not a size in bytes"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","size":-1})"), "files[0].size: -1 is not a size in bytes"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","size":9223372036854775808})"),
       "files[0].size: 9223372036854775808 is not a size in bytes (an integer from 0 to 9223372036854775807)"},
      {with_files(R"({"filename":"a-1.whl","url":"a-1.whl","size":1e300})"), "files[0].size: 1E300 is not a size in bytes"},
  }, "https://example.org/simple/x/", [](const std::string& body, const std::string& url) {
    return parse_simple_json(body, url);
  });
}

TEST_CASE("parse_simple_json rejects nesting too deep to be a project page", "[index][json]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto page = parse_simple_json(deep, "https://example.org/simple/x/");
  REQUIRE_FALSE(page);
  CHECK(page.error().is(Errc::invalid_input));
}

// =============================================================================================
// packages.json

namespace {
const std::string kPackagesJson = R"({
  "schema": 1,
  "repo": "Example/wheels",
  "packages": {
    "Foo_Bar.baz": {
      "torch_free": false,
      "wheels": [
        {"filename": "foo_bar_baz-1.0+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
         "url": "https://h.example/foo_bar_baz-1.0%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl",
         "sha256": ")" + std::string(64, 'A') + R"(", "cuda": "12.8", "torch": "2.8", "python": "312",
         "platform": "linux", "version": "1.0", "abi": "cp"},
        {"filename": "foo_bar_baz-1.0+cu128torch2.8-cp312-cp312-win_amd64.whl",
         "url": "https://h.example/foo_bar_baz-1.0%2Bcu128torch2.8-cp312-cp312-win_amd64.whl"}
      ]
    },
    "cumm": {
      "torch_free": true,
      "wheels": [
        {"filename": "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl",
         "url": "https://h.example/cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl",
         "sha256": ")" + std::string(64, 'c') + R"(", "cuda": null}
      ]
    },
    "empty": {"wheels": []}
  }
})";
}  // namespace

TEST_CASE("parse_packages_json reads schema 1", "[index][packages-json]") {
  auto pj = parse_packages_json(kPackagesJson, "https://h.example/packages.json");
  REQUIRE(pj);
  CHECK(pj->repo == "Example/wheels");
  REQUIRE(pj->packages.size() == 3);
  REQUIRE(pj->packages.count("foo-bar-baz") == 1);  // PEP 503 normalised key
  const PackagesJsonEntry& foo = pj->packages.at("foo-bar-baz");
  CHECK_FALSE(foo.torch_free);
  REQUIRE(foo.wheels.size() == 2);
  CHECK(foo.wheels[0].filename == "foo_bar_baz-1.0+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
  CHECK(foo.wheels[0].sha256 == std::string(64, 'a'));  // lower-cased
  // The farm's descriptive fields (its line, torch, python, platform, abi; null or not) are not
  // read: the resolver judges each wheel by its name.
  CHECK_FALSE(foo.wheels[1].sha256);
  CHECK(pj->packages.at("cumm").torch_free);
  CHECK(pj->packages.at("empty").wheels.empty());
  CHECK_FALSE(pj->packages.at("empty").torch_free);
}

TEST_CASE("PackagesJson::sha256_for looks up by URL, then by file name", "[index][packages-json]") {
  auto pj = parse_packages_json(kPackagesJson, "packages.json");
  REQUIRE(pj);
  const std::string cumm_url = "https://h.example/cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl";
  const std::string cumm_file = "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl";
  CHECK(pj->sha256_for(cumm_url, "whatever.whl") == std::string(64, 'c'));
  CHECK(pj->sha256_for("https://mirror.example/x/" + cumm_file, cumm_file) == std::string(64, 'c'));
  CHECK(pj->sha256_for("https://mirror.example/x/cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl", "") ==
        std::string(64, 'c'));  // the file name from the URL when none is given
  CHECK(pj->sha256_for("", cumm_file) == std::string(64, 'c'));
  CHECK_FALSE(pj->sha256_for("https://h.example/unknown-1.whl", "unknown-1.whl"));
  CHECK_FALSE(pj->sha256_for("https://h.example/foo_bar_baz-1.0%2Bcu128torch2.8-cp312-cp312-win_amd64.whl",
                             "foo_bar_baz-1.0+cu128torch2.8-cp312-cp312-win_amd64.whl"));  // listed, no hash
  CHECK_FALSE(pj->sha256_for("", ""));

  SECTION("two different hashes for one file name are a conflict, not a pick") {
    PackagesJson copy = *pj;
    copy.packages["other"].wheels.push_back({cumm_file, "https://elsewhere.example/c.whl", std::string(64, 'd')});
    PackagesJson unindexed;  // the same data, answered by a linear scan
    unindexed.packages = copy.packages;
    copy.build_lookup();
    for (const PackagesJson* p : {&copy, &unindexed}) {
      CHECK_FALSE(p->sha256_for("https://mirror.example/c.whl", cumm_file));
      CHECK(p->sha256_for("https://elsewhere.example/c.whl", cumm_file) == std::string(64, 'd'));  // the URL decides
      CHECK(p->sha256_for(cumm_url, "whatever.whl") == std::string(64, 'c'));
    }
  }
}

TEST_CASE("parse_packages_json rejects other schemas and wrong shapes, naming the path", "[index][packages-json]") {
  auto with_pkgs = [](const std::string& pkgs) { return R"({"schema":1,"packages":)" + pkgs + "}"; };
  const std::string w = R"({"filename":"c-1.whl","url":"https://h/c-1.whl"})";
  const std::vector<ErrorCase> rows = {
      {"", "invalid JSON"},
      {R"({"schema":1,"packages":{})", "invalid JSON"},
      {"[1]", "top level: not an object"},
      {R"({"packages":{}})", "schema: missing"},
      {R"({"schema":2,"packages":{}})", "schema: schema '2' is not supported", Errc::unsupported},
      {R"({"schema":"1","packages":{}})", "schema: schema '\"1\"' is not supported", Errc::unsupported},
      {R"({"schema":1.0,"packages":{}})", "is not supported", Errc::unsupported},
      {R"({"schema":-1,"packages":{}})", "schema '-1'", Errc::unsupported},
      {R"({"schema":1})", "packages: missing"},
      {R"({"schema":1,"packages":[]})", "packages: not an object (got an array)"},
      {R"({"schema":1,"repo":5,"packages":{}})", "repo: not a string"},
      {with_pkgs(R"({"cumm":[]})"), "packages.cumm: not an object"},
      {with_pkgs(R"({"cumm":{"torch_free":"yes","wheels":[]}})"),
       "packages.cumm.torch_free: not a boolean (got a string)"},
      {with_pkgs(R"({"cumm":{"torch_free":true}})"), "packages.cumm.wheels: missing"},
      {with_pkgs(R"({"cumm":{"wheels":{}}})"), "packages.cumm.wheels: not an array"},
      {with_pkgs(R"({"cumm":{"wheels":[)" + w + "," + w + R"(,{"filename":"c-1.whl","url":"u","sha256":"xyz"}]}})"),
       "packages.cumm.wheels[2].sha256: 'xyz' is not 64 hex digits"},
      {with_pkgs(R"({"cumm":{"wheels":[{"filename":"c-1.whl"}]}})"),
       "packages.cumm.wheels[0].url: missing"},
      {with_pkgs(R"({"cumm":{"wheels":[{"filename":1,"url":"u"}]}})"),
       "packages.cumm.wheels[0].filename: not a string (got a number)"},
      {with_pkgs(R"({"cumm":{"wheels":[{"filename":"c","url":2.8}]}})"),
       "packages.cumm.wheels[0].url: not a string (got a number)"},
      {with_pkgs(R"({"cumm":{"wheels":[7]}})"), "packages.cumm.wheels[0]: not an object"},
      {with_pkgs(R"({"Foo_Bar":{"wheels":[]},"foo-bar":{"wheels":[]}})"),
       "same project as another key (PEP 503 name 'foo-bar')"},
      {with_pkgs(R"({"":{"wheels":[]}})"), "empty project name"},
  };
  // The farm's descriptive fields are not read, whatever their type.
  CHECK(parse_packages_json(with_pkgs(R"({"cumm":{"wheels":[{"filename":"c","url":"u","torch":2.8,"cuda":null}]}})"),
                            "https://h.example/packages.json"));
  check_rejects(rows, "https://h.example/packages.json", [](const std::string& body, const std::string& where) {
    return parse_packages_json(body, where);
  });
}
