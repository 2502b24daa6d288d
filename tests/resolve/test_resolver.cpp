#include <catch2/catch.hpp>

#include <algorithm>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;
using resolve::Demand;
using test::Anchor;

namespace {

const semantics::Policy& cuda_pol() { return test::cuda_policy(); }

// `own_torch`: the installed torch's own list (test::torch_built_for), else the policy's row.
resolve::Resolution run(const config::Workspace& ws, const machine::Machine& m, const index::IndexSnapshot& snap,
                        std::optional<resolve::TorchArchs> own_torch = std::nullopt) {
  resolve::Inputs in{ws, m, cuda_pol(), snap, "cuda"};
  in.torch_archs = std::move(own_torch);
  auto r = resolve::resolve(in);
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::vector<Demand> demands_of(const resolve::CandidateVerdict& v) {
  std::vector<Demand> out;
  for (const auto& f : v.failed) out.push_back(f.demand);
  return out;
}

// The verdict on `filename` in tier 1 (the machine's own combo).
const resolve::CandidateVerdict& verdict(const resolve::Resolution& r, const std::string& filename) {
  REQUIRE_FALSE(r.tiers.empty());
  REQUIRE(r.tiers[0].status == resolve::TierOutcome::Status::failed);
  for (const auto& p : r.tiers[0].packages)
    for (const auto& c : p.candidates)
      if (c.filename == filename) return c;
  FAIL("no verdict for " << filename);
  throw;  // unreachable
}

const std::string x86_resolver = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";

}  // namespace

TEST_CASE("resolve picks the highest fitting version, not the first in page order", "[resolve][select]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.2+cu128torch2.8-" + x86_resolver}, {"pkg-1.10+cu128torch2.8-" + x86_resolver}, {"pkg-1.9+cu128torch2.8-" + x86_resolver}}}});
  auto r = run(test::workspace({"pkg"}), test::h100(), snap);
  REQUIRE(r.ok());
  CHECK(*r.tier == "bootstrap");
  REQUIRE(r.picks.size() == 1);
  CHECK(r.picks[0].version == "1.10+cu128torch2.8");
}

TEST_CASE("resolve prefers final releases and skips yanked files", "[resolve][select]") {
  struct Row {
    std::vector<Anchor> anchors;
    std::string expected;
  };
  auto row = GENERATE(values<Row>({
      {{{"pkg-2.0.0b0+cu128torch2.8-" + x86_resolver}, {"pkg-1.0+cu128torch2.8-" + x86_resolver}}, "1.0+cu128torch2.8"},
      {{{"pkg-2.0.0b0+cu128torch2.8-" + x86_resolver}}, "2.0.0b0+cu128torch2.8"},
      {{{"pkg-2.0.dev1+cu128torch2.8-" + x86_resolver}, {"pkg-1.9+cu128torch2.8-" + x86_resolver}}, "1.9+cu128torch2.8"},
      {{{"pkg-1.1+cu128torch2.8-" + x86_resolver, "", "", true}, {"pkg-1.0+cu128torch2.8-" + x86_resolver}}, "1.0+cu128torch2.8"},
  }));
  CAPTURE(row.expected);
  auto r = run(test::workspace({"pkg"}), test::h100(), test::snapshot({{"pkg", row.anchors}}));
  REQUIRE(r.ok());
  CHECK(r.picks[0].version == row.expected);
}

