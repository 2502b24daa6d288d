// The torch gate behind the façade (issue 32, items 4 and 6; decision 0030): api::resolve fills
// the advice's torch with its exact file and sha256 from a torch index on disk (the tag rules of
// mirror --with-torch), says why not when the index cannot be read or was not looked up; and
// `mirror --with-torch` (torch_family, MirrorResult) sets aside a machine whose combo's torch
// cannot run on its GPUs, naming it with the reason, while an unknown build sets nothing aside.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "support/torch_index.hpp"
#include "wheelfit/index/file_url.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/resolve/torch_family.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

namespace {

const std::string kAdviceTorch = "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";

// A farm with real files of two packages, and a torch index per line beside it.
struct TorchAdviceWorld {
  test::TempDir tmp;
  TorchAdviceWorld() {
    REQUIRE(test::write_torch_test_farm(tmp / "farm"));
    test::write_torch_index(tmp / "torch");
  }
  [[nodiscard]] api::ResolveRequest request(const machine::Machine& m) const {
    api::ResolveRequest req;
    req.envs = {{"demo", std::nullopt, {"cc_torch", "cubvh"}}};
    req.env_overrides = false;
    req.index = (tmp / "farm").string();
    req.use_cache = false;
    req.backends = &test::shipped_backends();
    req.machine = m;
    return req;
  }
};

// The advice's torch of a resolve (REQUIREd).
const resolve::TorchAdvice& advised_torch(const api::ResolveResult& r) {
  REQUIRE(r.resolution);
  REQUIRE(r.resolution->advice);
  REQUIRE(r.resolution->advice->torch);
  return *r.resolution->advice->torch;
}

}  // namespace

TEST_CASE("api::resolve: the advice names the torch that runs with its exact file and sha256 from the torch index",
          "[facade][advice][torch_gate]") {
  const TorchAdviceWorld w;
  auto req = w.request(test::h100_with({{"gpus", "12.0"}, {"torch", "2.8.0+cu126"}}));
  SECTION("--torch-index with {line_nodot}: the file of 2.8.0+cu128 for cp312 on manylinux x86_64") {
    req.torch_index = (w.tmp / "torch").string() + "/cu{line_nodot}";
    const auto r = api::resolve(req);
    INFO(r.report());
    const auto& t = advised_torch(r);
    CHECK(t.version == "2.8.0+cu128");
    CHECK(t.file == kAdviceTorch);
    CHECK(t.sha256 == deliver::sha256_file(w.tmp / "torch" / "files" / kAdviceTorch).value());
    CHECK(t.index == index::to_url((w.tmp / "torch" / "cu128").string(), true));
    CHECK(t.file_note.empty());
    // The JSON's advice object carries the same.
    const auto json = boost::json::parse(r.json()).as_object();
    const auto& torch = json.at("advice").at("torch").as_object();
    CHECK(torch.at("version").as_string() == "2.8.0+cu128");
    CHECK(torch.at("line").as_string() == "12.8");
    CHECK(torch.at("file").as_string() == kAdviceTorch);
    CHECK(torch.at("sha256").as_string() == *t.sha256);
    CHECK_THAT(std::string(torch.at("reason").as_string()), Catch::Contains("torch") && Catch::Contains("12.0"));
    CHECK_THAT(r.report(), Catch::Contains("install torch 2.8.0+cu128 (CUDA 12.8") && Catch::Contains("file:   " + kAdviceTorch));
  }
  SECTION("a torch index that cannot be read: said; the version and line still named") {
    req.torch_index = (w.tmp / "nowhere").string() + "/cu{line_nodot}";
    const auto r = api::resolve(req);
    const auto& t = advised_torch(r);
    CHECK(t.version == "2.8.0+cu128");
    CHECK(t.file.empty());
    CHECK_FALSE(t.sha256);
    CHECK_THAT(t.file_note, Catch::Contains("the torch index") && Catch::Contains("nowhere"));
    CHECK_THAT(r.report(), Catch::Contains("file:   not named: the torch index"));
  }
  SECTION("a local index and no --torch-index: not looked up (no network where none was named)") {
    const auto r = api::resolve(req);
    const auto& t = advised_torch(r);
    CHECK(t.version == "2.8.0+cu128");
    CHECK(t.index == "https://download.pytorch.org/whl/cu128");
    CHECK(t.file.empty());
    CHECK_THAT(t.file_note, Catch::StartsWith("not looked up"));
  }
}

TEST_CASE("api::resolve_fleet: each machine whose torch cannot run gets the torch file for its Python and platform",
          "[facade][advice][torch_gate]") {
  const TorchAdviceWorld w;
  auto req = w.request(test::h100());
  req.machine.reset();
  req.torch_index = (w.tmp / "torch").string() + "/cu{line_nodot}";
  std::vector<api::FleetMachine> fleet{{"rtx5090", test::h100_with({{"gpus", "12.0"}, {"torch", "2.8.0+cu126"}})},
                                       {"rtx5090-box", test::h100_with({{"gpus", "8.9,12.0"}, {"torch", "2.8.0+cu126"}})},
                                       {"h100", test::h100()}};
  const auto r = api::resolve_fleet(req, fleet);
  REQUIRE(r.machines.size() == 3);
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(fleet[i].name);
    CHECK(advised_torch(r.machines[i]).file == kAdviceTorch);
  }
  REQUIRE(r.machines[2].resolution);
  CHECK_FALSE(r.machines[2].resolution->advice);  // the H100's torch runs: no advice on a resolved machine
}

