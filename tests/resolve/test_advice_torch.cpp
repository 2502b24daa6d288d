// The torch gate in the advice (issue 32, items 4 and 6; decision 0030): the combos whose torch
// cannot run on the machine's GPUs are set aside with the reason, and when the machine's own torch
// cannot run the advice names the same version on a line that does (resolver.hpp: Advice::torch,
// Advice::set_aside, Resolution::combo_torch). Judged on the CUDA policy's real torch arch matrix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;

namespace {

const std::string ta_x86 = "cp312-cp312-manylinux_2_28_x86_64.whl";

// "pkg-1.0+<label>-cp312-cp312-manylinux_2_28_x86_64.whl" for each label.
std::vector<test::Anchor> ta_wheels(const std::string& pkg, const std::vector<std::string>& labels) {
  std::vector<test::Anchor> out;
  for (const auto& l : labels) out.push_back({pkg + "-1.0+" + l + "-" + ta_x86});
  return out;
}

std::string ta_str(const model::Combo& c) { return test::cuda_policy().combo_str(c); }

resolve::Resolution ta_run(const index::IndexSnapshot& snap, const machine::Machine& m, const semantics::Policy& policy = test::cuda_policy()) {
  const auto ws = test::workspace({"a"});
  resolve::Inputs in{ws, m, policy, snap, "cuda"};
  auto r = resolve::resolve(in);
  REQUIRE(r);
  return std::move(*r);
}

// The reference machine (linux x86_64, Python 3.12, driver for CUDA 13.0) with these GPUs and torch.
machine::Machine ta_box(const std::string& gpus, const std::string& torch, test::Facts more = {}) {
  more.insert(more.begin(), {{"gpus", gpus}, {"torch", torch}});
  return test::h100_with(more);
}

// The CUDA policy with its tables changed by `edit`.
template <typename Edit>
semantics::Policy ta_edited(Edit edit) {
  auto tables = test::cuda_policy().tables();
  edit(tables);
  return semantics::Policy(std::move(tables));
}

std::vector<std::string> ta_combos(const std::vector<resolve::SetAside>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(ta_str(x.combo));
  return out;
}

}  // namespace

