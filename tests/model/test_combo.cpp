// Combos: the (CUDA line, torch minor) pair of a local version label, CUDA tags and torch labels.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/version.hpp"

using wheelfit::model::Combo;
using wheelfit::model::NumericVersion;
using wheelfit::model::parse_combo_label;
using wheelfit::model::parse_cuda_tag;
using wheelfit::model::parse_torch_label;
using wheelfit::model::Version;

namespace {
NumericVersion nv(std::string_view text) { return NumericVersion::parse(text).value(); }
}  // namespace

TEST_CASE("parse_combo_label reads every farm form", "[model][combo]") {
  struct Row {
    std::string label;
    std::string cuda;
    std::string torch;
  };
  const std::vector<Row> rows{
      {"cu128torch2.8", "12.8", "2.8"},    // current
      {"cu128torch2.10", "12.8", "2.10"},
      {"cu130torch2.11", "13.0", "2.11"},
      {"cu118torch2.1", "11.8", "2.1"},
      {"pt2.8cu128", "12.8", "2.8"},       // torch first
      {"pt2.10cu130", "13.0", "2.10"},
      {"pt28cu128", "12.8", "2.8"},
      {"cu128torch28", "12.8", "2.8"},     // legacy dot-less
      {"cu124torch24", "12.4", "2.4"},
      {"cu124torch210", "12.4", "2.10"},
      {"cu92torch14", "9.2", "1.4"},
      {"CU128Torch2.8", "12.8", "2.8"},    // local labels are case-insensitive
      {"PT2.8CU128", "12.8", "2.8"},
      {"+cu128torch2.8", "12.8", "2.8"},   // as printed after a version
      {"+pt2.8cu128", "12.8", "2.8"},
      {"+cu128torch28", "12.8", "2.8"},
      {"+cu124torch210", "12.4", "2.10"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    const auto combo = parse_combo_label(row.label);
    REQUIRE(combo.has_value());
    CHECK(combo->cuda.parts() == nv(row.cuda).parts());
    CHECK(combo->torch.parts() == nv(row.torch).parts());
  }
}

TEST_CASE("parse_combo_label keeps torch2.1 and torch2.10 apart", "[model][combo]") {
  const auto a = parse_combo_label("cu128torch2.1");
  const auto b = parse_combo_label("cu128torch2.10");
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->torch == nv("2.1"));
  CHECK(b->torch == nv("2.10"));
  CHECK_FALSE(a->torch == b->torch);
  CHECK(a->torch < b->torch);
  CHECK_FALSE(*a == *b);
  // The dot-less legacy form names the same combos.
  CHECK(*parse_combo_label("cu128torch21") == *a);
  CHECK(*parse_combo_label("cu128torch210") == *b);
}

TEST_CASE("parse_combo_label reads the label of a parsed wheel version", "[model][combo]") {
  const Version version = Version::parse("0.2+CU128-Torch2.8").value();
  CHECK(version.local() == "cu128.torch2.8");
  CHECK_FALSE(parse_combo_label(version.local()).has_value());  // '-' is not part of any farm form
  const Version farm = Version::parse("0.2+cu128torch2.8").value();
  const auto combo = parse_combo_label(farm.local());
  REQUIRE(combo.has_value());
  CHECK(combo->str() == "cu12.8/torch2.8");
}

TEST_CASE("parse_combo_label rejects labels that name no combo", "[model][combo]") {
  for (const std::string& label :
       std::vector<std::string>{"", "cpu", "cu128", "torch2.8", "rocm6.3", "cu128torch", "cu128torch2",
                                "cu128torch2.", "cu128torch.8", "cu128torch2.8.1", "cu128torch2100", "cutorch2.8",
                                "cu1torch2.8", "cu1280torch2.8", "cuxxtorch2.8", "pt2.8", "ptcu128", "pt2.8cu",
                                "pt2.8cu1", "pt2.8cu128x", "xcu128torch2.8", "cu128torch2.8a", "cu128torch-2.8",
                                "+", "++cu128torch2.8", "cu128torch2.8+"}) {
    CAPTURE(label);
    CHECK_FALSE(parse_combo_label(label).has_value());
  }
}

TEST_CASE("Combo::str and equality", "[model][combo]") {
  const Combo c{nv("12.8"), nv("2.8")};
  CHECK(c.str() == "cu12.8/torch2.8");
  CHECK(c == Combo{nv("12.8"), nv("2.8.0")});
  CHECK_FALSE(c == (Combo{nv("12.6"), nv("2.8")}));
  CHECK_FALSE(c == (Combo{nv("12.8"), nv("2.9")}));
}

TEST_CASE("parse_cuda_tag: the last digit is the minor", "[model][combo]") {
  SECTION("valid tags") {
    struct Row {
      std::string tag;
      std::vector<std::uint32_t> parts;
    };
    const std::vector<Row> rows{
        {"cu118", {11, 8}}, {"cu121", {12, 1}}, {"cu128", {12, 8}}, {"cu130", {13, 0}},
        {"cu92", {9, 2}},   {"cu80", {8, 0}},   {"CU128", {12, 8}},
    };
    for (const auto& row : rows) {
      CAPTURE(row.tag);
      const auto v = parse_cuda_tag(row.tag);
      REQUIRE(v.has_value());
      CHECK(v->parts() == row.parts);
    }
    CHECK(parse_cuda_tag("cu128")->str() == "12.8");
    CHECK(parse_cuda_tag("cu130")->nodot() == "130");
  }
  SECTION("bad tags") {
    for (const std::string& tag : std::vector<std::string>{"", "cu", "cu1", "cu1280", "cu12.8", "cux8", "cu12a",
                                                           "rocm6.3", "cpu", "128", "c128", " cu128", "cu128 ",
                                                           "+cu128", "cu-12"}) {
      CAPTURE(tag);
      CHECK_FALSE(parse_cuda_tag(tag).has_value());
    }
  }
}

TEST_CASE("parse_torch_label names the accelerator of a torch build", "[model][combo]") {
  SECTION("cuda, rocm and cpu builds") {
    struct Row {
      std::string label;
      std::string backend;
      std::vector<std::uint32_t> line;
    };
    const std::vector<Row> rows{
        {"+cu128", "cuda", {12, 8}},
        {"cu128", "cuda", {12, 8}},
        {"cu118", "cuda", {11, 8}},
        {"+cu130", "cuda", {13, 0}},
        {"cu121.with.pypi.cudnn", "cuda", {12, 1}},
        {"+rocm6.3", "rocm", {6, 3}},
        {"rocm6.2.4", "rocm", {6, 2, 4}},
        {"ROCM6.3", "rocm", {6, 3}},
        {"+cpu", "cpu", {}},
        {"cpu", "cpu", {}},
        {"CPU", "cpu", {}},
    };
    for (const auto& row : rows) {
      CAPTURE(row.label);
      const auto build = parse_torch_label(row.label);
      REQUIRE(build.has_value());
      CHECK(build->backend == row.backend);
      CHECK(build->line.parts() == row.line);
    }
  }
  SECTION("labels that name no accelerator") {
    for (const std::string& label : std::vector<std::string>{"", "+", "junk", "+junk", "cu", "cu1", "cu12345",
                                                             "rocm", "rocm6.", "rocmx", "cpux", "cpu.1", "xpu",
                                                             "cu128torch2.8", "++cu128", "cu128+"}) {
      CAPTURE(label);
      CHECK_FALSE(parse_torch_label(label).has_value());
    }
  }
}
