// judge_torch / torch_archs_from_policy (resolve/torch_gate.hpp).

#include "wheelfit/resolve/torch_gate.hpp"

#include "wheelfit/resolve/demands.hpp"

namespace wheelfit::resolve {

std::optional<TorchArchs> torch_archs_from_policy(const semantics::Policy& policy, const model::Combo& combo,
                                                  std::string_view platform) {
  auto row = policy.torch_archs(combo.torch, combo.line, platform);
  if (!row) return std::nullopt;
  TorchArchs a;
  a.list = row->list;
  a.source = "PyTorch's build of torch " + combo.torch.truncated(2).str() + " for " + policy.notation().name + " " +
             semantics::line_key(combo.line) + " on " + std::string(platform) + " (" + row->source + ", " + row->date + ")";
  if (const auto* rules = policy.rules()) {
    if (auto code = rules->describe_list(a.list)) a.entries = std::move(code->entries);
  }
  return a;
}

TorchVerdict judge_torch(const semantics::Policy& policy, std::optional<TorchArchs> archs,
                         const std::optional<std::vector<std::string>>& targets) {
  TorchVerdict v;
  v.archs = std::move(archs);
  if (!v.archs) {
    v.why_unknown = "the targets torch was built for are unknown";
    return v;
  }
  if (!targets) {
    v.why_unknown = "the machine's " + policy.device_name() + "s are unknown";
    return v;
  }
  const auto* rules = policy.rules();
  if (!rules) {
    v.why_unknown = "the policy was read without its backend's coverage rule";
    return v;
  }
  for (const auto& t : *targets) {
    auto m = rules->match(v.archs->list, t);
    if (!m) {
      v.uncovered.clear();
      v.why_unknown = m.error().message;
      return v;
    }
    if (!m->covers()) v.uncovered.push_back(t);
  }
  v.status = v.uncovered.empty() ? TorchVerdict::Status::runs : TorchVerdict::Status::cannot_run;
  return v;
}

std::string cannot_run_text(std::string_view device_prefix, const TorchVerdict& v) {
  return "torch cannot run on " + targets_text(device_prefix, v.uncovered) + ": " + (v.archs ? v.archs->source : std::string()) +
         " targets " + (v.archs ? v.archs->list : std::string());
}

}  // namespace wheelfit::resolve
