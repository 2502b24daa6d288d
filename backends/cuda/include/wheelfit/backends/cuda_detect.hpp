#pragma once
// CUDA detection: the NVIDIA driver version, the newest CUDA the driver supports and every
// visible GPU's compute capability, each with the probe that answered it.
//
// Probes, in this fixed order (one small function each, below); a probe runs only while a fact
// it can give is still unknown, and the first answer for a fact wins:
//   1. NVML     dlopen libnvidia-ml.so.1 in a child process   driver, CUDA, GPUs
//   2. libcuda  dlopen libcuda.so.1 in a child process        CUDA, GPUs
//   3. nvidia-smi --query-gpu=... --format=csv,noheader       driver, GPUs (never the banner)
//   4. /proc/driver/nvidia/version                            driver
//   5. /sys/module/nvidia/version                             driver
//   6. WSL: probes 1-3 again with the libraries and nvidia-smi of /usr/lib/wsl/lib/
//   7. PCI: /sys/bus/pci/devices/*/{vendor,class,device}      presence only
// When the driver version is known and no probe gave the CUDA version, it is derived from
// driver_table() (provenance "driver table ..."). CUDA_VISIBLE_DEVICES is applied last, to the
// device list in the NVML / nvidia-smi index space (PCI bus order).
//
// No GPU or no driver is a result, not an error: `present` is false (or true with
// `no_usable_driver` explaining why nothing answered) and `notes` says why each probe that ran
// could not answer. Vendor libraries are loaded only in forked children that are killed after
// the timeout, so a hanging or crashing driver cannot take the caller down; the calling process
// never dlopens a vendor library.
//
// Thread safety: detect() forks and reads files; it is reentrant, but call it when no other
// thread changes the environment, and preferably before the process starts threads (the child
// calls dlopen after fork). DetectEnv::from_environment() reads the process environment.

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::backends::cuda {

/// One GPU as a probe lists it.
struct Device {
  int index = 0;     ///< NVML / nvidia-smi index (PCI bus order), before CUDA_VISIBLE_DEVICES
  std::string name;  ///< "NVIDIA H100 80GB HBM3"; "" when unknown
  std::optional<std::string> compute_capability;  ///< "9.0"; nullopt when the probe could not read it
  std::string uuid;                    ///< "GPU-8932f937-..."; "" when unknown
  std::vector<std::string> mig_uuids;  ///< its MIG instances ("MIG-..."), when the probe lists them

  friend bool operator==(const Device&, const Device&) = default;
};

/// What one probe answered; nullopt = this probe does not know the fact.
struct ProbeFacts {
  std::optional<std::string> driver_version;  ///< "580.65.06"
  std::optional<std::string> cuda_driver;     ///< "13.0"
  std::optional<std::vector<Device>> devices;  ///< the probe's whole device list (may be empty)
  std::vector<std::string> notes;              ///< remarks on a partial answer
};

/// A probe's answer, or an Error whose message says why it could not answer (the note).
using ProbeResult = Expected<ProbeFacts>;

/// Where the probes look. from_environment() honours the overrides; tests build one directly.
struct DetectEnv {
  /// Prefixes every sysfs / proc / WSL path the probes read ("" = the real root).
  std::filesystem::path sysroot;
#ifdef _WIN32
  std::string nvml_library = "nvml.dll";    ///< a name (System32, then NVSMI) or a path
  std::string cuda_library = "nvcuda.dll";  ///< a name (System32) or a path
#else
  std::string nvml_library = "libnvidia-ml.so.1";  ///< a soname (dlopen searches) or a path
  std::string cuda_library = "libcuda.so.1";
#endif
  std::string nvidia_smi;                           ///< a path; "" = search `path` for nvidia-smi
  std::string path;                                 ///< the PATH searched for nvidia-smi
  std::optional<std::string> cuda_visible_devices;  ///< nullopt = unset (every GPU visible)
  std::chrono::milliseconds timeout{5000};          ///< per probe (child process)

  /// Reads WHEELFIT_SYSROOT, WHEELFIT_NVML_LIBRARY, WHEELFIT_CUDA_LIBRARY, WHEELFIT_NVIDIA_SMI,
  /// PATH, CUDA_VISIBLE_DEVICES and WHEELFIT_PROBE_TIMEOUT_MS (milliseconds, 1..600000; other
  /// values are ignored). Empty values count as unset, except CUDA_VISIBLE_DEVICES ("" = no GPU).
  static DetectEnv from_environment();
  /// `absolute` ("/proc/driver/nvidia/version") under the sysroot.
  [[nodiscard]] std::filesystem::path host_path(std::string_view absolute) const;
};

/// The result of detect(): plain data with provenance.
struct Detection {
  bool present = false;                       ///< NVIDIA hardware or an NVIDIA driver was found
  std::optional<std::string> driver_version;  ///< "580.65.06"
  std::optional<std::string> cuda_driver;     ///< newest CUDA the driver supports, "13.0"
  /// The visible GPUs in CUDA order (CUDA_VISIBLE_DEVICES applied); nullopt = unknown.
  std::optional<std::vector<Device>> devices;
  /// "driver_version" | "cuda_driver" | "gpus" -> the probe that answered it.
  std::map<std::string, std::string> provenance;
  /// Why each probe that ran did not answer, then remarks (CUDA_VISIBLE_DEVICES, partial answers).
  std::vector<std::string> notes;
  /// Set when the PCI bus shows an NVIDIA GPU but no probe found a usable driver: "an NVIDIA GPU
  /// is present (PCI 0000:01:00.0, device 0x2330) but no usable driver was found: <why>".
  std::string no_usable_driver;

  /// The visible GPUs' compute capabilities, or nullopt when the list is unknown or any of them
  /// could not be read (an incomplete list would under-state what wheels must cover).
  [[nodiscard]] std::optional<std::vector<std::string>> gpus() const;
};

/// Runs the probes in order (see the top of this file). Never fails: what could not be found is
/// absent, with a note. May throw only std::bad_alloc.
[[nodiscard]] Detection detect(const DetectEnv& env);

/// The detection as the plugin ABI's detect JSON (registry/plugin_abi.h): present, facts
/// (driver_version, driver_line (from cuda_driver), gpus; each only when known), provenance, devices
/// [{index, name, target, uuid}] (target omitted when unknown), notes (no_usable_driver last).
[[nodiscard]] std::string to_json(const Detection& d);

/// detect(DetectEnv::from_environment()) as JSON. Never throws: a failure of detection itself
/// is reported as {"present": false, "error": "..."}.
[[nodiscard]] std::string detect_json() noexcept;

// ---- the probes (each returns facts or an Error whose message is the note) ----

/// 1. NVML in a child process: driver, CUDA (nvmlSystemGetCudaDriverVersion_v2), GPUs.
[[nodiscard]] ProbeResult probe_nvml(const std::string& library, std::chrono::milliseconds timeout);
/// 2. libcuda in a child process (CUDA_VISIBLE_DEVICES unset and CUDA_DEVICE_ORDER=PCI_BUS_ID
/// there, so its ordinals are the NVML indices): CUDA (cuDriverGetVersion), GPUs.
[[nodiscard]] ProbeResult probe_libcuda(const std::string& library, std::chrono::milliseconds timeout);
/// 3. `program --query-gpu=index,name,uuid,compute_cap,driver_version --format=csv,noheader`;
/// retried without compute_cap when the driver's nvidia-smi does not know that field (< R510).
[[nodiscard]] ProbeResult probe_nvidia_smi(const std::string& program, std::chrono::milliseconds timeout);
/// 4. The driver version from <sysroot>/proc/driver/nvidia/version.
[[nodiscard]] ProbeResult probe_proc_driver_version(const DetectEnv& env);
/// 5. The driver version from <sysroot>/sys/module/nvidia/version.
[[nodiscard]] ProbeResult probe_sys_module_version(const DetectEnv& env);

/// 6. WSL's driver files under <sysroot>/usr/lib/wsl/lib/ (each "" when absent there).
struct WslPaths {
  std::string nvml_library, cuda_library, nvidia_smi;
};
/// not_found when the folder holds none of libnvidia-ml.so.1, libcuda.so.1, nvidia-smi.
[[nodiscard]] Expected<WslPaths> find_wsl(const DetectEnv& env);

/// 7. NVIDIA display controllers (vendor 0x10de, class 0x03xxxx) on the PCI bus.
struct PciGpu {
  std::string address;    ///< "0000:01:00.0"
  std::string device_id;  ///< "0x2330"
};
/// The GPUs found (possibly none); an Error when the PCI folder cannot be read.
[[nodiscard]] Expected<std::vector<PciGpu>> probe_pci(const DetectEnv& env);

// ---- the parsers and tables the probes use (pure functions) ----

/// Parses `--format=csv,noheader` output of the query above (5 columns, or 4 without
/// compute_cap). Names may contain commas (nvidia-smi does not quote): the first column is the
/// index, the last 3 (or 2) are fixed and the name is what lies between. "[N/A]", "[Not
/// Supported]" and other bracketed values are unknown. Blank lines are skipped; other bad lines
/// are skipped with a note. invalid_input when no line is a GPU and some line was not blank.
[[nodiscard]] ProbeResult parse_nvidia_smi_csv(std::string_view text, bool with_compute_cap = true);
/// The driver version from /proc/driver/nvidia/version text (the "NVRM version:" line, both the
/// proprietary and the open kernel module forms). invalid_input for anything else.
[[nodiscard]] Expected<std::string> parse_proc_driver_version(std::string_view text);
/// True for "580.65.06", "570.26", "455.23": 2 to 4 dotted numbers.
[[nodiscard]] bool is_driver_version(std::string_view text) noexcept;
/// NVML / libcuda's integer CUDA version: 12080 -> "12.8", 13000 -> "13.0"; nullopt for <= 0.
[[nodiscard]] std::optional<std::string> cuda_version_text(int version);

/// CUDA_VISIBLE_DEVICES applied to a device list in NVML index order, as CUDA does: a
/// comma-separated list of indices, "GPU-<uuid prefix>" or "MIG-<uuid prefix>" entries; the
/// result is in list order; "" hides every GPU; the first invalid entry (not a number, out of
/// range, no or several matching GPUs, a repeated GPU) ends the list. Spaces around entries are
/// ignored. A MIG entry selects its parent GPU; when the devices carry no MIG UUIDs it cannot be
/// matched and every GPU is kept (an unmatched MIG entry is a lack of information, not an error).
struct VisibleDevices {
  std::vector<Device> devices;
  std::string note;  ///< what was applied, "" when `value` is nullopt
};
[[nodiscard]] VisibleDevices apply_visible_devices(const std::vector<Device>& devices,
                                                   const std::optional<std::string>& value);

/// One row of NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" table (CUDA toolkit
/// release notes): the minimum driver of each toolkit minor's first (GA) release.
struct DriverFloor {
  std::string_view cuda;     ///< "12.8"
  std::string_view linux_driver;    ///< ">= 570.26" on Linux x86_64
  std::string_view windows_driver;  ///< on Windows (the version WSL reports)
};
/// Newest first.
[[nodiscard]] std::span<const DriverFloor> driver_table() noexcept;
enum class DriverOs { linux_os, windows_os };
/// The newest CUDA in driver_table() whose floor `driver` meets; nullopt when the driver is older
/// than every row or is not a driver version. A driver newer than the newest row gets that row
/// (a lower bound: the table lags new releases).
[[nodiscard]] std::optional<std::string> max_cuda_for_driver(std::string_view driver, DriverOs os);

}  // namespace wheelfit::backends::cuda