TEST_CASE("advice torch: the torch that runs is the same version on the closest line whose build covers every GPU",
          "[advice][torch_gate]") {
  // a is published for cu12.6 and cu12.8 on torch 2.8: whichever tier resolves, the installed
  // torch's build cannot run here, and the advice names the one that does.
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.8", "cu128torch2.8"})}});
  struct Row {
    const char* name;
    std::string gpus, torch;
    std::string version, line;  // what the advice names
    std::vector<std::string> uncovered;
  };
  const std::vector<Row> rows{
      {"RTX 5090 (sm 12.0) on 2.8.0+cu126", "12.0", "2.8.0+cu126", "2.8.0+cu128", "12.8", {"12.0"}},
      {"a 4090 + 5090 box on 2.8.0+cu126", "8.9,12.0", "2.8.0+cu126", "2.8.0+cu128", "12.8", {"12.0"}},
      {"RTX 5090 on 2.10.0+cu126", "12.0", "2.10.0+cu126", "2.10.0+cu128", "12.8", {"12.0"}},
      {"V100 (sm 7.0) on 2.11.0+cu128: Volta dropped", "7.0", "2.11.0+cu128", "2.11.0+cu126", "12.6", {"7.0"}},
      {"GTX 1080 (sm 6.1) on 2.11.0+cu130", "6.1", "2.11.0+cu130", "2.11.0+cu126", "12.6", {"6.1"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const auto r = ta_run(snap, ta_box(row.gpus, row.torch));
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    const auto& t = *r.advice->torch;
    CHECK(t.installed == row.torch);
    CHECK(t.version == row.version);
    REQUIRE(t.line);
    CHECK(t.line->str() == row.line);
    CHECK(t.index == "https://download.pytorch.org/whl/cu" + row.line.substr(0, row.line.find('.')) + row.line.substr(row.line.find('.') + 1));
    CHECK_THAT(t.reason, Catch::StartsWith("torch cannot run on sm "));
    for (const auto& gpu : row.uncovered) CHECK_THAT(t.reason, Catch::Contains(gpu));
    CHECK_THAT(t.reason, Catch::Contains("PyTorch's build of torch"));
    CHECK(t.file.empty());  // the façade's to fill
  }
}

TEST_CASE("advice torch: the farm combos that cover every package with it", "[advice][torch_gate]") {
  // RTX 5090 on 2.8.0+cu126; a is published for torch 2.8 on cu12.6 and cu12.8.
  const auto r = ta_run(test::snapshot({{"a", ta_wheels("a", {"cu126torch2.8", "cu128torch2.8"})}}), ta_box("12.0", "2.8.0+cu126"));
  REQUIRE(r.advice);
  REQUIRE(r.advice->torch);
  REQUIRE(r.advice->torch->combos.size() == 1);
  CHECK(ta_str(r.advice->torch->combos[0]) == "cu12.8/torch2.8");
  // None covers every package with it: said, the torch still named.
  const auto none = ta_run(test::snapshot({{"a", ta_wheels("a", {"cu126torch2.8"})}}), ta_box("12.0", "2.8.0+cu126"));
  REQUIRE(none.advice);
  REQUIRE(none.advice->torch);
  CHECK(none.advice->torch->version == "2.8.0+cu128");
  CHECK(none.advice->torch->combos.empty());
}

TEST_CASE("advice torch: a line the driver cannot run is not the one; the next, or none, with the reason", "[advice][torch_gate]") {
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.8", "cu128torch2.8"})}});
  SECTION("a driver for CUDA 11.8 runs no CUDA 12 line: none, each line with its reason") {
    const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu126", {{"driver_line", "11.8"}, {"driver_version", ""}}));
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    const auto& t = *r.advice->torch;
    CHECK(t.version.empty());
    CHECK_FALSE(t.line);
    REQUIRE(t.lines_set_aside.size() == 2);
    CHECK_THAT(t.lines_set_aside[0], Catch::StartsWith("CUDA 12.8: ") && Catch::Contains("driver supports CUDA 11.8"));
    CHECK_THAT(t.lines_set_aside[1], Catch::StartsWith("CUDA 12.9: ") && Catch::Contains("CUDA 12.9 runtime"));
  }
  SECTION("a driver version below CUDA 12's floor: the same") {
    const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu126", {{"driver_line", ""}, {"driver_version", "470.57.02"}}));
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    CHECK_FALSE(r.advice->torch->line);
    CHECK_THAT(r.advice->torch->lines_set_aside.at(0), Catch::Contains("needs driver >= 525.60.13"));
  }
  SECTION("an at_least driver rule with a driver for 12.8: 12.8 is named, 12.9 set aside for the driver") {
    const auto policy = ta_edited([](semantics::Policy::Tables& t) { t.driver_rule = semantics::DriverRule::at_least; });
    const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu126", {{"driver_line", "12.8"}, {"driver_version", ""}}), policy);
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    CHECK(r.advice->torch->version == "2.8.0+cu128");
    REQUIRE(r.advice->torch->lines_set_aside.size() == 1);
    CHECK_THAT(r.advice->torch->lines_set_aside[0], Catch::StartsWith("CUDA 12.9: the driver supports CUDA 12.8"));
  }
  SECTION("the closest line failing the driver, the next one serves") {
    // Rows of torch 2.8 for CUDA 12.7 (the closest to 12.6) and 12.4 (as close as 12.8, and
    // lower): an at_least driver for 12.6 runs 12.4 only. 12.7 is set aside, 12.4 named.
    const auto policy = ta_edited([](semantics::Policy::Tables& t) {
      t.driver_rule = semantics::DriverRule::at_least;
      for (const char* line : {"12.4", "12.7"}) {
        t.torch_archs["linux"]["2.8"][line] = {"12.0", "test row", "2026-01-01"};
        t.cells.push_back({{*model::NumericVersion::parse(line), *model::NumericVersion::parse("2.8")}, *model::NumericVersion::parse("3.12"), "linux"});
      }
      std::sort(t.cells.begin(), t.cells.end(), [](const auto& a, const auto& b) {
        return std::tie(a.combo.line, a.combo.torch, a.python, a.platform) < std::tie(b.combo.line, b.combo.torch, b.python, b.platform);
      });
    });
    const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu126", {{"driver_line", "12.6"}, {"driver_version", ""}}), policy);
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    CHECK(r.advice->torch->version == "2.8.0+cu124");
    const auto& aside = r.advice->torch->lines_set_aside;
    REQUIRE(aside.size() == 3);
    CHECK_THAT(aside[0], Catch::StartsWith("CUDA 12.7: the driver supports CUDA 12.6"));
    CHECK_THAT(aside[1], Catch::StartsWith("CUDA 12.8: "));
  }
}

TEST_CASE("advice torch: a line PyTorch does not ship for the env's Python is not the one", "[advice][torch_gate]") {
  // Python 3.14: PyTorch ships torch 2.8 for no line on it; torch 2.9 for 12.8 it does.
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.8"})}});
  const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu126", {{"python", "3.14"}}));
  REQUIRE(r.advice);
  REQUIRE(r.advice->torch);
  CHECK_FALSE(r.advice->torch->line);
  CHECK_THAT(r.advice->torch->lines_set_aside.at(0), Catch::Contains("PyTorch ships no torch 2.8 for it for cp314 on linux"));
}

TEST_CASE("advice torch: a GPU newer builds leave out gets the last torch built for it", "[advice][torch_gate]") {
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.11"})}});
  SECTION("Pascal (sm 6.1) on 2.11.0+cu128: 2.11.0+cu126 runs; torch 2.14 on CUDA 12.6 is the last built for it") {
    const auto r = ta_run(snap, ta_box("6.1", "2.11.0+cu128"));
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    const auto& t = *r.advice->torch;
    CHECK(t.version == "2.11.0+cu126");
    REQUIRE(t.last.size() == 1);
    CHECK(t.last[0].gpu == "6.1");
    CHECK(t.last[0].torch.str() == "2.14");
    CHECK(t.last[0].line.str() == "12.6");
  }
  SECTION("Pascal after 2.14 (a 2.15 whose builds start at sm 7.5, as PyTorch's RFC plans): no line of 2.15 runs; 2.14 is the last") {
    const auto policy = ta_edited([](semantics::Policy::Tables& t) {
      for (const char* line : {"12.9", "13.0"}) t.torch_archs["linux"]["2.15"][line] = {"7.5;8.0;8.6;9.0;10.0;12.0+PTX", "test row", "2026-01-01"};
    });
    const auto r = ta_run(snap, ta_box("6.1", "2.15.0+cu129"), policy);
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    const auto& t = *r.advice->torch;
    CHECK_FALSE(t.line);
    REQUIRE(t.lines_set_aside.size() == 1);
    CHECK_THAT(t.lines_set_aside[0], Catch::StartsWith("CUDA 13.0: torch cannot run on sm 6.1"));
    REQUIRE(t.last.size() == 1);
    CHECK(t.last[0].torch.str() == "2.14");
    CHECK(t.last[0].line.str() == "12.6");
  }
  SECTION("an RTX 5090 is built for by the newest torch: no last torch named") {
    const auto r = ta_run(snap, ta_box("12.0", "2.11.0+cu126"));
    REQUIRE(r.advice);
    REQUIRE(r.advice->torch);
    CHECK(r.advice->torch->last.empty());
  }
}

TEST_CASE("advice: combos whose torch cannot run on the GPUs are set aside, each named with its reason", "[advice][torch_gate]") {
  // a is published for torch 2.9 only: neither tier has a wheel, the advice searches; cu12.6's
  // torch 2.9 has no kernel for sm 12.0.
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.9", "cu128torch2.9", "cu130torch2.9"})}});
  const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu126"));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.advice);
  CHECK(ta_combos(r.advice->set_aside) == std::vector<std::string>{"cu12.6/torch2.9"});
  const auto& reason = r.advice->set_aside.at(0).reason;
  CHECK_THAT(reason, Catch::Contains("torch") && Catch::Contains("12.0") && Catch::Contains("5.0;6.0;7.0;7.5;8.0;8.6;9.0"));
  std::vector<std::string> suggested;
  for (const auto& s : r.advice->suggestions) suggested.push_back(ta_str(s.combo));
  CHECK(std::find(suggested.begin(), suggested.end(), "cu12.6/torch2.9") == suggested.end());
  CHECK(std::find(suggested.begin(), suggested.end(), "cu12.8/torch2.9") != suggested.end());
  CHECK(r.advice->combos_searched == 2);
}

TEST_CASE("advice: a torch that runs names no torch; a build that is unknown sets nothing aside", "[advice][torch_gate]") {
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.9", "cu128torch2.9"})}});
  struct Row {
    const char* name;
    machine::Machine m;
    bool unknown_matrix;
    std::vector<std::string> set_aside;  // cu12.6's torch 2.9 has no kernel for sm 12.0
  };
  const std::vector<Row> rows{
      {"H100 (sm 9.0) on 2.8.0+cu126: every build covers it", ta_box("9.0", "2.8.0+cu126"), false, {}},
      {"RTX 5090 on 2.8.0+cu128: its torch runs", ta_box("12.0", "2.8.0+cu128"), false, {"cu12.6/torch2.9"}},
      {"RTX 5090 on 2.8.0+cu126, the matrix without rows: unknown", ta_box("12.0", "2.8.0+cu126"), true, {}},
      {"RTX 5090 on a torch minor the matrix lacks (2.3.0+cu121)", ta_box("12.0", "2.3.0+cu121"), false, {"cu12.6/torch2.9"}},
      {"RTX 5090 on 2.8.0+cu126, the GPUs unknown", test::h100_with({{"torch", "2.8.0+cu126"}, {"gpus", ""}}), false, {}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const auto policy = ta_edited([&](semantics::Policy::Tables& t) {
      if (row.unknown_matrix) t.torch_archs.clear();
    });
    const auto r = ta_run(snap, row.m, policy);
    REQUIRE(r.advice);
    CHECK(ta_combos(r.advice->set_aside) == row.set_aside);
    CHECK_FALSE(r.advice->torch);
    std::vector<std::string> suggested;
    for (const auto& s : r.advice->suggestions) suggested.push_back(ta_str(s.combo));
    CHECK((std::find(suggested.begin(), suggested.end(), "cu12.6/torch2.9") != suggested.end()) == row.set_aside.empty());
  }
}

TEST_CASE("advice torch: a resolved workspace on a torch that runs carries no advice; the chosen combo's torch is judged",
          "[advice][torch_gate]") {
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu128torch2.8"})}});
  const auto r = ta_run(snap, ta_box("12.0", "2.8.0+cu128"));
  REQUIRE(r.ok());
  CHECK_FALSE(r.advice);
  REQUIRE(r.combo_torch);
  CHECK(r.combo_torch->status == resolve::TorchVerdict::Status::runs);
  // The 5090 resolved on cu12.6 (tier 1 today; the other items set it aside): its
  // combo's torch cannot run, which is what mirror --with-torch reads.
  const auto old = ta_run(test::snapshot({{"a", ta_wheels("a", {"cu126torch2.8"})}}), ta_box("12.0", "2.8.0+cu126"));
  if (old.ok() && *old.combo == model::Combo{*model::NumericVersion::parse("12.6"), *model::NumericVersion::parse("2.8")}) {
    REQUIRE(old.combo_torch);
    CHECK(old.combo_torch->cannot_run());
    CHECK(old.combo_torch->uncovered == std::vector<std::string>{"12.0"});
  }
}

TEST_CASE("advice torch: the installed torch's own list (Inputs::torch_archs) overrides the matrix row", "[advice][torch_gate]") {
  const auto snap = test::snapshot({{"a", ta_wheels("a", {"cu126torch2.9", "cu128torch2.9"})}});
  const auto ws = test::workspace({"a"});
  const auto m = ta_box("12.0", "2.8.0+cu126");
  resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
  struct Row {
    const char* list;     // read from its library
    const char* reason;   // "" : it runs, no torch advice
  };
  for (const auto& row : {Row{"12.0", ""}, Row{"8.0", "read from libtorch_cuda.so targets 8.0"}}) {
    CAPTURE(row.list);
    in.torch_archs = resolve::TorchArchs{row.list, {}, "read from libtorch_cuda.so"};
    auto r = resolve::resolve(in);
    REQUIRE(r);
    REQUIRE(r->advice);
    REQUIRE(r->advice->torch.has_value() == (*row.reason != 0));
    if (*row.reason) CHECK_THAT(r->advice->torch->reason, Catch::Contains(row.reason));
  }
}
