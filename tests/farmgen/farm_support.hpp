#pragma once
// What the farm generator's tests share (test_farmgen*.cpp): a farm generated into a temporary
// folder, and a page of it parsed.

#include <catch2/catch.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "farmgen.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/semantics/policy.hpp"

namespace wheelfit::test::farm_support {

namespace fs = std::filesystem;

/// A farm of `p`'s grid (the first `packages` packages, or all), generated into a temporary folder.
struct Farm {
  TempDir tmp;
  fs::path dir;
  farmgen::FarmStats stats;
  explicit Farm(const semantics::Policy& p, std::optional<std::size_t> packages = std::nullopt) : dir(tmp / "farm") {
    farmgen::FarmOptions o;
    o.out = dir;
    o.packages = packages;
    auto r = farmgen::generate_farm(o, p);
    if (!r) throw std::runtime_error(r.error().message);
    stats = *r;
  }
};

/// The page in `file`, parsed as the one at `url`; REQUIREs that it parses.
inline index::Page parse_page(const fs::path& file, const std::string& url) {
  auto page = index::parse_simple_html(read_file(file), url);
  REQUIRE(page.has_value());
  return std::move(*page);
}

}  // namespace wheelfit::test::farm_support
