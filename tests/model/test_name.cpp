// PEP 503 name normalisation and PEP 508 name validation.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wheelfit/model/name.hpp"

using wheelfit::model::is_valid_name;
using wheelfit::model::normalize_name;

TEST_CASE("normalize_name lower-cases and collapses separator runs (PEP 503)", "[model][name]") {
  struct Row {
    std::string input;
    std::string normalised;
  };
  const std::vector<Row> rows{
      {"flash_attn", "flash-attn"},
      {"flash-attn", "flash-attn"},
      {"Flash.Attn", "flash-attn"},
      {"Foo_Bar.baz", "foo-bar-baz"},
      {"FOO", "foo"},
      {"foo__bar", "foo-bar"},
      {"foo-_.-bar", "foo-bar"},
      {"a.b.c", "a-b-c"},
      {"cumesh_vb", "cumesh-vb"},
      {"custom_rasterizer_hy3d2", "custom-rasterizer-hy3d2"},
      {"Detectron2", "detectron2"},
      {"x", "x"},
      {"", ""},
      {"_foo_", "-foo-"},  // the PEP 503 regex does not trim; validation rejects such names
  };
  for (const auto& row : rows) {
    CAPTURE(row.input);
    CHECK(normalize_name(row.input) == row.normalised);
    // Idempotent.
    CHECK(normalize_name(normalize_name(row.input)) == row.normalised);
  }
}

TEST_CASE("is_valid_name accepts PEP 508 names and rejects the rest", "[model][name]") {
  SECTION("valid names") {
    for (const std::string& name : std::vector<std::string>{"a", "Z", "0", "flash_attn", "flash-attn", "Flash.Attn", "cc_torch", "a-b_c.d",
                                   "foo__bar", "x1", "1x", std::string(200, 'a')}) {
      CAPTURE(name);
      CHECK(is_valid_name(name));
    }
  }
  SECTION("invalid names") {
    for (const std::string& name : std::vector<std::string>{"", "-foo", "foo-", "_foo", "foo_", ".foo", "foo.", "-", "foo bar", "foo/bar",
                                   "foo+bar", "foo!", "naïve", "foo\n", std::string(201, 'a')}) {
      CAPTURE(name);
      CHECK_FALSE(is_valid_name(name));
    }
  }
}