TEST_CASE("resolve ranks manylinux above an unrepaired linux_x86_64 wheel of the same version", "[resolve][select]") {
  SECTION("both present: manylinux wins whatever the page order") {
    auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-cp312-cp312-linux_x86_64.whl"},
                                         {"pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}}}});
    auto r = run(test::workspace({"pkg"}), test::h100(), snap);
    REQUIRE(r.ok());
    CHECK(r.picks[0].filename == "pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl");
  }
  SECTION("only linux_x86_64: accepted") {
    auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-cp312-cp312-linux_x86_64.whl"}}}});
    auto r = run(test::workspace({"pkg"}), test::h100(), snap);
    REQUIRE(r.ok());
    CHECK(r.picks[0].filename == "pkg-1.0+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
  }
}

TEST_CASE("resolve picks among the files of one version in the order of packaging's sys_tags()", "[resolve][select][tags]") {
  // CPython 3.12 on linux x86_64, glibc 2.35. sys_tags(): cp312-cp312, cp312-abi3, cp312-none,
  // cp311-abi3 .. cp32-abi3, then py312-none, py3-none, py311-none .., each on every platform tag
  // (manylinux, highest floor first, then linux_x86_64); only then cp312-none-any and py3-none-any.
  struct Row {
    const char* what;
    std::vector<std::string> tags;  ///< the files' tags; the first one wins
  };
  auto row = GENERATE(values<Row>({
      {"the interpreter's own ABI before abi3", {"cp312-cp312-manylinux_2_17_x86_64", "cp312-abi3-manylinux_2_28_x86_64"}},
      {"abi3 of the same version before an older one", {"cp312-abi3-manylinux_2_17_x86_64", "cp39-abi3-manylinux_2_28_x86_64"}},
      {"abi3 before none for the interpreter", {"cp312-abi3-manylinux_2_17_x86_64", "cp312-none-manylinux_2_28_x86_64"}},
      {"none for the interpreter before an older abi3 (packaging's order)",
       {"cp312-none-manylinux_2_17_x86_64", "cp311-abi3-manylinux_2_28_x86_64"}},
      {"an older abi3 before py312-none", {"cp39-abi3-manylinux_2_17_x86_64", "py312-none-manylinux_2_28_x86_64"}},
      {"py312 before py3", {"py312-none-manylinux_2_17_x86_64", "py3-none-manylinux_2_28_x86_64"}},
      {"a higher glibc floor first within one python tag", {"py3-none-manylinux_2_28_x86_64", "py3-none-manylinux_2_17_x86_64"}},
      {"an older abi3 on the platform before cp312-none-any", {"cp39-abi3-manylinux_2_17_x86_64", "cp312-none-any"}},
      {"py3-none on the platform before cp312-none-any", {"py3-none-manylinux_2_28_x86_64", "cp312-none-any"}},
      {"py3-none-linux_x86_64 before cp312-none-any", {"py3-none-linux_x86_64", "cp312-none-any"}},
      {"cp312-none-any before py3-none-any", {"cp312-none-any", "py3-none-any"}},
      {"py312-none-any before py3-none-any", {"py312-none-any", "py3-none-any"}},
  }));
  CAPTURE(row.what);
  std::vector<Anchor> anchors;
  for (const auto& t : row.tags) anchors.push_back({"pkg-1.0+cu128torch2.8-" + t + ".whl"});
  for (const bool reversed : {false, true}) {
    CAPTURE(reversed);
    if (reversed) std::reverse(anchors.begin(), anchors.end());
    auto r = run(test::workspace({"pkg"}), test::h100(), test::snapshot({{"pkg", anchors}}));
    REQUIRE(r.ok());
    CHECK(r.picks[0].filename == "pkg-1.0+cu128torch2.8-" + row.tags.front() + ".whl");
  }
}

TEST_CASE("resolve breaks a tie between files equal in all else by the higher build tag (PEP 427)",
          "[resolve][select][build]") {
  struct Row {
    const char* what;
    std::vector<std::string> files;  ///< after "pkg-1.0+cu128torch2.8-"; the first one wins
  };
  const std::string tags = "cp312-cp312-manylinux_2_28_x86_64.whl";
  auto row = GENERATE_COPY(values<Row>({
      {"2 beats 1", {"2-" + tags, "1-" + tags}},
      {"1a beats 1", {"1a-" + tags, "1-" + tags}},
      {"10 beats 3 (a number, not text)", {"10-" + tags, "3-" + tags}},
      {"10 beats 9a", {"10-" + tags, "9a-" + tags}},
      {"a build tag beats none", {"1-" + tags, tags}},
      {"a better tag beats a higher build", {"1-" + tags, "9-cp312-abi3-manylinux_2_28_x86_64.whl"}},
      {"a higher glibc floor beats a higher build", {"1-" + tags, "9-cp312-cp312-manylinux_2_17_x86_64.whl"}},
  }));
  CAPTURE(row.what);
  std::vector<Anchor> anchors;
  for (const auto& f : row.files) anchors.push_back({"pkg-1.0+cu128torch2.8-" + f});
  for (const bool reversed : {false, true}) {
    CAPTURE(reversed);
    if (reversed) std::reverse(anchors.begin(), anchors.end());
    auto r = run(test::workspace({"pkg"}), test::h100(), test::snapshot({{"pkg", anchors}}));
    REQUIRE(r.ok());
    CHECK(r.picks[0].filename == "pkg-1.0+cu128torch2.8-" + row.files.front());
  }
}

TEST_CASE("resolve judges every candidate on the seven demands", "[resolve][demands]") {
  struct Row {
    std::string what;
    test::Facts machine_changes;
    std::string filename;
    std::vector<Demand> failed;
  };
  auto row = GENERATE(values<Row>({
      {"aarch64 host vs x86_64 wheel", {{"cpu_arch", "aarch64"}}, "pkg-1.0+cu128torch2.8-" + x86_resolver, {Demand::cpu_arch}},
      {"glibc 2.27 vs manylinux_2_28 floor", {{"glibc", "2.27"}}, "pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl", {Demand::glibc}},
      {"Windows wheel on Linux", {}, "pkg-1.0+cu128torch2.8-cp312-cp312-win_amd64.whl", {Demand::os}},
      {"cp313 machine vs cp312 wheel", {{"python", "3.13"}}, "pkg-1.0+cu128torch2.8-" + x86_resolver, {Demand::python}},
      {"torch2.1 is not torch2.10", {{"torch", "2.10.0+cu128"}}, "pkg-1.0+cu128torch2.1-" + x86_resolver, {Demand::torch}},
      {"cu12.6 wheel for a cu12.8 torch", {}, "pkg-1.0+cu126torch2.8-" + x86_resolver, {Demand::line}},
      {"driver supports only CUDA 12.8, wheel is cu13.0", {{"torch", "2.9.1+cu130"}, {"driver_line", "12.8"}},
       "pkg-1.0+cu130torch2.9-" + x86_resolver, {Demand::line}},
      {"driver 520 below CUDA 12's floor", {{"driver_line", ""}, {"driver_version", "520.61.05"}}, "pkg-1.0+cu128torch2.8-" + x86_resolver,
       {Demand::line}},
      {"GTX 1080 (6.1) on the cu12.8 arch list", {{"gpus", "6.1"}}, "pkg-1.0+cu128torch2.8-" + x86_resolver, {Demand::gpu_arch}},
      {"one of two GPUs uncovered", {{"gpus", "9.0, 6.1"}}, "pkg-1.0+cu128torch2.8-" + x86_resolver, {Demand::gpu_arch}},
      {"no GPU at all", {{"gpus", "none"}}, "pkg-1.0+cu128torch2.8-" + x86_resolver, {Demand::gpu_arch}},
      {"everything wrong", {{"python", "3.11"}, {"cpu_arch", "aarch64"}}, "pkg-1.0+cu126torch2.7-cp312-cp312-win_amd64.whl",
       {Demand::torch, Demand::line, Demand::python, Demand::cpu_arch, Demand::os}},
  }));
  CAPTURE(row.what);
  // The machine's torch built for its GPUs: the wheel's demands are what is judged here.
  auto r = run(test::workspace({"pkg"}), test::h100_with(row.machine_changes), test::snapshot({{"pkg", {{row.filename}}}}),
               test::torch_built_for("6.1;9.0"));
  REQUIRE_FALSE(r.ok());
  auto got = demands_of(verdict(r, row.filename));
  std::sort(got.begin(), got.end());
  auto want = row.failed;
  std::sort(want.begin(), want.end());
  CHECK(got == want);
}

TEST_CASE("resolve names what the wheel asks and what the machine has", "[resolve][demands]") {
  const auto m = test::h100_with({{"gpus", "6.1"}});
  const std::string f = "pkg-1.0+cu128torch2.8-" + x86_resolver;
  auto r = run(test::workspace({"pkg"}), m, test::snapshot({{"pkg", {{f}}}}), test::torch_built_for("6.1"));
  const auto& v = verdict(r, f);
  REQUIRE(v.failed.size() == 1);
  CHECK(v.failed[0].wheel.find("7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX") != std::string::npos);  // the 12.8/2.8 exception row
  CHECK(v.failed[0].machine == "sm 6.1");
}

TEST_CASE("resolve names the lowest glibc floor of a compressed tag set", "[resolve][demands]") {
  // Issue 20 item 21: the wheel runs where any of its tags runs, so the binding floor is the
  // lowest; a tag for another CPU arch does not lower it.
  struct Row {
    std::string tags;
    std::string wheel;  // the failure's wheel side, up to the tags in parentheses
  };
  const std::vector<Row> rows{
      {"manylinux_2_24_x86_64.manylinux_2_28_x86_64", "glibc >= 2.24 ("},
      {"manylinux_2_28_x86_64.manylinux_2_24_x86_64", "glibc >= 2.24 ("},
      {"manylinux_2_24_aarch64.manylinux_2_28_x86_64.manylinux_2_34_x86_64", "glibc >= 2.28 ("},
      {"manylinux_2_28_x86_64", "glibc >= 2.28 ("},
  };
  for (const auto& row : rows) {
    CAPTURE(row.tags);
    const std::string f = "pkg-1.0+cu128torch2.8-cp312-cp312-" + row.tags + ".whl";
    auto r = run(test::workspace({"pkg"}), test::h100_with({{"glibc", "2.17"}}), test::snapshot({{"pkg", {{f}}}}));
    REQUIRE_FALSE(r.ok());
    const auto& v = verdict(r, f);
    REQUIRE(v.failed.size() == 1);
    CHECK(v.failed[0].demand == Demand::glibc);
    CHECK_THAT(v.failed[0].wheel, Catch::StartsWith(row.wheel));
    CHECK(v.failed[0].machine == "glibc 2.17");
  }
}

TEST_CASE("resolve matches the anchor text and installs the href", "[resolve][select]") {
  const std::string text = "cumm-0.8.2+cu128torch2.8-" + x86_resolver;
  const std::string href = "https://example.test/dl/cumm-0.8.2%2Bcu128torch2.11-" + x86_resolver;
  auto r = run(test::workspace({"cumm"}), test::h100(), test::snapshot({{"cumm", {{text, href}}}}));
  REQUIRE(r.ok());
  CHECK(r.picks[0].filename == text);
  CHECK(r.picks[0].url == href);
}

TEST_CASE("resolve reads legacy dot-less combo labels", "[resolve][combo]") {
  const auto m = test::h100_with({{"torch", "2.4.1+cu124"}, {"gpus", "8.6"}});
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu124torch24-" + x86_resolver}, {"pkg-1.0+cu124torch210-" + x86_resolver}}}});
  auto r = run(test::workspace({"pkg"}), m, snap);
  REQUIRE(r.ok());
  CHECK(r.picks[0].filename == "pkg-1.0+cu124torch24-" + x86_resolver);
}

TEST_CASE("resolve falls back to tier 2 and pins the torch family for it", "[resolve][tiers]") {
  const auto m = test::h100_with({{"torch", "2.9.1+cu130"}});
  auto r = run(test::workspace({"pkg"}), m, test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_resolver}}}}));
  REQUIRE(r.ok());
  CHECK(*r.tier == "fallback");
  CHECK(wheelfit::test::cuda_policy().combo_str(*r.combo) == "cu12.8/torch2.8");
  REQUIRE(r.tiers.size() == 2);
  CHECK(r.tiers[0].status == resolve::TierOutcome::Status::failed);
  REQUIRE(r.pins.size() == 3);
  CHECK(r.pins[0].name == "torch");
  CHECK(r.pins[0].version == "==2.8.*");
  CHECK(r.pins[1].name == "torchvision");
  CHECK(r.pins[1].version == "==0.23.*");
  CHECK(r.pins[2].name == "torchaudio");
  CHECK(r.pins[2].version == "==2.8.*");
  CHECK(r.pins[0].index == "https://download.pytorch.org/whl/cu128");
}

