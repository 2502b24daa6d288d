// CUDA detection through fake libraries (fakes/), fake nvidia-smi scripts and fake sysroots:
// each probe, then the order and provenance of detect(). No GPU needed.
#include <dlfcn.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "support/process_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/backends/cuda_detect.hpp"

namespace cuda = wheelfit::backends::cuda;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using wheelfit::test::ScopedEnv;
using wheelfit::test::TempDir;
using wheelfit::test::write_file;

namespace {

const std::string kFakeNvml = WHEELFIT_FAKE_NVML;
const std::string kFakeCuda = WHEELFIT_FAKE_CUDA;
constexpr auto kTimeout = 10000ms;  // generous: sanitizer builds fork slowly; hangs use kShort
constexpr auto kShort = 300ms;

// The probe children get only the probe environment (util::probe_environment()); the fakes'
// mode variables reach them the way a user's driver setting would: named in WHEELFIT_PROBE_ENV.
const ScopedEnv kFakeModesReachTheProbes("WHEELFIT_PROBE_ENV",
                                         "WHEELFIT_FAKE_MODE,WHEELFIT_FAKE_NVML_MODE,WHEELFIT_FAKE_CUDA_MODE");

// Nothing answers unless a test says so: no library, no nvidia-smi, an empty sysroot.
cuda::DetectEnv hermetic(const TempDir& root) {
  cuda::DetectEnv env;
  env.sysroot = root.path();
  env.nvml_library = (root / "absent/libnvidia-ml.so.1").string();
  env.cuda_library = (root / "absent/libcuda.so.1").string();
  env.nvidia_smi = "";
  env.path = "";
  env.timeout = kTimeout;
  return env;
}

fs::path write_script(const fs::path& p, const std::string& body) {
  write_file(p, "#!/bin/sh\n" + body);
  fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  return p;
}

// A fake nvidia-smi printing `csv` for the compute_cap query (and checking its arguments).
fs::path fake_smi(const TempDir& dir, const std::string& csv, int status = 0) {
  return write_script(dir / "bin/nvidia-smi",
                      "[ \"$1\" = --query-gpu=index,name,uuid,compute_cap,driver_version ] || exit 2\n"
                      "[ \"$2\" = --format=csv,noheader ] || exit 2\n"
                      "cat <<'EOF'\n" +
                          csv + "EOF\nexit " + std::to_string(status) + "\n");
}

/// The fake NVML, or the fake libcuda, probed in a child process with its mode variable set to `mode`.
cuda::ProbeResult nvml_in(const std::string& mode, std::chrono::milliseconds timeout = kTimeout) {
  ScopedEnv env("WHEELFIT_FAKE_NVML_MODE", mode);
  return cuda::probe_nvml(kFakeNvml, timeout);
}
cuda::ProbeResult libcuda_in(const std::string& mode, std::chrono::milliseconds timeout = kTimeout) {
  ScopedEnv env("WHEELFIT_FAKE_CUDA_MODE", mode);
  return cuda::probe_libcuda(kFakeCuda, timeout);
}

/// The probe failed, saying exactly `message`.
void check_failed(const cuda::ProbeResult& r, const std::string& message) {
  REQUIRE_FALSE(r);
  CHECK(r.error().message == message);
}

/// detect's driver version and CUDA version, each with where it came from (the CUDA one by prefix).
void check_driver(const cuda::Detection& d, const std::string& version, const std::string& version_from,
                  const std::string& line, const std::string& line_from) {
  CHECK(d.driver_version == version);
  CHECK(d.provenance.at("driver_version") == version_from);
  CHECK(d.cuda_driver == line);
  CHECK_THAT(d.provenance.at("cuda_driver"), Catch::StartsWith(line_from));
}

/// detect found no driver version, no CUDA version and no device list.
void check_no_facts(const cuda::Detection& d) {
  CHECK_FALSE(d.driver_version);
  CHECK_FALSE(d.cuda_driver);
  CHECK_FALSE(d.devices);
}

void fake_pci(const TempDir& root, const std::string& address, const std::string& vendor, const std::string& cls,
              const std::string& device) {
  auto dir = root / ("sys/bus/pci/devices/" + address);
  write_file(dir / "vendor", vendor + "\n");
  write_file(dir / "class", cls + "\n");
  write_file(dir / "device", device + "\n");
}

bool any_note(const cuda::Detection& d, std::string_view part) {
  for (const auto& n : d.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> ccs_cuda_detect(const std::vector<cuda::Device>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.compute_capability.value_or("?"));
  return out;
}

}  // namespace

TEST_CASE("probe_nvml answers from the fake NVML in a child process", "[backends][cuda]") {
  SECTION("one GPU") {
    auto r = nvml_in("one");
    REQUIRE(r.has_value());
    CHECK(r->driver_version == "580.65.06");
    CHECK(r->cuda_driver == "13.0");
    REQUIRE(r->devices.has_value());
    REQUIRE(r->devices->size() == 1);
    const auto& d = r->devices->front();
    CHECK(d.index == 0);
    CHECK(d.name == "NVIDIA H100 80GB HBM3");
    CHECK(d.compute_capability == "9.0");
    CHECK(d.uuid == "GPU-11111111-2222-3333-4444-555555555555");
    CHECK(d.mig_uuids.empty());
    CHECK(r->notes.empty());
  }
  SECTION("several GPUs") {
    auto r = nvml_in("several");
    REQUIRE(r);
    CHECK(ccs_cuda_detect(*r->devices) == std::vector<std::string>{"9.0", "8.6"});
    CHECK((*r->devices)[1].index == 1);
    CHECK((*r->devices)[1].name == "NVIDIA GeForce RTX 3090");
  }
  SECTION("an old driver") {
    ScopedEnv mode("WHEELFIT_FAKE_MODE", "old_driver");
    auto r = cuda::probe_nvml(kFakeNvml, kTimeout);
    REQUIRE(r);
    CHECK(r->driver_version == "470.256.02");
    CHECK(r->cuda_driver == "11.4");
    CHECK(ccs_cuda_detect(*r->devices) == std::vector<std::string>{"7.0"});
  }
  SECTION("MIG instances are listed with their GPU") {
    auto r = nvml_in("mig");
    REQUIRE(r);
    REQUIRE(r->devices->size() == 1);
    CHECK(r->devices->front().mig_uuids ==
          std::vector<std::string>{"MIG-aaaa1111-2222-3333-4444-555555555555", "MIG-bbbb1111-2222-3333-4444-555555555555"});
  }
  SECTION("an unreadable compute capability is a note, the GPU stays listed") {
    auto r = nvml_in("nocc");
    REQUIRE(r);
    REQUIRE(r->devices->size() == 1);
    CHECK_FALSE(r->devices->front().compute_capability);
    REQUIRE(r->notes.size() == 1);
    CHECK(r->notes[0] == "NVML: GPU 0: nvmlDeviceGetCudaComputeCapability failed: Not Supported (3)");
  }
  SECTION("no GPU is a known empty list") {
    auto r = nvml_in("no_gpu");
    REQUIRE(r);
    REQUIRE(r->devices.has_value());
    CHECK(r->devices->empty());
  }
  SECTION("an init error") {
    check_failed(nvml_in("error"), "NVML: nvmlInit_v2 failed: Driver Not Loaded (9)");
  }
  SECTION("a hang: the timeout fires and the child is killed") {
    ScopedEnv mode("WHEELFIT_FAKE_NVML_MODE", "hang");
    auto start = std::chrono::steady_clock::now();
    auto r = cuda::probe_nvml(kFakeNvml, kShort);
    auto took = std::chrono::steady_clock::now() - start;
    check_failed(r, "NVML probe timed out after 300 ms");
    CHECK(took < 5s);
  }
  SECTION("a crash: the child dies, the caller reports it") {
    check_failed(nvml_in("crash"), "NVML probe crashed with signal 11 (SIGSEGV)");
  }
  SECTION("a missing library") {
    auto r = cuda::probe_nvml("/nonexistent/libnvidia-ml.so.1", kTimeout);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::StartsWith("NVML: cannot load /nonexistent/libnvidia-ml.so.1: "));
  }
  SECTION("a library without the NVML entry points") {
    auto r = cuda::probe_nvml(kFakeCuda, kTimeout);
    check_failed(r, "NVML: " + kFakeCuda + " has no nvmlInit_v2");
  }
  SECTION("the calling process never loads the vendor library") {
    ScopedEnv mode("WHEELFIT_FAKE_NVML_MODE", "one");
    REQUIRE(cuda::probe_nvml(kFakeNvml, kTimeout));
    CHECK(::dlopen(kFakeNvml.c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
  }
}

TEST_CASE("probe_libcuda answers from the fake libcuda in a child process", "[backends][cuda]") {
  SECTION("one GPU, with its UUID") {
    auto r = libcuda_in("one");
    REQUIRE(r);
    CHECK_FALSE(r->driver_version);
    CHECK(r->cuda_driver == "13.0");
    REQUIRE(r->devices->size() == 1);
    CHECK(r->devices->front().compute_capability == "9.0");
    CHECK(r->devices->front().name == "NVIDIA H100 80GB HBM3");
    CHECK(r->devices->front().uuid == "GPU-11111111-2222-3333-4444-555555555555");
  }
  SECTION("several GPUs in PCI bus order, whatever CUDA_VISIBLE_DEVICES says in the caller") {
    ScopedEnv mode("WHEELFIT_FAKE_CUDA_MODE", "several");
    ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "1");
    ScopedEnv order("CUDA_DEVICE_ORDER", "FASTEST_FIRST");
    auto r = cuda::probe_libcuda(kFakeCuda, kTimeout);
    REQUIRE(r);
    CHECK(ccs_cuda_detect(*r->devices) == std::vector<std::string>{"9.0", "8.6"});
    CHECK((*r->devices)[1].uuid == "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
  }
  SECTION("an old driver") {
    auto r = libcuda_in("old_driver");
    REQUIRE(r);
    CHECK(r->cuda_driver == "11.4");
    CHECK(ccs_cuda_detect(*r->devices) == std::vector<std::string>{"7.0"});
  }
  SECTION("no device: the CUDA version with an empty list") {
    auto r = libcuda_in("no_gpu");
    REQUIRE(r);
    CHECK(r->cuda_driver == "13.0");
    REQUIRE(r->devices.has_value());
    CHECK(r->devices->empty());
    CHECK(r->notes == std::vector<std::string>{"libcuda: cuInit failed: no CUDA-capable device is detected (100)"});
  }
  SECTION("an init error: nothing from this library is trusted") {
    check_failed(libcuda_in("error"), "libcuda: cuInit failed: unknown error (999)");
  }
  SECTION("a hang and a crash") {
    check_failed(libcuda_in("hang", kShort), "libcuda probe timed out after 300 ms");
    check_failed(libcuda_in("crash"), "libcuda probe crashed with signal 11 (SIGSEGV)");
  }
  SECTION("a library without the CUDA entry points") {
    auto r = cuda::probe_libcuda(kFakeNvml, kTimeout);
    check_failed(r, "libcuda: " + kFakeNvml + " has no cuInit");
  }
}

TEST_CASE("probe_nvidia_smi runs the query, never the banner", "[backends][cuda]") {
  TempDir dir;
  SECTION("several GPUs") {
    auto smi = fake_smi(dir,
                        "0, NVIDIA H100 80GB HBM3, GPU-1111, 9.0, 580.65.06\n"
                        "1, NVIDIA GeForce RTX 3090, GPU-aaaa, 8.6, 580.65.06\n");
    auto r = cuda::probe_nvidia_smi(smi.string(), kTimeout);
    REQUIRE(r);
    CHECK(r->driver_version == "580.65.06");
    CHECK_FALSE(r->cuda_driver);
    CHECK(ccs_cuda_detect(*r->devices) == std::vector<std::string>{"9.0", "8.6"});
  }
  SECTION("a failing nvidia-smi: its first line is the note") {
    auto smi = fake_smi(dir,
                        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
                        "that the latest NVIDIA driver is installed and running.\n\n",
                        9);
    auto r = cuda::probe_nvidia_smi(smi.string(), kTimeout);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message,
               Catch::StartsWith("nvidia-smi: exited with status 9: NVIDIA-SMI has failed because it couldn't"));
  }
  SECTION("an nvidia-smi without compute_cap (before R510): asked again without it") {
    auto smi = write_script(dir / "nvidia-smi",
                            "case \"$1\" in *compute_cap*) echo 'Field \"compute_cap\" is not a valid field to "
                            "query.'; exit 2;; esac\n"
                            "[ \"$1\" = --query-gpu=index,name,uuid,driver_version ] || exit 3\n"
                            "echo '0, Tesla V100-SXM2-16GB, GPU-7777, 470.256.02'\n");
    auto r = cuda::probe_nvidia_smi(smi.string(), kTimeout);
    REQUIRE(r);
    CHECK(r->driver_version == "470.256.02");
    REQUIRE(r->devices->size() == 1);
    CHECK_FALSE(r->devices->front().compute_capability);
    CHECK(r->notes == std::vector<std::string>{"nvidia-smi: this driver's nvidia-smi has no compute_cap field"});
  }
  SECTION("a hanging nvidia-smi is killed with its children") {
    auto smi = write_script(dir / "nvidia-smi", "sleep 30 &\nsleep 30\n");
    auto start = std::chrono::steady_clock::now();
    auto r = cuda::probe_nvidia_smi(smi.string(), kShort);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    check_failed(r, "nvidia-smi probe timed out after 300 ms");
  }
  SECTION("missing") {
    auto r = cuda::probe_nvidia_smi((dir / "nope").string(), kTimeout);
    check_failed(r, "nvidia-smi: " + (dir / "nope").string() + " not found");
    auto none = cuda::probe_nvidia_smi("", kTimeout);
    check_failed(none, "nvidia-smi: not found on PATH");
  }
}

TEST_CASE("a probe child that SIGKILL cannot end is abandoned at its deadline, not waited for", "[backends][cuda]") {
  // A wedged driver call sleeps uninterruptibly: SIGKILL does not end it. The seam makes the
  // kill do nothing; the probe must still answer at its deadline (plus the grace).
  TempDir dir;
  int left_behind = 0;
  {
    wheelfit::test::UnkillableChildren unkillable;
    SECTION("NVML hanging in its init call") {
      ScopedEnv mode("WHEELFIT_FAKE_NVML_MODE", "hang");
      auto start = std::chrono::steady_clock::now();
      auto r = cuda::probe_nvml(kFakeNvml, kShort);
      CHECK(std::chrono::steady_clock::now() - start < kShort + wheelfit::util::kKillGrace + 2s);
      REQUIRE_FALSE(r);
      CHECK(r.error().message ==
            "NVML probe timed out after 300 ms; it did not end on SIGKILL and was left to be reaped later");
    }
    SECTION("nvidia-smi") {
      auto smi = write_script(dir / "nvidia-smi", "exec sleep 30\n");
      auto start = std::chrono::steady_clock::now();
      auto r = cuda::probe_nvidia_smi(smi.string(), kShort);
      CHECK(std::chrono::steady_clock::now() - start < kShort + wheelfit::util::kKillGrace + 2s);
      REQUIRE_FALSE(r);
      CHECK_THAT(r.error().message, Catch::StartsWith("nvidia-smi probe timed out after 300 ms; it did not end on SIGKILL"));
    }
    const auto asked = unkillable.asked();
    REQUIRE_FALSE(asked.empty());
    CHECK(asked.front() < 0);  // the process group first
    left_behind = -asked.front();
  }
  CHECK(wheelfit::test::reap_all(5000ms) == 0);  // killed for real now: reaped without a wait
  CHECK(wheelfit::test::ended(left_behind));
}

TEST_CASE("probe children get the probe environment: no token reaches them", "[backends][cuda]") {
  TempDir dir;
  ScopedEnv token("GITHUB_TOKEN", "ghp_TOPSECRET");
  ScopedEnv proxy("HTTPS_PROXY", "http://user:TOPSECRET@proxy.test:3128");
  ScopedEnv home("HOME", "/home/probe");
  const auto env_file = dir / "env.txt";
  auto smi = write_script(dir / "nvidia-smi", "env > '" + env_file.string() + "'\necho '0, NVIDIA H100, GPU-1, 9.0, 580.65.06'\n");
  auto r = cuda::probe_nvidia_smi(smi.string(), kTimeout);
  REQUIRE(r);
  const std::string seen = wheelfit::test::read_file(env_file);
  CHECK_FALSE(wheelfit::test::contains(seen, "TOPSECRET"));
  CHECK(wheelfit::test::contains(seen, "HOME=/home/probe"));
  CHECK(wheelfit::test::contains(seen, "PATH="));
}

TEST_CASE("the file probes read under WHEELFIT_SYSROOT", "[backends][cuda]") {
  TempDir root;
  auto env = hermetic(root);
  SECTION("/proc/driver/nvidia/version") {
    auto missing = cuda::probe_proc_driver_version(env);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().is(wheelfit::Errc::not_found));
    CHECK_THAT(missing.error().message, Catch::Contains((root / "proc/driver/nvidia/version").string()));
    write_file(root / "proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@x)\n");
    auto r = cuda::probe_proc_driver_version(env);
    REQUIRE(r);
    CHECK(r->driver_version == "580.65.06");
    write_file(root / "proc/driver/nvidia/version", "garbage\n");
    auto bad = cuda::probe_proc_driver_version(env);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().is(wheelfit::Errc::invalid_input));
  }
  SECTION("/sys/module/nvidia/version") {
    CHECK_FALSE(cuda::probe_sys_module_version(env));
    write_file(root / "sys/module/nvidia/version", "570.124.06\n");
    auto r = cuda::probe_sys_module_version(env);
    REQUIRE(r);
    CHECK(r->driver_version == "570.124.06");
    write_file(root / "sys/module/nvidia/version", "open\n");
    CHECK_FALSE(cuda::probe_sys_module_version(env));
  }
  SECTION("WSL's folder") {
    CHECK_FALSE(cuda::find_wsl(env));
    fs::create_directories(root / "usr/lib/wsl/lib");
    CHECK_FALSE(cuda::find_wsl(env));  // the folder alone is not enough
    write_file(root / "usr/lib/wsl/lib/libcuda.so.1", "");
    auto w = cuda::find_wsl(env);
    REQUIRE(w);
    CHECK(w->cuda_library == (root / "usr/lib/wsl/lib/libcuda.so.1").string());
    CHECK(w->nvml_library.empty());
    CHECK(w->nvidia_smi.empty());
  }
  SECTION("PCI: NVIDIA display and 3D controllers only, sorted") {
    CHECK_FALSE(cuda::probe_pci(env));
    fake_pci(root, "0000:c1:00.0", "0x10de", "0x030200", "0x2330");  // 3D controller
    fake_pci(root, "0000:01:00.0", "0x10de", "0x030000", "0x2204");  // VGA
    fake_pci(root, "0000:01:00.1", "0x10de", "0x040300", "0x1aef");  // its audio function
    fake_pci(root, "0000:02:00.0", "0x1002", "0x030000", "0x744c");  // AMD
    fake_pci(root, "0000:00:1f.0", "0x8086", "0x060100", "0x7a06");
    auto r = cuda::probe_pci(env);
    REQUIRE(r);
    REQUIRE(r->size() == 2);
    CHECK((*r)[0].address == "0000:01:00.0");
    CHECK((*r)[0].device_id == "0x2204");
    CHECK((*r)[1].address == "0000:c1:00.0");
    CHECK((*r)[1].device_id == "0x2330");
  }
}

