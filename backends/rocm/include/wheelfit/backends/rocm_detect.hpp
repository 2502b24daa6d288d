#pragma once
// ROCm detection: every visible AMD GPU's gfx target and the amdgpu driver version, each with
// the probe that answered it. A stub that is honest: no ROCm wheel index exists yet, but the
// machine is described exactly, so a resolve can say what it found and why it stops.
//
// Probes, in this fixed order (one small function each, below):
//   1. KFD topology  <sysroot>/sys/class/kfd/kfd/topology/nodes/*/properties   GPUs (gfx targets)
//                    every node, in numeric order; gfx_target_version 0 is a CPU node (skipped);
//                    a node's display name comes from its `name` file when present
//   2. amdgpu        <sysroot>/sys/module/amdgpu/version                        driver version
//                    (only DKMS builds of amdgpu publish it; the in-kernel driver does not)
//   3. PCI           <sysroot>/sys/bus/pci/devices/*/{vendor,class}             presence only,
//                    run only when KFD is absent: "an AMD GPU is on the bus but amdgpu is not loaded"
// ROCR_VISIBLE_DEVICES and then HIP_VISIBLE_DEVICES (comma-separated indices) are applied to the
// KFD GPU list, as the ROCm runtime does.
//
// No AMD GPU or no driver is a result, not an error: `present` is false and `notes` says why.
// Nothing here loads a vendor library: it only reads sysfs files.
//
// Thread safety: detect() only reads files; it is reentrant. DetectEnv::from_environment() and
// detect_json() read the process environment, which other threads must not change meanwhile.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::backends::rocm {

/// One visible GPU.
struct Device {
  int index = 0;       ///< the index the ROCm runtime gives it (after the *_VISIBLE_DEVICES lists)
  std::string node;    ///< the KFD topology node folder ("1")
  std::string name;    ///< the node's `name` file ("gfx90a", or a marketing name); "" when absent
  std::string target;  ///< "gfx90a"

  friend bool operator==(const Device&, const Device&) = default;
};

/// Where the probes look. from_environment() honours the overrides; tests build one directly.
struct DetectEnv {
  /// Prefixes every sysfs path the probes read ("" = the real root).
  std::filesystem::path sysroot;
  std::optional<std::string> rocr_visible_devices;  ///< nullopt = unset (every GPU visible)
  std::optional<std::string> hip_visible_devices;   ///< nullopt = unset

  /// Reads WHEELFIT_SYSROOT (empty = unset), ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES
  /// ("" = no GPU visible, as the runtime reads it).
  static DetectEnv from_environment();
  /// `absolute` ("/sys/module/amdgpu/version") under the sysroot.
  [[nodiscard]] std::filesystem::path host_path(std::string_view absolute) const;
};

/// The result of detect(): plain data with provenance.
struct Detection {
  bool present = false;                       ///< a KFD GPU node was found (visible or not)
  std::optional<std::string> driver_version;  ///< amdgpu "6.8.5"; nullopt = unknown
  /// The visible GPUs in runtime order; nullopt = unknown (no KFD topology to read).
  std::optional<std::vector<Device>> devices;
  /// "driver_version" | "gpus" -> the probe that answered it.
  std::map<std::string, std::string> provenance;
  /// Why each probe did not answer, skipped nodes, what the *_VISIBLE_DEVICES lists did.
  std::vector<std::string> notes;
};

/// Runs the probes in order. Never fails: what could not be found is absent, with a note.
/// May throw only std::bad_alloc.
[[nodiscard]] Detection detect(const DetectEnv& env);

/// The detection as the plugin ABI's detect JSON (registry/plugin_abi.h): present, facts
/// {driver_version, gpus: ["gfx90a", ...]} (each only when known), provenance, devices
/// [{index, name, target, node}], notes.
[[nodiscard]] std::string to_json(const Detection& d);

/// detect(DetectEnv::from_environment()) as JSON. Never throws: a failure of detection itself
/// is reported as {"present": false, "error": "..."}.
[[nodiscard]] std::string detect_json() noexcept;

// ---- the probes ----

/// One KFD topology node as read from its folder.
struct KfdNode {
  std::string node;                       ///< folder name ("0", "1", ...)
  std::uint64_t gfx_target_version = 0;   ///< 0 = a CPU node
  std::string name;                       ///< the `name` file, trimmed; "" when absent
};
/// 1. Every node under <sysroot>/sys/class/kfd/kfd/topology/nodes in numeric order, CPU nodes
/// included. A node whose properties are missing or malformed is left out with a note in
/// `notes`. Errc::not_found when the nodes folder does not exist (amdgpu/KFD not loaded).
[[nodiscard]] Expected<std::vector<KfdNode>> probe_kfd(const DetectEnv& env, std::vector<std::string>& notes);
/// 2. The amdgpu module version. Errc::not_found (with the reason) when absent.
[[nodiscard]] Expected<std::string> probe_amdgpu_version(const DetectEnv& env);
/// 3. AMD display controllers (vendor 0x1002, class 0x03xxxx) on the PCI bus: their addresses.
[[nodiscard]] Expected<std::vector<std::string>> probe_pci(const DetectEnv& env);

// ---- pure functions ----

/// The gfx_target_version from a KFD `properties` text ("key value" lines). Errc::invalid_input
/// when the line is missing or its value is not a decimal number.
[[nodiscard]] Expected<std::uint64_t> parse_gfx_target_version(std::string_view properties);

/// "gfx%d%x%x" of major = v / 10000, minor = (v / 100) % 100, stepping = v % 100:
/// 90010 -> "gfx90a", 110000 -> "gfx1100", 90402 -> "gfx942". Errc::invalid_input for 0 (a CPU
/// node has no target) and when minor or stepping is over 15 (not one hex digit).
[[nodiscard]] Expected<std::string> gfx_target_name(std::uint64_t gfx_target_version);

/// ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES applied to `devices` (indices renumbered from 0):
/// comma-separated indices in list order; "" hides every GPU; the first entry that is out of
/// range, repeats one or is not a number ends the list (as the runtime does), except a
/// "GPU-<uuid>" entry: KFD does not give the UUIDs here, so every GPU is kept (a lack of
/// information, not an error). Spaces around entries are ignored. `name` is the variable, for
/// the note.
struct VisibleDevices {
  std::vector<Device> devices;
  std::string note;  ///< what was applied, "" when `value` is nullopt
};
[[nodiscard]] VisibleDevices apply_visible_devices(const std::vector<Device>& devices, std::string_view name,
                                                   const std::optional<std::string>& value);

}  // namespace wheelfit::backends::rocm