namespace {

// A machine resolved on `combo` with the torch family pins of the CUDA policy, its combo's torch
// judged on `gpus` by the policy's row for linux (or, `unknown`, without one).
api::ResolveResult resolved_on(const std::string& combo_text, const std::string& gpus, bool unknown = false) {
  const auto& policy = test::cuda_policy();
  auto combo = semantics::parse_combo_str(policy.notation(), combo_text);
  REQUIRE(combo);
  auto res = std::make_shared<resolve::Resolution>();
  res->notation = policy.notation();
  res->device_prefix = policy.device_prefix();
  res->combo = *combo;
  res->tier = "bootstrap";
  res->tiers = {{"bootstrap", *combo, resolve::TierOutcome::Status::resolved, "", {}}};
  const std::string index = policy.torch_index_url(combo->line);
  res->pins = {{"torch", "==" + combo->torch.str() + ".*", index}};
  const std::vector<std::string> targets{gpus};
  res->combo_torch = resolve::judge_torch(policy, unknown ? std::nullopt : resolve::torch_archs_from_policy(policy, *combo, "linux"), targets);
  api::ResolveResult r;
  r.exit_code = 0;
  r.machine = test::h100_with({{"gpus", gpus}});
  r.resolution = std::move(res);
  return r;
}

}  // namespace

TEST_CASE("mirror --with-torch: a machine whose combo's torch cannot run on its GPUs is set aside with the reason",
          "[facade][mirror][torch_gate]") {
  const test::TempDir tmp;
  test::write_torch_index(tmp / "torch");
  api::FleetResult fleet;
  fleet.exit_code = 0;
  fleet.fleet = {{"rtx5090", {}}, {"h100", {}}, {"unknown-build", {}}};
  fleet.machines.push_back(resolved_on("cu12.6/torch2.8", "12.0"));
  fleet.machines.push_back(resolved_on("cu12.8/torch2.8", "9.0"));
  fleet.machines.push_back(resolved_on("cu12.8/torch2.8", "12.0", /*unknown=*/true));
  api::MirrorRequest req;
  req.with_torch = true;
  req.torch_index = (tmp / "torch").string() + "/cu{line_nodot}";
  auto transport = net::default_registry().make(net::StackOptions{});
  REQUIRE(transport);
  std::vector<resolve::TorchMachine> machines;  // the resolver's torch family step, as mirror() calls it
  for (std::size_t m = 0; m < fleet.machines.size(); ++m) {
    machines.push_back({fleet.fleet[m].name, fleet.machines[m].resolution.get(), &fleet.machines[m].machine});
  }
  const auto clean = resolve::torch_index_urls(machines, req.torch_index);
  resolve::TorchChooser chooser(
      [&](const std::string& base, const std::vector<std::string>& names) { return index::read_index(**transport, base, names); }, clean,
      "--with-torch");
  const auto family = resolve::torch_family(machines, req.torch_index, chooser);
  REQUIRE(family);
  REQUIRE(family->set_aside.size() == 1);
  CHECK(family->set_aside[0].machine == "rtx5090");
  CHECK(family->set_aside[0].combo == "cu12.6/torch2.8");
  CHECK_THAT(family->set_aside[0].reason, Catch::StartsWith("torch cannot run on sm 12.0") && Catch::Contains("5.0;6.0;7.0;7.5;8.0;8.6;9.0"));
  // The others are mirrored (an unknown build sets nothing aside); the set-aside one's index is not read.
  REQUIRE(family->files.size() == 1);
  CHECK(family->files[0].filename == test::kTorchPick);
  CHECK(family->files[0].machines == std::vector<std::string>{"h100", "unknown-build"});
  for (const auto& [url, clean_url] : clean) CHECK_THAT(url, !Catch::Contains("cu126"));

  SECTION("the mirror's JSON and report name it") {
    api::MirrorResult out;
    out.exit_code = 0;
    out.resolved = fleet;
    for (const auto& t : family->set_aside) out.torch_set_aside.push_back({t.machine, t.combo, t.reason});
    const auto json = boost::json::parse(out.json()).as_object();
    const auto& aside = json.at("torch_set_aside").as_array();
    REQUIRE(aside.size() == 1);
    CHECK(aside[0].at("machine").as_string() == "rtx5090");
    CHECK(aside[0].at("combo").as_string() == "cu12.6/torch2.8");
    CHECK_THAT(std::string(aside[0].at("reason").as_string()), Catch::Contains("12.0"));
    CHECK_THAT(out.report(), Catch::Contains("--with-torch: machine rtx5090: the torch family of cu12.6/torch2.8 is set aside: torch cannot run on sm 12.0"));
  }
}
