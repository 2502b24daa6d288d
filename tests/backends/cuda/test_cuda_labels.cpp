// The CUDA backend's label grammar (its policy data: semantics::LabelTemplate): the (CUDA line,
// torch minor) combo of a wheel's local label, and the line of torch's own label. The ROCm
// backend's torch labels are checked beside it: a label names one backend's build or none.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "support/backend_support.hpp"
#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/version.hpp"
#include "support/model_support.hpp"

using wheelfit::model::Combo;
using wheelfit::model::NumericVersion;
using wheelfit::model::Version;

namespace {
using wheelfit::test::nv;
std::optional<Combo> parse_combo_label(std::string_view label) { return wheelfit::test::cuda_policy().parse_combo_label(label); }
std::optional<NumericVersion> parse_cuda_tag(std::string_view label) { return wheelfit::test::cuda_policy().parse_torch_label(label); }
}  // namespace

TEST_CASE("parse_combo_label reads every farm form", "[backends][cuda][labels]") {
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
    CHECK(combo->line.parts() == nv(row.cuda).parts());
    CHECK(combo->torch.parts() == nv(row.torch).parts());
  }
}

TEST_CASE("parse_combo_label keeps torch2.1 and torch2.10 apart", "[backends][cuda][labels]") {
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

TEST_CASE("parse_combo_label reads the label of a parsed wheel version", "[backends][cuda][labels]") {
  const Version version = Version::parse("0.2+CU128-Torch2.8").value();
  CHECK(version.local() == "cu128.torch2.8");
  CHECK_FALSE(parse_combo_label(version.local()).has_value());  // '-' is not part of any farm form
  const Version farm = Version::parse("0.2+cu128torch2.8").value();
  const auto combo = parse_combo_label(farm.local());
  REQUIRE(combo.has_value());
  CHECK(wheelfit::test::cuda_policy().combo_str(*combo) == "cu12.8/torch2.8");
}

TEST_CASE("parse_combo_label rejects labels that name no combo", "[backends][cuda][labels]") {
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

TEST_CASE("combo_str and Combo equality", "[backends][cuda][labels]") {
  const Combo c{nv("12.8"), nv("2.8")};
  CHECK(wheelfit::test::cuda_policy().combo_str(c) == "cu12.8/torch2.8");
  CHECK(wheelfit::test::rocm_policy().combo_str(Combo{nv("6.2.4"), nv("2.7")}) == "rocm6.2.4/torch2.7");
  CHECK(c == Combo{nv("12.8"), nv("2.8.0")});
  CHECK_FALSE(c == (Combo{nv("12.6"), nv("2.8")}));
  CHECK_FALSE(c == (Combo{nv("12.8"), nv("2.9")}));
}

TEST_CASE("torch's CUDA label: the last digit is the minor", "[backends][cuda][labels]") {
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
    // Only the first '.'-segment is the tag (torch 2.1's "cu121.with.pypi.cudnn"), so "cu12.8"
    // reads as cu12 (1.2), as torch's own label parser reads it.
    CHECK(parse_cuda_tag("cu12.8")->str() == "1.2");
  }
  SECTION("bad tags") {
    for (const std::string& tag : std::vector<std::string>{"", "cu", "cu1", "cu1280", "cux8", "cu12a",
                                                           "rocm6.3", "cpu", "128", "c128", " cu128", "cu128 ",
                                                           "++cu128", "cu-12"}) {
      CAPTURE(tag);
      CHECK_FALSE(parse_cuda_tag(tag).has_value());
    }
  }
}

TEST_CASE("a torch label names one backend's build, or none", "[backends][cuda][labels]") {
  const auto& cuda = wheelfit::test::cuda_policy();
  const auto& rocm = wheelfit::test::rocm_policy();
  SECTION("cuda and rocm builds") {
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
    };
    for (const auto& row : rows) {
      CAPTURE(row.label);
      const auto& mine = row.backend == "cuda" ? cuda : rocm;
      const auto& other = row.backend == "cuda" ? rocm : cuda;
      const auto line = mine.parse_torch_label(row.label);
      REQUIRE(line.has_value());
      CHECK(line->parts() == row.line);
      CHECK_FALSE(other.parse_torch_label(row.label).has_value());
    }
  }
  SECTION("labels that name no accelerator line") {
    for (const std::string& label : std::vector<std::string>{"", "+", "junk", "+junk", "cu", "cu1", "cu12345", "rocm",
                                                             "rocm6.", "rocmx", "cpu", "+cpu", "cpux", "cpu.1", "xpu",
                                                             "cu128torch2.8", "++cu128", "cu128+"}) {
      CAPTURE(label);
      CHECK_FALSE(cuda.parse_torch_label(label).has_value());
      CHECK_FALSE(rocm.parse_torch_label(label).has_value());
    }
  }
}