TEST_CASE("resolve skips tier 2 with the reason", "[resolve][tiers]") {
  struct Row {
    std::string what;
    test::Facts changes;
    std::string reason_part;
  };
  auto row = GENERATE(values<Row>({
      {"PyTorch never shipped 2.8 for cp314", {{"torch", "2.9.1+cu130"}, {"python", "3.14"}}, "never shipped"},
      {"the driver cannot run CUDA 12.8", {{"torch", "2.9.1+cu130"}, {"driver_line", "11.8"}}, "driver supports CUDA 11.8"},
      {"the GPU is not covered", {{"torch", "2.9.1+cu130"}, {"gpus", "6.1"}}, "does not cover sm 6.1"},
      {"same combo as tier 1", {}, "same combo as tier 1"},
  }));
  CAPTURE(row.what);
  auto r = run(test::workspace({"pkg"}), test::h100_with(row.changes),
               test::snapshot({{"pkg", {{"pkg-1.0+cu126torch2.6-" + x86_resolver}}}}));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.tiers.size() == 2);
  CHECK(r.tiers[1].status == resolve::TierOutcome::Status::skipped);
  CHECK_THAT(r.tiers[1].reason, Catch::Contains(row.reason_part));
}

TEST_CASE("tier 1 comes from torch's label, or PyPI's line from the policy, never the driver", "[resolve][tiers]") {
  struct Row {
    std::string torch;
    std::string expected;  // combo, or a part of the reason
  };
  auto row = GENERATE(values<Row>({
      {"2.8.0+cu128", "cu12.8/torch2.8"},
      {"2.10.0+cu130", "cu13.0/torch2.10"},
      {"2.8.0", "cu12.8/torch2.8"},          // PyPI's torch 2.8 on linux x86_64 carries CUDA 12.8
      {"2.7.1", "cu12.6/torch2.7"},
      {"2.13.0", "does not guess"},          // not in the table: skipped, never guessed
      {"2.7.1+rocm6.3", "names no CUDA line (it is not a CUDA build)"},
      {"2.8.0+cpu", "names no CUDA line"},
      {"", "no torch installed"},
  }));
  CAPTURE(row.torch);
  const auto m = test::h100_with({{"torch", row.torch}});
  auto c = resolve::machine_combo(m, cuda_pol());
  if (c.combo) CHECK(wheelfit::test::cuda_policy().combo_str(*c.combo) == row.expected);
  else CHECK_THAT(c.reason, Catch::Contains(row.expected));
}

