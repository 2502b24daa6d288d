// CUDA detection on Windows: the NVML and CUDA driver probes run in wheelfit-probe.exe (no fork)
// against fake nvml.dll / nvcuda.dll built from tests/backends/cuda/fakes; a fake that crashes
// (access violation) or hangs is reported and the tests' process survives; the Linux-only
// probes say so; detect() on the fakes. No GPU needed.
#include <windows.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/backends/cuda_detect.hpp"
#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/windows_text.hpp"

namespace cuda = wheelfit::backends::cuda;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using wheelfit::test::ScopedEnv;
using wheelfit::test::TempDir;

namespace {

const std::string kFakeNvml = fs::absolute(WHEELFIT_FAKE_NVML).string();
const std::string kFakeCuda = fs::absolute(WHEELFIT_FAKE_CUDA).string();
constexpr auto kTimeout = 60s;  // wine starts processes slowly; only the hang uses kShort
constexpr auto kShort = 1500ms;

const ScopedEnv kFakeModesReachTheProbes("WHEELFIT_PROBE_ENV",
                                         "WHEELFIT_FAKE_MODE,WHEELFIT_FAKE_NVML_MODE,WHEELFIT_FAKE_CUDA_MODE");

// The fake NVML (`nvml`) or the fake nvcuda.dll probed with its mode variable set to `mode`.
cuda::ProbeResult fake_in(bool nvml, const std::string& mode, std::chrono::milliseconds timeout) {
  ScopedEnv env(nvml ? "WHEELFIT_FAKE_NVML_MODE" : "WHEELFIT_FAKE_CUDA_MODE", mode);
  return nvml ? cuda::probe_nvml(kFakeNvml, timeout) : cuda::probe_libcuda(kFakeCuda, timeout);
}
cuda::ProbeResult nvml_in(const std::string& mode, std::chrono::milliseconds t = kTimeout) { return fake_in(true, mode, t); }
cuda::ProbeResult libcuda_in(const std::string& mode, std::chrono::milliseconds t = kTimeout) { return fake_in(false, mode, t); }

std::vector<std::string> ccs(const std::vector<cuda::Device>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.compute_capability.value_or("?"));
  return out;
}

void check_failed(const cuda::ProbeResult& r, const std::string& message) {
  REQUIRE_FALSE(r);
  CHECK(r.error().message == message);
}

fs::path system32() {
  wchar_t buf[MAX_PATH];
  const UINT n = ::GetSystemDirectoryW(buf, MAX_PATH);
  return fs::path(std::wstring(buf, n));
}

}  // namespace

TEST_CASE("probe_nvml on Windows: the fake nvml.dll in wheelfit-probe.exe", "[windows][cuda]") {
  SECTION("two GPUs found") {
    auto r = nvml_in("several");
    REQUIRE(r);
    CHECK(r->driver_version == "580.65.06");
    CHECK(r->cuda_driver == "13.0");
    REQUIRE(r->devices);
    CHECK(ccs(*r->devices) == std::vector<std::string>{"9.0", "8.6"});
    CHECK((*r->devices)[1].name == "NVIDIA GeForce RTX 3090");
    CHECK(r->notes.empty());
  }
  SECTION("MIG instances") {
    auto r = nvml_in("mig");
    REQUIRE(r);
    REQUIRE(r->devices->size() == 1);
    CHECK(r->devices->front().mig_uuids.size() == 2);
  }
  SECTION("an init error") { check_failed(nvml_in("error"), "NVML: nvmlInit_v2 failed: Driver Not Loaded (9)"); }
  SECTION("a crashing driver DLL: reported, and this process goes on") {
    check_failed(nvml_in("crash"), "NVML probe crashed with exception 0xC0000005 (access violation)");
  }
  SECTION("a hanging driver DLL: the probe is ended at its deadline") {
    check_failed(nvml_in("hang", kShort), "NVML probe timed out after 1500 ms");
    CHECK(wheelfit::util::reap_abandoned() == 0);
  }
  SECTION("a missing library, by path and by name") {
    check_failed(cuda::probe_nvml("C:\\nonexistent\\nvml.dll", kTimeout), "NVML: cannot load C:\\nonexistent\\nvml.dll: no such file");
    auto by_name = cuda::probe_nvml("wheelfit-no-such-driver.dll", kTimeout);
    check_failed(by_name, "NVML: cannot load wheelfit-no-such-driver.dll: not in System32 (nor, for nvml.dll, the NVSMI folder)");
  }
  SECTION("a DLL without the NVML entry points") {
    check_failed(cuda::probe_nvml(kFakeCuda, kTimeout), "NVML: " + kFakeCuda + " has no nvmlInit_v2");
  }
  SECTION("the calling process never loads the driver DLL") {
    REQUIRE(nvml_in("one"));
    CHECK(::GetModuleHandleW(L"fake_nvml.dll") == nullptr);
  }
}

