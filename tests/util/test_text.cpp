// util/text: trim, iequals, starts_with_ci, join and is_http_url, table-driven with the edge cases their callers
// meet (empty text, all whitespace, mixed case, non-http schemes).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/util/text.hpp"

using namespace wheelfit;

TEST_CASE("trim removes ASCII whitespace from both ends only", "[util][text]") {
  const std::vector<test::TextCase> rows = {
      {"", ""},
      {" \t\r\n\f\v", ""},
      {"x", "x"},
      {"  a b  ", "a b"},
      {"\tvalue\r\n", "value"},
      {"\fx\v", "x"},
      {"a \n b", "a \n b"},
      {"\xc2\xa0x", "\xc2\xa0x"},  // U+00A0 is not ASCII whitespace
  };
  test::check_each(rows, [](std::string_view in) { return util::trim(in); });
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
  const std::vector<test::CaseOf<bool>> rows = {  // the URL, and whether it is http(s)
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
  test::check_each(rows, [](std::string_view url) { return util::is_http_url(url); });
}

TEST_CASE("parse_size reads sizes as people write them", "[util][text]") {
  struct Row {
    std::string text;
    std::uint64_t bytes;
  };
  const std::vector<Row> rows = {
      {"0", 0},
      {"1024", 1024},
      {"12B", 12},
      {"500M", 500'000'000},
      {"500MB", 500'000'000},
      {"500m", 500'000'000},
      {"1GiB", 1073741824},
      {"1gib", 1073741824},
      {"1Gi", 1073741824},
      {"2G", 2'000'000'000},
      {"1.5G", 1'500'000'000},
      {"1.5KiB", 1536},
      {"0.5K", 500},
      {"1.3GiB", 1395864371},  // rounded down
      {"3TiB", std::uint64_t{3} << 40},
      {"  64K\t", 64'000},
      {"16777215TiB", std::uint64_t{16777215} << 40},
      {"18446744073709551615", 18446744073709551615ull},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    const auto got = util::parse_size(r.text);
    REQUIRE(got);
    CHECK(*got == r.bytes);
  }
}

TEST_CASE("parse_size refuses what is not a size, naming it", "[util][text]") {
  struct Row {
    std::string text;
    std::string why;
  };
  const std::vector<Row> rows = {
      {"", "no number"},
      {"   ", "no number"},
      {"G", "no number"},
      {"-1G", "no number"},
      {"+1G", "no number"},
      {".5G", "no number"},
      {"1.G", "no digits after the point"},
      {"1X", "unknown unit 'X'"},
      {"1 G", "unknown unit ' G'"},
      {"1GiBB", "unknown unit 'GiBB'"},
      {"1BB", "unknown unit 'BB'"},
      {"1iB", "unknown unit 'iB'"},
      {"1e9", "unknown unit 'e9'"},
      {"0x10", "unknown unit 'x10'"},
      {"1.5", "a fraction of a byte"},
      {"1.5B", "a fraction of a byte"},
      {"18446744073709551616", "too large"},
      {"16777216TiB", "too large"},
      {"99999999999999999999999G", "too large"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    const auto got = util::parse_size(r.text);
    REQUIRE_FALSE(got);
    CHECK(got.error().is(Errc::invalid_input));
    CHECK_THAT(got.error().message, Catch::StartsWith("'" + r.text + "' is not a size (" + r.why));
  }
}

TEST_CASE("escape_controls makes text from the network safe for a terminal", "[util][text][escape]") {
  using util::ControlEscape;
  struct Row {
    std::string in;
    std::string text;  ///< ControlEscape::text: newlines and tabs kept
    std::string line;  ///< ControlEscape::line: everything escaped
  };
  const std::vector<Row> rows{
      {"", "", ""},
      {"plain ascii ~!@#$%^&*()", "plain ascii ~!@#$%^&*()", "plain ascii ~!@#$%^&*()"},
      {"a\\b", "a\\b", "a\\b"},                                      // a backslash passes (a Windows path)
      {"\x1b[2Jgone", "\\x1b[2Jgone", "\\x1b[2Jgone"},                // ESC: a screen clear
      {"name\rforged", "name\\x0dforged", "name\\x0dforged"},         // CR: a line overwritten
      {"two\nlines\tcol", "two\nlines\tcol", "two\\x0alines\\x09col"},  // layout: kept in text only
      {std::string("nul\0byte", 8), "nul\\x00byte", "nul\\x00byte"},
      {"bell\a bs\b del\x7f us\x1f", "bell\\x07 bs\\x08 del\\x7f us\\x1f", "bell\\x07 bs\\x08 del\\x7f us\\x1f"},
      {"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80", "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80",
       "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80"},                   // UTF-8 unchanged: é, ✓, 🚀
      {"nbsp\xc2\xa0ok", "nbsp\xc2\xa0ok", "nbsp\xc2\xa0ok"},         // U+00A0: the first after C1
      {"csi\xc2\x9b" "2J", "csi\\xc2\\x9b2J", "csi\\xc2\\x9b2J"},     // U+009B: the 8-bit CSI
      {"c1\xc2\x80 \xc2\x9f", "c1\\xc2\\x80 \\xc2\\x9f", "c1\\xc2\\x80 \\xc2\\x9f"},
      {"lone\x9b\xff\xc2", "lone\x9b\xff\xc2", "lone\x9b\xff\xc2"},   // not UTF-8: passed on as bytes
      {"\x1b\x1b", "\\x1b\\x1b", "\\x1b\\x1b"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.in);
    CHECK(util::escape_controls(row.in) == row.text);
    CHECK(util::escape_controls(row.in, ControlEscape::line) == row.line);
  }
  SECTION("the result holds no control byte at all in line mode") {
    std::string every;
    for (int c = 0; c < 256; ++c) every += static_cast<char>(c);
    for (unsigned char c : util::escape_controls(every, ControlEscape::line)) CHECK((c >= 0x20 && c != 0x7f));
  }
}
