#pragma once
// The CUDA backend's device rules (what the plugin's target functions answer, plugin_abi.h):
// compute capabilities as device targets, TORCH_CUDA_ARCH_LIST syntax as target lists, and the
// coverage rule of SASS and PTX (policies/README.md). Also the backend's descriptor, for the plugin
// entry and for tests that want the CUDA backend in-process.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/registry/plugin_abi.h"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::backends::cuda {

/// One target of an arch list: "8.6" (SASS sm_86) or "9.0+PTX" (SASS sm_90 plus PTX compute_90).
/// Arch-specific ("9.0a") and family-specific ("10.0f") targets carry their letter in `variant`.
/// `sass = false` is PTX alone ("8.0ptx"), which only binaries carry (a module with compute_80
/// and no sm_80); TORCH_CUDA_ARCH_LIST cannot say it.
struct ArchTarget {
  model::NumericVersion cc;  ///< compute capability, major.minor
  bool ptx = false;
  char variant = '\0';      ///< '\0' (plain), 'a' (runs on exactly cc) or 'f' (cc's major, minor >= cc's)
  bool sass = true;
};

/// How an arch list serves one GPU: the target whose code runs there, and whether that is the
/// driver JIT-compiling the target's PTX (slow first launch) rather than a cubin (SASS).
struct ArchMatch {
  ArchTarget target;
  bool jit = false;
};

class ArchList {
 public:
  ArchList() = default;
  explicit ArchList(std::vector<ArchTarget> targets) : targets_(std::move(targets)) {}
  /// Parses TORCH_CUDA_ARCH_LIST syntax: targets separated by ';' and/or whitespace, each
  /// "X.Y" with an optional "a"/"f" letter and an optional "+PTX" (case-insensitive); also
  /// "X.Yptx" (PTX only). Empty lists and bad entries are Errc::invalid_input quoting the text.
  static Expected<ArchList> parse(std::string_view text);

  /// The CUDA coverage rule: SASS for X.Y runs on X.Z with Z >= Y (same major only); PTX for
  /// X.Y is JIT-compiled for any later arch (any cc >= X.Y). Arch-specific targets ("9.0a") run
  /// on exactly X.Y, family-specific ones ("10.0f") on X.Z with Z >= Y, PTX included (no JIT
  /// forward). Only the GPU's major.minor is looked at ("8.6.1" is 8.6).
  [[nodiscard]] bool covers(const model::NumericVersion& gpu_cc) const { return match(gpu_cc).has_value(); }
  /// The target that serves `gpu_cc`: the highest matching SASS target, else the highest PTX
  /// target at or below it (jit = true); nullopt when nothing runs there.
  [[nodiscard]] std::optional<ArchMatch> match(const model::NumericVersion& gpu_cc) const;
  [[nodiscard]] const std::vector<ArchTarget>& targets() const noexcept { return targets_; }
  /// "7.5;8.0;8.6;9.0+PTX" (canonical: ';'-separated, "+PTX" upper-case, in the list's order).
  [[nodiscard]] std::string str() const;

 private:
  std::vector<ArchTarget> targets_;
};

/// One compute capability: "9.0", "sm_90", "sm90" (-> 9.0), "sm_100" (-> 10.0); "9" is refused.
Expected<model::NumericVersion> parse_compute_capability(std::string_view text);

/// The CUDA backend's descriptor (the plugin's entry returns it).
const wheelfit_backend_v2* descriptor();

}  // namespace wheelfit::backends::cuda
