// Tests of wheelfit::index page parsing: PEP 503 HTML, PEP 691 JSON, packages.json, and the URL
// helpers. docs/network-faults.md H01 (index corpus) and H03 (escaping) live here; the [fixtures] cases read
// the real cuda-wheels snapshot and derive every expectation from its files independently.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/links.hpp"

using namespace wheelfit;
using namespace wheelfit::index;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::any_contains;
using test::check_each;
using test::ErrorCase;
using test::TextCase;

namespace {

constexpr std::string_view kPage = "https://example.org/simple/foo/";
const std::string kSha(64, 'a');
const std::string kSha2(64, 'b');

Page parse_ok(std::string_view html, std::string_view page_url = kPage) {
  auto page = parse_simple_html(html, page_url);
  INFO(html);
  if (!page) FAIL("parse_simple_html failed: " << page.error().message);
  return std::move(page).value();
}

/// The one link of a page parsed from `html`.
Link only_link(std::string_view html) {
  const Page page = parse_ok(html);
  REQUIRE(page.links.size() == 1);
  return page.links[0];
}

/// An anchor whose href is `href` and whose text is `text`.
std::string anchor(std::string_view href, std::string_view text) {
  return "<a href=\"" + std::string(href) + "\">" + std::string(text) + "</a>";
}

/// An href of an anchor and the URL and file name its link gets.
struct HrefCase {
  std::string_view href, url, filename;
};

/// Each row's href in an anchor with `text`: one link, with the row's URL and file name.
void check_hrefs(std::initializer_list<HrefCase> rows, std::string_view text) {
  for (const HrefCase& row : rows) {
    CAPTURE(row.href);
    const Link link = only_link(anchor(row.href, text));
    CHECK(link.url == row.url);
    CHECK(link.filename == row.filename);
  }
}

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

std::vector<std::string> urls_of(const Page& page) {
  std::vector<std::string> out;
  for (const Link& l : page.links) out.push_back(l.url);
  return out;
}

std::size_t count_occurrences(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
  return s;
}

}  // namespace

// =============================================================================================
// URL helpers

