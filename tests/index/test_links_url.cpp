// Tests of wheelfit::index's URL helpers: resolve_url (RFC 3986) and percent_decode.

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/index/links.hpp"

using namespace wheelfit;
using namespace wheelfit::index;
using test::check_each;
using test::TextCase;

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
