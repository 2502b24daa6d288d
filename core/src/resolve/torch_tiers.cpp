// TorchGate (torch_tiers.hpp): judge_torch's verdicts as the tiers use and word them.

#include "torch_tiers.hpp"

#include <algorithm>

#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::resolve::detail {

using util::join;

std::string combo_torch_text(const semantics::Policy& policy, const model::Combo& combo) {
  std::string out = "torch " + combo.torch.truncated(2).str();
  for (const auto& label : policy.torch_labels()) {
    if (label.has_line()) return out + " (+" + label.render(combo) + ")";
  }
  return out + " (" + semantics::combo_str(policy.notation(), combo) + ")";
}

TorchGate::TorchGate(const Inputs& in, TorchJudge& judge, const std::optional<std::vector<std::string>>& targets,
                     std::optional<std::string> platform)
    : in_(in), judge_(judge), targets_(targets), platform_(std::move(platform)) {}

TorchVerdict TorchGate::machine(const model::Version& torch, std::string& reason) {
  auto v = judge(*judge_.own(), "torch " + torch.str());
  if (v.cannot_run()) reason = this->reason(v, "torch " + torch.str());
  return v;
}

std::string TorchGate::set_aside(const model::Combo& combo) {
  const std::string torch = combo_torch_text(in_.policy, combo);
  auto v = judge(combo, torch);
  return v.cannot_run() ? reason(v, torch) : std::string();
}

TorchVerdict TorchGate::judge(const model::Combo& combo, const std::string& torch) {
  // The installed torch's own list (read from its library) speaks for its combo; else the policy.
  TorchVerdict v = judge_.combo(combo);
  // Unknown matters only where there is a GPU to judge and a rule to judge it by (the report
  // warns of unknown GPUs and a policy without rules on its own).
  if (v.status == TorchVerdict::Status::unknown && targets_ && !targets_->empty() && in_.policy.rules()) {
    std::string what = torch + (platform_ ? " on " + *platform_ : std::string());
    if (v.archs) what += " (" + v.why_unknown + ")";
    if (std::find(unknown_.begin(), unknown_.end(), what) == unknown_.end()) unknown_.push_back(std::move(what));
  }
  return v;
}

std::string TorchGate::reason(const TorchVerdict& v, const std::string& torch) const {
  std::string kinds;
  for (const auto& [kind, items] : v.archs->entries) {
    kinds += (kinds.empty() ? "" : "; ") + kind + ": " + (items.empty() ? std::string("none") : join(items, ", "));
  }
  return torch + " cannot run on " + gpus_text(v.uncovered) + ": its arch list " + v.archs->list +
         (kinds.empty() ? std::string() : " (" + kinds + ")") + " has no code that runs there (source: " + v.archs->source + ")";
}

std::string TorchGate::gpus_text(const std::vector<std::string>& uncovered) const {
  // Each uncovered GPU once, in the machine's order; as the profile spells it when it differs.
  std::vector<std::string> canonical, spelled;
  const auto& written = *in_.machine.gpus;  // targets_ are known, so are the machine's GPUs
  for (std::size_t i = 0; i < targets_->size(); ++i) {
    const auto& t = (*targets_)[i];
    if (std::find(uncovered.begin(), uncovered.end(), t) == uncovered.end()) continue;
    if (std::find(canonical.begin(), canonical.end(), t) != canonical.end()) continue;
    canonical.push_back(t);
    if (i < written.size() && written[i] != t) spelled.push_back(written[i]);
  }
  return targets_text(in_.policy.device_prefix(), canonical) +
         (spelled.empty() ? std::string() : " (gpus: " + join(spelled, ", ") + ")");
}

std::string TorchGate::unknown_warning() const {
  if (unknown_.empty()) return "";
  return "torch's arch list is unknown for " + join(unknown_, ", ") + ": whether it runs on the machine's "
         "GPUs is not checked; give it with --policy FILE (a torch_archs row, policies/README.md) or --python PATH "
         "(wheelfit reads the installed torch's own library)";
}

}  // namespace wheelfit::resolve::detail
