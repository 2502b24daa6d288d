// `wheelfit plugins`: the backend plugins loaded (what each supplies) and the files skipped, with
// the reason. Also load_backends(), which every command that needs a backend calls first.
#include <boost/json.hpp>
#include <iostream>
#include <map>

#include "cli.hpp"
#include "wheelfit/policies/policy.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {

Expected<registry::PluginLoadReport> load_backends(registry::Registry& reg) {
  auto report = registry::load_plugins(reg, registry::default_plugin_dir());
  if (!report.ok()) {
    return Error(report.error->code, "backend plugins: " + report.error->message +
                                         " (WHEELFIT_PLUGIN_PATH names the plugin folder)");
  }
  for (const auto& s : report.skipped) {
    const std::string line = "plugin " + s.file.string() + " skipped: " + s.reason;
    if (s.kind == registry::SkipReason::not_plugin_name) log::debug(line);
    else log::warn(line);
  }
  return report;
}

namespace {

// What `plugins` shows of a backend's policy data: its fallback combos per CPU arch.
struct PolicySummary {
  std::map<std::string, model::Combo> fallback;
  std::string version;
  std::string error;  ///< why the policy data does not parse; "" when it does (or is absent)
  bool present = false;
};

PolicySummary summarize_policy(const registry::BackendInfo& b) {
  PolicySummary s;
  if (b.policy_json.empty()) return s;
  s.present = true;
  auto p = policies::parse_policy_json(b.policy_json, b.origin + " (built-in policy)");
  if (!p) {
    s.error = p.error().message;
    return s;
  }
  s.fallback = p->fallback_combos(b.name);
  s.version = p->version();
  return s;
}

boost::json::object to_json(const registry::BackendInfo& b, const PolicySummary& policy) {
  boost::json::object fallback;
  for (const auto& [arch, combo] : policy.fallback) {
    fallback[arch] = boost::json::object{{"cuda", combo.cuda.str()}, {"torch", combo.torch.str()}};
  }
  boost::json::object o{
      {"name", b.name},
      {"description", b.description},
      {"file", b.origin},
      {"index_url", b.index_url},
      {"index_env", b.index_env},
      {"releases_repo", b.releases_repo},
      {"torch_label", b.torch_label},
      {"torch_index_pattern", b.torch_index_pattern},
      {"detection", b.has_detection},
      {"fallback", std::move(fallback)},
  };
  o["policy_version"] = policy.present && policy.error.empty() ? boost::json::value(policy.version) : nullptr;
  if (!policy.error.empty()) o["policy_error"] = policy.error;
  return o;
}

void print_human(const registry::BackendInfo& b, const PolicySummary& policy) {
  auto none = [](const std::string& s, const char* what) { return s.empty() ? std::string(what) : s; };
  std::cout << "\n" << b.name << (b.description.empty() ? "" : ": " + b.description) << "\n";
  std::cout << "  file:          " << b.origin << "\n";
  std::cout << "  index:         " << none(b.index_url, "none published");
  if (!b.index_env.empty()) std::cout << " (override: " << b.index_env << ")";
  std::cout << "\n";
  std::cout << "  releases repo: " << none(b.releases_repo, "none") << "\n";
  std::cout << "  torch label:   " << (b.torch_label.empty() ? "none" : "+" + b.torch_label) << "\n";
  std::cout << "  torch index:   " << none(b.torch_index_pattern, "none") << "\n";
  std::cout << "  fallback:      ";
  if (!policy.present) {
    std::cout << "none (no policy data)";
  } else if (!policy.error.empty()) {
    std::cout << "unknown: the policy data does not parse: " << policy.error;
  } else if (policy.fallback.empty()) {
    std::cout << "none";
  } else {
    const char* sep = "";
    for (const auto& [arch, combo] : policy.fallback) {
      std::cout << sep << arch << " " << combo.str();
      sep = ", ";
    }
  }
  std::cout << "\n";
  std::cout << "  detection:     " << (b.has_detection ? "yes" : "no") << "\n";
}

}  // namespace

int run_plugins(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, {}, {"--json"});
  const bool json = parsed.has("--json");
  if (!parsed.positional.empty()) throw UsageError{"plugins: takes no arguments (got '" + parsed.positional.front() + "')"};

  registry::Registry reg;
  const auto report = registry::load_plugins(reg, registry::default_plugin_dir());
  if (!report.ok()) {
    return fail(json, kBadInput, "backend plugins: " + report.error->message + " (WHEELFIT_PLUGIN_PATH names the plugin folder)");
  }

  if (json) {
    boost::json::array backends, skipped;
    for (const auto* b : reg.backends()) backends.push_back(to_json(*b, summarize_policy(*b)));
    for (const auto& s : report.skipped) {
      skipped.push_back(boost::json::object{{"file", s.file.string()}, {"kind", registry::to_string(s.kind)}, {"reason", s.reason}});
    }
    boost::json::object o{{"plugin_dir", report.dir.string()}, {"backends", std::move(backends)}, {"skipped", std::move(skipped)}};
    std::cout << boost::json::serialize(o) << "\n";
    return kOk;
  }

  std::cout << "plugin folder: " << report.dir.string() << "\n";
  if (reg.names().empty()) std::cout << "\nno backend plugin was loaded\n";
  for (const auto* b : reg.backends()) print_human(*b, summarize_policy(*b));
  if (!report.skipped.empty()) {
    std::cout << "\nskipped:\n";
    for (const auto& s : report.skipped) std::cout << "  " << s.file.filename().string() << ": " << s.reason << "\n";
  }
  return kOk;
}

}  // namespace wheelfit::cli
