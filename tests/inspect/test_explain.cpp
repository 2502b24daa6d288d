// explain: the seven demands of a wheel from its name and its binaries (crafted ELF files with
// fatbinaries, and the g++ fixture), against machines; the bare-name mode; the warnings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "inspect/binary_writer.hpp"
#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/inspect/explain.hpp"

using namespace wheelfit;
using inspect::Verdict;
using resolve::Demand;
using test::make_machine;
namespace bin = wheelfit::test::bin;

namespace {

// Linux x86_64, glibc 2.35, Python 3.12, torch 2.8.0+cu128, driver CUDA 13.0, one sm_90 GPU.
machine::Machine h100(std::vector<std::pair<std::string, std::string>> changes = {}) {
  std::vector<std::pair<std::string, std::string>> facts{{"os", "linux"},      {"cpu_arch", "x86_64"}, {"glibc", "2.35"},
                                                         {"python", "3.12"},   {"torch", "2.8.0+cu128"},
                                                         {"driver_line", "13.0"}, {"driver_version", "580.65.06"},
                                                         {"gpus", "9.0"}};
  for (auto& c : changes) facts.push_back(std::move(c));
  return make_machine(facts);
}

const semantics::Policy& cuda_pol() { return test::cuda_policy(); }

struct Lib {
  std::uint16_t machine = 62;
  std::vector<std::string> needed = {"libc10.so", "libtorch_cpu.so", "libcudart.so.12", "libc.so.6"};
  std::vector<std::string> glibc = {"GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.28"};
  std::vector<bin::FatEntry> kernels = {{2, 80}, {2, 90}, {1, 90}};
};

std::string library(const Lib& l) {
  bin::LibrarySpec spec;
  spec.machine = l.machine;
  spec.needed = l.needed;
  spec.soname = "_C.so";
  spec.needs = {{"libc.so.6", l.glibc}};
  if (!l.kernels.empty()) spec.extra.push_back(bin::Section{".nv_fatbin", 1, bin::fatbin_container(l.kernels)});
  return bin::write_library(spec).bytes;
}

/// CHECKs a demand's verdict and that its detail says `says` (the detail shown with a failure).
void check_verdict(const inspect::DemandReport& r, Verdict verdict, const std::string& says) {
  INFO(r.detail);
  CHECK(r.verdict == verdict);
  CHECK(r.detail.find(says) != std::string::npos);
}

/// A machine's GPUs, and the gpu_arch verdict and detail a module gets on them.
struct GpuCase {
  std::string gpus;
  Verdict verdict;
  std::string detail;
};

const std::string kTags = "cp312-cp312-manylinux_2_28_x86_64.whl";
const std::string kName = "pkg-1.0+cu128torch2.8-" + kTags;
const std::string kModule = "pkg/_C.cpython-312-x86_64-linux-gnu.so";

std::string wheel_of(const std::string& so, const std::string& member = kModule) {
  return test::build_zip({{"pkg/__init__.py", "from ._C import *\n"},
                          {member, so},
                          {"pkg/data/table.bin", std::string(4096, 'x')},
                          {"pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n"}});
}

inspect::Explanation explain(const std::string& zip, const std::string& name, const machine::Machine& m) {
  auto src = inspect::memory_source(zip, name);
  auto e = inspect::explain_wheel(*src, name, m, cuda_pol());
  if (!e) FAIL(e.error().message);
  return std::move(*e);
}

const inspect::DemandReport& demand(const inspect::Explanation& e, Demand d) {
  for (const auto& r : e.demands)
    if (r.demand == d) return r;
  FAIL("no report for " << resolve::to_string(d));
  throw;
}

bool has_warning(const inspect::Explanation& e, const std::string& text) {
  return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("explain: a fitting wheel: all seven demands ok, from the name and the binaries", "[inspect][explain]") {
  const auto e = explain(wheel_of(library({})), kName, h100());
  CHECK(e.fits());
  CHECK(e.binaries_read);
  REQUIRE(e.demands.size() == 7);
  for (std::size_t i = 0; i < 7; ++i) CHECK(e.demands[i].demand == resolve::all_demands()[i]);
  for (const auto& d : e.demands) {
    INFO(resolve::to_string(d.demand) << ": " << d.detail);
    CHECK(d.verdict == Verdict::ok);
  }
  CHECK(demand(e, Demand::gpu_arch).wheel == "sm_80, sm_90 (sass), compute_90 (ptx)");
  CHECK(demand(e, Demand::gpu_arch).machine == "sm 9.0");
  CHECK(e.files[0].device.list == "8.0;9.0+PTX");
  CHECK(demand(e, Demand::line).name == "cuda");
  CHECK(demand(e, Demand::torch).wheel.find("links libc10.so, libtorch_cpu.so") != std::string::npos);
  CHECK(demand(e, Demand::line).wheel.find("libcudart.so.12") != std::string::npos);
  CHECK(demand(e, Demand::glibc).wheel.find("GLIBC_2.28 (" + kModule + ")") != std::string::npos);
  // Only the compiled member was read: the data file was not.
  REQUIRE(e.files.size() == 1);
  CHECK(e.files[0].path == kModule);
  REQUIRE(e.files[0].suffix);
  CHECK(e.files[0].suffix->abi == "cpython-312");
  CHECK(e.wheel_size > 0);
  CHECK(e.bytes_fetched > 0);
}

TEST_CASE("explain: gpu_arch per the CUDA coverage rule: SASS within a major, PTX forward", "[inspect][explain]") {
  struct Row {
    std::vector<bin::FatEntry> kernels;
    std::string gpus;
    Verdict verdict;
    std::string detail;
  };
  auto row = GENERATE(values<Row>({
      {{{2, 80}}, "9.0", Verdict::fails, "no kernel image is available for execution on the device"},
      {{{2, 80}}, "8.6", Verdict::ok, "sm 8.6 runs sm_80 SASS"},
      {{{2, 86}}, "8.0", Verdict::fails, "nothing that runs on sm 8.0"},
      {{{1, 80}}, "9.0", Verdict::ok, "compute_80 PTX, JIT-compiled"},
      {{{2, 80}, {1, 80}}, "12.0", Verdict::ok, "sm 12.0 runs compute_80 PTX"},
      {{{2, 90}}, "9.0, 8.6", Verdict::fails, "nothing that runs on sm 8.6"},
      {{{2, 90}}, "sm_90", Verdict::ok, "sm 9.0 runs sm_90 SASS"},  // the profile's spelling, canonical
      {{{2, 80}}, "none", Verdict::fails, "no CUDA-capable device is detected"},
  }));
  Lib l;
  l.kernels = row.kernels;
  const auto e = explain(wheel_of(library(l)), kName, h100({{"gpus", row.gpus}}));
  const auto& g = demand(e, Demand::gpu_arch);
  INFO(g.detail);
  check_verdict(g, row.verdict, row.detail);
  if (row.verdict == Verdict::fails) {
    CHECK_FALSE(e.fits());
    if (row.gpus != "none") CHECK(g.detail.find(kModule) != std::string::npos);
  }
}

TEST_CASE("explain: an arch list narrower than the farm's policy is warned about", "[inspect][explain]") {
  Lib l;
  l.kernels = {{2, 80}, {2, 90}};  // policy cu12.8 linux: 7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX
  const auto e = explain(wheel_of(library(l)), kName, h100());
  CHECK(e.fits());
  CHECK(has_warning(e, "narrower than the farm's arch list"));
  CHECK(has_warning(e, "(8.0;9.0): narrower"));
  CHECK(has_warning(e, "8.6, 9.0+PTX, 10.0, 12.0+PTX"));  // what the module lacks of the policy's list
}

TEST_CASE("explain: glibc: the binaries' GLIBC_2.34 on a glibc 2.31 machine, and the manylinux floor warning", "[inspect][explain]") {
  Lib l;
  l.glibc = {"GLIBC_2.2.5", "GLIBC_2.34", "GLIBC_2.17"};
  const auto e = explain(wheel_of(library(l)), kName, h100({{"glibc", "2.31"}}));
  const auto& g = demand(e, Demand::glibc);
  check_verdict(g, Verdict::fails, "version 'GLIBC_2.34' not found");
  CHECK(g.detail.find("required by " + kModule) != std::string::npos);
  CHECK(g.wheel.find("GLIBC_2.34") != std::string::npos);
  // The tag said 2.28: pip installs it on 2.31, where it fails.
  CHECK(has_warning(e, "the tag claims glibc 2.28 (manylinux_2_28_x86_64)"));
  CHECK(has_warning(e, "requires GLIBC_2.34"));
  CHECK_FALSE(e.fits());

  // The same wheel on glibc 2.35 runs, and still carries the warning.
  const auto ok = explain(wheel_of(library(l)), kName, h100());
  CHECK(demand(ok, Demand::glibc).verdict == Verdict::ok);
  CHECK(has_warning(ok, "the tag claims glibc 2.28"));
}

#ifdef WHEELFIT_INSPECT_FIXTURES
TEST_CASE("explain: the g++ fixture (pthread_create: GLIBC_2.34) on glibc 2.31", "[inspect][explain]") {
  const auto so = test::read_file(std::filesystem::path(WHEELFIT_INSPECT_FIXTURES) / "_C.cpython-312-x86_64-linux-gnu.so");
  const auto e = explain(wheel_of(so), kName, h100({{"glibc", "2.31"}}));
  const auto& g = demand(e, Demand::glibc);
  INFO(g.detail);
  check_verdict(g, Verdict::fails, "version 'GLIBC_2.34' not found");
  CHECK(demand(e, Demand::torch).wheel.find("libc10.so") != std::string::npos);
  CHECK(demand(e, Demand::gpu_arch).verdict == Verdict::ok);  // no kernels in it
  CHECK(demand(e, Demand::python).verdict == Verdict::ok);
}
#endif

TEST_CASE("explain: a clang-built HIP module's gfx targets against ROCm machines", "[inspect][explain][rocm]") {
#ifdef WHEELFIT_FIXTURE_HIP
  const auto so = test::read_file(std::filesystem::path(WHEELFIT_INSPECT_FIXTURES) / "hip_kernels.so");
  const std::string name = "pkg-1.0+rocm6.3torch2.7-" + kTags;
  for (const GpuCase& row : {GpuCase{"gfx90a", Verdict::ok, "gfx90a runs gfx90a"}, GpuCase{"gfx1030", Verdict::ok, "gfx1030 runs gfx1030"},
                             GpuCase{"gfx90a, gfx1030", Verdict::ok, "gfx1030 runs gfx1030"},
                             GpuCase{"gfx90a:xnack-", Verdict::ok, "gfx90a:xnack- runs gfx90a"},  // no feature: any setting
                             GpuCase{"gfx803", Verdict::fails, "nothing that runs on gfx803: hipErrorNoBinaryForGpu"},
                             GpuCase{"gfx942", Verdict::fails, "nothing that runs on gfx942"}}) {
    const auto m = make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"}, {"python", "3.12"},
                                 {"torch", "2.7.1+rocm6.3"}, {"backend", "rocm"}, {"gpus", row.gpus}});
    auto src = inspect::memory_source(wheel_of(so), name);
    auto e = inspect::explain_wheel(*src, name, m, test::rocm_policy());
    REQUIRE(e);
    const auto& g = demand(*e, Demand::gpu_arch);
    INFO(row.gpus << ": " << g.wheel << " / " << g.detail);
    check_verdict(g, row.verdict, row.detail);
    CHECK(g.wheel == "gfx1030, gfx90a (code_objects)");  // in the bundle's order
    REQUIRE(e->files.size() == 1);
    CHECK(e->files[0].device.list == "gfx1030;gfx90a");
    // The line demand is named by the backend, and its driver is not checked (no ROCm driver rule).
    const auto& line = demand(*e, Demand::line);
    CHECK(line.name == "rocm");
    check_verdict(line, Verdict::unknown, "driver's ROCm support is not checked");
  }
#else
  WARN("SKIPPED: clang was not found at configure time; the .hip_fatbin is covered by hand-written bundles only");
#endif
}

