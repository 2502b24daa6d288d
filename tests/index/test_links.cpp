// Tests of wheelfit::index's PEP 503 HTML page parsing. docs/network-faults.md H01 (index corpus) and
// H03 (escaping) live here; the URL helpers are in test_links_url.cpp, PEP 691 JSON and
// packages.json in test_links_json.cpp, the real cuda-wheels snapshot in test_links_snapshot.cpp.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "index/links_support.hpp"
#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/links.hpp"

using namespace wheelfit;
using namespace wheelfit::index;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::any_contains;
using test::check_each;
using test::kPage;
using test::kSha;
using test::kSha2;
using test::parse_ok;
using test::TextCase;

namespace {

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

std::vector<std::string> urls_of(const Page& page) {
  std::vector<std::string> out;
  for (const Link& l : page.links) out.push_back(l.url);
  return out;
}


}  // namespace


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