TEST_CASE("resolve_url follows RFC 3986 section 5.4 (normal and abnormal examples)", "[index][url]") {
  constexpr std::string_view base = "http://a/b/c/d;p?q";
  const TextCase rows[] = {
      // 5.4.1 normal examples
      {"g:h", "g:h"},
      {"g", "http://a/b/c/g"},
      {"./g", "http://a/b/c/g"},
      {"g/", "http://a/b/c/g/"},
      {"/g", "http://a/g"},
      {"//g", "http://g"},
      {"?y", "http://a/b/c/d;p?y"},
      {"g?y", "http://a/b/c/g?y"},
      {"#s", "http://a/b/c/d;p?q#s"},
      {"g#s", "http://a/b/c/g#s"},
      {"g?y#s", "http://a/b/c/g?y#s"},
      {";x", "http://a/b/c/;x"},
      {"g;x", "http://a/b/c/g;x"},
      {"g;x?y#s", "http://a/b/c/g;x?y#s"},
      {"", "http://a/b/c/d;p?q"},
      {".", "http://a/b/c/"},
      {"./", "http://a/b/c/"},
      {"..", "http://a/b/"},
      {"../", "http://a/b/"},
      {"../g", "http://a/b/g"},
      {"../..", "http://a/"},
      {"../../", "http://a/"},
      {"../../g", "http://a/g"},
      // 5.4.2 abnormal examples
      {"../../../g", "http://a/g"},
      {"../../../../g", "http://a/g"},
      {"/./g", "http://a/g"},
      {"/../g", "http://a/g"},
      {"g.", "http://a/b/c/g."},
      {".g", "http://a/b/c/.g"},
      {"g..", "http://a/b/c/g.."},
      {"..g", "http://a/b/c/..g"},
      {"./../g", "http://a/b/g"},
      {"./g/.", "http://a/b/c/g/"},
      {"g/./h", "http://a/b/c/g/h"},
      {"g/../h", "http://a/b/c/h"},
      {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
      {"g;x=1/../y", "http://a/b/c/y"},
      {"g?y/./x", "http://a/b/c/g?y/./x"},
      {"g?y/../x", "http://a/b/c/g?y/../x"},
      {"g#s/./x", "http://a/b/c/g#s/./x"},
      {"g#s/../x", "http://a/b/c/g#s/../x"},
      {"http:g", "http:g"},  // strict parser
  };
  check_each(rows, [&](std::string_view href) { return resolve_url(base, href); });
}

TEST_CASE("resolve_url on index pages: escapes kept, hosts and paths replaced", "[index][url]") {
  struct Row {
    std::string_view base, href, expected;
  };
  const Row rows[] = {
      {"https://example.org/simple/foo/", "foo-1.0%2Bcu128-py3-none-any.whl",
       "https://example.org/simple/foo/foo-1.0%2Bcu128-py3-none-any.whl"},
      {"https://example.org/simple/foo/", "foo-1.0%252B.whl", "https://example.org/simple/foo/foo-1.0%252B.whl"},
      {"https://example.org/simple/foo/", "foo-1.0+cu128.whl", "https://example.org/simple/foo/foo-1.0+cu128.whl"},
      {"https://example.org/simple/foo/", "../../packages/f.whl", "https://example.org/packages/f.whl"},
      {"https://example.org/simple/foo/", "/packages/f.whl", "https://example.org/packages/f.whl"},
      {"https://example.org/simple/foo/", "//cdn.example.net/f.whl", "https://cdn.example.net/f.whl"},
      {"https://example.org/simple/foo/", "f.whl?raw=1", "https://example.org/simple/foo/f.whl?raw=1"},
      {"https://example.org", "f.whl", "https://example.org/f.whl"},  // empty base path merges as "/"
      {"https://example.org/simple/foo", "f.whl", "https://example.org/simple/f.whl"},
      {"https://example.org/a/", "HTTPS://Other.example/X.whl", "HTTPS://Other.example/X.whl"},
      {"https://example.org/a/", "https://h/a/./b/../c.whl", "https://h/a/c.whl"},
      {"https://user@h:8443/a/b/", "../c.whl", "https://user@h:8443/a/c.whl"},
      {"file:///srv/index/foo/", "foo-1.0.whl", "file:///srv/index/foo/foo-1.0.whl"},
      {"https://h/a/", "%2e%2e/x.whl", "https://h/a/%2e%2e/x.whl"},  // escaped dots are not dot segments
  };
  for (const Row& row : rows) {
    CAPTURE(row.base, row.href);
    CHECK(resolve_url(row.base, row.href) == row.expected);
  }
}

TEST_CASE("resolve_url stays linear on long dot-segment chains", "[index][url]") {
  std::string href;
  for (int i = 0; i < 200000; ++i) href += "a/../";
  href += "g";
  const std::string base = "https://" + std::string(100000, 'h') + "/x/y";
  CHECK(resolve_url(base, href) == "https://" + std::string(100000, 'h') + "/x/g");
  std::string ups;
  for (int i = 0; i < 200000; ++i) ups += "../";
  CHECK(resolve_url(base, ups + "g") == "https://" + std::string(100000, 'h') + "/g");
}

TEST_CASE("percent_decode decodes once and keeps invalid escapes", "[index][url]") {
  const TextCase rows[] = {
      {"", ""},
      {"a-1.0%2Bcu128", "a-1.0+cu128"},
      {"a-1.0%2bcu128", "a-1.0+cu128"},
      {"a-1.0%252Bcu128", "a-1.0%2Bcu128"},  // never twice
      {"a+b", "a+b"},                        // '+' is not a space in a path
      {"%20x%41", " xA"},
      {"100%", "100%"},
      {"%", "%"},
      {"%2", "%2"},
      {"%zz%2", "%zz%2"},
      {"%%2B", "%+"},
      {"%E2%82%AC", "\xe2\x82\xac"},
  };
  check_each(rows, [](std::string_view in) { return percent_decode(in); });
}

// =============================================================================================
// PEP 503 HTML

TEST_CASE("parse_simple_html reads a plain PEP 503 page", "[index][html]") {
  const Page page = parse_ok(R"(<!DOCTYPE html>
<html><head><title>Links for foo</title></head><body>
<h1>Links for foo</h1>
<a href="https://files.example.org/foo-1.0-py3-none-any.whl#sha256=)" + kSha + R"(">foo-1.0-py3-none-any.whl</a><br/>
<a href="foo-1.1.tar.gz">foo-1.1.tar.gz</a><br/>
</body></html>)");
  REQUIRE(page.links.size() == 2);
  CHECK(page.skipped.empty());
  const Link& a = page.links[0];
  CHECK(a.text == "foo-1.0-py3-none-any.whl");
  CHECK(a.url == "https://files.example.org/foo-1.0-py3-none-any.whl");
  CHECK(a.filename == "foo-1.0-py3-none-any.whl");
  CHECK(a.sha256 == kSha);
  CHECK_FALSE(a.requires_python);
  CHECK_FALSE(a.yanked);
  const Link& b = page.links[1];
  CHECK(b.url == "https://example.org/simple/foo/foo-1.1.tar.gz");
  CHECK(b.filename == "foo-1.1.tar.gz");
  CHECK_FALSE(b.sha256);
}

TEST_CASE("parse_simple_html is case-insensitive and accepts every attribute quoting", "[index][html]") {
  struct Row {
    std::string_view html, url, text;
  };
  const Row rows[] = {
      {R"(<A HREF="x-1.whl">x-1.whl</A>)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a Href='x-1.whl'>x-1.whl</a>)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a href=x-1.whl>x-1.whl</a>)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a href = "x-1.whl" >x-1.whl</a >)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a class=x href=x-1.whl data-x>x-1.whl</a>)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a	href="x-1.whl"
          rel="internal">x-1.whl</a>)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a title='a > b' href="x-1.whl">x-1.whl</a>)", "https://example.org/simple/foo/x-1.whl", "x-1.whl"},
      {R"(<a href="x-1.whl" href="y-2.whl">x</a>)", "https://example.org/simple/foo/x-1.whl", "x"},  // first wins
      {R"(<a href="x-1.whl">x</A>)", "https://example.org/simple/foo/x-1.whl", "x"},
      {R"(<a href=" x-1.whl ">x</a>)", "https://example.org/simple/foo/x-1.whl", "x"},  // trimmed like a browser
  };
  for (const Row& row : rows) {
    CAPTURE(row.html);
    const Page page = parse_ok(row.html);
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].url == row.url);
    CHECK(page.links[0].text == row.text);
  }
}