TEST_CASE("resolve keeps 'not published' apart from 'could not be read'", "[resolve][index]") {
  index::IndexSnapshot snap = test::snapshot({});
  index::ProjectPage missing{"gone", snap.base_url + "gone/", index::ProjectPage::Status::not_published, {}, "404"};
  index::ProjectPage broken{"broken", snap.base_url + "broken/", index::ProjectPage::Status::failed, {}, "connection reset"};
  snap.projects.emplace("gone", missing);
  snap.projects.emplace("broken", broken);
  auto r = run(test::workspace({"gone", "broken"}), test::h100(), snap);
  REQUIRE_FALSE(r.ok());
  const auto* pkgs = r.unresolved_tier();
  REQUIRE(pkgs);
  REQUIRE(pkgs->size() == 2);
  CHECK((*pkgs)[0].status == resolve::PackageOutcome::Status::not_published);
  CHECK_THAT((*pkgs)[0].reason, Catch::Contains("not published"));
  CHECK((*pkgs)[1].status == resolve::PackageOutcome::Status::read_failed);
  CHECK_THAT((*pkgs)[1].reason, Catch::Contains("connection reset"));
}

TEST_CASE("resolve pins sha256 from the fragment or packages.json and refuses conflicts", "[resolve][hash]") {
  const std::string f = "pkg-1.0+cu128torch2.8-" + x86_resolver;
  const std::string a(64, 'a'), b(64, 'b');
  auto snap = test::snapshot({{"pkg", {{f, "", a}}}});
  SECTION("fragment only") {
    auto r = run(test::workspace({"pkg"}), test::h100(), snap);
    REQUIRE(r.ok());
    CHECK(r.picks[0].sha256 == a);
    CHECK(r.picks[0].sha256_source == "#sha256= fragment");
  }
  SECTION("packages.json only") {
    snap.projects.at("pkg").page.links[0].sha256.reset();
    index::PackagesJson pj;
    pj.packages["pkg"].wheels.push_back({f, snap.projects.at("pkg").page.links[0].url, b});
    snap.packages_json = pj;
    auto r = run(test::workspace({"pkg"}), test::h100(), snap);
    REQUIRE(r.ok());
    CHECK(r.picks[0].sha256 == b);
    CHECK(r.picks[0].sha256_source == "packages.json");
  }
  SECTION("the two disagree: not picked, and said") {
    index::PackagesJson pj;
    pj.packages["pkg"].wheels.push_back({f, snap.projects.at("pkg").page.links[0].url, b});
    snap.packages_json = pj;
    auto r = run(test::workspace({"pkg"}), test::h100(), snap);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(verdict(r, f).note, Catch::Contains("hash conflict"));
    REQUIRE_FALSE(r.warnings.empty());
  }
}

