// A backend's target functions (plugin_abi.h) as policies::DeviceRules, and the policy a
// command judges with.
#include <utility>

#include "wheelfit/registry/registry.hpp"

namespace wheelfit::registry {
namespace {

class PluginRules final : public policies::DeviceRules {
 public:
  explicit PluginRules(TargetFunctions fns) : fns_(fns) {}

  Expected<std::string> parse_target(std::string_view text) const override { return call(fns_.parse_target, text); }
  Expected<std::string> parse_list(std::string_view text) const override { return call(fns_.parse_target_list, text); }

  Expected<Match> match(std::string_view list, std::string_view target) const override {
    const std::string l(list), t(target);
    const char* via = nullptr;
    const int how = fns_.match_targets(l.c_str(), t.c_str(), &via);
    std::string text = via ? via : "";
    switch (how) {
      case 0: return Match{Match::Kind::none, ""};
      case 1: return Match{Match::Kind::native, std::move(text)};
      case 2: return Match{Match::Kind::jit, std::move(text)};
      default:
        return unexpected(Errc::invalid_input, text.empty() ? "the backend could not judge '" + l + "' on " + t : text);
    }
  }

 private:
  static Expected<std::string> call(const char* (*fn)(const char*, int*), std::string_view text) {
    const std::string in(text);
    int ok = 0;
    const char* out = fn(in.c_str(), &ok);
    std::string result = out ? out : "";
    if (ok != 1) return unexpected(Errc::invalid_input, result.empty() ? "not valid" : result);
    return result;
  }

  TargetFunctions fns_;
};

}  // namespace

std::shared_ptr<const policies::DeviceRules> device_rules(const BackendInfo& backend) {
  if (!backend.targets.parse_target || !backend.targets.parse_target_list || !backend.targets.match_targets) {
    return nullptr;
  }
  return std::make_shared<PluginRules>(backend.targets);
}

Expected<policies::Policy> make_policy(const BackendInfo& backend, const std::optional<std::string>& policy_file) {
  auto rules = device_rules(backend);
  if (!rules) {
    return unexpected(Errc::invalid_input, backend.origin + ": backend " + backend.name + " supplies no target functions");
  }
  if (policy_file) return policies::load_policy_file(*policy_file, std::move(rules));
  return policies::parse_policy_json(backend.policy_json, backend.origin + " (built-in policy)", std::move(rules));
}

}  // namespace wheelfit::registry