TEST_CASE("parse_simple_html decodes character references in text and attributes", "[index][html]") {
  SECTION("&amp; in an href") {
    const Page page = parse_ok(R"(<a href="get?file=x-1.whl&amp;raw=1">x</a>)");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].url == "https://example.org/simple/foo/get?file=x-1.whl&raw=1");
    CHECK(page.links[0].filename == "get");
  }
  SECTION("references in anchor text") {
    const TextCase rows[] = {
        {"a&amp;b", "a&b"},
        {"&lt;x&gt;", "<x>"},
        {"&quot;q&quot;", "\"q\""},
        {"it&#39;s", "it's"},
        {"&apos;", "'"},
        {"1.0&#x2B;cu128", "1.0+cu128"},
        {"1.0&#X2b;cu128", "1.0+cu128"},
        {"1.0&#43;cu128", "1.0+cu128"},
        {"1.0&plus;cu128", "1.0+cu128"},
        {"a&nbsp;b", "a\xc2\xa0" "b"},
        {"&euro;", "\xe2\x82\xac"},
        {"&#8364;", "\xe2\x82\xac"},
        {"&#x1F600;", "\xf0\x9f\x98\x80"},
        {"&#128;", "\xe2\x82\xac"},            // Windows-1252 remap, as HTML does
        {"&#0;", "\xef\xbf\xbd"},               // U+FFFD
        {"&#xD800;", "\xef\xbf\xbd"},
        {"&#99999999999999999999;", "\xef\xbf\xbd"},
        {"&#43", "+"},                          // no ';' still decodes
        {"&amp", "&"},                          // legacy reference without ';'
        {"&ampx", "&x"},                        // in text the legacy prefix decodes
        {"&bogus;", "&bogus;"},                 // unknown: kept literally
        {"&;", "&;"},
        {"&", "&"},
        {"& b", "& b"},
        {"&#;", "&#;"},
        {"&#x;", "&#x;"},
        {"&#xZZ;", "&#xZZ;"},
        {"&AMP;&LT;", "&<"},
        {"&Amp;", "&Amp;"},                     // names are case-sensitive
    };
    check_each(rows, [](std::string_view text) { return only_link(anchor("x-1.whl", text)).text; });
  }
  SECTION("legacy references in attributes are left alone before '=' or a letter") {
    const Page page = parse_ok(R"(<a href="x-1.whl?a=1&copy=2&ampx=3&amp">x</a>)");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].url == "https://example.org/simple/foo/x-1.whl?a=1&copy=2&ampx=3&");
  }
}

TEST_CASE("parse_simple_html strips nested tags from anchor text and trims it", "[index][html]") {
  const Page page = parse_ok("<a href=\"foo-1.0.whl\">\n  <b>foo</b>-1.0<!-- c -->.whl <img src=x.png>\n</a>");
  REQUIRE(page.links.size() == 1);
  CHECK(page.links[0].text == "foo-1.0.whl");
}

TEST_CASE("parse_simple_html skips comments, declarations and raw-text elements", "[index][html]") {
  const Page page = parse_ok(R"(<!DOCTYPE html><?xml version="1.0"?>
<!-- <a href="hidden-1.whl">hidden</a> -->
<!--> <a href="after-empty-comment-1.whl">a</a>
<!---> <a href="after-dash-comment-1.whl">b</a>
<!-- x --!> <a href="after-bang-comment-1.whl">c</a>
<![CDATA[ x ]]> <a href="after-cdata-1.whl">d</a>
<script>document.write('<a href="in-script-1.whl">s</a>')</script>
<STYLE>a::after { content: "<a href='in-style-1.whl'>" }</STYLE>
<title><a href="in-title-1.whl">t</a></title>
<a href="visible-1.whl">v</a>)");
  const std::vector<std::string> urls = urls_of(page);
  CAPTURE(urls);
  for (std::string_view hidden : {"hidden", "in-script", "in-style", "in-title"}) {
    CAPTURE(hidden);
    CHECK_FALSE(any_contains(urls, hidden));
  }
  for (std::string_view shown : {"after-empty-comment-1.whl", "after-dash-comment-1.whl", "after-bang-comment-1.whl",
                                 "after-cdata-1.whl", "visible-1.whl"}) {
    CAPTURE(shown);
    CHECK(any_contains(urls, shown));
  }
  CHECK(page.links.size() == 5);
}

