// Tests of reading a Releases API page: digests (G04), links, grouping, hostile names, malformed pages.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "index/releases/releases_support.hpp"
#include "wheelfit/index/releases.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/safe_text.hpp"

using namespace wheelfit;
using namespace wheelfit::test::github_api;

// ---------------------------------------------------------------------------------------------
// Parsing a page; G04 digests

TEST_CASE("releases: G04 digests: valid, null, absent, malformed", "[transports][github]") {
  const std::string tag = "flash_attn-latest";
  json::array assets{
      asset(tag, wheel("flash_attn", "2.8.3"), "sha256:" + kHexA),
      asset(tag, wheel("flash_attn", "2.8.2"), nullptr),
      asset(tag, wheel("flash_attn", "2.8.1")),
      asset(tag, wheel("flash_attn", "2.8.0"), "sha256:" + std::string("ABCDEF") + kHexB.substr(6)),
      asset(tag, wheel("flash_attn", "2.7.4"), "sha256:xyz"),
      asset(tag, wheel("flash_attn", "2.7.3"), "sha512:" + kHexA + kHexB),
      asset(tag, wheel("flash_attn", "2.7.2"), "sha256:" + kHexA.substr(1)),
      asset(tag, wheel("flash_attn", "2.7.1"), ""),
      asset(tag, "SHA256SUMS", "sha256:" + kHexB),
  };
  std::map<std::string, index::Page> out;
  auto ok = index::parse_releases_page(json::serialize(json::array{release(tag, assets)}), kFirst, out);
  REQUIRE(ok);
  REQUIRE(out.size() == 1);
  const auto& page = out.at("flash-attn");
  REQUIRE(page.links.size() == 8);  // malformed digests keep the link; SHA256SUMS is no wheel
  CHECK(page.links[0].sha256 == kHexA);
  CHECK_FALSE(page.links[1].sha256);
  CHECK_FALSE(page.links[2].sha256);
  CHECK(page.links[3].sha256 == std::string("abcdef") + kHexB.substr(6));  // lower-cased
  for (std::size_t i = 4; i < 8; ++i) CHECK_FALSE(page.links[i].sha256);
  REQUIRE(page.skipped.size() == 4);
  CHECK_THAT(page.skipped[0], Catch::Contains("releases[0].assets[4]") && Catch::Contains("sha256:xyz") &&
                                  Catch::Contains("kept without a hash"));
  CHECK_THAT(page.skipped[1], Catch::Contains("sha512:"));
}

TEST_CASE("releases: links carry the asset name, the download URL and its decoded file name", "[transports][github]") {
  const std::string tag = "cumm-latest";
  const std::string name = "cumm-0.8.2+cu128torch2.11-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  std::map<std::string, index::Page> out;
  REQUIRE(index::parse_releases_page(json::serialize(json::array{release(tag, {asset(tag, name)})}), kFirst, out));
  const auto& l = out.at("cumm").links.at(0);
  CHECK(l.text == name);
  CHECK(l.url == kDownload + tag + "/cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl");
  CHECK(l.filename == name);
  CHECK_FALSE(l.yanked);
  CHECK_FALSE(l.requires_python);
}

TEST_CASE("releases: grouping, duplicates and skipped assets", "[transports][github]") {
  json::array rs{
      release("flash_attn-latest", {asset("flash_attn-latest", wheel("flash_attn", "2.8.3")),
                                    asset("flash_attn-latest", wheel("Flash.Attn", "2.8.2")),
                                    asset("flash_attn-latest", "flash_attn-notaversion!-cp312-cp312-linux_x86_64.whl"),
                                    asset("flash_attn-latest", "flash_attn-2.8.3.tar.gz")}),
      release("nvdiffrast-v0.3.3", {asset("nvdiffrast-v0.3.3", wheel("nvdiffrast", "0.3.3"))}),
      release("flash_attn-latest-dup", {}),
      release("empty", json::array{}),
  };
  // The same asset listed by two releases (e.g. a "-latest" tag and a versioned one): one link.
  rs[2].as_object()["assets"] = rs[0].as_object()["assets"];
  json::object no_assets = release("no-assets", {});
  no_assets.erase("assets");
  rs.push_back(no_assets);
  json::object null_assets = release("null-assets", {});
  null_assets["assets"] = nullptr;
  rs.push_back(null_assets);
  // A hostile download URL and a hostile name.
  json::object hostile_url = asset("x", wheel("cumesh", "1.0"));
  hostile_url["browser_download_url"] = "file:///etc/passwd";
  json::object hostile_name = asset("x", wheel("cumesh", "1.1"));
  hostile_name["name"] = "cumesh-1.1-cp312-cp312-linux_x86_64/../../evil.whl";
  rs.push_back(release("x", {hostile_url, hostile_name}));
  json::object not_wheel_no_url{{"name", "notes.txt"}};  // non-wheel assets are not looked at further
  rs.push_back(release("y", {not_wheel_no_url}));

  std::map<std::string, index::Page> out;
  REQUIRE(index::parse_releases_page(json::serialize(rs), kFirst, out));
  CHECK(out.size() == 3);
  const auto& fa = out.at("flash-attn");
  REQUIRE(fa.links.size() == 2);  // Flash.Attn normalises to flash-attn; the duplicates dropped
  CHECK(fa.links[1].text == wheel("Flash.Attn", "2.8.2"));
  REQUIRE(fa.skipped.size() == 2);  // the bad name, once per release listing it
  CHECK_THAT(fa.skipped[0], Catch::Contains("releases[0].assets[2]") && Catch::Contains("notaversion"));
  CHECK_THAT(fa.skipped[1], Catch::Contains("releases[2].assets[2]"));
  CHECK(out.at("nvdiffrast").links.size() == 1);
  const auto& cm = out.at("cumesh");
  CHECK(cm.links.empty());
  REQUIRE(cm.skipped.size() == 2);
  CHECK_THAT(cm.skipped[0], Catch::Contains("file:///etc/passwd"));
  CHECK_THAT(cm.skipped[1], Catch::Contains("'/'"));

  SECTION("a second page appends") {
    REQUIRE(index::parse_releases_page(
        json::serialize(json::array{release("z", {asset("z", wheel("flash_attn", "2.9.0"))})}), page_url(2), out));
    CHECK(out.at("flash-attn").links.size() == 3);
  }
}

