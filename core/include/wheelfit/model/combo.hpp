#pragma once
// A combo: the (CUDA line, torch major.minor) pair a compiled wheel is bound to, as written in
// its local version label. Forms accepted (PEP 440 local labels are case-insensitive):
//   "cu128torch2.8"   current farm form         -> (12.8, 2.8)
//   "pt2.8cu128"      torch first               -> (12.8, 2.8)
//   "cu128torch28"    legacy dot-less torch     -> (12.8, 2.8)
//   "cu124torch210"   legacy dot-less torch     -> (12.4, 2.10)
// CUDA tags: the last digit is the minor ("cu118" -> 11.8, "cu130" -> 13.0, "cu92" -> 9.2).
// Dot-less torch tags: the first digit is the major ("torch210" -> 2.10).

#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/model/numeric_version.hpp"

namespace wheelfit::model {

struct Combo {
  NumericVersion cuda;   ///< major.minor, e.g. 12.8
  NumericVersion torch;  ///< major.minor, e.g. 2.8

  /// "cu12.8/torch2.8", the form reports use.
  [[nodiscard]] std::string str() const;
  friend bool operator==(const Combo& a, const Combo& b) noexcept { return a.cuda == b.cuda && a.torch == b.torch; }
};

/// Parses a local version label (a leading '+' is optional); nullopt when it names no combo.
std::optional<Combo> parse_combo_label(std::string_view local_label);

/// "cu128" -> 12.8; nullopt unless the text is "cu" followed by 2 or 3 digits.
std::optional<NumericVersion> parse_cuda_tag(std::string_view tag);

/// The accelerator a torch build's local label names: "+cu128" -> ("cuda", 12.8),
/// "+rocm6.3" -> ("rocm", 6.3), "+cpu" -> ("cpu", empty); nullopt when there is no label or
/// the label names none of these. The leading '+' is optional; for CUDA only the first
/// '.'-segment counts ("cu121.with.pypi.cudnn" -> ("cuda", 12.1)).
struct TorchBuild {
  std::string backend;       ///< "cuda", "rocm" or "cpu"
  NumericVersion line;       ///< the CUDA or ROCm line; empty for cpu
};
std::optional<TorchBuild> parse_torch_label(std::string_view local_label);

}  // namespace wheelfit::model
