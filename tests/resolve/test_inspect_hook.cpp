// resolve --inspect's hook: called on each package's would-be pick in preference order; a
// rejection makes the resolver try the next candidate and is reported as that candidate's verdict.
#include <catch2/catch.hpp>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;
using resolve::Demand;

namespace {
const std::string x86_inspect_hook = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
}

TEST_CASE("resolve --inspect hook: a rejected pick gives way to the next candidate", "[resolve][inspect]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_inspect_hook}, {"pkg-2.0+cu128torch2.8-" + x86_inspect_hook}, {"pkg-1.5+cu128torch2.8-" + x86_inspect_hook}}}});
  const auto ws = test::workspace({"pkg"});
  const auto m = test::h100();
  std::vector<std::string> asked;
  resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
  in.inspect = [&](const resolve::Pick& p) {
    asked.push_back(p.filename);
    resolve::Inspection out;
    if (p.version == "2.0+cu128torch2.8") out.reject = resolve::Failure{Demand::gpu_arch, "sm_80 (SASS) (read from its binaries)", "sm_90"};
    else out.arch_source = "sm_90 (SASS) (read from the wheel's binaries)";
    return out;
  };
  auto r = resolve::resolve(in);
  REQUIRE(r);
  REQUIRE(r->ok());
  REQUIRE(r->picks.size() == 1);
  CHECK(r->picks[0].version == "1.5+cu128torch2.8");
  CHECK(r->picks[0].arch_source == "sm_90 (SASS) (read from the wheel's binaries)");
  // In preference order: the highest version first, then the next.
  CHECK(asked == std::vector<std::string>{"pkg-2.0+cu128torch2.8-" + x86_inspect_hook, "pkg-1.5+cu128torch2.8-" + x86_inspect_hook});
}

TEST_CASE("resolve --inspect hook: every pick rejected: unresolved, with the evidence per candidate", "[resolve][inspect]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_inspect_hook}, {"pkg-1.0+cu126torch2.8-" + x86_inspect_hook}}}});
  const auto ws = test::workspace({"pkg"});
  const auto m = test::h100();
  resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
  int calls = 0;
  in.inspect = [&](const resolve::Pick&) {
    ++calls;
    return resolve::Inspection{resolve::Failure{Demand::gpu_arch, "sm_80 (SASS) (read from its binaries)", "sm_90"}, ""};
  };
  auto r = resolve::resolve(in);
  REQUIRE(r);
  CHECK_FALSE(r->ok());
  const auto* unresolved = r->unresolved_tier();
  REQUIRE(unresolved);
  REQUIRE(unresolved->size() == 1);
  const auto& p = (*unresolved)[0];
  CHECK(p.reason.find("rejected by inspecting their binaries") != std::string::npos);
  bool found = false;
  for (const auto& c : p.candidates) {
    if (c.filename != "pkg-1.0+cu128torch2.8-" + x86_inspect_hook) continue;
    found = true;
    REQUIRE(c.failed.size() == 1);
    CHECK(c.failed[0].demand == Demand::gpu_arch);
    CHECK(c.failed[0].wheel.find("read from its binaries") != std::string::npos);
  }
  CHECK(found);
  CHECK(calls >= 1);
}

TEST_CASE("resolve without a hook is unchanged; judge_driver says what the driver runs", "[resolve][inspect]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_inspect_hook}}}});
  const auto ws = test::workspace({"pkg"});
  const auto m = test::h100();
  auto r = resolve::resolve({ws, m, test::cuda_policy(), snap, "cuda"});
  REQUIRE(r);
  CHECK(r->ok());
  CHECK(r->picks[0].arch_source.find("exception 12.8/2.8") != std::string::npos);  // the policy, not the binaries

  auto ok = resolve::judge_driver(model::NumericVersion({12, 8}), m, test::cuda_policy());
  CHECK(ok.checked);
  CHECK_FALSE(ok.failure);
  auto old = test::make_machine({{"os", "linux"}, {"driver_line", "11.8"}});
  auto too_old = resolve::judge_driver(model::NumericVersion({12, 8}), old, test::cuda_policy());
  REQUIRE(too_old.failure);
  CHECK(too_old.failure->machine == "driver supports CUDA 11.8");
  auto unknown = resolve::judge_driver(model::NumericVersion({12, 8}), test::make_machine({{"os", "linux"}}), test::cuda_policy());
  CHECK_FALSE(unknown.checked);
}

TEST_CASE("resolve --inspect hook: binaries that cover the GPU overrule the policy's gpu_arch verdict", "[resolve][inspect]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_inspect_hook}}}});
  const auto ws = test::workspace({"pkg"});
  auto m = test::h100();
  m.gpus = std::vector<std::string>{"6.1"};  // not in the cu12.8 arch list
  const auto own_torch = test::torch_built_for("6.1");  // the machine's torch runs there: the wheel is judged
  {
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.torch_archs = own_torch;
    auto plain = resolve::resolve(in);
    REQUIRE(plain);
    REQUIRE_FALSE(plain->ok());  // by the policy alone: gpu_arch fails
  }
  SECTION("the binaries carry sm_61: picked, with the real archs as the evidence") {
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.torch_archs = own_torch;
    in.inspect = [](const resolve::Pick&) { return resolve::Inspection{std::nullopt, "sm_61 (SASS) (read from the wheel's binaries)"}; };
    auto r = resolve::resolve(in);
    REQUIRE(r);
    REQUIRE(r->ok());
    CHECK(r->picks[0].arch_source == "sm_61 (SASS) (read from the wheel's binaries)");
  }
  SECTION("the binaries could not be read (no arch evidence): the policy's verdict stands") {
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.torch_archs = own_torch;
    in.inspect = [](const resolve::Pick&) { return resolve::Inspection{}; };
    auto r = resolve::resolve(in);
    REQUIRE(r);
    CHECK_FALSE(r->ok());
  }
}