TEST_CASE("resolve uses packages.json when a page is missing", "[resolve][index]") {
  const std::string f = "pkg-1.0+cu128torch2.8-" + x86_resolver;
  auto snap = test::snapshot({});
  snap.projects.emplace("pkg", index::ProjectPage{"pkg", snap.base_url + "pkg/", index::ProjectPage::Status::not_published, {}, "404"});
  index::PackagesJson pj;
  pj.packages["pkg"].wheels.push_back({f, "https://example.test/dl/x.whl", std::string(64, 'c')});
  snap.packages_json = pj;
  auto r = run(test::workspace({"pkg"}), test::h100(), snap);
  REQUIRE(r.ok());
  CHECK(r.picks[0].url == "https://example.test/dl/x.whl");
}

TEST_CASE("resolve says what it could not check", "[resolve][honesty]") {
  auto m = test::make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"python", "3.12"}, {"torch", "2.8.0+cu128"}});
  auto r = run(test::workspace({"pkg"}), m, test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_resolver}}}}));
  REQUIRE(r.ok());
  const auto& u = r.picks[0].unchecked;
  CHECK(std::count(u.begin(), u.end(), Demand::gpu_arch) == 1);
  CHECK(std::count(u.begin(), u.end(), Demand::line) == 1);
  CHECK(std::count(u.begin(), u.end(), Demand::glibc) == 1);
  CHECK(r.warnings.size() >= 3);
}

