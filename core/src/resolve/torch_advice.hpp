#pragma once
// The torch gate in the advice (issue 32; decision 0030): the combos the advice search sets aside
// because PyTorch's build of their torch cannot run on the machine's GPUs, the chosen combo's
// torch as the mirror reads it, and the torch that runs when the machine's own cannot
// (TorchAdvice). Every verdict is judge_torch's (torch_gate.hpp), the one rule.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "candidates.hpp"

namespace wheelfit::resolve::detail {

/// Line distance in minor steps across majors (12.8 to 13.0 is further than 12.8 to 12.6).
long line_distance(const model::NumericVersion& a, const model::NumericVersion& b);

/// The torch of each combo a resolve considers, judged on the machine's GPUs once per combo: the
/// installed torch's own list (Inputs::torch_archs) for the machine's own combo, else the
/// policy's torch arch matrix row for the machine's farm platform. One per resolve; not
/// thread-safe.
class TorchJudge {
 public:
  TorchJudge(const Inputs& in, std::optional<Combo> own, const std::optional<std::vector<std::string>>& targets,
             std::optional<std::string> platform);
  /// The machine's own torch (tier 1's combo) judged; nullopt when it has no torch combo. (The
  /// resolver's Resolution::machine_torch says the same; this is what the advice reads.)
  [[nodiscard]] const std::optional<TorchVerdict>& machine() const noexcept { return machine_; }
  [[nodiscard]] const std::optional<Combo>& own() const noexcept { return own_; }
  [[nodiscard]] const std::optional<std::vector<std::string>>& targets() const noexcept { return targets_; }
  /// `combo`'s torch judged.
  const TorchVerdict& combo(const Combo& combo);
  /// The advice's entry for `combo` when its torch cannot run here; nullopt when it runs or is unknown.
  std::optional<SetAside> set_aside(const Combo& combo);
  /// "torch cannot run on sm 12.0: PyTorch's build of ... targets 5.0;...;9.0" for a verdict
  /// that cannot run.
  [[nodiscard]] std::string cannot_run_text(const TorchVerdict& v) const;

 private:
  const Inputs& in_;
  std::optional<Combo> own_;
  const std::optional<std::vector<std::string>>& targets_;
  std::optional<std::string> platform_;
  std::optional<TorchVerdict> machine_;
  std::map<std::pair<model::NumericVersion, model::NumericVersion>, TorchVerdict> judged_;  // by (line, torch)
};

/// The torch that runs, for a machine whose own torch cannot (judge.machine() cannot_run): the
/// same version on the closest line of the matrix whose build covers every GPU, whose driver rule
/// holds and which PyTorch ships for each env's Python here; the farm combos of `advice` that
/// cover every package with it; and, for each GPU the newest build leaves out, the last torch
/// built for it. The file is the façade's to fill (TorchAdvice::file).
TorchAdvice torch_advice(const Inputs& in, TorchJudge& judge, const std::vector<EnvTarget>& envs,
                         const std::optional<std::string>& platform, const Advice& advice);

}  // namespace wheelfit::resolve::detail
