#include <catch2/catch.hpp>

#include "wheelfit/model/specifier.hpp"

using wheelfit::model::SpecifierSet;
using wheelfit::model::Version;

TEST_CASE("SpecifierSet::contains follows PEP 440", "[model][specifier]") {
  struct Row {
    std::string spec, version;
    bool expected;
  };
  auto row = GENERATE(values<Row>({
      {">=3.10", "3.12", true},       {">=3.10", "3.9", false},        {">=3.10", "3.10.0", true},
      {">=3.8,<3.13", "3.12", true},  {">=3.8,<3.13", "3.13", false},  {"<3.13, >=3.8", "3.13.1", false},
      {"~=3.10", "3.12", true},       {"~=3.10", "4.0", false},        {"~=3.10.2", "3.10.1", false},
      {"~=3.10.2", "3.10.9", true},   {"~=3.10.2", "3.11", false},     {"==3.*", "3.12", true},
      {"==3.12.*", "3.12", true},     {"==3.12.*", "3.13", false},     {"!=3.11.*", "3.11.4", false},
      {"!=3.11.*", "3.12", true},     {"==3.12", "3.12.0", true},      {"!=3.12", "3.12", false},
      {">3.12", "3.12", false},       {">3.12", "3.13", true},         {"<=3.12", "3.12", true},
      {"<3.13", "3.13.0rc1", false},  {"<3.13rc2", "3.13.0rc1", true}, {">3.12", "3.12.post1", false},
      {"===3.12", "3.12", true},      {"===3.12", "3.12.0", false},    {"", "3.12", true},
      {" >= 3.10 ", "3.12", true},    {">=3.10", "3.12+local", true},  {"==1!2.0", "2.0", false},
  }));
  CAPTURE(row.spec, row.version);
  auto s = SpecifierSet::parse(row.spec);
  REQUIRE(s);
  auto v = Version::parse(row.version);
  REQUIRE(v);
  CHECK(s->contains(*v) == row.expected);
}

TEST_CASE("SpecifierSet::parse rejects malformed specifiers", "[model][specifier]") {
  auto text = GENERATE(as<std::string>{}, "3.10", ">=", ">=3.x", "~=3", ">=3.*", "=>3.10", ">=3.10,,<4", ">=3.10,", "==3.*.1",
                       "==3.0a1.*");
  CAPTURE(text);
  auto s = SpecifierSet::parse(text);
  REQUIRE_FALSE(s);
  CHECK(s.error().is(wheelfit::Errc::invalid_input));
  CHECK_THAT(s.error().message, Catch::Contains("'" + text + "'"));
}