TEST_CASE("resolve refuses inputs that make it meaningless", "[resolve][errors]") {
  auto snap = test::snapshot({{"pkg", {}}});
  SECTION("no Python anywhere") {
    const auto m = test::h100_with({{"python", ""}});
    auto r = resolve::resolve({test::workspace({"pkg"}), m, cuda_pol(), snap, "cuda"});
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::usage));
    CHECK_THAT(r.error().message, Catch::Contains("env/comfy-env.toml") && Catch::Contains("python"));
  }
  SECTION("no OS") {
    auto m = test::h100();
    m.os.reset();
    auto r = resolve::resolve({test::workspace({"pkg"}), m, cuda_pol(), snap, "cuda"});
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::usage));
  }
}

TEST_CASE("an env's own python wins over the machine's", "[resolve][python]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-cp311-cp311-manylinux_2_28_x86_64.whl"},
                                       {"pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}}}});
  auto r = run(test::workspace({"pkg"}, "3.11"), test::h100(), snap);
  REQUIRE(r.ok());
  CHECK(r.picks[0].python == "cp311");
  CHECK_THAT(r.picks[0].filename, Catch::Contains("cp311"));
}

TEST_CASE("resolve honours requires-python as part of the python demand", "[resolve][python]") {
  const std::string f = "pkg-1.0+cu128torch2.8-" + x86_resolver;
  SECTION("excluded") {
    auto r = run(test::workspace({"pkg"}), test::h100(), test::snapshot({{"pkg", {{f, "", "", false, ">=3.13"}}}}));
    REQUIRE_FALSE(r.ok());
    const auto& v = verdict(r, f);
    REQUIRE(v.failed.size() == 1);
    CHECK(v.failed[0].demand == Demand::python);
    CHECK(v.failed[0].wheel == "requires-python >=3.13");
  }
  SECTION("included") {
    auto r = run(test::workspace({"pkg"}), test::h100(), test::snapshot({{"pkg", {{f, "", "", false, ">=3.10,<3.14"}}}}));
    CHECK(r.ok());
  }
  SECTION("malformed: ignored, and said") {
    auto r = run(test::workspace({"pkg"}), test::h100(), test::snapshot({{"pkg", {{f, "", "", false, ">=three"}}}}));
    CHECK(r.ok());
    REQUIRE_FALSE(r.warnings.empty());
    CHECK_THAT(r.warnings[0], Catch::Contains("requires-python ignored"));
  }
}

