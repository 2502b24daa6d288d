// A backend's target functions (plugin_abi.h) as semantics::DeviceRules, and the policy a
// command judges with.
#include <exception>
#include <optional>
#include <utility>

#include <boost/json.hpp>

#include "wheelfit/registry/registry.hpp"

#include "wheelfit/semantics/reader.hpp"

namespace wheelfit::registry {
namespace {

class PluginRules final : public semantics::DeviceRules {
 public:
  explicit PluginRules(TargetFunctions fns) : fns_(fns) {}

  Expected<std::string> parse_target(std::string_view text) const override { return call(fns_.parse_target, text); }
  Expected<std::string> parse_list(std::string_view text) const override { return call(fns_.parse_target_list, text); }

  Expected<DeviceCode> read_code(std::string_view section, std::string_view bytes) const override {
    if (!fns_.read_device_code) return DeviceRules::read_code(section, bytes);
    const std::string name(section);
    const char* out =
        fns_.read_device_code(name.c_str(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    return device_code(out, "the backend's device-code reader broke its contract: ", "");
  }

  // The plugin walks the section through the core's read (plugin_abi.h read_device_code_at); a
  // plugin without it gets the section whole (DeviceRules::read_code_at).
  Expected<DeviceCode> read_code_at(std::string_view section, std::uint64_t size, const SectionRead& read) const override {
    if (!fns_.read_device_code_at) return DeviceRules::read_code_at(section, size, read);
    struct Context {
      const SectionRead& read;
      std::optional<Error> failed;  // the first read that failed: the real reason
    } ctx{read, std::nullopt};
    const auto trampoline = [](void* c, std::uint64_t offset, std::size_t length, unsigned char* out) noexcept -> int {
      auto& context = *static_cast<Context*>(c);
      try {
        auto r = context.read(offset, length, out);
        if (r) return 0;
        if (!context.failed) context.failed = r.error();
      } catch (const std::exception& e) {
        if (!context.failed) context.failed = Error(Errc::io_error, e.what());
      }
      return 1;
    };
    const std::string name(section);
    const char* out = fns_.read_device_code_at(name.c_str(), size, trampoline, &ctx);
    if (ctx.failed) return *ctx.failed;
    return device_code(out, "the backend's device-code reader broke its contract: ", "");
  }

  Expected<DeviceCode> describe_list(std::string_view list) const override {
    if (!fns_.describe_target_list) return DeviceRules::describe_list(list);
    const std::string text(list);
    return device_code(fns_.describe_target_list(text.c_str()), "the backend's list description broke its contract: ",
                       "'" + text + "': ");
  }

  // A read_device_code-shaped answer (plugin_abi.h) as a DeviceCode; an "error" member is
  // `failed` + its text.
  static Expected<DeviceCode> device_code(const char* out, const std::string& broke, const std::string& failed) {
    auto o = answer_object(out, broke, failed, "unreadable device code");
    if (!o) return o.error();
    DeviceCode code;
    const auto* list = o->if_contains("list");
    if (!list || !list->is_string()) return unexpected(Errc::invalid_input, broke + "no \"list\" string");
    code.list = std::string(list->get_string());
    if (const auto* entries = o->if_contains("entries")) {
      auto lists = named_lists(*entries, "entries", broke);
      if (!lists) return lists.error();
      code.entries = std::move(*lists);
    }
    return code;
  }

  Expected<model::VariantSupport> variant_support(const std::string& facts_json) const override {
    if (!fns_.variant_properties) return DeviceRules::variant_support(facts_json);
    const char* out = fns_.variant_properties(facts_json.c_str());
    const std::string broke = "the backend's variant provider broke its contract: ";
    auto o = answer_object(out, broke, "the backend's variant provider failed: ", "no reason given");
    if (!o) return o.error();
    model::VariantSupport support;
    if (const auto* props = o->if_contains("properties")) {
      auto p = model::parse_variant_properties(boost::json::serialize(*props), "the backend's variant properties");
      if (!p) return unexpected(Errc::invalid_input, broke + p.error().message);
      support.properties = std::move(*p);
    }
    if (const auto* devices = o->if_contains("devices")) {
      if (!devices->is_object()) return unexpected(Errc::invalid_input, broke + "\"devices\" is not an object");
      for (const auto& [feature, targets] : devices->get_object()) {
        auto rows = named_lists(targets, "devices." + std::string(feature), broke);
        if (!rows) return rows.error();
        support.devices[std::string(feature)] = std::move(*rows);
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
  // A function's JSON answer (plugin_abi.h) as an object. Not an object: `broke` + why; an
  // "error" member: `failed` + its text (`no_reason` when it is not a string).
  static Expected<boost::json::object> answer_object(const char* out, const std::string& broke, const std::string& failed,
                                                     const char* no_reason) {
    boost::json::error_code ec;
    boost::json::value v = boost::json::parse(out ? out : "", ec);
    if (ec || !v.is_object()) return unexpected(Errc::invalid_input, broke + "not a JSON object");
    if (const auto* err = v.get_object().if_contains("error")) {
      return unexpected(Errc::invalid_input, failed + (err->is_string() ? std::string(err->get_string()) : std::string(no_reason)));
    }
    return std::move(v.get_object());
  }

  // {"<name>": ["<text>", ...], ...} at `path`, in order; a wrong shape is `broke` + where.
  static Expected<std::vector<std::pair<std::string, std::vector<std::string>>>> named_lists(const boost::json::value& v,
                                                                                             const std::string& path,
                                                                                             const std::string& broke) {
    auto bad = [&](const std::string& why) { return unexpected(Errc::invalid_input, broke + why); };
    if (!v.is_object()) return bad(path + " is not an object");
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const auto& kv : v.get_object()) {
      const std::string at = path + "." + std::string(kv.key());
      if (!kv.value().is_array()) return bad(at + " is not an array");
      std::vector<std::string> items;
      for (const auto& item : kv.value().get_array()) {
        if (!item.is_string()) return bad(at + " holds a non-string");
        items.emplace_back(item.get_string());
      }
      out.emplace_back(std::string(kv.key()), std::move(items));
    }
    return out;
  }

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

std::shared_ptr<const semantics::DeviceRules> device_rules(const BackendInfo& backend) {
  if (!backend.targets.parse_target || !backend.targets.parse_target_list || !backend.targets.match_targets) {
    return nullptr;
  }
  return std::make_shared<PluginRules>(backend.targets);
}

Expected<semantics::Policy> make_policy(const BackendInfo& backend, const std::optional<std::string>& policy_file) {
  auto rules = device_rules(backend);
  if (!rules) {
    return unexpected(Errc::invalid_input, backend.origin + ": backend " + backend.name + " supplies no target functions");
  }
  if (policy_file) return semantics::read_file(*policy_file, std::move(rules));
  return semantics::read(backend.policy_json, backend.origin + " (built-in policy)", std::move(rules));
}

}  // namespace wheelfit::registry
