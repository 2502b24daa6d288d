// Resolves against the real farm snapshot (../shared/fixtures/cuda-wheels/index) read through
// the file transport, for several machines. Expected answers are derived in the test from the
// fixture's packages.json with Boost.JSON, never from the program's own output.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
namespace json = boost::json;

namespace {

struct FixtureWheel {
  std::string filename, url, sha256, cuda, torch, python, platform;
};

// packages.json, read independently of wheelfit's parser: name -> wheels.
std::map<std::string, std::vector<FixtureWheel>> fixture_wheels() {
  auto doc = json::parse(test::read_file(test::farm_index_dir() / "packages.json")).as_object();
  std::map<std::string, std::vector<FixtureWheel>> out;
  for (const auto& [name, entry] : doc.at("packages").as_object()) {
    for (const auto& w : entry.as_object().at("wheels").as_array()) {
      const auto& o = w.as_object();
      auto s = [&](const char* k) { return std::string(o.at(k).as_string()); };
      out[std::string(name)].push_back({s("filename"), s("url"), s("sha256"), s("cuda"), s("torch"), s("python"), s("platform")});
    }
  }
  return out;
}

resolve::Resolution resolve_on_fixture(const std::vector<std::string>& packages, const machine::Machine& m,
                                       std::optional<model::Combo> combo = std::nullopt,
                                       std::optional<resolve::TorchArchs> torch_archs = std::nullopt) {
  auto transport = transports::make_file_transport();
  const auto snap = index::read_index(*transport, transports::to_url(test::farm_index_dir().string(), true), packages);
  resolve::Inputs in{test::workspace(packages), m, test::cuda_policy(), snap, "cuda"};
  in.combo = std::move(combo);
  in.torch_archs = std::move(torch_archs);
  auto r = resolve::resolve(in);
  REQUIRE(r.has_value());
  return std::move(*r);
}

// Every package the snapshot has a linux x86_64 cu12.8/torch2.8 wheel for (all but the aarch64-only few).
std::vector<std::string> packages_with(const std::map<std::string, std::vector<FixtureWheel>>& all, const std::string& cuda,
                                       const std::string& torch, const std::string& platform) {
  std::vector<std::string> out;
  for (const auto& [name, wheels] : all)
    for (const auto& w : wheels)
      if (w.cuda == cuda && w.torch == torch && w.platform == platform) {
        out.push_back(name);
        break;
      }
  return out;
}

// Whether a package's own arch list in the fixture's package configs (for CUDA 12.8 on x86_64)
// covers a GPU: read and judged here, independently of wheelfit's policy code. Packages with no
// list of their own use the farm policy row, which covers sm_90 and sm_100 on 12.8.
bool fixture_arch_covers(const std::string& index_name, int major, int minor) {
  auto doc = json::parse(test::read_file(test::fixtures_dir() / "cuda-wheels" / "derived" / "package_configs_summary.json"));
  for (const auto& p : doc.at("packages").as_array()) {
    if (p.at("index_name").as_string() != index_name) continue;
    std::string list;
    const auto& o = p.as_object();
    if (o.contains("arch_list_by_cuda") && o.at("arch_list_by_cuda").as_object().contains("12.8"))
      list = std::string(o.at("arch_list_by_cuda").at("12.8").as_string());
    else if (o.contains("arch_list"))
      list = std::string(o.at("arch_list").as_string());
    else
      return true;
    for (char& c : list)
      if (c == ';') c = ' ';
    std::istringstream in(list);
    for (std::string t; in >> t;) {
      const bool ptx = t.find("+PTX") != std::string::npos;
      const int M = std::stoi(t.substr(0, t.find('.')));
      const int m = std::stoi(t.substr(t.find('.') + 1));
      if (M == major && m <= minor) return true;              // SASS: same major, minor <=
      if (ptx && (M < major || (M == major && m <= minor))) return true;  // PTX: any later arch
    }
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("farm snapshot: x86_64 py3.12 torch 2.8+cu128 on sm_90 resolves in tier 1", "[integration][fixtures]") {
  const auto all = fixture_wheels();
  std::vector<std::string> packages;
  for (const auto& p : packages_with(all, "12.8", "2.8", "linux"))
    if (fixture_arch_covers(p, 9, 0)) packages.push_back(p);
  REQUIRE(packages.size() >= 30);
  auto r = resolve_on_fixture(packages, test::h100());
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  CHECK(wheelfit::test::cuda_policy().combo_str(*r.combo) == "cu12.8/torch2.8");
  REQUIRE(r.picks.size() == packages.size());
  for (const auto& pick : r.picks) {
    CAPTURE(pick.name);
    // The expected wheel: the fixture's linux cu12.8/torch2.8 entry (for torch-free cumm, the
    // file its torch2.8 alias points at).
    std::set<std::string> urls;
    for (const auto& w : all.at(pick.name))
      if (w.platform == "linux" && w.cuda == "12.8" && (w.torch == "2.8" || pick.name == "cumm")) urls.insert(w.url);
    CHECK(urls.count(pick.url) == 1);
    std::string sha;
    for (const auto& w : all.at(pick.name))
      if (w.url == pick.url) sha = w.sha256;
    CHECK(pick.sha256 == sha);
  }
}

TEST_CASE("farm snapshot: sageattn3 (10.0;12.0+PTX) fails sm_90 and fits sm_100", "[integration][fixtures]") {
  REQUIRE_FALSE(fixture_arch_covers("sageattn3", 9, 0));
  REQUIRE(fixture_arch_covers("sageattn3", 10, 0));
  auto r = resolve_on_fixture({"sageattn3"}, test::h100());
  REQUIRE_FALSE(r.ok());
  bool gpu_failed = false;
  for (const auto& c : r.tiers[0].packages.at(0).candidates)
    if (c.filename.find("torch2.8-cp312-cp312-manylinux") != std::string::npos)
      gpu_failed = c.failed.size() == 1 && c.failed[0].demand == resolve::Demand::gpu_arch;
  CHECK(gpu_failed);
  CHECK(resolve_on_fixture({"sageattn3"}, test::h100_with({{"gpus", "10.0"}})).ok());
}

TEST_CASE("farm snapshot: anchor text != href for torch-free cumm", "[integration][fixtures]") {
  auto r = resolve_on_fixture({"cumm"}, test::h100());
  REQUIRE(r.ok());
  CHECK_THAT(r.picks[0].filename, Catch::Contains("+cu128torch2.8-"));
  CHECK_THAT(r.picks[0].url, Catch::Contains("%2Bcu128torch2.11-"));
}

TEST_CASE("farm snapshot: py3.13 is unresolved, every candidate failing python", "[integration][fixtures]") {
  auto r = resolve_on_fixture({"cumesh", "nvdiffrast"}, test::h100_with({{"python", "3.13"}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.tiers[1].reason == "same combo as tier 1");
  const auto* pkgs = r.unresolved_tier();
  REQUIRE(pkgs);
  const auto all = fixture_wheels();
  for (const auto& p : *pkgs) {
    CAPTURE(p.name);
    CHECK(p.candidates.size() == all.at(p.name).size());
    for (const auto& c : p.candidates) {
      bool python_failed = false;
      for (const auto& f : c.failed) python_failed = python_failed || (f.demand == resolve::Demand::python && f.machine == "cp313");
      CHECK(python_failed);
    }
  }
}

TEST_CASE("farm snapshot: aarch64 without torch: tier 1 is the newest combo that covers it, not the fallback",
          "[integration][fixtures]") {
  auto r = resolve_on_fixture({"cumesh"}, test::h100_with({{"cpu_arch", "aarch64"}, {"torch", ""}}));
  // The fallback for aarch64 is cu13.0/torch2.10, which the snapshot does not publish; the
  // newest combo it publishes for cp312 on aarch64 that this machine runs is cu12.8/torch2.11.
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  CHECK(wheelfit::test::cuda_policy().combo_str(*r.combo) == "cu12.8/torch2.11");
  CHECK_THAT(r.tiers[0].chosen, Catch::Contains("no torch installed"));
  CHECK(r.tiers[1].reason == "not needed: tier 1 covered every package");
  CHECK_THAT(r.picks.at(0).filename, Catch::Contains("+cu128torch2.11-cp312-cp312-manylinux_2_26_aarch64"));
}

TEST_CASE("farm snapshot: aarch64 with --combo of the fallback fails, every candidate on the cuda demand",
          "[integration][fixtures]") {
  auto m = test::h100_with({{"cpu_arch", "aarch64"}, {"torch", ""}});
  auto r = resolve_on_fixture({"cumesh"}, m, model::Combo{*model::NumericVersion::parse("13.0"), *model::NumericVersion::parse("2.10")});
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.tiers.size() == 1);
  CHECK(r.tiers[0].tier == "requested");
  REQUIRE(r.tiers[0].status == resolve::TierOutcome::Status::failed);
  for (const auto& c : r.tiers[0].packages.at(0).candidates) {
    CAPTURE(c.filename);
    bool cuda_failed = false;
    for (const auto& f : c.failed) cuda_failed = cuda_failed || f.demand == resolve::Demand::line;
    CHECK(cuda_failed);
  }
  // The advice names the combos that do cover it.
  REQUIRE(r.advice);
  REQUIRE_FALSE(r.advice->suggestions.empty());
  CHECK(wheelfit::test::cuda_policy().combo_str(r.advice->suggestions[0].combo) == "cu12.8/torch2.11");
}

TEST_CASE("farm snapshot: aarch64 with torch 2.11+cu128 resolves its own combo", "[integration][fixtures]") {
  auto r = resolve_on_fixture({"cumesh"}, test::h100_with({{"cpu_arch", "aarch64"}, {"torch", "2.11.0+cu128"}}));
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  CHECK_THAT(r.picks[0].filename, Catch::Contains("aarch64"));
}

TEST_CASE("farm snapshot: a GTX 1080 (6.1) on cu128 fails gpu_arch", "[integration][fixtures]") {
  // The machine's torch built for sm 6.1 (PyTorch's own 2.8+cu128 has no sm_61: its tier 1 would be set aside).
  auto r = resolve_on_fixture({"cumesh"}, test::h100_with({{"gpus", "6.1"}}), std::nullopt, test::torch_built_for("6.1"));
  REQUIRE_FALSE(r.ok());
  const auto* pkgs = r.unresolved_tier();
  REQUIRE(pkgs);
  // The linux x86_64 cu12.8/torch2.8 wheel fails on gpu_arch alone.
  bool seen = false;
  for (const auto& c : pkgs->at(0).candidates) {
    if (c.filename.find("x86_64") == std::string::npos || c.filename.find("torch2.8-") == std::string::npos) continue;
    seen = true;
    REQUIRE(c.failed.size() == 1);
    CHECK(c.failed[0].demand == resolve::Demand::gpu_arch);
    CHECK(c.failed[0].machine == "sm 6.1");
  }
  CHECK(seen);
  // And the fallback (the same combo) is skipped.
  CHECK(r.tiers[1].status == resolve::TierOutcome::Status::skipped);
}

TEST_CASE("farm snapshot: a package the farm does not publish is 'not published'", "[integration][fixtures]") {
  auto r = resolve_on_fixture({"flash_attn"}, test::h100());
  REQUIRE_FALSE(r.ok());
  const auto* pkgs = r.unresolved_tier();
  REQUIRE(pkgs);
  CHECK(pkgs->at(0).status == resolve::PackageOutcome::Status::not_published);
  CHECK(pkgs->at(0).name == "flash-attn");
}

TEST_CASE("farm snapshot: advice for a GTX 1080 names the packages that rule every combo out", "[integration][fixtures][advice]") {
  // Issue 32: PyTorch's own CUDA 12.8 build of torch 2.8 has no sm 6.1 kernel, so the advice sets
  // cu12.8/torch2.8 aside (below); here the installed torch is a build whose library covers sm 6.1.
  auto r = resolve_on_fixture({"cumesh", "nvdiffrast"}, test::h100_with({{"gpus", "6.1"}}), std::nullopt,
                              resolve::TorchArchs{"6.1;7.0;7.5;8.0;8.6;9.0", {}, "a source build's libtorch_cuda.so"});
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.advice);
  CHECK(r.advice->suggestions.empty());
  REQUIRE_FALSE(r.advice->near_misses.empty());
  const auto& miss = r.advice->near_misses[0];
  CHECK(wheelfit::test::cuda_policy().combo_str(miss.combo) == "cu12.8/torch2.8");
  CHECK(miss.missing == std::vector<std::string>{"cumesh (cp312): its cu12.8/torch2.8 wheels fail gpu_arch",
                                                 "nvdiffrast (cp312): its cu12.8/torch2.8 wheels fail gpu_arch"});
}

TEST_CASE("farm snapshot: advice for a GTX 1080 sets aside the combo whose torch has no sm 6.1 kernel",
          "[integration][fixtures][advice][torch_gate]") {
  auto r = resolve_on_fixture({"cumesh", "nvdiffrast"}, test::h100_with({{"gpus", "6.1"}}));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.advice);
  CHECK(r.advice->suggestions.empty());
  CHECK(r.advice->near_misses.empty());
  REQUIRE(r.advice->set_aside.size() == 1);
  CHECK(wheelfit::test::cuda_policy().combo_str(r.advice->set_aside[0].combo) == "cu12.8/torch2.8");
  CHECK_THAT(r.advice->set_aside[0].reason, Catch::StartsWith("torch cannot run on sm 6.1"));
  REQUIRE(r.advice->torch);
  CHECK(r.advice->torch->version == "2.8.0+cu126");
}

TEST_CASE("farm snapshot: when only a newer torch covers everything, advice names it", "[integration][fixtures][advice]") {
  // torch 2.7.0+cu126: the snapshot has no cu12.6/torch2.7 wheel; with the fallback off, advice
  // finds cu12.8/torch2.8 and what to install for it.
  const auto snap_packages = std::vector<std::string>{"cumesh", "nvdiffrast"};
  auto transport = transports::make_file_transport();
  const auto snap = index::read_index(*transport, transports::to_url(test::farm_index_dir().string(), true), snap_packages);
  const auto m = test::h100_with({{"torch", "2.7.0+cu126"}});
  resolve::Inputs in{test::workspace(snap_packages), m, test::cuda_policy(), snap, "cuda"};
  in.fallback = false;
  auto r = resolve::resolve(in);
  REQUIRE(r);
  REQUIRE_FALSE(r->ok());
  REQUIRE(r->advice);
  REQUIRE_FALSE(r->advice->suggestions.empty());
  const auto& s = r->advice->suggestions[0];
  CHECK(wheelfit::test::cuda_policy().combo_str(s.combo) == "cu12.8/torch2.8");
  CHECK(s.covers == std::vector<std::string>{"cumesh (cp312)", "nvdiffrast (cp312)"});
  REQUIRE_FALSE(s.pins.empty());
  CHECK(s.pins[0].version == "==2.8.*");
  CHECK(s.pins[0].index == "https://download.pytorch.org/whl/cu128");
}