TEST_CASE("explain: a fatbin read by the wrong backend is a warning, not a crash", "[inspect][explain][rocm]") {
  // A CUDA module judged with the ROCm backend: .nv_fatbin is not one of its code sections.
  const std::string name = "pkg-1.0+rocm6.3torch2.7-" + kTags;
  const auto m = make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"python", "3.12"}, {"gpus", "gfx90a"}});
  auto src = inspect::memory_source(wheel_of(library({})), name);
  auto e = inspect::explain_wheel(*src, name, m, test::rocm_policy());
  REQUIRE(e);
  CHECK(demand(*e, Demand::gpu_arch).wheel == "no ROCm device code in its binaries");
  // A section named as the backend's but holding another format: the backend says why.
  bin::LibrarySpec spec;
  spec.extra.push_back(bin::Section{".hip_fatbin", 1, bin::fatbin_container({{2, 80}})});
  auto bad = inspect::memory_source(wheel_of(bin::write_library(spec).bytes), name);
  auto b = inspect::explain_wheel(*bad, name, m, test::rocm_policy());
  REQUIRE(b);
  CHECK(has_warning(*b, ".hip_fatbin: device code not read"));
}

#ifdef WHEELFIT_FIXTURE_NVCC
TEST_CASE("explain: nvcc's fatbinary (sm_80, sm_90, sm_90a SASS + compute_90 PTX) against GPUs", "[inspect][explain]") {
  const auto so = test::read_file(std::filesystem::path(WHEELFIT_INSPECT_FIXTURES) / "cuda_kernels.so");
  for (const GpuCase& row : {GpuCase{"9.0", Verdict::ok, "sm 9.0 runs sm_90 SASS"}, GpuCase{"8.6", Verdict::ok, "sm 8.6 runs sm_80 SASS"},
                             GpuCase{"12.0", Verdict::ok, "sm 12.0 runs compute_90 PTX"},
                             GpuCase{"7.5", Verdict::fails, "no kernel image is available for execution on the device"}}) {
    const auto e = explain(wheel_of(so), kName, h100({{"gpus", row.gpus}}));
    const auto& g = demand(e, Demand::gpu_arch);
    INFO(row.gpus << ": " << g.wheel << " / " << g.detail);
    check_verdict(g, row.verdict, row.detail);
    CHECK(g.wheel.find("sm_90a") != std::string::npos);
    CHECK(g.wheel.find("compute_90 (ptx)") != std::string::npos);
  }
}
#endif

