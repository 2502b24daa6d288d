// util/text: trim, iequals, starts_with_ci, join and is_http_url, table-driven with the edge cases their callers
// meet (empty text, all whitespace, mixed case, non-http schemes).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/text.hpp"

using namespace wheelfit;

TEST_CASE("trim removes ASCII whitespace from both ends only", "[util][text]") {
  struct Row {
    std::string_view in, out;
  };
  const std::vector<Row> rows = {
      {"", ""},
      {" \t\r\n\f\v", ""},
      {"x", "x"},
      {"  a b  ", "a b"},
      {"\tvalue\r\n", "value"},
      {"\fx\v", "x"},
      {"a \n b", "a \n b"},
      {"\xc2\xa0x", "\xc2\xa0x"},  // U+00A0 is not ASCII whitespace
  };
  for (const auto& r : rows) {
    CAPTURE(r.in);
    CHECK(util::trim(r.in) == r.out);
  }
}

TEST_CASE("iequals and starts_with_ci ignore ASCII case only", "[util][text]") {
  struct Row {
    std::string_view a, b;
    bool equal, prefix;  // iequals(a, b), starts_with_ci(a, b)
  };
  const std::vector<Row> rows = {
      {"", "", true, true},
      {"abc", "", false, true},
      {"", "a", false, false},
      {"None", "none", true, true},
      {"ABI3", "abi3", true, true},
      {"abi3", "abi", false, true},
      {"ab", "abc", false, false},
      {"Sha256", "sha265", false, false},
      {"[", "{", false, false},  // '[' and '{' differ by 0x20 but are not letters
      {"\xc3\x89", "\xc3\xa9", false, false},  // É/é: not ASCII, compared as bytes
  };
  for (const auto& r : rows) {
    CAPTURE(r.a, r.b);
    CHECK(util::iequals(r.a, r.b) == r.equal);
    CHECK(util::iequals(r.b, r.a) == r.equal);
    CHECK(util::starts_with_ci(r.a, r.b) == r.prefix);
  }
}

TEST_CASE("join puts the separator between parts and keeps empty parts", "[util][text]") {
  struct Row {
    std::vector<std::string> parts;
    std::string_view sep, out;
  };
  const std::vector<Row> rows = {
      {{}, ", ", ""},
      {{"a"}, ", ", "a"},
      {{"a", "b", "c"}, ", ", "a, b, c"},
      {{"a", "b"}, "", "ab"},
      {{"", "x"}, ", ", ", x"},
      {{"x", ""}, ";", "x;"},
      {{"", ""}, ".", "."},
  };
  for (const auto& r : rows) {
    CAPTURE(r.parts, r.sep);
    CHECK(util::join(r.parts, r.sep) == r.out);
  }
}

TEST_CASE("is_http_url accepts http and https in any case, nothing else", "[util][text]") {
  struct Row {
    std::string_view url;
    bool http;
  };
  const std::vector<Row> rows = {
      {"http://x", true},
      {"https://x", true},
      {"HTTPS://x", true},
      {"Http://", true},
      {"", false},
      {"http:/x", false},
      {"https:x", false},
      {"ftp://x", false},
      {"file:///tmp/x", false},
      {" http://x", false},
      {"httpss://x", false},
      {"/srv/http://x", false},
  };
  for (const auto& r : rows) {
    CAPTURE(r.url);
    CHECK(util::is_http_url(r.url) == r.http);
  }
}
