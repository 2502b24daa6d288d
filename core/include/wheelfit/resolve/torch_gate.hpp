#pragma once
// Does this torch run on this machine's GPUs? The backend's one coverage rule (DeviceRules::match,
// the same that judges every wheel) applied to the targets PyTorch built torch itself for: a
// combo whose torch has no kernels for one of the GPUs cannot run anything on it, whatever its
// extension wheels cover (issue 32; docs/decisions/0026-torch-judged-against-the-gpus.md).
//
// Where the list comes from, best first: the installed torch's own library (its device code read
// by the backend), then the policy's torch arch matrix (Policy::torch_archs). A row the policy
// lacks is unknown: never guessed, and never a reason to set a combo aside.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/model/combo.hpp"
#include "wheelfit/semantics/policy.hpp"

namespace wheelfit::resolve {

/// The targets one torch build was compiled for, and where that was read.
struct TorchArchs {
  std::string list;  ///< canonical target list (the backend's grammar), what DeviceRules::match judges
  /// The list by kind when the backend describes it ("sass": ["sm_90"], "ptx": ["compute_90"]);
  /// empty when it does not.
  std::vector<std::pair<std::string, std::vector<std::string>>> entries;
  std::string source;  ///< "PyTorch's build of torch 2.8 for CUDA 12.6 on linux (<row source>, <date>)"
};

/// The policy's row for `combo` (torch minor, line) on farm platform `platform`, described by the
/// backend's rules; nullopt when the policy has no such row.
[[nodiscard]] std::optional<TorchArchs> torch_archs_from_policy(const semantics::Policy& policy, const model::Combo& combo,
                                                                std::string_view platform);

struct TorchVerdict {
  enum class Status { runs, cannot_run, unknown } status = Status::unknown;
  std::optional<TorchArchs> archs;      ///< the list judged (nullopt: none known)
  std::vector<std::string> uncovered;   ///< cannot_run: the canonical targets no entry serves, in machine order
  std::string why_unknown;              ///< unknown: why ("no arch list is known for ...", "the GPUs are unknown")
  [[nodiscard]] bool cannot_run() const noexcept { return status == Status::cannot_run; }
};

/// Judges `archs` on every one of `targets` (canonical device targets; nullopt: unknown) by the
/// policy's rules. Unknown when the list, the targets or the rules are; runs with no GPU at all.
/// A list the rules refuse is unknown, with the rules' reason.
[[nodiscard]] TorchVerdict judge_torch(const semantics::Policy& policy, std::optional<TorchArchs> archs,
                                       const std::optional<std::vector<std::string>>& targets);

/// Why a verdict that cannot run cannot: "torch cannot run on sm 12.0: <its list's source> targets
/// 5.0;6.0;7.0;7.5;8.0;8.6;9.0" (the uncovered targets after `device_prefix`, as verdicts write them).
[[nodiscard]] std::string cannot_run_text(std::string_view device_prefix, const TorchVerdict& v);

}  // namespace wheelfit::resolve