TEST_CASE("releases: a hostile file name (the asset's, or its download URL's) is refused with a warning",
          "[transports][github][names]") {
  struct Row {
    const char* what;
    std::string name;  ///< the asset's "name"
    std::string url;   ///< its browser_download_url (its last segment decoded is the file name)
    const char* shown; ///< how the message quotes the hostile part: escaped, never raw
  };
  const std::string good = wheel("cumesh", "1.0");
  const std::string tag = "cumesh-latest/";
  const std::vector<Row> rows{
      {"ESC in the name", "cumesh-1.0\x1b[2J-cp312-cp312-linux_x86_64.whl", kDownload + tag + good, "\\x1b[2J"},
      {"CR in the name", "cumesh-1.0\r-cp312-cp312-linux_x86_64.whl", kDownload + tag + good, "\\x0d"},
      {"a backslash in the name", "cumesh-1.0-cp312-cp312-linux_x86_64\\..\\evil.whl", kDownload + tag + good, "\\..\\evil"},
      {"ESC in the URL's file name", good, kDownload + tag + "cumesh-1.0%1B%5B2J-cp312-cp312-linux_x86_64.whl", "\\x1b[2J"},
      {"CR in the URL's file name", good, kDownload + tag + "cumesh-1.0%0D-cp312-cp312-linux_x86_64.whl", "\\x0d"},
      {"a backslash in the URL's file name", good, kDownload + tag + "..%5C..%5Cevil.whl", "..\\..\\evil.whl"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    std::vector<std::string> warnings;
    const auto previous = log::set_sink([&](log::Level level, std::string_view m) {
      if (level == log::Level::warn) warnings.emplace_back(m);
    });
    json::object hostile = asset(tag, row.name);
    hostile["browser_download_url"] = row.url;
    std::map<std::string, index::Page> out;
    const bool parsed = static_cast<bool>(
        index::parse_releases_page(json::serialize(json::array{release("cumesh-latest", {hostile, asset("x", good)})}),
                                        kFirst, out));
    log::set_sink(previous);
    REQUIRE(parsed);
    // The good asset stays; the hostile one is no link, and says why.
    REQUIRE(out.count("cumesh") == 1);
    const auto& page = out.at("cumesh");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].filename == good);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains("releases[0].assets[0]") && Catch::Contains("skipped") &&
                                Catch::Contains("'/', '\\' or a control character") && Catch::Contains(row.shown));
    for (unsigned char c : warnings[0]) CHECK((c >= 0x20 && c != 0x7f));  // escaped, not raw
    REQUIRE(page.skipped.size() == 1);
    for (unsigned char c : page.skipped[0]) CHECK((c >= 0x20 && c != 0x7f));
  }
}

