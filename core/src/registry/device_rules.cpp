// A backend's target functions (plugin_abi.h) as policies::DeviceRules, and the policy a
// command judges with.
#include <utility>

#include <boost/json.hpp>

#include "wheelfit/registry/registry.hpp"

namespace wheelfit::registry {
namespace {

class PluginRules final : public policies::DeviceRules {
 public:
  explicit PluginRules(TargetFunctions fns) : fns_(fns) {}

  Expected<std::string> parse_target(std::string_view text) const override { return call(fns_.parse_target, text); }
  Expected<std::string> parse_list(std::string_view text) const override { return call(fns_.parse_target_list, text); }

  Expected<DeviceCode> read_code(std::string_view section, std::string_view bytes) const override {
    if (!fns_.read_device_code) return DeviceRules::read_code(section, bytes);
    const std::string name(section);
    const char* out =
        fns_.read_device_code(name.c_str(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    namespace json = boost::json;
    json::error_code ec;
    const json::value v = json::parse(out ? out : "", ec);
    const json::object* o = ec ? nullptr : v.if_object();
    auto bad = [&](const std::string& why) {
      return unexpected(Errc::invalid_input, "the backend's device-code reader broke its contract: " + why);
    };
    if (!o) return bad("not a JSON object");
    if (const auto* err = o->if_contains("error")) {
      return unexpected(Errc::invalid_input, err->is_string() ? std::string(err->get_string()) : "unreadable device code");
    }
    DeviceCode code;
    const auto* list = o->if_contains("list");
    if (!list || !list->is_string()) return bad("no \"list\" string");
    code.list = std::string(list->get_string());
    if (const auto* entries = o->if_contains("entries")) {
      if (!entries->is_object()) return bad("\"entries\" is not an object");
      for (const auto& kv : entries->get_object()) {
        if (!kv.value().is_array()) return bad("entries." + std::string(kv.key()) + " is not an array");
        std::vector<std::string> items;
        for (const auto& item : kv.value().get_array()) {
          if (!item.is_string()) return bad("entries." + std::string(kv.key()) + " holds a non-string");
          items.emplace_back(item.get_string());
        }
        code.entries.emplace_back(std::string(kv.key()), std::move(items));
      }
    }
    return code;
  }

  Expected<model::VariantSupport> variant_support(const std::string& facts_json) const override {
    if (!fns_.variant_properties) return DeviceRules::variant_support(facts_json);
    const char* out = fns_.variant_properties(facts_json.c_str());
    namespace json = boost::json;
    json::error_code ec;
    const json::value v = json::parse(out ? out : "", ec);
    const json::object* o = ec ? nullptr : v.if_object();
    auto bad = [&](const std::string& why) {
      return unexpected(Errc::invalid_input, "the backend's variant provider broke its contract: " + why);
    };
    if (!o) return bad("not a JSON object");
    if (const auto* err = o->if_contains("error")) {
      return unexpected(Errc::invalid_input, "the backend's variant provider failed: " +
                                                 (err->is_string() ? std::string(err->get_string()) : std::string("no reason given")));
    }
    model::VariantSupport support;
    if (const auto* props = o->if_contains("properties")) {
      auto p = model::parse_variant_properties(json::serialize(*props), "the backend's variant properties");
      if (!p) return bad(p.error().message);
      support.properties = std::move(*p);
    }
    if (const auto* devices = o->if_contains("devices")) {
      if (!devices->is_object()) return bad("\"devices\" is not an object");
      for (const auto& [feature, targets] : devices->get_object()) {
        if (!targets.is_object()) return bad("devices." + std::string(feature) + " is not an object");
        auto& rows = support.devices[std::string(feature)];
        for (const auto& [target, values] : targets.get_object()) {
          if (!values.is_array()) return bad("devices." + std::string(feature) + "." + std::string(target) + " is not an array");
          std::vector<std::string> list;
          for (const auto& item : values.get_array()) {
            if (!item.is_string()) return bad("devices." + std::string(feature) + " holds a non-string");
            list.emplace_back(item.get_string());
          }
          rows.emplace_back(std::string(target), std::move(list));
        }
      }
    }
    if (const auto* notes = o->if_contains("notes"); notes && notes->is_array()) {
      for (const auto& n : notes->get_array())
        if (n.is_string()) support.notes.emplace_back(n.get_string());
    }
    return support;
  }

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