TEST_CASE("detect runs the probes in order and records who answered", "[backends][cuda]") {
  TempDir root;
  auto env = hermetic(root);

  SECTION("NVML answers everything: libcuda and the rest are not needed") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "one");
    ScopedEnv cu("WHEELFIT_FAKE_CUDA_MODE", "crash");  // would leave a note if it ran
    env.nvml_library = kFakeNvml;
    env.cuda_library = kFakeCuda;
    write_file(root / "proc/driver/nvidia/version", "garbage\n");  // would leave a note if read
    auto d = cuda::detect(env);
    CHECK(d.present);
    CHECK(d.driver_version == "580.65.06");
    CHECK(d.cuda_driver == "13.0");
    CHECK(d.gpus() == std::vector<std::string>{"9.0"});
    CHECK(d.provenance.at("driver_version") == "NVML nvmlSystemGetDriverVersion (" + kFakeNvml + ")");
    CHECK(d.provenance.at("cuda_driver") == "NVML nvmlSystemGetCudaDriverVersion_v2 (" + kFakeNvml + ")");
    CHECK(d.provenance.at("gpus") == "NVML nvmlDeviceGetCudaComputeCapability (" + kFakeNvml + ")");
    CHECK(d.notes.empty());
    CHECK(d.no_usable_driver.empty());
  }
  SECTION("NVML missing: libcuda answers, with a note about NVML; the driver from /proc") {
    ScopedEnv cu("WHEELFIT_FAKE_CUDA_MODE", "several");
    env.cuda_library = kFakeCuda;
    write_file(root / "proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:43 UTC 2025\n");
    auto d = cuda::detect(env);
    CHECK(d.present);
    check_driver(d, "580.65.06", "/proc/driver/nvidia/version", "13.0", "libcuda cuDriverGetVersion");
    CHECK(d.gpus() == std::vector<std::string>{"9.0", "8.6"});
    CHECK_THAT(d.provenance.at("gpus"), Catch::StartsWith("libcuda cuDeviceGetAttribute 75/76"));
    REQUIRE(d.notes.size() == 2);
    CHECK_THAT(d.notes[0], Catch::StartsWith("NVML: cannot load "));
    CHECK(d.notes[1] == "nvidia-smi: not found on PATH");
  }
  SECTION("NVML fails, libcuda missing: nvidia-smi answers; CUDA from the driver table") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "error");
    env.nvml_library = kFakeNvml;
    env.path = (root / "bin").string();  // found on PATH
    fake_smi(root, "0, NVIDIA H100 80GB HBM3, GPU-1111, 9.0, 570.124.06\n");
    auto d = cuda::detect(env);
    CHECK(d.driver_version == "570.124.06");
    CHECK(d.provenance.at("driver_version") ==
          "nvidia-smi --query-gpu driver_version (" + (root / "bin/nvidia-smi").string() + ")");
    CHECK(d.cuda_driver == "12.8");
    CHECK(d.provenance.at("cuda_driver") ==
          "driver table: driver 570.124.06 >= 570.26 (Linux) supports CUDA 12.8 (NVIDIA CUDA toolkit release notes)");
    CHECK(d.gpus() == std::vector<std::string>{"9.0"});
    REQUIRE(d.notes.size() == 2);
    CHECK(d.notes[0] == "NVML: nvmlInit_v2 failed: Driver Not Loaded (9)");
    CHECK_THAT(d.notes[1], Catch::StartsWith("libcuda: cannot load "));
  }
  SECTION("NVML cannot read a compute capability: libcuda's complete list wins") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "nocc");
    ScopedEnv cu("WHEELFIT_FAKE_CUDA_MODE", "one");
    env.nvml_library = kFakeNvml;
    env.cuda_library = kFakeCuda;
    auto d = cuda::detect(env);
    CHECK(d.driver_version == "580.65.06");
    CHECK_THAT(d.provenance.at("cuda_driver"), Catch::StartsWith("NVML"));
    CHECK(d.gpus() == std::vector<std::string>{"9.0"});
    CHECK_THAT(d.provenance.at("gpus"), Catch::StartsWith("libcuda"));
    CHECK(any_note(d, "nvmlDeviceGetCudaComputeCapability failed"));
  }
  SECTION("no probe reads a compute capability: the GPUs are listed, the gpus fact stays unknown") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "nocc");
    env.nvml_library = kFakeNvml;
    env.nvidia_smi = fake_smi(root, "0, NVIDIA H100 80GB HBM3, GPU-1111, [N/A], 580.65.06\n").string();
    auto d = cuda::detect(env);
    CHECK(d.present);
    REQUIRE(d.devices);
    REQUIRE(d.devices->size() == 1);
    CHECK(d.devices->front().name == "NVIDIA H100 80GB HBM3");
    CHECK_FALSE(d.gpus());
    CHECK_FALSE(d.provenance.contains("gpus"));
    CHECK(any_note(d, "nvidia-smi: GPU 0: compute capability [N/A]"));
    CHECK(any_note(d, "gpus: the compute capability of a visible GPU could not be read"));
    auto json = boost::json::parse(cuda::to_json(d)).as_object();
    CHECK_FALSE(json.at("facts").as_object().contains("gpus"));
    CHECK_FALSE(json.at("devices").as_array()[0].as_object().contains("target"));
    SECTION("unless CUDA_VISIBLE_DEVICES hides that GPU") {
      env.cuda_visible_devices = "";
      auto hidden = cuda::detect(env);
      CHECK(hidden.gpus() == std::vector<std::string>{});
    }
  }
  SECTION("a hanging NVML and a crashing libcuda are notes; nvidia-smi still answers") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "hang");
    ScopedEnv cu("WHEELFIT_FAKE_CUDA_MODE", "crash");
    env.nvml_library = kFakeNvml;
    env.cuda_library = kFakeCuda;
    env.timeout = kShort;
    env.nvidia_smi = fake_smi(root, "0, NVIDIA GeForce RTX 3090, GPU-aaaa, 8.6, 580.65.06\n").string();
    auto d = cuda::detect(env);
    CHECK(d.gpus() == std::vector<std::string>{"8.6"});
    CHECK(d.cuda_driver == "13.0");
    REQUIRE(d.notes.size() >= 2);
    CHECK(d.notes[0] == "NVML probe timed out after 300 ms");
    CHECK(d.notes[1] == "libcuda probe crashed with signal 11 (SIGSEGV)");
  }
  SECTION("only the kernel module: /proc, then /sys; GPUs unknown, PCI says they exist") {
    fake_pci(root, "0000:01:00.0", "0x10de", "0x030200", "0x2330");
    write_file(root / "sys/module/nvidia/version", "470.256.02\n");
    auto d = cuda::detect(env);
    CHECK(d.present);
    check_driver(d, "470.256.02", "/sys/module/nvidia/version", "11.4", "driver table");
    CHECK_FALSE(d.devices);
    CHECK_FALSE(d.gpus());
    CHECK(d.no_usable_driver.empty());
    CHECK(any_note(d, "/proc/driver/nvidia/version: not found"));
    CHECK(any_note(d, "PCI: NVIDIA GPU(s) present (PCI 0000:01:00.0, device 0x2330) but no probe could list them"));
  }
  SECTION("WSL: the libraries of /usr/lib/wsl/lib") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "several");
    fs::create_directories(root / "usr/lib/wsl/lib");
    fs::copy_file(kFakeNvml, root / "usr/lib/wsl/lib/libnvidia-ml.so.1");
    auto d = cuda::detect(env);
    CHECK(d.present);
    CHECK(d.driver_version == "580.65.06");
    auto wsl_nvml = (root / "usr/lib/wsl/lib/libnvidia-ml.so.1").string();
    CHECK(d.provenance.at("driver_version") == "WSL NVML nvmlSystemGetDriverVersion (" + wsl_nvml + ")");
    CHECK(d.provenance.at("gpus") == "WSL NVML nvmlDeviceGetCudaComputeCapability (" + wsl_nvml + ")");
    CHECK(d.gpus() == std::vector<std::string>{"9.0", "8.6"});
    CHECK(any_note(d, "NVML: cannot load"));
  }
  SECTION("PCI only: a GPU is present but no usable driver, with the reasons") {
    fake_pci(root, "0000:01:00.0", "0x10de", "0x030200", "0x2330");
    auto d = cuda::detect(env);
    CHECK(d.present);
    check_no_facts(d);
    CHECK(d.provenance.empty());
    CHECK_THAT(d.no_usable_driver,
               Catch::StartsWith("an NVIDIA GPU is present (PCI 0000:01:00.0, device 0x2330) but no usable driver "
                                 "was found: NVML: cannot load ") &&
                   Catch::Contains("libcuda: cannot load") && Catch::Contains("nvidia-smi: not found on PATH") &&
                   Catch::Contains("/proc/driver/nvidia/version: not found") &&
                   Catch::Contains("/sys/module/nvidia/version: not found") && Catch::Contains("WSL: "));
    auto json = boost::json::parse(cuda::to_json(d)).as_object();
    CHECK(json.at("present").as_bool());
    CHECK(json.at("facts").as_object().empty());
    CHECK(json.at("notes").as_array().back().as_string() == d.no_usable_driver);
  }
  SECTION("nothing at all: not present, a note per probe, no facts") {
    auto d = cuda::detect(env);
    CHECK_FALSE(d.present);
    check_no_facts(d);
    CHECK(d.no_usable_driver.empty());
    CHECK(d.notes.size() == 7);  // NVML, libcuda, nvidia-smi, /proc, /sys, WSL, PCI
    CHECK(any_note(d, "PCI: "));
  }
  SECTION("an old driver end to end") {
    ScopedEnv mode("WHEELFIT_FAKE_MODE", "old_driver");
    env.nvml_library = kFakeNvml;
    auto d = cuda::detect(env);
    CHECK(d.driver_version == "470.256.02");
    CHECK(d.cuda_driver == "11.4");
    CHECK(d.gpus() == std::vector<std::string>{"7.0"});
  }
}

