// The torch arch matrix as shipped: judge_torch over the built-in CUDA policy's rows (as the CLI
// loads it), Linux, Windows and the newest releases, and the CUDA backend's description of a list.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "support/backend_support.hpp"
#include "support/model_support.hpp"
#include "wheelfit/resolve/torch_gate.hpp"

namespace {

using wheelfit::model::Combo;
using wheelfit::resolve::TorchVerdict;
using wheelfit::test::nv;
using Status = TorchVerdict::Status;
using Targets = std::vector<std::string>;

const char* status_name(Status s) {
  switch (s) {
    case Status::runs: return "runs";
    case Status::cannot_run: return "cannot_run";
    case Status::unknown: return "unknown";
  }
  return "?";
}

struct GateRow {
  const char* what;
  const char* torch;
  const char* line;
  const char* platform;
  Targets gpus;
  Status status;
  Targets uncovered;
};

// Judges each row on the shipped policy: the row's list, then the verdict and what it leaves out.
void check_gate_rows(const std::vector<GateRow>& rows) {
  const auto& policy = wheelfit::test::cuda_policy();
  for (const auto& r : rows) {
    CAPTURE(r.what, r.torch, r.line, r.platform, r.gpus);
    const Combo combo{nv(r.line), nv(r.torch)};
    auto archs = wheelfit::resolve::torch_archs_from_policy(policy, combo, r.platform);
    if (r.status != Status::unknown) {
      REQUIRE(archs);
      CAPTURE(archs->list, archs->source);
      CHECK_THAT(archs->source, Catch::Contains(std::string("torch ") + r.torch + " for CUDA " + r.line + " on " +
                                                r.platform));
      CHECK_FALSE(archs->entries.empty());
    }
    const auto v = wheelfit::resolve::judge_torch(policy, archs, r.gpus);
    CHECK(std::string(status_name(v.status)) == status_name(r.status));
    CHECK(v.uncovered == r.uncovered);
    if (r.status == Status::unknown) CHECK_FALSE(v.why_unknown.empty());
  }
}

}  // namespace

TEST_CASE("judge_torch over the shipped torch arch matrix (Linux)", "[resolve][torch_gate]") {
  check_gate_rows({
      {"RTX 5090 on 2.8 cu12.6: built for 5.0-9.0, no PTX", "2.8", "12.6", "linux", {"12.0"}, Status::cannot_run, {"12.0"}},
      {"Jetson Thor on 2.8 cu12.8 aarch64: 10.0 SASS cannot cross a major", "2.8", "12.8", "linux_aarch64", {"11.0"},
       Status::cannot_run, {"11.0"}},
      {"V100 on 2.11 cu12.8: Volta dropped", "2.11", "12.8", "linux", {"7.0"}, Status::cannot_run, {"7.0"}},
      {"4090 + 5090 on 2.8 cu12.6: only the 5090 is left out", "2.8", "12.6", "linux", {"8.9", "12.0"},
       Status::cannot_run, {"12.0"}},
      {"control: 3090 on 2.8 cu12.6", "2.8", "12.6", "linux", {"8.6"}, Status::runs, {}},
      {"control: RTX 5090 on 2.8 cu12.8", "2.8", "12.8", "linux", {"12.0"}, Status::runs, {}},
      {"control: H100 on 2.10 cu13.0", "2.10", "13.0", "linux", {"9.0"}, Status::runs, {}},
      {"control: 4090 + 5090 on 2.8 cu12.8", "2.8", "12.8", "linux", {"8.9", "12.0"}, Status::runs, {}},
      {"Thor on 2.9 cu13.0 aarch64: 12.0+PTX is above 11.0", "2.9", "13.0", "linux_aarch64", {"11.0"}, Status::cannot_run,
       {"11.0"}},
      {"no GPU runs anywhere a row exists", "2.8", "12.6", "linux", {}, Status::runs, {}},
      {"an unknown torch: 2.3 has no row", "2.3", "12.1", "linux", {"8.6"}, Status::unknown, {}},
      {"an unknown line: 2.8 cu11.8", "2.8", "11.8", "linux", {"8.6"}, Status::unknown, {}},
  });
}

TEST_CASE("judge_torch: an unknown torch or unknown GPUs say why", "[resolve][torch_gate]") {
  const auto& policy = wheelfit::test::cuda_policy();
  auto none = wheelfit::resolve::judge_torch(policy, std::nullopt, Targets{"8.6"});
  CHECK(none.status == Status::unknown);
  CHECK_THAT(none.why_unknown, Catch::Contains("unknown"));
  auto archs = wheelfit::resolve::torch_archs_from_policy(policy, Combo{nv("12.6"), nv("2.8")}, "linux");
  REQUIRE(archs);
  auto no_gpus = wheelfit::resolve::judge_torch(policy, archs, std::nullopt);
  CHECK(no_gpus.status == Status::unknown);
  CHECK_THAT(no_gpus.why_unknown, Catch::Contains("GPU arch"));
}

