// The variant demand (demands.hpp): what a machine supports for PEP 825 variants, and how one
// variant label fares against it. The resolver and explain both judge through these.
#include <boost/json.hpp>

#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/resolve/resolver.hpp"

namespace wheelfit::resolve {

namespace json = boost::json;

namespace {

// The facts a native provider reads (plugin_abi.h variant_properties), the unknown ones left out.
std::string provider_facts(const machine::Machine& m, const std::optional<std::vector<std::string>>& targets) {
  json::object facts;
  if (m.driver_version) facts["driver_version"] = m.driver_version->str();
  if (m.driver_line) facts["driver_line"] = m.driver_line->str();
  if (targets) {
    json::array gpus;
    for (const auto& t : *targets) gpus.emplace_back(json::string(t));
    facts["gpus"] = std::move(gpus);
  }
  return json::serialize(facts);
}

}  // namespace

model::VariantSupport variant_support(const machine::Machine& m, const semantics::Policy& policy,
                                      const std::optional<std::vector<std::string>>& targets, const std::string& torch) {
  model::VariantSupport support;
  support.device_prefix = policy.device_prefix();
  if (const auto* rules = policy.rules()) {
    auto provided = rules->variant_support(provider_facts(m, targets));
    if (provided) {
      const std::string who = "the " + policy.notation().key + " backend's provider";
      for (auto& [ns, features] : provided->properties) support.set_namespace(ns, std::move(features), who);
      support.devices = std::move(provided->devices);
      support.notes = std::move(provided->notes);
    } else if (!provided.error().is(Errc::unsupported)) {
      support.notes.push_back(provided.error().message);
    }
  }
  support.torch = torch;
  if (!torch.empty()) support.set_namespace("abi_dependency", model::abi_dependency_torch(torch), "torch " + torch);
  if (m.variant_properties) {
    auto it = m.provenance.find("variant_properties");
    const std::string who = it == m.provenance.end() ? std::string("the machine's variant_properties") : it->second;
    for (const auto& [ns, features] : *m.variant_properties) {
      support.set_namespace(ns, features, who);
      support.overridden.insert(ns);
      // The machine says what it supports in this namespace: the provider's per-device lists no
      // longer describe it.
      for (auto d = support.devices.begin(); d != support.devices.end();) {
        d = d->first.starts_with(ns + " :: ") ? support.devices.erase(d) : std::next(d);
      }
    }
  }
  return support;
}

std::string variant_torch(const machine::Machine& m, const semantics::Policy& policy, const model::Combo& combo) {
  if (m.torch) {
    if (auto mc = machine_combo(m, policy); mc.combo && *mc.combo == combo) return m.torch->public_version().str();
  }
  return combo.torch.str();
}

model::VariantOrder::Verdict judge_variant(const std::string& label, const model::VariantsFile* file, const std::string& problem,
                                           const model::VariantSupport& support) {
  return model::VariantOrder(file, support, problem).judge(label);
}

}  // namespace wheelfit::resolve
