// Advice on the generated farm (issue 14): the demo's GTX 1080 and a workspace only a newer torch
// covers, judged and printed as `wheelfit resolve` prints them.
#include <catch2/catch.hpp>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;

namespace {

struct Demo {
  test::TempDir tmp;
  index::IndexSnapshot snap;
  std::vector<std::string> names{"flash-attn", "nvdiffrast", "cumesh", "sageattention"};  // examples/demo
  Demo() {
    farmgen::FarmOptions o;
    o.out = tmp / "farm";
    REQUIRE(farmgen::generate_farm(o, test::cuda_policy()));
    auto transport = transports::make_file_transport();
    snap = index::read_index(*transport, transports::to_url((tmp / "farm").string(), true), names);
  }
  std::pair<resolve::Resolution, std::string> run(const machine::Machine& m, const std::vector<std::string>& pkgs,
                                                  bool fallback = true) const {
    const auto ws = test::workspace(pkgs);
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.fallback = fallback;
    auto r = resolve::resolve(in);
    REQUIRE(r);
    output::ReportContext ctx{.machine = m, .workspace = ws, .index_url = snap.base_url, .index_origin = "--index",
                              .policy_source = "built-in"};
    auto text = output::human_report(*r, ctx);
    return {std::move(*r), std::move(text)};
  }
};

}  // namespace

TEST_CASE("generated farm: the demo's GTX 1080 gets near misses naming flash-attn and sageattention",
          "[farmgen][advice]") {
  const Demo demo;
  const auto [r, text] = demo.run(test::h100_with({{"gpus", "6.1"}}), demo.names);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.advice);
  CHECK(r.advice->suggestions.empty());  // flash-attn and sageattention build for sm 8.0+ only
  REQUIRE_FALSE(r.advice->near_misses.empty());
  for (const auto& miss : r.advice->near_misses) {
    INFO(test::cuda_policy().combo_str(miss.combo));
    REQUIRE(miss.missing.size() == 2);
    CHECK_THAT(miss.missing[0], Catch::StartsWith("flash-attn (cp312): its ") && Catch::EndsWith("wheels fail gpu_arch"));
    CHECK_THAT(miss.missing[1], Catch::StartsWith("sageattention (cp312): its ") && Catch::EndsWith("wheels fail gpu_arch"));
  }
  CHECK_THAT(text, Catch::Contains("advice: no combo the index publishes covers every package on this machine"));
  CHECK_THAT(text, Catch::Contains("flash-attn (cp312): its cu12.6/torch2.13 wheels fail gpu_arch"));
}

TEST_CASE("generated farm: a workspace only a newer torch covers is advised the newest combo and its pins",
          "[farmgen][advice]") {
  const Demo demo;
  // torch 2.7.0+cu126 and no fallback: the demo's packages exist for cu12.6/torch2.7, so ask for
  // one a torch 2.7 cannot have: the machine's Python 3.14 needs torch 2.9 or newer.
  const auto [r, text] = demo.run(test::h100_with({{"torch", "2.7.0+cu126"}, {"python", "3.14"}}), {"cumesh"}, false);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.advice);
  REQUIRE_FALSE(r.advice->suggestions.empty());
  const auto& best = r.advice->suggestions[0];
  CHECK(best.kind == resolve::Suggestion::Kind::combo);
  CHECK(best.combo.torch == *model::NumericVersion::parse("2.13"));  // the newest torch of the grid
  CHECK(best.combo.line == *model::NumericVersion::parse("12.6"));   // the line closest to the machine's
  CHECK(best.covers == std::vector<std::string>{"cumesh (cp314)"});
  CHECK_THAT(text, Catch::Contains("1. cu12.6/torch2.13: install torch==2.13.*"));
}