TEST_CASE("parse_simple_html resolves hrefs against <base href>, the first one winning", "[index][html]") {
  SECTION("an absolute base") {
    const Page page = parse_ok(R"(<head><base href="https://mirror.example.net/pkgs/foo/"><base href="https://wrong.example/"></head>
<a href="foo-1.0.whl">a</a><a href="../bar/bar-1.0.whl">b</a><a href="/root-1.0.whl">c</a>)");
    CHECK(urls_of(page) == std::vector<std::string>{"https://mirror.example.net/pkgs/foo/foo-1.0.whl",
                                                     "https://mirror.example.net/pkgs/bar/bar-1.0.whl",
                                                     "https://mirror.example.net/root-1.0.whl"});
  }
  SECTION("a relative base is itself resolved against the page URL") {
    const Page page = parse_ok(R"(<BASE HREF="../../files/">x<a href="foo-1.0.whl">a</a>)");
    CHECK(urls_of(page) == std::vector<std::string>{"https://example.org/files/foo-1.0.whl"});
  }
  SECTION("a base after the anchors still applies, as in a browser and pip") {
    const Page page = parse_ok(R"(<a href="foo-1.0.whl">a</a><base href="https://cdn.example.net/f/">)");
    CHECK(urls_of(page) == std::vector<std::string>{"https://cdn.example.net/f/foo-1.0.whl"});
  }
  SECTION("a <base> without href does not count") {
    const Page page = parse_ok(R"(<base target="_blank"><base href="/other/"><a href="foo-1.0.whl">a</a>)");
    CHECK(urls_of(page) == std::vector<std::string>{"https://example.org/other/foo-1.0.whl"});
  }
  SECTION("a base with entities") {
    const Page page = parse_ok(R"(<base href="https://h.example/a&amp;b/"><a href="f-1.whl">a</a>)");
    CHECK(urls_of(page) == std::vector<std::string>{"https://h.example/a&b/f-1.whl"});
  }
}

TEST_CASE("parse_simple_html resolves relative hrefs against the page URL", "[index][html]") {
  constexpr std::string_view f = "foo-1.0.whl";
  check_hrefs({{"foo-1.0.whl", "https://example.org/simple/foo/foo-1.0.whl", f},
               {"./foo-1.0.whl", "https://example.org/simple/foo/foo-1.0.whl", f},
               {"../../packages/ab/foo-1.0.whl", "https://example.org/packages/ab/foo-1.0.whl", f},
               {"/packages/foo-1.0.whl", "https://example.org/packages/foo-1.0.whl", f},
               {"//cdn.example.net/foo-1.0.whl", "https://cdn.example.net/foo-1.0.whl", f},
               {"foo-1.0.whl?x=1", "https://example.org/simple/foo/foo-1.0.whl?x=1", f},
               {"https://other.example/foo-1.0.whl", "https://other.example/foo-1.0.whl", f}},
              "foo-1.0.whl");
}

TEST_CASE("parse_simple_html skips in-page, empty, directory and href-less anchors, saying why", "[index][html]") {
  struct Row {
    std::string_view anchor, reason;
  };
  const Row rows[] = {
      {R"(<a class="anchor" href="#cu132">#</a>)", "href '#cu132': in-page link"},
      {R"(<a href="#">top</a>)", "href '#': in-page link"},
      {R"(<a href="">empty</a>)", "href '': empty href"},
      {R"(<a href="  ">blank</a>)", "href '': empty href"},
      {R"(<a href>bare</a>)", "href '': empty href"},
      {R"(<a href="cumm/">cumm</a>)", "href 'cumm/': directory link"},
      {R"(<a href="../">up</a>)", "href '../': directory link"},
      {R"(<a href=".">here</a>)", "href '.': directory link"},
      {R"(<a href="https://download.pytorch.org/whl/cu128/torch/">t</a>)", "directory link"},
      {R"(<a href="https://example.net">host</a>)", "directory link"},
      {R"(<a href="sub/#sha256=abc">s</a>)", "directory link"},
      {R"(<a name="top">top</a>)", "anchor 'top': no href"},
      {R"(<a href="x-1.whl#sha256=abc">x</a>)", "href 'x-1.whl#sha256=abc': sha256 fragment is not 64 hex digits"},
      {R"(<a href="..%2F..%2Fetc%2Fx.whl">x</a>)", "holds a path separator"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.anchor);
    const Page page = parse_ok(std::string(row.anchor) + "<a href=\"ok-1.whl\">ok-1.whl</a>");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].filename == "ok-1.whl");
    REQUIRE(page.skipped.size() == 1);
    CHECK_THAT(page.skipped[0], Contains(std::string(row.reason)));
  }
}

TEST_CASE("parse_simple_html reads hash fragments (PEP 503)", "[index][html]") {
  const std::string upper(64, 'A');
  const std::string lower(64, 'a');
  struct Row {
    std::string href;
    bool kept;
    std::optional<std::string> sha256;
  };
  const std::vector<Row> rows = {
      {"x-1.whl#sha256=" + lower, true, lower},
      {"x-1.whl#SHA256=" + upper, true, lower},  // upper-case name and value
      {"x-1.whl#Sha256=" + upper, true, lower},
      {"x-1.whl#md5=0123456789abcdef0123456789abcdef", true, std::nullopt},  // md5 only: no sha256
      {"x-1.whl#sha512=" + std::string(128, 'c'), true, std::nullopt},
      {"x-1.whl#egg=x", true, std::nullopt},
      {"x-1.whl#", true, std::nullopt},
      {"x-1.whl#sha256=" + std::string(63, 'a'), false, std::nullopt},
      {"x-1.whl#sha256=" + std::string(65, 'a'), false, std::nullopt},
      {"x-1.whl#sha256=" + std::string(63, 'a') + "g", false, std::nullopt},
      {"x-1.whl#sha256=", false, std::nullopt},
  };
  for (const Row& row : rows) {
    CAPTURE(row.href);
    const Page page = parse_ok("<a href=\"" + row.href + "\">x-1.whl</a>");
    if (row.kept) {
      REQUIRE(page.links.size() == 1);
      CHECK(page.links[0].url == "https://example.org/simple/foo/x-1.whl");  // fragment removed
      CHECK(page.links[0].sha256 == row.sha256);
    } else {
      CHECK(page.links.empty());
      REQUIRE(page.skipped.size() == 1);
      CHECK_THAT(page.skipped[0], Contains("sha256 fragment is not 64 hex digits"));
    }
  }
}

TEST_CASE("parse_simple_html keeps data-requires-python and data-yanked (PEP 503, PEP 592)", "[index][html]") {
  const Page page = parse_ok(R"(
<a href="a-1.whl" data-requires-python="&gt;=3.10">a</a>
<a href="b-1.whl" data-requires-python='&lt;4,&gt;=3.9'>b</a>
<a href="c-1.whl" data-requires-python="">c</a>
<a href="d-1.whl" data-yanked>d</a>
<a href="e-1.whl" data-yanked="">e</a>
<a href="f-1.whl" DATA-YANKED="broken &amp; replaced by 1.1">f</a>
<a href="g-1.whl">g</a>)");
  REQUIRE(page.links.size() == 7);
  CHECK(page.links[0].requires_python == ">=3.10");
  CHECK(page.links[1].requires_python == "<4,>=3.9");
  CHECK_FALSE(page.links[2].requires_python);  // empty means no constraint
  CHECK(page.links[3].yanked);
  CHECK(page.links[3].yank_reason.empty());
  CHECK(page.links[4].yanked);
  CHECK(page.links[4].yank_reason.empty());
  CHECK(page.links[5].yanked);
  CHECK(page.links[5].yank_reason == "broken & replaced by 1.1");
  CHECK_FALSE(page.links[6].yanked);
  CHECK_FALSE(page.links[6].requires_python);
}

TEST_CASE("parse_simple_html returns both links of a file name listed with two hashes", "[index][html]") {
  const Page page = parse_ok("<a href=\"https://a.example/x-1.0-py3-none-any.whl#sha256=" + kSha +
                             "\">x-1.0-py3-none-any.whl</a>\n<a href=\"https://b.example/x-1.0-py3-none-any.whl#sha256=" +
                             kSha2 + "\">x-1.0-py3-none-any.whl</a>");
  REQUIRE(page.links.size() == 2);  // the caller flags the conflict
  CHECK(page.links[0].filename == page.links[1].filename);
  CHECK(page.links[0].sha256 == kSha);
  CHECK(page.links[1].sha256 == kSha2);
}

TEST_CASE("parse_simple_html keeps anchor text and href file name apart (the farm's cumm page)", "[index][html]") {
  const Page page = parse_ok(
      R"(<a href="https://github.com/Comfy-Forge/cuda-wheels/releases/download/cumm-latest/cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl">cumm-0.8.2+cu128torch2.8-cp312-cp312-win_amd64.whl</a><br>)",
      "https://comfy-forge.github.io/cuda-wheels/cumm/");
  REQUIRE(page.links.size() == 1);
  CHECK(page.links[0].text == "cumm-0.8.2+cu128torch2.8-cp312-cp312-win_amd64.whl");
  CHECK(page.links[0].filename == "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl");
  CHECK(page.links[0].url ==
        "https://github.com/Comfy-Forge/cuda-wheels/releases/download/cumm-latest/"
        "cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl");
}

TEST_CASE("parse_simple_html never decodes an href twice (H03)", "[index][html]") {
  check_hrefs({
      {"a-1.0+cu128-py3-none-any.whl", "https://example.org/simple/foo/a-1.0+cu128-py3-none-any.whl",
       "a-1.0+cu128-py3-none-any.whl"},
      {"a-1.0%2Bcu128-py3-none-any.whl", "https://example.org/simple/foo/a-1.0%2Bcu128-py3-none-any.whl",
       "a-1.0+cu128-py3-none-any.whl"},
      {"a-1.0%2bcu128-py3-none-any.whl", "https://example.org/simple/foo/a-1.0%2bcu128-py3-none-any.whl",
       "a-1.0+cu128-py3-none-any.whl"},
      {"a-1.0%252Bcu128-py3-none-any.whl", "https://example.org/simple/foo/a-1.0%252Bcu128-py3-none-any.whl",
       "a-1.0%2Bcu128-py3-none-any.whl"},
      {"a-1.0&#43;cu128-py3-none-any.whl", "https://example.org/simple/foo/a-1.0+cu128-py3-none-any.whl",
       "a-1.0+cu128-py3-none-any.whl"},
      {"a-1.0%2Bcu128-py3-none-any.whl?x=%2F", "https://example.org/simple/foo/a-1.0%2Bcu128-py3-none-any.whl?x=%2F",
       "a-1.0+cu128-py3-none-any.whl"},
  }, "t");
}

TEST_CASE("parse_simple_html tolerates broken markup like a browser", "[index][html]") {
  SECTION("an unclosed <a> is closed by the next one and by the end of the page") {
    const Page page = parse_ok(R"(<a href="a-1.whl">a-1.whl <a href="b-1.whl">b-1.whl)");
    REQUIRE(page.links.size() == 2);
    CHECK(page.links[0].text == "a-1.whl");
    CHECK(page.links[1].text == "b-1.whl");
  }
  SECTION("a stray '<' is text") {
    const Page page = parse_ok(R"(<a href="a-1.whl">a < b <3</a> 1 < 2)");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].text == "a < b <3");
  }
  SECTION("</a> without an open anchor and odd end tags are ignored") {
    const Page page = parse_ok(R"(</a></><// x></ p><a href="a-1.whl">a</a>)");
    REQUIRE(page.links.size() == 1);
  }
  SECTION("a tag cut off by the end of the page is dropped") {
    for (std::string_view tail : {R"(<a href="b-1.whl)", R"(<a href='b-1.whl' )", "<a href=", "<a", "<",
                                  "<!-- <a href=\"b-1.whl\">", "<script><a href=\"b-1.whl\">", "</a", "<!DOCTYPE"}) {
      CAPTURE(tail);
      const Page page = parse_ok(R"(<a href="a-1.whl">a</a>)" + std::string(tail));
      REQUIRE(page.links.size() == 1);
      CHECK(page.links[0].filename == "a-1.whl");
    }
  }
  SECTION("an empty page or one without anchors has no links") {
    for (std::string_view body : {"", "   ", "<html></html>", "plain text, no tags", "<p>a &amp; b</p>"}) {
      CAPTURE(body);
      const Page page = parse_ok(body);
      CHECK(page.links.empty());
      CHECK(page.skipped.empty());
    }
  }
  SECTION("<abbr> and <area> are not <a>") {
    const Page page = parse_ok(R"(<abbr href="x-1.whl">x</abbr><area href="y-1.whl"><a href="z-1.whl">z</a>)");
    REQUIRE(page.links.size() == 1);
    CHECK(page.links[0].filename == "z-1.whl");
  }
}

TEST_CASE("parse_simple_html rejects a body that is not HTML", "[index][html]") {
  const std::string body = std::string("<a href=\"a-1.whl\">a</a>") + '\0' + "\x89PNG";
  auto page = parse_simple_html(body, "https://example.org/simple/foo/");
  REQUIRE_FALSE(page);
  CHECK(page.error().is(Errc::invalid_input));
  CHECK_THAT(page.error().message, StartsWith("https://example.org/simple/foo/: "));
  CHECK_THAT(page.error().message, Contains("NUL byte at offset 23"));
}

TEST_CASE("parse_simple_html follows the page's PEP 629 repository version", "[index][html][pep629]") {
  enum class Outcome { read, warned, refused };
  struct Row {
    std::string head;  // what the page's <head> holds
    Outcome outcome;
    std::string part;  // in the warning or the error
  };
  const std::string meta = "<meta name=\"pypi:repository-version\" content=";
  const std::vector<Row> rows = {
      {"", Outcome::read, ""},
      {meta + "\"1.0\">", Outcome::read, ""},
      {meta + "\"01.00\">", Outcome::read, ""},
      {meta + "\"1.1\">", Outcome::warned, "repository version '1.1' (PEP 629, <meta name=\"pypi:repository-version\">) is newer than 1.0"},
      {meta + "'1.10'>", Outcome::warned, "'1.10' (PEP 629"},
      {"<META NAME=PYPI:Repository-Version CONTENT=1.3>", Outcome::warned, "'1.3' (PEP 629"},
      {meta + "\" 1&#46;2 \">", Outcome::warned, "'1.2' (PEP 629"},
      {meta + "\"1.x\">", Outcome::warned, "'1.x' (PEP 629, <meta name=\"pypi:repository-version\">) is no PEP 629 version"},
      {meta + "\"0.9\">", Outcome::warned, "'0.9' (PEP 629, <meta name=\"pypi:repository-version\">) is no PEP 629 version"},
      {meta + "\"\">", Outcome::warned, "is no PEP 629 version"},
      {meta + "\"2.0\">", Outcome::refused, "repository version '2.0' (PEP 629, <meta name=\"pypi:repository-version\">) is newer than 1.x"},
      {meta + "\"2\">", Outcome::refused, "'2' (PEP 629"},
      {meta + "\"10.0\">", Outcome::refused, "'10.0' (PEP 629"},
      {meta + "\"99999999999999999999999.0\">", Outcome::refused, "is newer than 1.x"},
      {"<meta content=\"3.0\" name=\"pypi:repository-version\">", Outcome::refused, "'3.0' (PEP 629"},
      // The first such <meta> counts; other names and commented-out tags do not.
      {meta + "\"1.0\">" + meta + "\"2.0\">", Outcome::read, ""},
      {"<meta name=\"generator\" content=\"2.0\"><!-- " + meta + "\"2.0\"> -->", Outcome::read, ""},
  };
  for (const Row& row : rows) {
    const std::string html = "<!DOCTYPE html><html><head>" + row.head + "<title>x</title></head><body>" +
                             anchor("x-1.0-py3-none-any.whl", "x-1.0-py3-none-any.whl") + "</body></html>";
    CAPTURE(html);
    const auto page = parse_simple_html(html, kPage);
    if (row.outcome == Outcome::refused) {
      const std::string& message = test::check_error(page, Errc::unsupported, {row.part, "the page is not read"});
      CHECK_THAT(message, StartsWith(std::string(kPage) + ": "));
      continue;
    }
    REQUIRE(page);
    CHECK(page->links.size() == 1);
    if (row.outcome == Outcome::read) {
      CHECK(page->warnings.empty());
    } else {
      REQUIRE(page->warnings.size() == 1);
      CHECK_THAT(page->warnings[0], StartsWith(std::string(kPage) + ": ") && Contains(row.part) &&
                                        Contains("the page is read as 1.0"));
    }
  }
}

TEST_CASE("parse_simple_html stays linear on hostile pages", "[index][html]") {
  // Each of these is quadratic in a naive scanner (re-scanning from every '<' or '&'); 1 MiB makes
  // a quadratic one take many minutes, while a linear one takes milliseconds.
  constexpr std::size_t n = std::size_t{1} << 20;
  auto repeat = [&](std::string_view unit) {
    std::string s;
    s.reserve(n + unit.size());
    while (s.size() < n) s += unit;
    return s;
  };
  struct Row {
    std::string name, body;
    std::size_t links;
  };
  const std::vector<Row> rows = {
      {"unterminated quote", "<a href=\"x" + repeat("<a href=\"y"), 0},
      {"unterminated comment", "<!--" + repeat("<!-- -"), 0},
      {"many '<'", repeat("<"), 0},
      {"many '</'", repeat("</"), 0},
      {"many '&'", "<a href=\"x-1.whl\">" + repeat("&") + "</a>", 1},
      {"many '&#' digits", "<a href=\"x-1.whl\">&#" + repeat("0") + "</a>", 1},
      {"many entity-like names", "<a href=\"x-1.whl\">" + repeat("&amp") + "</a>", 1},
      {"unclosed script", "<script>" + repeat("</scrip"), 0},
      {"nested anchors", repeat("<a href=\"x-1.whl\">"), (n + 17) / 18},
      {"many dot segments", "<a href=\"" + repeat("a/../") + "x-1.whl\">x</a>", 1},
      {"many attributes", "<a " + repeat("x=1 ") + " href=\"x-1.whl\">x</a>", 1},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    const Page page = parse_ok(row.body);
    CHECK(page.links.size() == row.links);
  }
}

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
  const Link& d = page->links[3];
  CHECK(d.url == "https://example.org/simple/foo/foo-1.3.tar.gz");
  CHECK(d.sha256 == kSha2);
  CHECK_FALSE(d.yanked);
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

// =============================================================================================
// The real cuda-wheels snapshot (docs/network-faults.md H01). Expectations come from the files themselves.

namespace {
namespace fs = std::filesystem;
constexpr std::string_view kFarm = "https://comfy-forge.github.io/cuda-wheels/";
constexpr std::string_view kReleases = "https://github.com/Comfy-Forge/cuda-wheels/releases/download/";

// The anchors of a farm page as written: (href, text), found with plain string searches.
std::vector<std::pair<std::string, std::string>> raw_anchors(const std::string& html) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t p = html.find("<a href=\""); p != std::string::npos; p = html.find("<a href=\"", p + 1)) {
    const std::size_t h = p + 9;
    const std::size_t h_end = html.find('"', h);
    const std::size_t t = html.find('>', h_end) + 1;
    const std::size_t t_end = html.find("</a>", t);
    out.emplace_back(html.substr(h, h_end - h), html.substr(t, t_end - t));
  }
  return out;
}

std::set<std::string> packages_json_filenames(const std::string& json_text) {
  std::set<std::string> out;
  const std::string key = "\"filename\": \"";
  for (std::size_t p = json_text.find(key); p != std::string::npos; p = json_text.find(key, p + 1)) {
    const std::size_t s = p + key.size();
    out.insert(json_text.substr(s, json_text.find('"', s) - s));
  }
  return out;
}
}  // namespace

TEST_CASE("every package page of the cuda-wheels snapshot parses to its anchors", "[index][html][fixtures]") {
  const fs::path dir = wheelfit::test::farm_index_dir();
  const std::string pj_text = wheelfit::test::read_file(dir / "packages.json");
  auto pj = parse_packages_json(pj_text, "packages.json");
  REQUIRE(pj);
  const std::set<std::string> json_files = packages_json_filenames(pj_text);
  REQUIRE(json_files.size() == 110);

  std::set<std::string> page_dirs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && fs::exists(entry.path() / "index.html") && name != "matrix" && name != "archs") {
      page_dirs.insert(name);
    }
  }
  std::set<std::string> json_names;
  for (const auto& [name, e] : pj->packages) json_names.insert(name);
  CHECK(page_dirs == json_names);  // one page per package

  std::size_t anchors = 0;
  std::set<std::string> page_files;
  for (const std::string& name : json_names) {
    CAPTURE(name);
    const std::string html = wheelfit::test::read_file(dir / name / "index.html");
    const auto raw = raw_anchors(html);
    REQUIRE(raw.size() == count_occurrences(html, "<a "));
    const Page page = parse_ok(html, std::string(kFarm) + name + "/");
    REQUIRE(page.links.size() == raw.size());
    CHECK(page.skipped.empty());
    anchors += page.links.size();
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const Link& link = page.links[i];
      CAPTURE(link.url);
      CHECK_THAT(link.url, StartsWith(std::string(kReleases)));
      CHECK(link.url == raw[i].first);  // absolute already: kept byte for byte
      CHECK(link.text == raw[i].second);
      CHECK(link.filename == replace_all(raw[i].first.substr(raw[i].first.rfind('/') + 1), "%2B", "+"));
      CHECK(link.filename.find('%') == std::string::npos);
      CHECK_FALSE(link.sha256);  // the farm's anchors carry no #sha256=
      CHECK_FALSE(link.yanked);
      CHECK(pj->sha256_for(link.url, link.filename).has_value());
      page_files.insert(link.filename);
    }
  }
  CHECK(page_files == json_files);
  // 110 files, 122 anchors: cumm (torch-free) lists its 3 files under each of 5 torch minors.
  CHECK(anchors == 122);
}

