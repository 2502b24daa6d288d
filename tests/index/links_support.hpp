#pragma once
// What the index page tests share (test_links*.cpp): the page URL they parse against, two
// digests, and a parse that must succeed.

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>

#include "wheelfit/index/links.hpp"

namespace wheelfit::test {

inline constexpr std::string_view kPage = "https://example.org/simple/foo/";
inline const std::string kSha(64, 'a');
inline const std::string kSha2(64, 'b');

/// `html` parsed as the page at `page_url`; a failed parse FAILs the test with its message.
inline index::Page parse_ok(std::string_view html, std::string_view page_url = kPage) {
  auto page = index::parse_simple_html(html, page_url);
  INFO(html);
  if (!page) FAIL("parse_simple_html failed: " << page.error().message);
  return std::move(page).value();
}

}  // namespace wheelfit::test