TEST_CASE("explain: cpu_arch: an aarch64 wheel on x86_64 fails by its tag and by its ELF", "[inspect][explain]") {
  Lib l;
  l.machine = 183;
  const std::string name = "pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_aarch64.whl";
  const auto e = explain(wheel_of(library(l), "pkg/_C.cpython-312-aarch64-linux-gnu.so"), name, h100());
  const auto& c = demand(e, Demand::cpu_arch);
  CHECK(c.verdict == Verdict::fails);
  CHECK(c.wheel.find("aarch64") != std::string::npos);
  CHECK(c.machine == "x86_64");
  CHECK(c.detail.find("is not a supported wheel on this platform") != std::string::npos);
  CHECK(c.detail.find("is aarch64 machine code") != std::string::npos);
  CHECK(c.detail.find("cannot open shared object file") != std::string::npos);
  CHECK_FALSE(e.fits());
}

TEST_CASE("explain: torch, cuda and python from the label, the linked libraries and the suffix", "[inspect][explain]") {
  SECTION("another torch minor: undefined symbol") {
    const auto e = explain(wheel_of(library({})), kName, h100({{"torch", "2.9.0+cu128"}}));
    const auto& t = demand(e, Demand::torch);
    check_verdict(t, Verdict::fails, "undefined symbol: _ZN3c10");
  }
  SECTION("links libtorch, but the label names no torch: unknown, and warned") {
    const auto e = explain(wheel_of(library({})), "pkg-1.0-" + kTags, h100());
    CHECK(demand(e, Demand::torch).verdict == Verdict::unknown);
    CHECK(has_warning(e, "links libtorch, but the name names no torch version"));
  }
  SECTION("a driver too old for the CUDA runtime") {
    const auto e = explain(wheel_of(library({})), kName, h100({{"driver_line", "11.8"}}));
    const auto& c = demand(e, Demand::line);
    check_verdict(c, Verdict::fails, "CUDA driver version is insufficient for CUDA runtime version");
  }
  SECTION("a CPU build of torch") {
    const auto e = explain(wheel_of(library({})), kName, h100({{"torch", "2.8.0+cpu"}}));
    CHECK(demand(e, Demand::line).detail.find("Torch not compiled with CUDA enabled") != std::string::npos);
  }
  SECTION("a module built for another CPython") {
    const auto e = explain(wheel_of(library({}), "pkg/_C.cpython-311-x86_64-linux-gnu.so"), kName, h100());
    const auto& p = demand(e, Demand::python);
    check_verdict(p, Verdict::fails, "No module named 'pkg._C'");
  }
  SECTION("abi3 claimed, cpython-312 built: warned") {
    const auto e = explain(wheel_of(library({})), "pkg-1.0+cu128torch2.8-cp39-abi3-manylinux_2_28_x86_64.whl", h100());
    CHECK(has_warning(e, "the tag claims the stable ABI (abi3)"));
  }
}

