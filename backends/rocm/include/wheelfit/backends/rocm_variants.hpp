#pragma once
// The ROCm backend's native PEP 825 variant provider (plugin_abi.h, variant_properties): the
// `amd` namespace as AMD's provider computes it, from the machine's facts instead of rocminfo.
// The rules are those of wheelnext/amd-variant-provider (amd_variant_provider/plugin.py,
// AMDVariantPlugin.get_supported_configs, and detect_rocm.py; commit 4d985a9).
//
// Features, in AMD's priority order:
//   gfx_arch      the GPUs' processors, each once, sorted as strings ("gfx1100" before "gfx90a"),
//                 target features dropped ("gfx90a:xnack-" is gfx90a: AMD's detection matches
//                 gfx\d+[0-9a-f]*); a multi-value feature
//   rocm_version  the ROCm line's major.minor, the one value ("6.2.4" -> "6.2")
// A ROCm machine's ROCm line is its driver_line. wheelfit adds, per GPU target, the gfx_arch
// value that serves it (the core demands every GPU be served, where a multi-value property is
// supported when any GPU has it).
//
// Pure functions: reentrant and thread-safe; only std::bad_alloc can escape.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::backends::rocm {

/// What the `amd` namespace supports on one machine.
struct AmdVariants {
  std::vector<plugin::VariantFeature> features;  ///< in AMD's priority order; gfx_arch with devices
  std::vector<std::string> notes;                ///< what was unknown or left out, and why
  std::string error;                             ///< a fact that is malformed; "" when none
};

/// The `amd` namespace for a machine on ROCm line `rocm_line` ("6.4", "6.2.4"; nullopt: unknown)
/// with the GPUs `gpus` (gfx targets as parse_target reads them; nullopt: unknown; empty: none).
/// A line that is not a version or a GPU that is not a device's gfx target sets `error`.
[[nodiscard]] AmdVariants amd_variants(const std::optional<std::string>& rocm_line,
                                       const std::optional<std::vector<std::string>>& gpus);

/// variant_properties (plugin_abi.h): the facts JSON in, the answer JSON out, or {"error": ...}
/// naming what in the facts is malformed.
[[nodiscard]] std::string variant_properties_json(std::string_view facts_json);

}  // namespace wheelfit::backends::rocm