TEST_CASE("probe_libcuda on Windows: the fake nvcuda.dll", "[windows][cuda]") {
  SECTION("several GPUs in PCI bus order, whatever the caller's CUDA_VISIBLE_DEVICES") {
    ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "1");
    auto r = libcuda_in("several");
    REQUIRE(r);
    CHECK(r->cuda_driver == "13.0");
    CHECK(ccs(*r->devices) == std::vector<std::string>{"9.0", "8.6"});
  }
  SECTION("a crash and a hang") {
    check_failed(libcuda_in("crash"), "libcuda probe crashed with exception 0xC0000005 (access violation)");
    check_failed(libcuda_in("hang", kShort), "libcuda probe timed out after 1500 ms");
  }
}

TEST_CASE("the probe program: found beside the build, or named; a missing one is a clear note", "[windows][cuda]") {
  SECTION("WHEELFIT_PROBE_PROGRAM names one that does not exist") {
    ScopedEnv program("WHEELFIT_PROBE_PROGRAM", "C:\\nonexistent\\wheelfit-probe.exe");
    check_failed(nvml_in("one"), "NVML probe could not start: C:\\nonexistent\\wheelfit-probe.exe: no such file");
  }
  SECTION("WHEELFIT_PROBE_PROGRAM names the built one") {
    ScopedEnv program("WHEELFIT_PROBE_PROGRAM", fs::absolute(WHEELFIT_PROBE_EXE).string());
    CHECK(nvml_in("one"));
  }
}

TEST_CASE("nvml.dll by name from System32, where the driver installs it", "[windows][cuda]") {
  const fs::path target = system32() / L"nvml.dll";
  std::error_code ec;
  if (fs::exists(target, ec)) {
    WARN("a real or earlier nvml.dll is in System32: not replaced");
    return;
  }
  fs::copy_file(fs::path(wheelfit::util::win::widen(kFakeNvml)), target, ec);
  if (ec) {
    WARN("cannot write to System32 (not wine, or no rights): " + ec.message());
    return;
  }
  ScopedEnv mode("WHEELFIT_FAKE_NVML_MODE", "several");
  auto r = cuda::probe_nvml("nvml.dll", kTimeout);
  fs::remove(target, ec);
  REQUIRE(r);
  CHECK(ccs(*r->devices) == std::vector<std::string>{"9.0", "8.6"});
}

TEST_CASE("detect() on Windows: the fakes answer, the Linux-only probes say so", "[windows][cuda]") {
  TempDir root;
  cuda::DetectEnv env;
  env.nvml_library = kFakeNvml;
  env.cuda_library = kFakeCuda;
  env.nvidia_smi = "";
  env.path = "";
  env.timeout = kTimeout;
  ScopedEnv mode("WHEELFIT_FAKE_MODE", "several");
  const auto d = cuda::detect(env);
  CHECK(d.present);
  CHECK(d.driver_version == "580.65.06");
  CHECK(d.cuda_driver == "13.0");
  REQUIRE(d.gpus());
  CHECK(*d.gpus() == std::vector<std::string>{"9.0", "8.6"});
  CHECK(d.provenance.at("gpus") == "NVML nvmlDeviceGetCudaComputeCapability (" + kFakeNvml + ")");

  SECTION("no driver at all: every probe's note, no crash") {
    cuda::DetectEnv none;
    none.nvml_library = "C:\\absent\\nvml.dll";
    none.cuda_library = "C:\\absent\\nvcuda.dll";
    none.path = "";
    const auto n = cuda::detect(none);
    CHECK_FALSE(n.present);
    CHECK_FALSE(n.driver_version);
    const std::vector<std::string> expected_parts = {
        "NVML: cannot load C:\\absent\\nvml.dll", "libcuda: cannot load C:\\absent\\nvcuda.dll", "nvidia-smi: not found on PATH",
        "/proc/driver/nvidia/version: not on Windows", "WSL: /usr/lib/wsl/lib: not on Windows", "PCI: /sys/bus/pci/devices: not on Windows"};
    for (const auto& part : expected_parts) {
      CAPTURE(part);
      CHECK(wheelfit::test::any_contains(n.notes, part));
    }
  }
  SECTION("the defaults are the Windows driver's names") {
    const cuda::DetectEnv defaults;
    CHECK(defaults.nvml_library == "nvml.dll");
    CHECK(defaults.cuda_library == "nvcuda.dll");
  }
}