TEST_CASE("detect applies CUDA_VISIBLE_DEVICES to every visible GPU", "[backends][cuda]") {
  TempDir root;
  auto env = hermetic(root);
  ScopedEnv mode("WHEELFIT_FAKE_MODE", "several");
  env.nvml_library = kFakeNvml;

  SECTION("unset: every GPU") {
    auto d = cuda::detect(env);
    CHECK(d.gpus() == std::vector<std::string>{"9.0", "8.6"});
    CHECK(d.notes.empty());
  }
  SECTION("reordered") {
    env.cuda_visible_devices = "1,0";
    auto d = cuda::detect(env);
    CHECK(d.gpus() == std::vector<std::string>{"8.6", "9.0"});
    CHECK_THAT(d.provenance.at("gpus"), Catch::EndsWith(" + CUDA_VISIBLE_DEVICES"));
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0] == "CUDA_VISIBLE_DEVICES='1,0': visible GPU index(es) 1, 0 of 2");
  }
  SECTION("by UUID") {
    env.cuda_visible_devices = "GPU-aaaaaaaa";
    auto d = cuda::detect(env);
    CHECK(d.gpus() == std::vector<std::string>{"8.6"});
    REQUIRE(d.devices);
    CHECK(d.devices->front().index == 1);
  }
  SECTION("empty: no GPU visible, still present") {
    env.cuda_visible_devices = "";
    auto d = cuda::detect(env);
    CHECK(d.present);
    CHECK(d.gpus() == std::vector<std::string>{});
    auto json = boost::json::parse(cuda::to_json(d)).as_object();
    CHECK(json.at("facts").as_object().at("gpus").as_array().empty());
  }
  SECTION("libcuda's list gets the same treatment") {
    ScopedEnv nvml("WHEELFIT_FAKE_NVML_MODE", "error");
    env.cuda_library = kFakeCuda;
    env.cuda_visible_devices = "1";
    auto d = cuda::detect(env);
    CHECK(d.gpus() == std::vector<std::string>{"8.6"});
    REQUIRE(d.devices);
    CHECK(d.devices->front().uuid == "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
  }
}