TEST_CASE("the snapshot's cumm page lists aliases whose text differs from the href", "[index][html][fixtures]") {
  const std::string html = wheelfit::test::read_file(wheelfit::test::farm_index_dir() / "cumm" / "index.html");
  const Page page = parse_ok(html, std::string(kFarm) + "cumm/");
  REQUIRE(page.links.size() == 15);
  std::set<std::string> urls, texts, files;
  std::size_t differing = 0;
  for (const Link& l : page.links) {
    urls.insert(l.url);
    texts.insert(l.text);
    files.insert(l.filename);
    if (l.text != l.filename) ++differing;
  }
  CHECK(urls.size() == 3);
  CHECK(files.size() == 3);
  CHECK(texts.size() == 15);
  CHECK(differing == 12);  // only the torch2.11 aliases match their file
  CHECK(texts.count("cumm-0.8.2+cu128torch2.8-cp312-cp312-win_amd64.whl") == 1);
  CHECK(files.count("cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl") == 1);
}

TEST_CASE("the snapshot's root and combo root pages hold only directory links", "[index][html][fixtures]") {
  const fs::path dir = wheelfit::test::farm_index_dir();
  std::vector<fs::path> roots = {dir / "index.html"};
  for (const auto& entry : fs::directory_iterator(dir / "cu128")) roots.push_back(entry.path() / "index.html");
  REQUIRE(roots.size() == 6);
  for (const fs::path& p : roots) {
    CAPTURE(p.string());
    const std::string html = wheelfit::test::read_file(p);
    const Page page = parse_ok(html, std::string(kFarm));
    CHECK(page.links.empty());
    CHECK(page.skipped.size() == count_occurrences(html, "<a "));
    for (const std::string& why : page.skipped) CHECK_THAT(why, Contains("directory link"));
  }
}

