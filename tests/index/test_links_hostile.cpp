// Hostile index pages (issue 31, decision 0021): a link whose URL is not one token (a control
// character, whitespace or a byte that is not ASCII, left unencoded) is skipped with a warning
// naming the page, whichever reader yields it (PEP 503 HTML, PEP 691 JSON, packages.json); text
// that is not UTF-8 is repaired or dropped, and every message the readers write stays UTF-8.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "index/links_support.hpp"
#include "support/checks.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/safe_text.hpp"

using namespace wheelfit;
using namespace wheelfit::index;
using Catch::Matchers::Contains;

namespace {

/// Every skip reason and warning of `page` is UTF-8 without a line break (they reach JSON and
/// terminals).
void check_messages_clean(const Page& page) {
  for (const auto* list : {&page.skipped, &page.warnings}) {
    for (const auto& m : *list) {
      CAPTURE(m);
      CHECK(util::one_line_problem(m).empty());
    }
  }
}

/// The one warning of `page` about skipped links: it names the page, the count and the reason.
void check_unsafe_url_warning(const Page& page, std::string_view page_url, std::string_view reason) {
  REQUIRE(page.warnings.size() == 1);
  CHECK_THAT(page.warnings[0], Catch::StartsWith(std::string(page_url) + ": 1 link skipped for a URL that is not one token"));
  CHECK_THAT(page.warnings[0], Contains(std::string(reason)));
}

const std::string kEvil = "evil @ http://127.0.0.1/evil-1.0-py3-none-any.whl --hash=sha256:" + std::string(64, 'e');

}  // namespace

TEST_CASE("parse_simple_html skips an href that is not one token, and warns naming the page", "[index][html][hostile]") {
  struct Row {
    const char* what;
    std::string href;    ///< as written in the page (character references decoded by the reader)
    std::string reason;  ///< in the skip reason and the warning
  };
  const std::string base = "https://files.example/a-1.0-py3-none-any.whl";
  const std::string at = " at byte " + std::to_string(base.size()) + ")";  // right after the file name
  const std::vector<Row> rows = {
      {"&#12; (form feed)", base + "&#12;" + kEvil, "the URL holds a control character (0x0c" + at},
      {"&#x2028; (line separator)", base + "&#x2028;" + kEvil, "not ASCII and not percent-encoded (0xe2" + at},
      {"a raw VT", base + "\v" + kEvil, "holds a control character (0x0b" + at},
      {"a raw NEL (UTF-8)", base + "\xc2\x85" + kEvil, "not ASCII and not percent-encoded (0xc2" + at},
      {"a raw NEL (Latin-1)", base + "\x85" + kEvil, "not ASCII and not percent-encoded (0x85" + at},
      {"&#133; (NEL by number)", base + "&#133;" + kEvil, "not ASCII and not percent-encoded"},
      {"a raw U+2028 on the farm's fast path", base + "\xe2\x80\xa8" + "x.whl", "not ASCII and not percent-encoded (0xe2" + at},
      {"a space, then a second digest", base + " --hash=sha256:" + std::string(64, 'f'), "holds whitespace (0x20" + at},
      {"a relative href with a space", "a-1.0 b.whl", "holds whitespace (0x20 at byte 5)"},
      {"&#x7f; (DEL)", "a-1.0&#x7f;.whl", "holds a control character (0x7f at byte 5)"},
      {"a byte that is not UTF-8", "a-1.0\xff.whl", "not ASCII and not percent-encoded (0xff at byte 5)"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what, row.href);
    const Page page = test::parse_ok("<a href=\"" + row.href + "\">a-1.0-py3-none-any.whl</a>\n<a href=\"ok-1.whl#sha256=" + test::kSha +
                               "\">ok-1.whl</a>");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].url == "https://example.org/simple/foo/ok-1.whl");
    REQUIRE(page.skipped.size() == 1);
    CHECK_THAT(page.skipped[0], Catch::StartsWith("href '") && Contains(row.reason));
    check_unsafe_url_warning(page, test::kPage, row.reason);
    check_messages_clean(page);
  }
}