TEST_CASE("to_json writes the plugin ABI's detect payload", "[backends][cuda]") {
  cuda::Detection d;
  d.present = true;
  d.driver_version = "580.65.06";
  d.cuda_driver = "13.0";
  d.devices = std::vector<cuda::Device>{{0, "NVIDIA H100", "9.0", "GPU-1", {}}, {1, "NVIDIA RTX 3090", "8.6", "GPU-2", {}}};
  d.provenance = {{"driver_version", "NVML nvmlSystemGetDriverVersion"},
                  {"cuda_driver", "NVML nvmlSystemGetCudaDriverVersion_v2"},
                  {"gpus", "NVML nvmlDeviceGetCudaComputeCapability"}};
  d.notes = {"a note"};
  auto v = boost::json::parse(cuda::to_json(d));
  auto expected = boost::json::parse(R"({
    "present": true,
    "facts": {"driver_version": "580.65.06", "driver_line": "13.0", "gpus": ["9.0", "8.6"]},
    "provenance": {"driver_version": "NVML nvmlSystemGetDriverVersion",
                   "driver_line": "NVML nvmlSystemGetCudaDriverVersion_v2",
                   "gpus": "NVML nvmlDeviceGetCudaComputeCapability"},
    "devices": [{"index": 0, "name": "NVIDIA H100", "target": "9.0", "uuid": "GPU-1"},
                {"index": 1, "name": "NVIDIA RTX 3090", "target": "8.6", "uuid": "GPU-2"}],
    "notes": ["a note"]})");
  CHECK(v == expected);

  SECTION("a GPU whose compute capability is unknown: no target, and no gpus fact") {
    (*d.devices)[1].compute_capability.reset();
    auto o = boost::json::parse(cuda::to_json(d)).as_object();
    CHECK_FALSE(o.at("facts").as_object().contains("gpus"));
    CHECK_FALSE(o.at("provenance").as_object().contains("gpus"));
    CHECK_FALSE(o.at("devices").as_array()[1].as_object().contains("target"));
  }
}