TEST_CASE("explain: unknown machine facts are unknown, never guessed", "[inspect][explain]") {
  const auto e = explain(wheel_of(library({})), kName, make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}}));
  CHECK(e.fits());
  for (Demand d : {Demand::gpu_arch, Demand::torch, Demand::line, Demand::python, Demand::glibc}) {
    INFO(resolve::to_string(d));
    CHECK(demand(e, d).verdict == Verdict::unknown);
  }
  CHECK(demand(e, Demand::cpu_arch).verdict == Verdict::ok);
  CHECK(demand(e, Demand::os).verdict == Verdict::ok);
  CHECK(demand(e, Demand::gpu_arch).machine == "unknown");
}

TEST_CASE("explain: a bare wheel name is judged on its name and the policy", "[inspect][explain]") {
  auto e = inspect::explain_name(kName, h100(), cuda_pol());
  REQUIRE(e);
  CHECK_FALSE(e->binaries_read);
  CHECK(e->files.empty());
  CHECK(e->fits());
  CHECK(demand(*e, Demand::gpu_arch).wheel.find("7.5;8.0;8.6;9.0+PTX") != std::string::npos);
  CHECK(demand(*e, Demand::gpu_arch).wheel.find("binaries not read") != std::string::npos);

  auto old = inspect::explain_name(kName, h100({{"gpus", "6.1"}, {"glibc", "2.27"}}), cuda_pol());
  REQUIRE(old);
  CHECK(demand(*old, Demand::gpu_arch).verdict == Verdict::fails);
  CHECK(demand(*old, Demand::glibc).verdict == Verdict::fails);
  CHECK(demand(*old, Demand::glibc).detail.find("is not a supported wheel on this platform") != std::string::npos);

  auto plain = inspect::explain_name("numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl", h100(), cuda_pol());
  REQUIRE(plain);
  CHECK(demand(*plain, Demand::torch).verdict == Verdict::ok);
  CHECK(demand(*plain, Demand::gpu_arch).verdict == Verdict::unknown);

  auto bad = inspect::explain_name("not-a-wheel.zip", h100(), cuda_pol());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().is(Errc::invalid_input));
  CHECK(bad.error().message.find("not-a-wheel.zip") != std::string::npos);
}

