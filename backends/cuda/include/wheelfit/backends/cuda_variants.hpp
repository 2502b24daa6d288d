#pragma once
// The CUDA backend's native PEP 825 variant provider (plugin_abi.h, variant_properties): the
// `nvidia` namespace as NVIDIA's provider computes it, from the machine's facts instead of NVML.
// The rules and value lists are those of wheelnext/nvidia-variant-provider
// (nvidia_variant_provider/plugin.py, NvidiaVariantPlugin.get_supported_configs, commit ffea5d3)
// and of its declarative successor wheelnext/nvidia-variant-provider2 (json/nvidia.json, whose
// replay cases tests/backends/cuda/test_cuda_variants.cpp reuses; tests/data/variants/README.md).
//
// Features, in NVIDIA's priority order:
//   cuda_version_lower_bound  the driver's CUDA version and every older one NVIDIA's range knows,
//                             newest first: 12.7 -> 12.7 ... 12.0, 12, 11.20 ... 11.0, 11
//   cuda_version_upper_bound  the versions above the driver's, newest first (an exclusive bound):
//                             12.7 -> 15.20 ... 15.0, 15, 14.20 ... 13, 12.20 ... 12.8
//                             (no "12": the driver's own major is not a bound above it);
//                             left out at 15.20, where it has no value
//   sm_arch                   from the highest GPU X.Y only: XY_real, X(Y-1)_real ... X0_real,
//                             X0_virtual (9.0 -> 90_real, 90_virtual); omitted below sm 5.0
// NVIDIA's range is 11.0 to 15.20 (majors 11-15, minors 0-20); a driver outside it, or an
// unknown one, makes NVIDIA's provider support nothing, sm_arch included. wheelfit adds, per
// GPU, the sm_arch values that serve that GPU by the same rule (the core demands every GPU be
// served, where NVIDIA's provider looks at the highest one only).
//
// Pure functions: reentrant and thread-safe; only std::bad_alloc can escape.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::backends::cuda {

/// NVIDIA's provider's range (plugin.py UMD_MAJOR_RANGE, UMD_MINOR_RANGE; nvidia.json constants).
inline constexpr unsigned kNvidiaMinMajor = 11;
inline constexpr unsigned kNvidiaMaxMajor = 15;
inline constexpr unsigned kNvidiaMaxMinor = 20;
/// The lowest compute capability major NVIDIA's provider gives sm_arch values for.
inline constexpr unsigned kNvidiaMinSmMajor = 5;
/// The highest major of NVIDIA's sm_arch catalog (get_all_configs); higher ones still get values.
inline constexpr unsigned kNvidiaMaxSmMajor = 12;

/// cuda_version_lower_bound's values for a driver of CUDA `line` (major.minor; parts beyond are
/// not looked at), best first.
[[nodiscard]] std::vector<std::string> cuda_lower_bound_values(const model::NumericVersion& line);
/// cuda_version_upper_bound's values for a driver of CUDA `line`, best first.
[[nodiscard]] std::vector<std::string> cuda_upper_bound_values(const model::NumericVersion& line);
/// sm_arch's values for a GPU of compute capability `cc`, best first; empty below sm 5.0.
[[nodiscard]] std::vector<std::string> sm_arch_values(const model::NumericVersion& cc);

/// What the `nvidia` namespace supports on one machine.
struct NvidiaVariants {
  std::vector<plugin::VariantFeature> features;  ///< in NVIDIA's priority order; sm_arch with devices
  std::vector<std::string> notes;                ///< what was unknown or left out, and why
};

/// The `nvidia` namespace for a machine whose driver supports CUDA `driver_line` (nullopt:
/// unknown) with GPUs of compute capabilities `gpus` (nullopt: unknown; empty: none).
[[nodiscard]] NvidiaVariants nvidia_variants(const std::optional<model::NumericVersion>& driver_line,
                                             const std::optional<std::vector<model::NumericVersion>>& gpus);

/// variant_properties (plugin_abi.h): the facts JSON in, the answer JSON out, or {"error": ...}
/// naming what in the facts is malformed (a driver_line or GPU that is not a version).
[[nodiscard]] std::string variant_properties_json(std::string_view facts_json);

}  // namespace wheelfit::backends::cuda
