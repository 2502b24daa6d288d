// The torch gate in the resolver (issue 32 items 3 and 4; decision 0026): the installed torch is
// judged on the GPUs first, and no tier, fresh-environment choice or --combo uses a combo whose
// torch cannot run on every GPU. Every row is a real row of the shipped policy's torch arch
// matrix (backends/cuda/data/policy.json, torch_archs).
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;
using resolve::TierOutcome;
using resolve::TorchVerdict;
using test::Anchor;

namespace {

constexpr TierOutcome::Status kSetAside = TierOutcome::Status::set_aside;

std::string gate_wheel(const std::string& label, const std::string& arch = "x86_64") {
  return "pkg-1.0+" + label + "-cp312-cp312-manylinux_2_28_" + arch + ".whl";
}

// pkg on the combos the rows need: the installed torches' and both fallbacks (x86_64 cu12.8/torch2.8,
// aarch64 cu13.0/torch2.10).
index::IndexSnapshot gate_index() {
  std::vector<Anchor> a;
  for (const char* label : {"cu126torch2.8", "cu128torch2.8", "cu128torch2.11", "cu130torch2.13", "cu129torch2.13"}) a.push_back({gate_wheel(label)});
  for (const char* label : {"cu128torch2.8", "cu130torch2.10"}) a.push_back({gate_wheel(label, "aarch64")});
  return test::snapshot({{"pkg", a}});
}

resolve::Resolution gate_run(const resolve::Inputs& in) {
  auto r = resolve::resolve(in);
  REQUIRE(r.has_value());
  return std::move(*r);
}

resolve::Resolution gate_run(const machine::Machine& m, const index::IndexSnapshot& snap) {
  const auto ws = test::workspace({"pkg"});
  return gate_run(resolve::Inputs{ws, m, test::cuda_policy(), snap, "cuda"});
}

// An x86_64 / aarch64 machine (glibc 2.35, Python 3.12, driver 13.0) with this torch and these GPUs.
machine::Machine gate_box(const std::string& torch, const std::string& gpus, const std::string& arch = "x86_64") {
  test::Facts facts{{"gpus", gpus}, {"cpu_arch", arch}};
  if (!torch.empty()) facts.emplace_back("torch", torch);
  auto m = test::h100_with(facts);
  if (torch.empty()) m.torch.reset();
  return m;
}

std::size_t gate_warnings(const resolve::Resolution& r, const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(r.warnings.begin(), r.warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; }));
}

}  // namespace