TEST_CASE("explain: a file that is not a zip is an error naming it; a bad member is a warning", "[inspect][explain]") {
  auto src = inspect::memory_source("this is not a zip at all", "broken.whl");
  auto e = inspect::explain_wheel(*src, kName, h100(), cuda_pol());
  REQUIRE_FALSE(e);
  CHECK(e.error().message.find("broken.whl") != std::string::npos);

  const auto partial = explain(wheel_of("\x7f" "ELF garbage"), kName, h100());
  REQUIRE(partial.files.size() == 1);
  CHECK_FALSE(partial.files[0].info);
  CHECK_FALSE(partial.files[0].error.empty());
  CHECK(has_warning(partial, kModule + ": not read"));
}

TEST_CASE("explain: which members are read", "[inspect][explain]") {
  const std::string so = library({});
  const auto zip = test::build_zip({{"pkg/__init__.py", "x = 1\n"},
                                    {kModule, so},
                                    {"pkg.libs/libhelper-a34b3233.so.1.0", so},
                                    {"pkg-1.0.data/data/share/plugin.so", so},
                                    {"pkg/libfoo.so.txt", "text"},
                                    {"pkg/so/", ""}});
  const auto e = explain(zip, kName, h100());
  std::vector<std::string> read;
  for (const auto& f : e.files) read.push_back(f.path);
  CHECK(read == std::vector<std::string>{kModule, "pkg.libs/libhelper-a34b3233.so.1.0"});
}

TEST_CASE("Explanation::read_text never claims more of a wheel than it has", "[inspect][explain]") {
  struct Row {
    bool remote;
    std::uint64_t fetched, size;
    bool whole;
    std::string_view text;
  };
  const Row rows[] = {
      {false, 1154, 846, false, "a local wheel of 846 bytes"},  // a local source counts re-reads
      {false, 100, 846, false, "a local wheel of 846 bytes"},
      {true, 1200, 98765, false, "1200 of 98765 bytes fetched"},
      {true, 846, 846, false, "the whole 846-byte wheel fetched"},
      {true, 846, 846, true, "the whole 846-byte wheel fetched"},
      {true, 1692, 846, true, "the whole 846-byte wheel fetched (1692 bytes in all)"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.remote, row.fetched, row.size, row.whole);
    inspect::Explanation e;
    e.bytes_fetched = row.fetched;
    e.wheel_size = row.size;
    e.downloaded_whole = row.whole;
    CHECK(e.read_text(row.remote) == row.text);
  }
}