TEST_CASE("the CUDA backend describes a target list by kind", "[resolve][torch_gate]") {
  const auto* rules = wheelfit::test::cuda_policy().rules();
  REQUIRE(rules);
  struct Row {
    const char* list;
    const char* canonical;
    Targets sass;
    Targets ptx;
  };
  const std::vector<Row> rows = {
      {"7.5;9.0+PTX", "7.5;9.0+PTX", {"sm_75", "sm_90"}, {"compute_90"}},
      {"9.0a", "9.0a", {"sm_90a"}, {}},
      {"10.0f+PTX", "10.0f+PTX", {"sm_100f"}, {"compute_100f"}},
      {"8.0ptx", "8.0ptx", {}, {"compute_80"}},
      {"5.0;6.0;7.0;7.5;8.0;8.6;9.0", "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
       {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}, {}},
  };
  for (const auto& r : rows) {
    CAPTURE(r.list);
    auto code = rules->describe_list(r.list);
    REQUIRE(code);
    CHECK(code->list == r.canonical);
    auto kind = [&](const std::string& name) {
      for (const auto& [k, v] : code->entries) {
        if (k == name) return v;
      }
      return Targets{};
    };
    CHECK(kind("sass") == r.sass);
    CHECK(kind("ptx") == r.ptx);
  }
  for (const char* bad : {"9.x", "", "sm_9"}) {
    CAPTURE(bad);
    auto code = rules->describe_list(bad);
    REQUIRE_FALSE(code);
    CHECK(code.error().is(wheelfit::Errc::invalid_input));
  }
}

TEST_CASE("judge_torch over the sourced rows: Windows builds differ from Linux", "[resolve][torch_gate]") {
  check_gate_rows({
      {"RTX 5090 on 2.7 cu12.6 Windows", "2.7", "12.6", "windows", {"12.0"}, Status::cannot_run, {"12.0"}},
      {"GTX 1080 on 2.7 cu12.8 Windows: Windows kept Pascal", "2.7", "12.8", "windows", {"6.1"}, Status::runs, {}},
      {"GTX 1080 on 2.7 cu12.8 Linux: Linux did not", "2.7", "12.8", "linux", {"6.1"}, Status::cannot_run, {"6.1"}},
      {"V100 on 2.10 cu12.8 Windows", "2.10", "12.8", "windows", {"7.0"}, Status::runs, {}},
      {"V100 on 2.11 cu12.8 Windows: Volta dropped", "2.11", "12.8", "windows", {"7.0"}, Status::cannot_run, {"7.0"}},
      {"RTX 5090 on 2.9 cu13.0 Windows", "2.9", "13.0", "windows", {"12.0"}, Status::runs, {}},
      {"GB10 (12.1) on 2.14 cu13.2 Windows: 12.0 SASS serves 12.1", "2.14", "13.2", "windows", {"12.1"}, Status::runs, {}},
      {"4090 + 5090 on 2.12 cu12.6 Windows", "2.12", "12.6", "windows", {"8.9", "12.0"}, Status::cannot_run, {"12.0"}},
      {"Windows 2.8 is not sourced", "2.8", "12.8", "windows", {"12.0"}, Status::unknown, {}},
      {"Windows 2.6 is not sourced", "2.6", "12.4", "windows", {"8.6"}, Status::unknown, {}},
  });
}

TEST_CASE("judge_torch over the newest releases (2.13, 2.14)", "[resolve][torch_gate]") {
  check_gate_rows({
      {"Pascal on 2.14 cu12.6 Linux: the last line that keeps it", "2.14", "12.6", "linux", {"6.1"}, Status::runs, {}},
      {"Pascal on 2.14 cu13.0 Linux", "2.14", "13.0", "linux", {"6.1"}, Status::cannot_run, {"6.1"}},
      {"Pascal on 2.14 cu13.2 Linux", "2.14", "13.2", "linux", {"6.1"}, Status::cannot_run, {"6.1"}},
      {"Pascal on 2.14 cu12.6 aarch64: 8.0;9.0 only", "2.14", "12.6", "linux_aarch64", {"6.1"}, Status::cannot_run, {"6.1"}},
      {"Pascal on 2.14 cu12.6 Windows", "2.14", "12.6", "windows", {"6.1"}, Status::runs, {}},
      {"Pascal on 2.14 cu13.0 Windows", "2.14", "13.0", "windows", {"6.1"}, Status::cannot_run, {"6.1"}},
      {"Pascal on 2.14 cu13.2 Windows", "2.14", "13.2", "windows", {"6.1"}, Status::cannot_run, {"6.1"}},
      {"Thor on 2.14 cu13.0 aarch64", "2.14", "13.0", "linux_aarch64", {"11.0"}, Status::runs, {}},
      {"Thor on 2.13 cu12.6 aarch64", "2.13", "12.6", "linux_aarch64", {"11.0"}, Status::cannot_run, {"11.0"}},
      {"RTX 5090 on 2.13 cu12.6 Linux", "2.13", "12.6", "linux", {"12.0"}, Status::cannot_run, {"12.0"}},
      {"RTX 5090 on 2.13 cu13.2 Linux", "2.13", "13.2", "linux", {"12.0"}, Status::runs, {}},
      {"V100 on 2.13 cu12.6 Linux", "2.13", "12.6", "linux", {"7.0"}, Status::runs, {}},
      {"V100 on 2.13 cu13.0 Linux", "2.13", "13.0", "linux", {"7.0"}, Status::cannot_run, {"7.0"}},
      {"H100 on 2.12 cu13.2 aarch64 (GH200)", "2.12", "13.2", "linux_aarch64", {"9.0"}, Status::runs, {}},
      {"2.13 cu12.9 is not sourced", "2.13", "12.9", "linux", {"12.0"}, Status::unknown, {}},
      {"2.15 is not sourced", "2.15", "13.2", "linux", {"12.0"}, Status::unknown, {}},
  });
}
