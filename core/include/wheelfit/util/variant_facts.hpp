#pragma once
// The machine facts a backend's native variant provider reads (plugin_abi.h, variant_properties):
// the facts JSON read into plain data, its shape checked. The values' grammar (a compute
// capability, a gfx target, a version) is the backend's to check. Shared by the backends so each
// reads the same keys the same way.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// The facts of plugin_abi.h's variant_properties; nullopt: unknown (the key absent or null).
struct VariantFacts {
  std::optional<std::string> driver_version;    ///< "570.86.15"
  std::optional<std::string> driver_line;       ///< "12.8": the driver's CUDA version, a ROCm line
  std::optional<std::vector<std::string>> gpus;  ///< canonical device targets; empty: no GPU
};

/// Reads `{"driver_version": "...", "driver_line": "...", "gpus": ["...", ...]}`: every key
/// optional, null the same as absent, other keys ignored (a later ABI may add facts). Fails
/// (Errc::invalid_input) on text that is not a JSON object, or a key that holds the wrong kind of
/// value, naming the key and what it holds.
[[nodiscard]] Expected<VariantFacts> read_variant_facts(std::string_view json);

}  // namespace wheelfit::util