TEST_CASE("every per-combo package page of the snapshot parses to files of packages.json", "[index][html][fixtures]") {
  const fs::path dir = wheelfit::test::farm_index_dir();
  const std::set<std::string> json_files = packages_json_filenames(wheelfit::test::read_file(dir / "packages.json"));
  std::size_t pages = 0;
  for (const auto& combo : fs::directory_iterator(dir / "cu128")) {
    const std::string torch = combo.path().filename().string();  // "torch2.8"
    for (const auto& pkg : fs::directory_iterator(combo.path())) {
      if (!pkg.is_directory()) continue;
      CAPTURE(pkg.path().string());
      const std::string html = wheelfit::test::read_file(pkg.path() / "index.html");
      const Page page = parse_ok(html, std::string(kFarm) + "cu128/" + torch + "/" + pkg.path().filename().string() + "/");
      ++pages;
      REQUIRE(page.links.size() == count_occurrences(html, "<a "));
      CHECK(page.skipped.empty());
      for (const Link& l : page.links) {
        CAPTURE(l.url);
        CHECK_THAT(l.url, StartsWith(std::string(kReleases)));
        CHECK(json_files.count(l.filename) == 1);
        CHECK_THAT(l.text, Contains("+cu128" + torch + "-"));  // the alias names the channel's torch
      }
    }
  }
  CHECK(pages == 77);  // 37 under torch2.8, 37 under torch2.11, cumm alone under 2.7, 2.9, 2.10
}