TEST_CASE("DetectEnv::from_environment and detect_json honour the overrides", "[backends][cuda]") {
  TempDir root;
  ScopedEnv sysroot("WHEELFIT_SYSROOT", root.path().string());
  ScopedEnv nvml("WHEELFIT_NVML_LIBRARY", kFakeNvml);
  ScopedEnv cu("WHEELFIT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  ScopedEnv smi("WHEELFIT_NVIDIA_SMI", (root / "nvidia-smi").string());
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "1");
  ScopedEnv timeout("WHEELFIT_PROBE_TIMEOUT_MS", "4000");
  ScopedEnv mode("WHEELFIT_FAKE_MODE", "several");

  auto env = cuda::DetectEnv::from_environment();
  CHECK(env.sysroot == root.path());
  CHECK(env.nvml_library == kFakeNvml);
  CHECK(env.cuda_library == "/nonexistent/libcuda.so.1");
  CHECK(env.nvidia_smi == (root / "nvidia-smi").string());
  CHECK(env.cuda_visible_devices == "1");
  CHECK(env.timeout == 4000ms);
  CHECK(env.host_path("/proc/driver/nvidia/version") == root / "proc/driver/nvidia/version");

  auto v = boost::json::parse(cuda::detect_json()).as_object();
  CHECK(v.at("present").as_bool());
  CHECK(v.at("facts").as_object().at("gpus") == boost::json::parse(R"(["8.6"])"));
  CHECK(v.at("devices").as_array().size() == 1);

  SECTION("defaults when unset or empty") {
    ScopedEnv s2("WHEELFIT_SYSROOT", "");
    ScopedEnv n2("WHEELFIT_NVML_LIBRARY", std::nullopt);
    ScopedEnv c2("CUDA_VISIBLE_DEVICES", std::nullopt);
    ScopedEnv t2("WHEELFIT_PROBE_TIMEOUT_MS", "soon");
    auto e = cuda::DetectEnv::from_environment();
    CHECK(e.sysroot.empty());
    CHECK(e.nvml_library == "libnvidia-ml.so.1");
    CHECK_FALSE(e.cuda_visible_devices);
    CHECK(e.timeout == 5000ms);
    CHECK(e.host_path("/sys/module/nvidia/version") == fs::path("/sys/module/nvidia/version"));
  }
}