TEST_CASE("parse_simple_html keeps what is one token: escapes, and the tab, LF and CR a browser drops",
          "[index][html][hostile]") {
  const std::vector<test::TextCase> rows = {
      {"a-1.0%20b.whl", "https://example.org/simple/foo/a-1.0%20b.whl"},
      {"a-1.0%E2%80%A8b.whl", "https://example.org/simple/foo/a-1.0%E2%80%A8b.whl"},
      {"a-1.0\n.whl", "https://example.org/simple/foo/a-1.0.whl"},
      {"a-1.0&#9;.whl", "https://example.org/simple/foo/a-1.0.whl"},
      {"https://h/$x{y}.whl", "https://h/$x{y}.whl"},  // one token: the requirements writer refuses "${"
  };
  test::check_each(rows, [](std::string_view href) {
    const Page page = test::parse_ok("<a href=\"" + std::string(href) + "\">a</a>");
    CHECK(page.warnings.empty());
    REQUIRE(page.links.size() == 1);
    return page.links[0].url;
  });
}

TEST_CASE("parse_simple_html ignores a <base href> that is not one token, with a warning", "[index][html][hostile]") {
  const Page page = test::parse_ok("<base href=\"https://evil.example/a b/\"><a href=\"x-1.whl\">x-1.whl</a>");
  REQUIRE(page.links.size() == 1);
  CHECK(page.links[0].url == "https://example.org/simple/foo/x-1.whl");
  REQUIRE(page.warnings.size() == 1);
  CHECK_THAT(page.warnings[0], Catch::StartsWith(std::string(test::kPage) + ": <base href='https://evil.example/a b/'> holds whitespace"));
  CHECK_THAT(page.warnings[0], Contains("ignored"));
}

TEST_CASE("parse_simple_html repairs or drops text that is not UTF-8, and says so once per page", "[index][html][hostile]") {
  const Page page = test::parse_ok(
      "<a href=\"a-1.whl\" data-requires-python=\"&gt;=3.9\xff\">a-1\xe9.whl</a>\n"
      "<a href=\"b-1.whl\" data-yanked=\"bad \xff build\">b-1.whl</a>\n"
      "<a href=\"c-1.whl\" data-requires-python=\"&gt;=3.10\">caf\xc3\xa9</a>\n"
      "<a href=\"..%2Fd-%FF.whl\">d</a>\n"
      "<a href=\"e-%FF.whl\">e</a>");
  REQUIRE(page.links.size() == 3);
  CHECK(page.links[0].text == "a-1\xef\xbf\xbd.whl");
  CHECK_FALSE(page.links[0].requires_python);  // dropped
  CHECK(page.links[1].yank_reason == "bad \xef\xbf\xbd build");
  CHECK(page.links[2].text == "caf\xc3\xa9");  // UTF-8 kept as it is
  CHECK(page.links[2].requires_python == ">=3.10");
  REQUIRE(page.skipped.size() == 2);
  CHECK_THAT(page.skipped[0], Contains("holds a path separator or a control character"));
  CHECK_THAT(page.skipped[1], Contains("href 'e-%FF.whl': file name 'e-?.whl' is not UTF-8"));
  REQUIRE(page.warnings.size() == 1);
  CHECK_THAT(page.warnings[0], Catch::StartsWith(std::string(test::kPage) + ": text that is not UTF-8"));
  CHECK_THAT(page.warnings[0], Contains("the text of href 'a-1.whl'") && Contains("(and 2 more)"));
  check_messages_clean(page);
}

TEST_CASE("the readers' messages stay UTF-8 whatever bytes they quote", "[index][html][hostile]") {
  const std::string long_text(158, 'x');
  const Page page = test::parse_ok(
      "<meta name=\"pypi:repository-version\" content=\"1.\xff\">"
      "<a name=\"\xfe\">no href \xff</a>"
      "<a href=\"#\xff\">in page</a>"
      "<a href=\"" + long_text + "\xc3\xa9/\">cut inside a character</a>");
  CHECK(page.links.empty());
  CHECK(page.skipped.size() == 3);
  CHECK(page.warnings.size() == 2);  // the repository version, the URL cut inside a character
  check_messages_clean(page);
}