TEST_CASE("releases: parse_releases_page rejects what is not a list of releases", "[transports][github]") {
  struct Row {
    std::string body;
    std::string message;
  };
  auto row = GENERATE(values<Row>({
      {"", "not valid JSON"},
      {"not json", "not valid JSON"},
      {"[{\"assets\": []}", "not valid JSON"},
      {"[1,]", "not valid JSON"},
      {"{}", "not a list of releases (an object)"},
      {R"({"message": "API rate limit exceeded for 1.2.3.4.", "documentation_url": "https://docs.github.com"})",
       "message: \"API rate limit exceeded"},
      {"\"releases\"", "not a list of releases (a string)"},
      {"null", "not a list of releases (null)"},
      {"[1]", "releases[0]: not an object (a number)"},
      {"[{}, []]", "releases[1]: not an object (an array)"},
      {R"([{"assets": {}}])", "releases[0].assets: not an array (an object)"},
      {R"([{"assets": "x"}])", "releases[0].assets: not an array (a string)"},
      {R"([{"assets": [1]}])", "releases[0].assets[0]: not an object (a number)"},
      {R"([{"assets": [{}]}])", "releases[0].assets[0].name: not a string"},
      {R"([{"assets": [{"name": 5}]}])", "releases[0].assets[0].name: not a string"},
      {R"([{"assets": [{"name": "a-1.0-py3-none-any.whl"}]}])", "releases[0].assets[0].browser_download_url: not a string"},
      {R"([{"assets": [{"name": "a-1.0-py3-none-any.whl", "browser_download_url": ["x"]}]}])",
       "releases[0].assets[0].browser_download_url: not a string"},
      {R"([{}, {}, {}, {"assets": [{"name": "a-1.0-py3-none-any.whl", "browser_download_url": "https://x/a-1.0-py3-none-any.whl", "digest": 5}]}])",
       "releases[3].assets[0].digest: not a string"},
      {R"([{"assets": [{"name": "a-1.0-py3-none-any.whl", "browser_download_url": "https://x/a.whl", "digest": {"sha256": "x"}}]}])",
       "releases[0].assets[0].digest: not a string"},
  }));
  CAPTURE(row.body);
  std::map<std::string, index::Page> out;
  out["keep"].links.push_back(index::Link{});
  auto r = index::parse_releases_page(row.body, kFirst, out);
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::invalid_input));
  CHECK_THAT(r.error().message, Catch::StartsWith(kFirst + ": ") && Catch::Contains(row.message));
  CHECK(out.size() == 1);  // a failed page adds nothing
  CHECK(out.at("keep").links.size() == 1);
}

TEST_CASE("releases: parse_releases_page accepts an empty list and deep nesting fails cleanly", "[transports][github]") {
  std::map<std::string, index::Page> out;
  CHECK(index::parse_releases_page("[]", kFirst, out));
  CHECK(index::parse_releases_page(" [ ] \n", kFirst, out));
  CHECK(out.empty());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = index::parse_releases_page(deep, kFirst, out);
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::invalid_input));
}

TEST_CASE("releases: a download URL that is not one token, or names a file that is not UTF-8, is no link (issue 31)",
          "[transports][github][hostile]") {
  struct Row {
    const char* what;
    std::string url;   ///< the asset's browser_download_url
    const char* says;  ///< in its skip reason
    bool warned;       ///< a hostile file name is also a warning
  };
  const std::string good = wheel("cumesh", "1.0");
  const std::string at = kDownload + "cumesh-latest/" + good;
  const std::vector<Row> rows{
      {"a LF, then a line of its own", at + "\nevil @ http://127.0.0.1:9/e.whl", "holds a control character (0x0a", false},
      {"U+2028", at + "\xe2\x80\xa8x", "holds a byte that is not ASCII and not percent-encoded (0xe2", false},
      {"a space and a second digest", at + " --hash=sha256:" + std::string(64, 'f'), "holds whitespace (0x20", false},
      {"%FF in its file name", kDownload + "cumesh-latest/cumesh-1.0%FF-cp312-cp312-linux_x86_64.whl", "is not UTF-8", true},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    std::vector<std::string> warnings;
    const auto previous = log::set_sink([&](log::Level level, std::string_view m) {
      if (level == log::Level::warn) warnings.emplace_back(m);
    });
    json::object hostile = asset("cumesh-latest", good);
    hostile["browser_download_url"] = row.url;
    std::map<std::string, index::Page> out;
    const bool parsed = static_cast<bool>(index::parse_releases_page(
        json::serialize(json::array{release("cumesh-latest", {hostile, asset("x", good)})}), kFirst, out));
    log::set_sink(previous);
    REQUIRE(parsed);
    const auto& page = out.at("cumesh");
    REQUIRE(page.links.size() == 1);
    CHECK_THAT(page.links[0].url, Catch::StartsWith(kDownload + "x/"));
    REQUIRE(page.skipped.size() == 1);
    CHECK_THAT(page.skipped[0], Catch::Contains("releases[0].assets[0]") && Catch::Contains(row.says));
    CHECK(warnings.size() == (row.warned ? 1u : 0u));
    for (const auto& m : warnings) CHECK(util::one_line_problem(m).empty());
    CHECK(util::one_line_problem(page.skipped[0]).empty());
  }
}