TEST_CASE("resolve judges the installed torch on the GPUs first: tier 1 is set aside when it cannot run",
          "[resolve][torch_gate]") {
  struct Row {
    const char* what;
    std::string torch, gpus, arch;
    std::vector<std::string> uncovered;  ///< empty: the torch runs
    const char* list;                    ///< the row's list (the shipped matrix)
    const char* resolved_tier;           ///< "": nothing resolves
    const char* pin;                     ///< the torch pin's index ends so
  };
  auto row = GENERATE(values<Row>({
      {"RTX 5090 on torch 2.8.0+cu126", "2.8.0+cu126", "12.0", "x86_64", {"12.0"}, "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "fallback", "cu128"},
      {"Jetson Thor on torch 2.8.0+cu128 (aarch64)", "2.8.0+cu128", "11.0", "aarch64", {"11.0"}, "7.0;7.5;8.0;8.6;9.0;10.0;12.0",
       "fallback", "cu130"},
      {"V100 on torch 2.11.0+cu128", "2.11.0+cu128", "7.0", "x86_64", {"7.0"}, "7.5;8.0;8.6;9.0;10.0;12.0", "fallback", "cu128"},
      {"RTX 4090 + RTX 5090 on torch 2.8.0+cu126", "2.8.0+cu126", "8.9,12.0", "x86_64", {"12.0"}, "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
       "fallback", "cu128"},
      {"PyPI's torch 2.7.0 (cu12.6 on linux) on an RTX 5090", "2.7.0", "12.0", "x86_64", {"12.0"}, "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
       "fallback", "cu128"},
      {"control: RTX 3090 on torch 2.8.0+cu126", "2.8.0+cu126", "8.6", "x86_64", {}, "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "bootstrap", "cu126"},
      {"control: RTX 5090 on torch 2.8.0+cu128", "2.8.0+cu128", "12.0", "x86_64", {}, "7.0;7.5;8.0;8.6;9.0;10.0;12.0", "bootstrap", "cu128"},
      {"control: two RTX 5090 on PyPI's torch 2.8.0 (cu12.8)", "2.8.0", "12.0,12.0", "x86_64", {}, "7.0;7.5;8.0;8.6;9.0;10.0;12.0",
       "bootstrap", "cu128"},
  }));
  CAPTURE(row.what);
  const auto r = gate_run(gate_box(row.torch, row.gpus, row.arch), gate_index());
  REQUIRE(r.machine_torch);
  REQUIRE(r.machine_torch->archs);
  CHECK(r.machine_torch->archs->list == row.list);
  CHECK(r.machine_torch->archs->source.find("PyTorch's build of torch") == 0);
  CHECK(r.machine_torch->uncovered == row.uncovered);
  REQUIRE_FALSE(r.tiers.empty());
  const auto& t1 = r.tiers[0];
  CHECK(t1.tier == "bootstrap");
  REQUIRE(t1.combo);
  if (row.uncovered.empty()) {
    CHECK(r.machine_torch->status == TorchVerdict::Status::runs);
    CHECK(t1.status == TierOutcome::Status::resolved);
    CHECK(r.torch_root_cause.empty());
  } else {
    CHECK(r.machine_torch->cannot_run());
    CHECK(t1.status == kSetAside);
    CHECK(t1.packages.empty());  // its packages are not judged: the torch under them cannot run
    CHECK(t1.reason.find("torch " + row.torch + " cannot run on sm ") == 0);
    CHECK(t1.reason.find(row.list) != std::string::npos);
    CHECK(t1.reason.find(r.machine_torch->archs->source) != std::string::npos);
    for (const auto& gpu : row.uncovered) CHECK(t1.reason.find(gpu) != std::string::npos);
    CHECK(r.torch_root_cause == t1.reason);
  }
  CHECK(r.tier.value_or("") == row.resolved_tier);
  if (r.ok()) {
    // The pins name the chosen combo's torch, never the one that cannot run.
    REQUIRE_FALSE(r.pins.empty());
    CHECK(r.pins[0].name == "torch");
    CHECK(r.pins[0].index.ends_with(std::string("/") + row.pin));
  }
}

TEST_CASE("resolve names the entries of the installed torch's list by kind and where the list came from",
          "[resolve][torch_gate]") {
  const auto r = gate_run(gate_box("2.8.0+cu126", "12.0"), gate_index());
  REQUIRE(r.machine_torch);
  const auto& entries = r.machine_torch->archs->entries;
  REQUIRE(entries.size() == 2);
  CHECK(entries[0] == std::pair<std::string, std::vector<std::string>>{
                          "sass", {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}});
  CHECK(entries[1] == std::pair<std::string, std::vector<std::string>>{"ptx", {}});
  CHECK(r.tiers[0].reason.find("sass: sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90; ptx: none") != std::string::npos);
  CHECK(r.tiers[0].reason.find("on linux (pytorch v2.8.0 .ci/manywheel/build_cuda.sh") != std::string::npos);
  // The fallback combo runs the GPU: the machine resolves there, with the root cause kept.
  CHECK(r.ok());
  CHECK(r.tiers[1].status == TierOutcome::Status::resolved);
}

TEST_CASE("resolve: the installed torch's own list (Inputs::torch_archs) overrides the policy's row",
          "[resolve][torch_gate]") {
  const auto ws = test::workspace({"pkg"});
  const auto m = gate_box("2.8.0+cu126", "12.0");
  const auto snap = gate_index();
  resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
  SECTION("a library that holds sm_120: tier 1 runs") {
    in.torch_archs = resolve::TorchArchs{"9.0;12.0", {{"sass", {"sm_90", "sm_120"}}, {"ptx", {}}}, "libtorch_cuda.so (test)"};
    const auto r = gate_run(in);
    CHECK(r.machine_torch->status == TorchVerdict::Status::runs);
    CHECK(r.machine_torch->archs->source == "libtorch_cuda.so (test)");
    CHECK(r.tier.value_or("") == "bootstrap");
  }
  SECTION("a library without it: its list and source are the reason's") {
    in.torch_archs = resolve::TorchArchs{"8.6", {{"sass", {"sm_86"}}, {"ptx", {}}}, "libtorch_cuda.so (test)"};
    const auto r = gate_run(in);
    CHECK(r.tiers[0].status == kSetAside);
    CHECK(r.tiers[0].reason.find("its arch list 8.6 (sass: sm_86; ptx: none)") != std::string::npos);
    CHECK(r.tiers[0].reason.find("libtorch_cuda.so (test)") != std::string::npos);
  }
}

TEST_CASE("resolve: a torch whose arch list is unknown sets nothing aside, and one warning says how to give it",
          "[resolve][torch_gate]") {
  struct Row {
    const char* what;
    std::string torch, gpus, arch;
    const char* tier;
  };
  auto row = GENERATE(values<Row>({
      {"torch 2.13 on CUDA 12.9 (no row: no source gives it)", "2.13.0+cu129", "9.0", "x86_64", "bootstrap"},
      {"Thor: tier 1 set aside, the aarch64 fallback's torch 2.10 has no row", "2.8.0+cu128", "11.0", "aarch64", "fallback"},
  }));
  CAPTURE(row.what);
  const auto r = gate_run(gate_box(row.torch, row.gpus, row.arch), gate_index());
  CHECK(r.tier.value_or("") == row.tier);
  CHECK(gate_warnings(r, "torch's arch list is unknown") == 1);
  CHECK(gate_warnings(r, "--policy FILE (a torch_archs row") == 1);
  CHECK(gate_warnings(r, "--python PATH") == 1);
  for (const auto& t : r.tiers) {
    if (t.status == kSetAside) CHECK(t.combo != r.combo);
  }
  SECTION("no warning when nothing unknown was judged, or there is no GPU to judge") {
    CHECK(gate_warnings(gate_run(gate_box("2.8.0+cu128", "9.0"), gate_index()), "arch list is unknown") == 0);
    CHECK(gate_warnings(gate_run(gate_box("2.13.0+cu130", "none"), gate_index()), "arch list is unknown") == 0);
  }
}

TEST_CASE("resolve never chooses a torch that cannot run for a fresh environment (no torch installed)",
          "[resolve][torch_gate]") {
  // The newest torch first: cu12.6/torch2.12 (sm 5.0-9.0, no PTX), then cu13.0/torch2.11 (sm 7.5-12.0),
  // then cu12.8/torch2.8 (sm 7.0-12.0); for aarch64 only torch 2.9 (no sm 11.0 in either line).
  std::vector<Anchor> a;
  for (const char* label : {"cu126torch2.12", "cu130torch2.11", "cu128torch2.8"}) a.push_back({gate_wheel(label)});
  for (const char* label : {"cu128torch2.9", "cu130torch2.9"}) a.push_back({gate_wheel(label, "aarch64")});
  const auto snap = test::snapshot({{"pkg", a}});
  struct Row {
    const char* what;
    std::string gpus, arch;
    std::vector<std::string> set_aside;  ///< the combos passed over, newest first
    const char* chosen;                  ///< "": none
  };
  auto row = GENERATE(values<Row>({
      {"RTX 5090", "12.0", "x86_64", {"cu12.6/torch2.12"}, "cu13.0/torch2.11"},
      {"RTX 4090 + RTX 5090", "8.9,12.0", "x86_64", {"cu12.6/torch2.12"}, "cu13.0/torch2.11"},
      {"V100", "7.0", "x86_64", {}, "cu12.6/torch2.12"},
      {"RTX 3090", "8.6", "x86_64", {}, "cu12.6/torch2.12"},
      {"Jetson Thor", "11.0", "aarch64", {"cu13.0/torch2.9", "cu12.8/torch2.9"}, ""},
  }));
  CAPTURE(row.what);
  const auto r = gate_run(gate_box("", row.gpus, row.arch), snap);
  CHECK_FALSE(r.machine_torch);
  CHECK(r.torch_root_cause.empty());
  std::vector<std::string> aside;
  for (const auto& t : r.tiers) {
    if (t.status != kSetAside) continue;
    CHECK(t.tier == "bootstrap");
    CHECK(t.reason.find("torch " + t.combo->torch.str() + " (+cu") == 0);
    CHECK(t.reason.find("cannot run on sm ") != std::string::npos);
    aside.push_back(r.combo_str(*t.combo));
  }
  CHECK(aside == row.set_aside);
  const auto chosen = std::find_if(r.tiers.begin(), r.tiers.end(), [](const TierOutcome& t) { return !t.chosen.empty(); });
  if (*row.chosen) {
    REQUIRE(chosen != r.tiers.end());
    CHECK(r.combo_str(*chosen->combo) == row.chosen);
    CHECK(r.tier.value_or("") == "bootstrap");
  } else {
    CHECK(chosen == r.tiers.end());
  }
}

TEST_CASE("resolve --combo refuses a torch that cannot run, with the reason", "[resolve][torch_gate]") {
  const auto ws = test::workspace({"pkg"});
  const auto m = gate_box("2.8.0+cu128", "12.0");
  const auto snap = gate_index();
  resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
  in.combo = model::Combo{*model::NumericVersion::parse("12.6"), *model::NumericVersion::parse("2.8")};
  const auto r = gate_run(in);
  CHECK_FALSE(r.ok());
  REQUIRE(r.tiers.size() == 1);
  CHECK(r.tiers[0].tier == "requested");
  CHECK(r.tiers[0].status == kSetAside);
  CHECK(r.tiers[0].reason.find("torch 2.8 (+cu126) cannot run on sm 12.0") == 0);
  CHECK(r.tiers[0].packages.empty());
  CHECK(r.torch_root_cause.empty());  // the installed torch (cu128) runs
  SECTION("a combo whose torch runs is judged as before") {
    in.combo = model::Combo{*model::NumericVersion::parse("12.8"), *model::NumericVersion::parse("2.8")};
    CHECK(gate_run(in).ok());
  }
}

TEST_CASE("resolve sets tier 2 aside when the fallback's torch cannot run though the farm's list covers the GPU",
          "[resolve][torch_gate]") {
  // sm 11.0 on x86_64: the farm's cu12.8 list reaches it through 9.0+PTX; torch 2.8+cu128
  // (7.0-10.0, 12.0, no PTX) does not, nor the installed cu126 torch.
  const auto r = gate_run(gate_box("2.8.0+cu126", "11.0"), gate_index());
  REQUIRE(r.tiers.size() == 2);
  CHECK(r.tiers[0].status == kSetAside);
  CHECK(r.tiers[1].tier == "fallback");
  CHECK(r.tiers[1].status == kSetAside);
  CHECK(r.combo_str(*r.tiers[1].combo) == "cu12.8/torch2.8");
  CHECK(r.tiers[1].reason.find("torch 2.8 (+cu128) cannot run on sm 11.0: its arch list 7.0;7.5;8.0;8.6;9.0;10.0;12.0") == 0);
  CHECK_FALSE(r.ok());
}

TEST_CASE("resolve says PyPI's torch for Windows is CPU-only", "[resolve][torch_gate]") {
  auto m = gate_box("2.8.0", "8.6");
  REQUIRE(machine::set_fact(m, "os", "windows", "test"));
  m.glibc.reset();
  const auto r = gate_run(m, test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-cp312-cp312-win_amd64.whl"}}}}));
  REQUIRE_FALSE(r.tiers.empty());
  CHECK(r.tiers[0].status == TierOutcome::Status::skipped);
  CHECK(r.tiers[0].reason.find("torch 2.8.0 has no local label: on Windows PyPI's torch is CPU-only") == 0);
  CHECK(r.torch_root_cause == r.tiers[0].reason);
  CHECK_FALSE(r.machine_torch);
}
