// Messages about skipped links quote the href cut short, with its secrets redacted before the cut:
// a long password past the cut is never half-printed.
#include <catch2/catch.hpp>

#include <string>

#include "wheelfit/index/links.hpp"

using namespace wheelfit;

TEST_CASE("a skipped href's message hides its password and token, however long", "[index][html][secrets]") {
  const std::string password(300, 'P');
  const std::string rows[] = {
      "https://user:" + password + "@files.test/x-1.whl#sha256=abc",
      "https://files.test/" + std::string(100, 'd') + "/x-1.whl?token=" + password + "#sha256=abc",
  };
  for (const auto& href : rows) {
    CAPTURE(href.substr(0, 60));
    auto page = index::parse_simple_html("<a href=\"" + href + "\">x</a>", "https://idx.test/simple/x/");
    REQUIRE(page);
    REQUIRE(page->skipped.size() == 1);
    CHECK_THAT(page->skipped[0], Catch::Contains("sha256 fragment is not 64 hex digits"));
    CHECK_THAT(page->skipped[0], !Catch::Contains("PPPP"));
  }
}