TEST_CASE("the snapshot's matrix page: in-page and directory links skipped, matrix.json kept", "[index][html][fixtures]") {
  const std::string html = wheelfit::test::read_file(wheelfit::test::farm_index_dir() / "matrix" / "index.html");
  const Page page = parse_ok(html, std::string(kFarm) + "matrix/");
  REQUIRE(page.links.size() == 1);
  CHECK(page.links[0].url == std::string(kFarm) + "matrix/matrix.json");
  CHECK(page.links[0].filename == "matrix.json");
  std::size_t in_page = 0, directory = 0;
  for (const std::string& why : page.skipped) {
    if (why.find(": in-page link") != std::string::npos) ++in_page;
    if (why.find(": directory link") != std::string::npos) ++directory;
  }
  CHECK(in_page == count_occurrences(html, "href=\"#"));
  CHECK(in_page + directory + page.links.size() == count_occurrences(html, "<a "));
  CHECK(std::find(page.skipped.begin(), page.skipped.end(), "href '#cu132': in-page link") != page.skipped.end());
}

TEST_CASE("the snapshot's packages.json parses completely", "[index][packages-json][fixtures]") {
  const std::string text = wheelfit::test::read_file(wheelfit::test::farm_index_dir() / "packages.json");
  auto pj = parse_packages_json(text, "packages.json");
  REQUIRE(pj);
  CHECK(pj->repo == "Comfy-Forge/cuda-wheels");
  CHECK(pj->packages.size() == 38);
  CHECK(pj->packages.size() == count_occurrences(text, "\"torch_free\":"));
  std::size_t wheels = 0;
  std::vector<std::string> torch_free;
  for (const auto& [name, entry] : pj->packages) {
    if (entry.torch_free) torch_free.push_back(name);
    for (const PackagesJsonWheel& w : entry.wheels) {
      ++wheels;
      CAPTURE(w.filename);
      CHECK_THAT(w.url, StartsWith(std::string(kReleases)));
      REQUIRE(w.sha256);
      CHECK(w.sha256->size() == 64);
      CHECK(w.sha256->find_first_not_of("0123456789abcdef") == std::string::npos);
    }
  }
  CHECK(wheels == 110);
  CHECK(wheels == count_occurrences(text, "\"filename\":"));
  CHECK(torch_free == std::vector<std::string>{"cumm"});
  const PackagesJsonEntry& cumm = pj->packages.at("cumm");
  REQUIRE(cumm.wheels.size() == 3);
  CHECK(cumm.wheels[2].filename == "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl");
  CHECK(pj->sha256_for("https://github.com/Comfy-Forge/cuda-wheels/releases/download/cumm-latest/"
                       "cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl",
                       "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl") ==
        "b2b79cbc1a428b1dd02665b3169346468397bc71c6f65acf9430d55f6b5d73ef");
}
