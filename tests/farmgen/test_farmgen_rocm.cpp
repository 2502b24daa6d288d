// The farm generator with --backend rocm: the ROCm label grammar in file names and channels, and
// resolves of ROCm machines against the generated farm.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <map>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "farmgen/farm_support.hpp"
#include "support/backend_support.hpp"
#include "farmgen.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

using test::farm_support::Farm;
using test::farm_support::parse_page;

namespace {

const Farm& rocm_farm() {
  static const Farm f(test::rocm_policy(), 6);
  return f;
}

machine::Machine rocm_machine(const std::string& gpus, std::optional<std::string> torch = "2.7.1+rocm6.3") {
  std::vector<std::pair<std::string, std::string>> facts{{"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"},
                                                         {"python", "3.12"}, {"backend", "rocm"}, {"gpus", gpus}};
  if (torch) facts.emplace_back("torch", *torch);
  return test::make_machine(facts);
}

resolve::Resolution resolve_rocm(const std::vector<std::string>& names, const machine::Machine& m) {
  auto transport = transports::make_file_transport();
  const auto snap = index::read_index(*transport, transports::to_url(rocm_farm().dir.string(), true), names);
  auto r = resolve::resolve({test::workspace(names), m, test::rocm_policy(), snap, "rocm"});
  REQUIRE(r.has_value());
  return std::move(*r);
}

// The farm's packages built for every platform (the ROCm grid is linux x86_64 only).
std::vector<std::string> rocm_names() {
  std::vector<std::string> out;
  for (const auto& p : farmgen::select_packages(farmgen::builtin_packages(), 6)) {
    const bool linux_ = std::find(p.platforms.begin(), p.platforms.end(), "linux") != p.platforms.end();
    if (linux_ && p.own_combinations.empty() && !p.min_pytorch) out.push_back(p.index_name);
  }
  return out;
}

}  // namespace

TEST_CASE("farmgen --backend rocm: file names and channels follow the ROCm label grammar", "[farmgen][rocm]") {
  const auto& f = rocm_farm();
  CHECK(f.stats.wheels > 0);
  const auto page = parse_page(f.dir / rocm_names().front() / "index.html", "file:///farm/x/");
  REQUIRE_FALSE(page.links.empty());
  for (const auto& link : page.links) {
    CAPTURE(link.text);
    auto w = model::WheelName::parse(link.text);
    REQUIRE(w);
    auto combo = test::rocm_policy().parse_combo_label(w->version.local());
    REQUIRE(combo);  // "+rocm6.3torch2.7": a ROCm combo, and not a CUDA one
    CHECK_FALSE(test::cuda_policy().parse_combo_label(w->version.local()));
    const auto py = model::parse_python_tag(w->python_tags[0]);
    REQUIRE(py.version);
    CHECK(test::rocm_policy().pytorch_shipped(*combo, *py.version, "linux"));
  }
  CHECK(fs::exists(f.dir / "rocm63" / "torch2.7" / "index.html"));
  CHECK(fs::exists(f.dir / "rocm6.2.4" / "torch2.7" / "index.html") == false);  // channels use the line's digits
  CHECK(fs::exists(f.dir / "rocm624" / "torch2.7" / "index.html"));
}

TEST_CASE("farmgen --backend rocm: a gfx90a machine resolves in tier 1 with ROCm pins", "[farmgen][rocm]") {
  const auto names = rocm_names();
  REQUIRE(names.size() >= 3);
  const auto r = resolve_rocm(names, rocm_machine("gfx90a"));
  INFO(r.tiers[0].reason);
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  CHECK(r.combo_str(*r.combo) == "rocm6.3/torch2.7");
  for (const auto& pick : r.picks) {
    CHECK(pick.filename.find("+rocm6.3torch2.7-cp312-cp312-") != std::string::npos);
    CHECK_THAT(pick.arch_source, Catch::Contains("gfx90a") && Catch::Contains("farm policy 6.3 (linux)"));
  }
  REQUIRE(r.pins.size() == 3);
  CHECK(r.pins[0].index == "https://download.pytorch.org/whl/rocm6.3");
  CHECK(r.pins[1].version == "==0.22.*");
  // The driver is not checked for ROCm, and says so.
  CHECK(std::any_of(r.warnings.begin(), r.warnings.end(),
                    [](const std::string& w) { return w.find("driver's ROCm support not checked") != std::string::npos; }));
  // Feature suffixes: code built for plain gfx90a runs with either xnack setting.
  CHECK(resolve_rocm(names, rocm_machine("gfx90a:xnack-")).ok());
}

TEST_CASE("farmgen --backend rocm: a gfx803 machine fails gpu_arch for every candidate", "[farmgen][rocm]") {
  const auto names = rocm_names();
  const auto r = resolve_rocm(names, rocm_machine("gfx803"));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.tiers.size() == 2);
  CHECK(r.tiers[1].status == resolve::TierOutcome::Status::skipped);
  CHECK_THAT(r.tiers[1].reason, Catch::Contains("does not cover gfx803"));
  const auto* unresolved = r.unresolved_tier();
  REQUIRE(unresolved != nullptr);
  REQUIRE(unresolved->size() == names.size());
  std::size_t judged = 0;
  for (const auto& p : *unresolved) {
    REQUIRE_FALSE(p.candidates.empty());
    for (const auto& c : p.candidates) {
      CAPTURE(c.filename);
      const bool gpu = std::any_of(c.failed.begin(), c.failed.end(), [](const resolve::Failure& f) {
        return f.demand == resolve::Demand::gpu_arch && f.machine == "gfx803";
      });
      CHECK(gpu);
      ++judged;
    }
  }
  CHECK(judged > 10);
}

TEST_CASE("farmgen --backend rocm: without torch, tier 1 is the newest ROCm combo covering all", "[farmgen][rocm]") {
  const auto r = resolve_rocm(rocm_names(), rocm_machine("gfx942", std::nullopt));
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  CHECK_THAT(r.tiers[0].chosen, Catch::Contains("no torch installed"));
  // The ROCm fallback (rocm7.1/torch2.10) is the newest torch the ROCm grid has, so the two agree.
  CHECK(r.combo_str(*r.combo) == "rocm7.1/torch2.10");
  // A torch of another backend names no ROCm line: tier 1 says so, and the fallback serves.
  const auto cuda_torch = resolve_rocm(rocm_names(), rocm_machine("gfx942", "2.8.0+cu128"));
  CHECK_THAT(cuda_torch.tiers[0].reason, Catch::Contains("names no ROCm line"));
  REQUIRE(cuda_torch.ok());
  CHECK(*cuda_torch.tier == "fallback");
}
