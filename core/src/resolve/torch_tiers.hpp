#pragma once
// The torch gate as the tiers apply it (decision 0026): a combo whose torch cannot run on every
// GPU of the machine is never used (tier 1's own torch, tier 2, a fresh environment's choice,
// --combo); a combo whose torch's arch list is unknown is used, and the one warning says so. The
// rule itself is judge_torch's (wheelfit/resolve/torch_gate.hpp); this file words its verdicts.
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/resolve/resolver.hpp"
#include "torch_advice.hpp"
#include "wheelfit/resolve/torch_gate.hpp"

namespace wheelfit::resolve::detail {

/// One resolve's torch judgements as the tiers word them (TorchJudge judges). Not thread-safe
/// (one per resolve).
class TorchGate {
 public:
  /// `targets`: the machine's canonical device targets (nullopt: unknown), in the order of
  /// `in.machine.gpus`; `platform`: the farm platform (nullopt: none); `own`: tier 1's combo
  /// (the installed torch's), whose list Inputs::torch_archs gives when set.
  TorchGate(const Inputs& in, TorchJudge& judge, const std::optional<std::vector<std::string>>& targets,
            std::optional<std::string> platform);

  /// The installed torch (version `torch`, of combo `own`) judged on the GPUs; its reason, when
  /// it cannot run, in `reason`.
  TorchVerdict machine(const model::Version& torch, std::string& reason);
  /// Why `combo`'s torch is set aside (it cannot run on every GPU), or "" when it runs or its
  /// list is unknown (then named in unknown_warning()).
  std::string set_aside(const model::Combo& combo);
  /// The one warning naming every torch judged whose arch list is unknown, or "" when none.
  [[nodiscard]] std::string unknown_warning() const;

 private:
  TorchVerdict judge(const model::Combo& combo, const std::string& torch);
  [[nodiscard]] std::string reason(const TorchVerdict& v, const std::string& torch) const;
  [[nodiscard]] std::string gpus_text(const std::vector<std::string>& uncovered) const;

  const Inputs& in_;
  TorchJudge& judge_;  ///< the verdicts, once per combo (the installed torch's own list for its combo)
  const std::optional<std::vector<std::string>>& targets_;
  std::optional<std::string> platform_;
  std::vector<std::string> unknown_;  ///< "torch 2.10 (+cu130) on linux_aarch64", each once
};

/// "torch 2.8 (+cu126)": a combo's torch as the reasons name it (the backend's first torch label).
std::string combo_torch_text(const semantics::Policy& policy, const model::Combo& combo);

}  // namespace wheelfit::resolve::detail
