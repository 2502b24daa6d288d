// detect(): the probes in their fixed order, first answer per fact wins, then the driver table
// and CUDA_VISIBLE_DEVICES. to_json() / detect_json(): the plugin ABI's detect payload.

#ifndef _WIN32
#include <unistd.h>
#endif

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <exception>
#include <system_error>

#include "wheelfit/backends/cuda_detect.hpp"
#ifdef _WIN32
#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/util/windows_text.hpp"
#endif

namespace wheelfit::backends::cuda {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> env_value(const char* name) {
#ifdef _WIN32
  return util::env_utf8(name);  // UTF-8, not the ANSI code page
#else
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
#endif
}

#ifdef _WIN32
constexpr char kPathSeparator = ';';
constexpr std::string_view kSmiName = "nvidia-smi.exe";
constexpr std::string_view kNvmlName = "nvml.dll";
constexpr std::string_view kCudaName = "nvcuda.dll";
#else
constexpr char kPathSeparator = ':';
constexpr std::string_view kSmiName = "nvidia-smi";
constexpr std::string_view kNvmlName = "libnvidia-ml.so.1";
constexpr std::string_view kCudaName = "libcuda.so.1";
#endif

std::optional<std::string> env_nonempty(const char* name) {
  auto v = env_value(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

// The first executable `name` in a PATH-style list (';'-separated on Windows); "" when none.
std::string find_on_path(std::string_view name, std::string_view path) {
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto colon = path.find(kPathSeparator, pos);
    auto dir = path.substr(pos, colon == std::string_view::npos ? std::string_view::npos : colon - pos);
    pos = colon == std::string_view::npos ? path.size() + 1 : colon + 1;
    if (dir.empty()) continue;  // "" means the current directory: never for a vendor tool
    std::error_code ec;
#ifdef _WIN32
    fs::path candidate = fs::path(util::win::widen(dir)) / util::win::widen(name);
    if (fs::is_regular_file(candidate, ec)) return util::win::narrow(candidate.native());
#else
    fs::path candidate = fs::path(dir) / name;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
#endif
  }
  return {};
}

bool complete(const std::vector<Device>& devices) {
  return std::all_of(devices.begin(), devices.end(), [](const Device& d) { return d.compute_capability.has_value(); });
}

// Where each fact came from, for one probe.
struct Sources {
  std::string driver_version, cuda_driver, gpus;
};

// The per-fact merge: the first answer for a fact wins; a complete device list (every compute
// capability known) replaces an incomplete one.
class Merger {
 public:
  explicit Merger(Detection& d) : d_(d) {}

  void take(const ProbeResult& r, const Sources& from) {
    if (!r) {
      d_.notes.push_back(r.error().message);
      return;
    }
    if (r->driver_version && !d_.driver_version && !from.driver_version.empty()) {
      d_.driver_version = r->driver_version;
      d_.provenance["driver_version"] = from.driver_version;
    }
    if (r->cuda_driver && !d_.cuda_driver && !from.cuda_driver.empty()) {
      d_.cuda_driver = r->cuda_driver;
      d_.provenance["cuda_driver"] = from.cuda_driver;
    }
    if (r->devices && !devices_complete() && !from.gpus.empty()) {
      if (!devices_ || complete(*r->devices)) {
        devices_ = r->devices;
        d_.provenance["gpus"] = from.gpus;
      }
    }
    d_.notes.insert(d_.notes.end(), r->notes.begin(), r->notes.end());
  }

  [[nodiscard]] bool devices_complete() const { return devices_ && complete(*devices_); }
  [[nodiscard]] bool all_known() const { return d_.driver_version && d_.cuda_driver && devices_complete(); }
  [[nodiscard]] const std::optional<std::vector<Device>>& devices() const { return devices_; }

 private:
  Detection& d_;
  std::optional<std::vector<Device>> devices_;
};

std::string with_path(std::string what, const std::string& path, const std::string& default_path) {
  if (path != default_path) what += " (" + path + ")";
  return what;
}

Sources nvml_sources(const std::string& lib, const std::string& prefix) {
  const std::string def(kNvmlName);
  return {with_path(prefix + "NVML nvmlSystemGetDriverVersion", lib, def),
          with_path(prefix + "NVML nvmlSystemGetCudaDriverVersion_v2", lib, def),
          with_path(prefix + "NVML nvmlDeviceGetCudaComputeCapability", lib, def)};
}

Sources libcuda_sources(const std::string& lib, const std::string& prefix) {
  const std::string def(kCudaName);
  return {"", with_path(prefix + "libcuda cuDriverGetVersion", lib, def),
          with_path(prefix + "libcuda cuDeviceGetAttribute 75/76", lib, def)};
}

Sources smi_sources(const std::string& program, const std::string& prefix) {
  return {prefix + "nvidia-smi --query-gpu driver_version (" + program + ")", "",
          prefix + "nvidia-smi --query-gpu compute_cap (" + program + ")"};
}

std::string describe_pci(const std::vector<PciGpu>& gpus) {
  std::string s;
  for (const auto& g : gpus) {
    if (!s.empty()) s += "; ";
    s += "PCI " + g.address + ", device " + g.device_id;
  }
  return s;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (const auto& p : parts) {
    if (!s.empty()) s += sep;
    s += p;
  }
  return s;
}

}  // namespace

DetectEnv DetectEnv::from_environment() {
  DetectEnv env;
  if (auto v = env_nonempty("WHEELFIT_SYSROOT")) env.sysroot = *v;
  if (auto v = env_nonempty("WHEELFIT_NVML_LIBRARY")) env.nvml_library = *v;
  if (auto v = env_nonempty("WHEELFIT_CUDA_LIBRARY")) env.cuda_library = *v;
  if (auto v = env_nonempty("WHEELFIT_NVIDIA_SMI")) env.nvidia_smi = *v;
#ifdef _WIN32
  env.path = env_value("PATH").value_or("");
#else
  env.path = env_value("PATH").value_or("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
#endif
  env.cuda_visible_devices = env_value("CUDA_VISIBLE_DEVICES");
  if (auto v = env_nonempty("WHEELFIT_PROBE_TIMEOUT_MS")) {
    char* end = nullptr;
    long ms = std::strtol(v->c_str(), &end, 10);
    if (end && *end == '\0' && ms >= 1 && ms <= 600000) env.timeout = std::chrono::milliseconds(ms);
  }
  return env;
}

fs::path DetectEnv::host_path(std::string_view absolute) const {
  if (sysroot.empty()) return fs::path(absolute);
  auto rel = absolute;
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  return sysroot / fs::path(rel);
}

std::optional<std::vector<std::string>> Detection::gpus() const {
  if (!devices || !complete(*devices)) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(devices->size());
  for (const auto& d : *devices) out.push_back(*d.compute_capability);
  return out;
}

namespace {

// The library and tool paths probes 1-3 have tried.
struct Tried {
  std::vector<std::string> nvml, cuda, smi;
};

bool tried(const std::vector<std::string>& v, const std::string& p) { return std::find(v.begin(), v.end(), p) != v.end(); }

// 6. WSL: probes 1-3 again with the driver files Windows mounts into the distribution, for what
// is still open. Whether it was they that found the driver's version (a Windows driver's numbers).
bool probe_wsl_mounts(const DetectEnv& env, Detection& d, Merger& merge, const Tried& before) {
  auto wsl = find_wsl(env);
  if (!wsl) {
    d.notes.push_back(wsl.error().message);
    return false;
  }
  bool had_driver = d.driver_version.has_value();
  if (!wsl->nvml_library.empty() && !tried(before.nvml, wsl->nvml_library) && !merge.all_known()) {
    merge.take(probe_nvml(wsl->nvml_library, env.timeout), nvml_sources(wsl->nvml_library, "WSL "));
  }
  if (!wsl->cuda_library.empty() && !tried(before.cuda, wsl->cuda_library) &&
      (!d.cuda_driver || !merge.devices_complete())) {
    merge.take(probe_libcuda(wsl->cuda_library, env.timeout), libcuda_sources(wsl->cuda_library, "WSL "));
  }
  if (!wsl->nvidia_smi.empty() && !tried(before.smi, wsl->nvidia_smi) &&
      (!d.driver_version || !merge.devices_complete())) {
    merge.take(probe_nvidia_smi(wsl->nvidia_smi, env.timeout), smi_sources(wsl->nvidia_smi, "WSL "));
  }
  return !had_driver && d.driver_version.has_value();
}

// The newest CUDA the driver supports, from the table, when no library said.
void cuda_from_driver_table(Detection& d, [[maybe_unused]] bool wsl_driver) {
  if (!d.driver_version || d.cuda_driver) return;
#ifdef _WIN32
  const auto os = DriverOs::windows_os;  // a Windows driver's version numbers
#else
  auto os = wsl_driver ? DriverOs::windows_os : DriverOs::linux_os;
#endif
  if (auto cuda = max_cuda_for_driver(*d.driver_version, os)) {
    std::string floor;
    for (const auto& row : driver_table()) {
      if (row.cuda == *cuda) floor = std::string(os == DriverOs::windows_os ? row.windows_driver : row.linux_driver);
    }
    d.cuda_driver = cuda;
    d.provenance["cuda_driver"] = "driver table: driver " + *d.driver_version + " >= " + floor + " (" +
                                  (os == DriverOs::windows_os ? "Windows" : "Linux") + ") supports CUDA " + *cuda +
                                  " (NVIDIA CUDA toolkit release notes)";
  } else {
    d.notes.push_back("driver table: driver " + *d.driver_version + " is older than every row (CUDA " +
                      std::string(driver_table().back().cuda) + " needs >= " +
                      std::string(driver_table().back().linux_driver) + ")");
  }
}

// 7. PCI: is there NVIDIA hardware at all, when no probe listed devices? Whether there is.
bool probe_pci_presence(const DetectEnv& env, Detection& d) {
  auto pci = probe_pci(env);
  if (!pci) {
    d.notes.push_back(pci.error().message);
    return false;
  }
  if (pci->empty()) {
    d.notes.push_back("PCI: no NVIDIA GPU on the PCI bus");
    return false;
  }
  auto where = describe_pci(*pci);
  if (!d.driver_version && !d.cuda_driver) {
    d.no_usable_driver = std::string(pci->size() == 1 ? "an NVIDIA GPU is" : "NVIDIA GPUs are") + " present (" +
                         where + ") but no usable driver was found: " + join(d.notes, "; ");
  } else {
    d.notes.push_back("PCI: NVIDIA GPU(s) present (" + where +
                      ") but no probe could list them with their compute capability");
  }
  return true;
}

// CUDA_VISIBLE_DEVICES, on the device list `all` in NVML index order.
void apply_visible(const DetectEnv& env, Detection& d, const std::vector<Device>& all) {
  auto visible = apply_visible_devices(all, env.cuda_visible_devices);
  d.devices = std::move(visible.devices);
  if (!visible.note.empty()) {
    d.notes.push_back(visible.note);
    if (d.provenance.contains("gpus")) d.provenance["gpus"] += " + CUDA_VISIBLE_DEVICES";
  }
  if (!complete(*d.devices)) {
    d.notes.push_back("gpus: the compute capability of a visible GPU could not be read, so the GPU list is unknown");
    d.provenance.erase("gpus");
  }
}

}  // namespace

Detection detect(const DetectEnv& env) {
  Detection d;
  Merger merge(d);
  Tried tried;

  // 1. NVML
  merge.take(probe_nvml(env.nvml_library, env.timeout), nvml_sources(env.nvml_library, ""));
  tried.nvml.push_back(env.nvml_library);
  // 2. libcuda: only what NVML left open (it cannot tell the driver version).
  if (!d.cuda_driver || !merge.devices_complete()) {
    merge.take(probe_libcuda(env.cuda_library, env.timeout), libcuda_sources(env.cuda_library, ""));
    tried.cuda.push_back(env.cuda_library);
  }
  // 3. nvidia-smi
  if (!d.driver_version || !merge.devices_complete()) {
    std::string smi = env.nvidia_smi.empty() ? find_on_path(kSmiName, env.path) : env.nvidia_smi;
    merge.take(probe_nvidia_smi(smi, env.timeout), smi_sources(smi, ""));
    tried.smi.push_back(smi);
  }
  // 4, 5. the kernel module's version files
  if (!d.driver_version) merge.take(probe_proc_driver_version(env), {"/proc/driver/nvidia/version", "", ""});
  if (!d.driver_version) merge.take(probe_sys_module_version(env), {"/sys/module/nvidia/version", "", ""});
  // 6. WSL (not for the CUDA version alone: the driver table below answers that).
  bool wsl_driver = false;
  if (!d.driver_version || !merge.devices_complete()) wsl_driver = probe_wsl_mounts(env, d, merge, tried);
  cuda_from_driver_table(d, wsl_driver);
  // 7. PCI
  const bool pci_present = !merge.devices() && probe_pci_presence(env, d);
  if (const auto& all = merge.devices()) apply_visible(env, d, *all);
  d.present = pci_present || d.driver_version.has_value() || (merge.devices() && !merge.devices()->empty());
  return d;
}

std::string to_json(const Detection& d) {
  namespace json = boost::json;
  json::object o;
  o["present"] = d.present;
  json::object facts, provenance;
  // `key` in the payload (plugin_abi.h), `own` in this backend's provenance.
  auto fact = [&](const char* key, const char* own, const std::optional<std::string>& v) {
    if (!v) return;
    facts[key] = *v;
    if (auto it = d.provenance.find(own); it != d.provenance.end()) provenance[key] = it->second;
  };
  fact("driver_version", "driver_version", d.driver_version);
  fact("driver_line", "cuda_driver", d.cuda_driver);
  if (auto gpus = d.gpus()) {
    json::array a;
    for (const auto& g : *gpus) a.emplace_back(g);
    facts["gpus"] = std::move(a);
    if (auto it = d.provenance.find("gpus"); it != d.provenance.end()) provenance["gpus"] = it->second;
  }
  o["facts"] = std::move(facts);
  o["provenance"] = std::move(provenance);
  json::array devices;
  if (d.devices) {
    for (const auto& dev : *d.devices) {
      json::object e;
      e["index"] = dev.index;
      e["name"] = dev.name;
      if (dev.compute_capability) e["target"] = *dev.compute_capability;
      e["uuid"] = dev.uuid;
      devices.emplace_back(std::move(e));
    }
  }
  o["devices"] = std::move(devices);
  json::array notes;
  for (const auto& n : d.notes) notes.emplace_back(n);
  if (!d.no_usable_driver.empty()) notes.emplace_back(d.no_usable_driver);
  o["notes"] = std::move(notes);
  return json::serialize(o);
}

std::string detect_json() noexcept {
  try {
    return to_json(detect(DetectEnv::from_environment()));
  } catch (const std::exception& e) {
    try {
      boost::json::object o;
      o["present"] = false;
      o["facts"] = boost::json::object();
      o["error"] = std::string("CUDA detection failed: ") + e.what();
      return boost::json::serialize(o);
    } catch (...) {
    }
  } catch (...) {
  }
  try {
    return R"({"present": false, "facts": {}, "error": "CUDA detection failed"})";
  } catch (...) {
    return {};
  }
}

}  // namespace wheelfit::backends::cuda