TEST_CASE("parse_simple_json skips a file whose url is not one token, and warns naming the page", "[index][json][hostile]") {
  struct Row {
    const char* what;
    std::string url;  ///< JSON text, escapes as written
    std::string reason;
  };
  const std::vector<Row> rows = {
      {"\\n, then a line of its own", "https://h/a-1.whl\\n" + kEvil, "holds a control character (0x0a at byte 17)"},
      {"\\u2028", "https://h/a-1.whl\\u2028" + kEvil, "not ASCII and not percent-encoded (0xe2 at byte 17)"},
      {"\\u000c", "a-1.whl\\u000c", "holds a control character (0x0c at byte 7)"},
      {"a space and a second digest", "https://h/a-1.whl --hash=sha256:" + std::string(64, 'f'), "holds whitespace (0x20 at byte 17)"},
      {"raw UTF-8", "https://h/caf\xc3\xa9.whl", "not ASCII and not percent-encoded (0xc3 at byte 13)"},
  };
  const std::string where = "https://example.org/simple/a/";
  for (const Row& row : rows) {
    CAPTURE(row.what);
    const auto page = parse_simple_json(R"({"meta":{"api-version":"1.0"},"name":"a","files":[{"filename":"a-1.whl","url":")" +
                                            row.url + R"("},{"filename":"ok-1.whl","url":"ok-1.whl"}]})",
                                        where);
    REQUIRE(page);
    REQUIRE(page->links.size() == 1);
    CHECK(page->links[0].filename == "ok-1.whl");
    REQUIRE(page->skipped.size() == 1);
    CHECK_THAT(page->skipped[0], Catch::StartsWith("files[0].url '") && Contains(row.reason));
    check_unsafe_url_warning(*page, where, row.reason);
    check_messages_clean(*page);
  }
}

TEST_CASE("parse_simple_json skips a file whose url decodes to a name that is not UTF-8", "[index][json][hostile]") {
  const auto page = parse_simple_json(
      R"({"meta":{"api-version":"1.0"},"name":"a","files":[{"filename":"a-1.whl","url":"a-%FF.whl"}]})", test::kPage);
  REQUIRE(page);
  CHECK(page->links.empty());
  REQUIRE(page->skipped.size() == 1);
  CHECK(page->skipped[0] == "files[0].url 'a-%FF.whl': file name 'a-?.whl' is not UTF-8");
}

TEST_CASE("parse_packages_json refuses a wheel url that is not one token, whole or for some projects",
          "[index][packages-json][hostile]") {
  struct Row {
    std::string url;  ///< JSON text
    std::string part;
  };
  const std::vector<Row> rows = {
      {"https://h/a-1.whl\\n" + kEvil, "packages.a.wheels[1].url: 'https://h/a-1.whl?evil @ "},
      {"https://h/a-1.whl\\u2028x", "holds a byte that is not ASCII and not percent-encoded (0xe2 at byte 17)"},
      {"files/a 1.whl", "holds whitespace (0x20 at byte 7)"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.url);
    const std::string body = R"({"schema": 1, "packages": {"a": {"wheels": [{"filename": "a-0.whl", "url": "a-0.whl"},)"
                             R"({"filename": "a-1.whl", "url": ")" + row.url + R"(", "sha256": ")" + test::kSha + R"("}]}}})";
    const auto whole = parse_packages_json(body, "https://h/packages.json");
    const auto some = parse_packages_json(body, "https://h/packages.json", {"a"});
    const std::string& message = test::check_error(whole, Errc::invalid_input, {"https://h/packages.json: ", row.part});
    test::check_error(some, Errc::invalid_input, {message});  // the same words
    CHECK(util::one_line_problem(message).empty());
    // Another project's record is not read, so it does not fail the read (decision 0020).
    CHECK(parse_packages_json(body, "https://h/packages.json", {"b"}));
  }
}