TEST_CASE("resolve reads the machine's GPUs by the backend's grammar", "[resolve][demands]") {
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_resolver}}}});
  struct Row {
    std::string gpus;
    bool resolved;
    std::string error;  // "" when the resolve runs
  };
  for (const Row& row : {Row{"9.0", true, ""}, Row{"sm_90", true, ""}, Row{"sm90", true, ""},
                         Row{"6.1", false, ""},  // refused by coverage, not by grammar
                         Row{"sm_9", false, "gpus: 'sm_9' is not a compute capability"},
                         Row{"gfx90a", false, "gpus: 'gfx90a' is not a compute capability"}}) {
    CAPTURE(row.gpus);
    auto m = test::h100();
    REQUIRE(machine::set_fact(m, "gpus", row.gpus, "profile m.toml"));
    auto r = resolve::resolve({test::workspace({"pkg"}), m, cuda_pol(), snap, "cuda"});
    if (!row.error.empty()) {
      REQUIRE_FALSE(r);
      CHECK(r.error().is(Errc::invalid_input));
      CHECK_THAT(r.error().message, Catch::StartsWith("profile m.toml: ") && Catch::Contains(row.error));
      continue;
    }
    REQUIRE(r);
    CHECK(r->ok() == row.resolved);
  }
}

TEST_CASE("resolve without the backend's device rules says gpu_arch was not checked", "[resolve][demands]") {
  // A policy read without rules (a library caller's choice): lists are kept as written and no
  // GPU coverage is claimed either way.
  const std::string text = wheelfit::test::read_file(wheelfit::test::source_dir() / "backends" / "cuda" / "data" / "policy.json");
  auto plain = policies::parse_policy_json(text, "plain.json", nullptr);
  REQUIRE(plain);
  auto snap = test::snapshot({{"pkg", {{"pkg-1.0+cu128torch2.8-" + x86_resolver}}}});
  const auto m = test::h100_with({{"gpus", "6.1"}});  // not covered, were it judged
  auto r = resolve::resolve({test::workspace({"pkg"}), m, *plain, snap, "cuda"});
  REQUIRE(r);
  REQUIRE(r->ok());
  CHECK(std::find(r->picks[0].unchecked.begin(), r->picks[0].unchecked.end(), Demand::gpu_arch) != r->picks[0].unchecked.end());
  CHECK(std::any_of(r->warnings.begin(), r->warnings.end(), [](const std::string& w) {
    return w.find("gpu_arch not checked: the policy was read without the backend's device rules") != std::string::npos;
  }));
}
