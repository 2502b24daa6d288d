// NumericVersion: dotted machine facts (glibc, CUDA, driver, Python, compute capability).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "support/model_support.hpp"

using wheelfit::Errc;
using wheelfit::model::NumericVersion;

namespace {
using wheelfit::test::nv;
}  // namespace

TEST_CASE("NumericVersion::parse reads dotted numbers", "[model][numeric_version]") {
  struct Row {
    std::string input;
    std::vector<std::uint32_t> parts;
  };
  const std::vector<Row> rows{
      {"2.35", {2, 35}},
      {"12.8", {12, 8}},
      {"3", {3}},
      {"580.65.06", {580, 65, 6}},
      {"0", {0}},
      {"999999999", {999999999}},
      {"1.2.3.4.5.6.7.8", {1, 2, 3, 4, 5, 6, 7, 8}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.input);
    CHECK(nv(row.input).parts() == row.parts);
  }
}

TEST_CASE("NumericVersion::parse rejects everything else", "[model][numeric_version]") {
  wheelfit::test::check_rejects_quoting([](std::string_view text) { return NumericVersion::parse(text); }, {
      {"", "empty"},
      {"1..2", "expected a digit"},
      {"1.", "ends with a dot"},
      {".1", "expected a digit"},
      {"-1", "expected a digit"},
      {"+1", "expected a digit"},
      {"a", "expected a digit"},
      {"1.a", "expected a digit"},
      {"1a", "unexpected character 'a'"},
      {"1 .2", "unexpected character ' '"},
      {" 1", "expected a digit"},
      {"3.12t", "unexpected character 't'"},
      {"1234567890", "more than 9 digits"},
      {"1.2.3.4.5.6.7.8.9", "more than 8 components"},
  });
}

TEST_CASE("NumericVersion compares numerically, trailing zeros ignored", "[model][numeric_version]") {
  const std::vector<std::string> sorted{"0", "1.9", "1.10", "2", "2.5", "2.17", "2.27", "2.28", "2.35", "3.9", "3.10",
                                        "3.12", "12.4", "12.8", "13.0", "525.60.13", "580"};
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    for (std::size_t j = 0; j < sorted.size(); ++j) {
      CAPTURE(sorted[i], sorted[j]);
      CHECK(((nv(sorted[i]) <=> nv(sorted[j])) == (i <=> j)));
    }
  }
  CHECK(nv("2.8") == nv("2.8.0"));
  CHECK(nv("2.8") == nv("2.8.0.0"));
  CHECK(nv("13") == nv("13.0"));
  CHECK(nv("2.8.1") > nv("2.8"));
  CHECK(NumericVersion() == nv("0"));
  CHECK(NumericVersion({3, 12}) == nv("3.12"));
}

TEST_CASE("NumericVersion accessors and formatting", "[model][numeric_version]") {
  SECTION("major, minor and at() pad with zeros") {
    const NumericVersion x = nv("12.8");
    CHECK(x.major() == 12);
    CHECK(x.minor() == 8);
    CHECK(x.at(2) == 0);
    CHECK(nv("3").minor() == 0);
    CHECK(NumericVersion().empty());
    CHECK_FALSE(x.empty());
  }
  SECTION("truncated keeps or pads to n components") {
    CHECK(nv("2.8.1").truncated(2).parts() == std::vector<std::uint32_t>{2, 8});
    CHECK(nv("2").truncated(2).parts() == std::vector<std::uint32_t>{2, 0});
    CHECK(nv("2.8.1").truncated(2).str() == "2.8");
  }
  SECTION("str() keeps the text as written") {
    CHECK(nv("580.65.06").str() == "580.65.06");
    CHECK(nv("2.8.0").str() == "2.8.0");
    CHECK(nv("12.8").str() == "12.8");
    CHECK(NumericVersion({12, 8}).str() == "12.8");
    CHECK(NumericVersion().str().empty());
  }
  SECTION("nodot() joins the components") {
    CHECK(nv("12.8").nodot() == "128");
    CHECK(nv("13.0").nodot() == "130");
    CHECK(nv("9.2").nodot() == "92");
    CHECK(nv("3.12").nodot() == "312");
  }
}
