// The demand evaluators the resolver and explain share (resolve/demands.hpp).
#include <catch2/catch.hpp>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/resolve/demands.hpp"

using namespace wheelfit;
using resolve::Demand;

namespace {
model::WheelName wheel(const std::string& filename) {
  auto w = model::WheelName::parse(filename);
  REQUIRE(w);
  return *w;
}
}  // namespace

TEST_CASE("the wheel's side of python, os, cpu_arch and glibc is written one way", "[resolve][demands]") {
  struct Row {
    std::string filename, python, platforms, cpus, oses;
  };
  const std::vector<Row> rows{
      {"a-1.0-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl", "cp312-cp312",
       "manylinux_2_24_x86_64.manylinux_2_28_x86_64", "x86_64", "linux"},
      {"a-1.0-cp39.cp310-abi3-win_amd64.whl", "cp39-abi3, cp310-abi3", "win_amd64", "x86_64", "windows"},
      {"a-1.0-py3-none-any.whl", "py3-none", "any", "any", "any"},
      {"a-1.0-cp312-cp312-manylinux_2_28_aarch64.manylinux_2_28_x86_64.whl", "cp312-cp312",
       "manylinux_2_28_aarch64.manylinux_2_28_x86_64", "aarch64, x86_64", "linux"},
  };
  for (const auto& r : rows) {
    INFO(r.filename);
    const auto w = wheel(r.filename);
    CHECK(resolve::python_tags_text(w) == r.python);
    CHECK(resolve::platform_tags_text(w) == r.platforms);
    CHECK(resolve::cpu_archs_text(w) == r.cpus);
    CHECK(resolve::oses_text(w) == r.oses);
  }
}

TEST_CASE("libc floors: glibc for manylinux, musl for musllinux, none otherwise", "[resolve][demands]") {
  const std::vector<std::pair<std::string, std::optional<std::string>>> rows{
      {"a-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", "glibc >= 2.28"},
      {"a-1.0-cp312-cp312-manylinux2014_x86_64.whl", "glibc >= 2.17"},
      {"a-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", "musl 1.2"},
      {"a-1.0-cp312-cp312-linux_x86_64.whl", std::nullopt},
      {"a-1.0-cp312-cp312-win_amd64.whl", std::nullopt},
  };
  for (const auto& [filename, floor] : rows) {
    INFO(filename);
    const auto w = wheel(filename);
    REQUIRE(w.platforms.size() == 1);
    CHECK(resolve::libc_floor_text(w.platforms[0]) == floor);
  }
}

TEST_CASE("platform_fit needs the machine's OS and CPU arch", "[resolve][demands]") {
  const auto w = wheel("a-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK_FALSE(resolve::platform_fit(w, test::make_machine({{"os", "linux"}})));
  CHECK_FALSE(resolve::platform_fit(w, test::make_machine({{"cpu_arch", "x86_64"}})));
  auto fit = resolve::platform_fit(w, test::make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.27"}}));
  REQUIRE(fit);
  CHECK(fit->os_ok);
  CHECK(fit->cpu_ok);
  CHECK_FALSE(fit->glibc_ok);
}

TEST_CASE("device targets print one way everywhere", "[resolve][demands]") {
  CHECK(resolve::gpus_text("sm ", std::nullopt) == "unknown");
  CHECK(resolve::gpus_text("sm ", std::vector<std::string>{}) == "no GPU");
  CHECK(resolve::gpus_text("sm ", std::vector<std::string>{"8.6", "9.0"}) == "sm 8.6, 9.0");
  CHECK(resolve::targets_text("", {"gfx90a"}) == "gfx90a");
}

TEST_CASE("device_targets canonicalises by the backend's grammar and names a bad target's source", "[resolve][demands]") {
  auto m = test::make_machine({{"os", "linux"}, {"gpus", "sm_86,9.0"}});
  auto targets = resolve::device_targets(m, test::cuda_policy());
  REQUIRE(targets);
  REQUIRE(*targets);
  CHECK(**targets == std::vector<std::string>{"8.6", "9.0"});

  CHECK_FALSE(*resolve::device_targets(test::make_machine({{"os", "linux"}}), test::cuda_policy()));

  auto bad = test::make_machine({{"os", "linux"}, {"gpus", "banana"}});
  auto refused = resolve::device_targets(bad, test::cuda_policy());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::invalid_input);
  CHECK(refused.error().message.find("'banana'") != std::string::npos);
}

TEST_CASE("cover: each target served by an entry, or uncovered", "[resolve][demands]") {
  const auto& policy = test::cuda_policy();
  struct Row {
    std::string list;
    std::vector<std::string> targets, served, uncovered;
  };
  const std::vector<Row> rows{
      {"8.0;9.0", {"8.0", "9.0"}, {"8.0", "9.0"}, {}},
      {"8.0;9.0", {"6.1", "9.0"}, {"9.0"}, {"6.1"}},
      {"8.0+PTX", {"8.9", "9.0"}, {"8.9", "9.0"}, {}},  // 8.9 runs sm_80 SASS; 9.0 JIT-compiles the PTX
      {"", {"9.0"}, {}, {"9.0"}},         // an empty list runs nowhere
      {"8.0;9.0", {}, {}, {}},
  };
  for (const auto& r : rows) {
    INFO(r.list);
    const auto c = resolve::cover(policy, r.list, r.targets);
    std::vector<std::string> served;
    for (const auto& [t, match] : c.served) {
      served.push_back(t);
      CHECK(match.covers());
      CHECK_FALSE(resolve::runs_text(policy, t, match).empty());
    }
    CHECK(served == r.served);
    CHECK(c.uncovered == r.uncovered);
  }
  const auto ptx = resolve::cover(policy, "8.0+PTX", {"8.9", "9.0"});
  REQUIRE(ptx.served.size() == 2);
  CHECK(resolve::runs_text(policy, "8.9", ptx.served[0].second) == "sm 8.9 runs sm_80 SASS");
  CHECK(resolve::runs_text(policy, "9.0", ptx.served[1].second) ==
        "sm 9.0 runs compute_80 PTX, JIT-compiled by the driver (slow first launch)");
}

TEST_CASE("judge_driver: same_major by driver_line, else the floor by driver_version", "[resolve][demands]") {
  struct Row {
    std::vector<std::pair<std::string, std::string>> facts;
    std::string line;
    bool checked;
    std::string failure;  // the machine side of the failure, empty when it runs
  };
  const std::vector<Row> rows{
      {{{"os", "linux"}, {"driver_line", "12.2"}}, "12.8", true, ""},  // minor-version compatibility
      {{{"os", "linux"}, {"driver_line", "11.8"}}, "12.8", true, "driver supports CUDA 11.8"},
      {{{"os", "linux"}, {"driver_line", "13.0"}}, "12.8", true, ""},
      {{{"os", "linux"}, {"driver_version", "525.60"}}, "12.8", true, "driver 525.60"},
      {{{"os", "linux"}, {"driver_version", "580.65.06"}}, "12.8", true, ""},
      {{{"os", "linux"}}, "12.8", false, ""},
  };
  for (const auto& r : rows) {
    auto m = test::make_machine(r.facts);
    INFO(r.facts.back().first << "=" << r.facts.back().second << " line " << r.line);
    auto v = resolve::judge_driver(*model::NumericVersion::parse(r.line), m, test::cuda_policy());
    CHECK(v.checked == r.checked);
    CHECK((v.failure ? v.failure->machine : std::string()) == r.failure);
    if (v.failure) CHECK(v.failure->demand == Demand::line);
  }
}
