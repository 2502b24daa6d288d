// `wheelfit plugins`: the backend plugins loaded (what each supplies) and the files skipped, with
// the reason. Also load_backends(), which every command that needs a backend calls first. Both
// search registry::plugin_dirs(): WHEELFIT_PLUGIN_PATH's folders, then the built-in one.
#include <boost/json.hpp>
#include <iostream>
#include <map>

#include "cli.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {

namespace {

// The hint every "no plugin folder could be used" error ends with.
constexpr const char* kPathHint = " (WHEELFIT_PLUGIN_PATH lists plugin folders searched before the built-in one)";

// Why a folder was not used, without the folder's own name in front (the caller prints it).
std::string folder_reason(const registry::SearchedDir& d) {
  const std::string prefix = d.dir.string() + ": ";
  const std::string& m = d.error->message;
  return m.starts_with(prefix) ? m.substr(prefix.size()) : m;
}

}  // namespace

Expected<registry::PluginLoadReport> load_backends(registry::Registry& reg) {
  auto report = registry::load_plugins(reg, registry::plugin_dirs());
  if (!report.ok()) return Error(report.error->code, "backend plugins: " + report.error->message + kPathHint);
  for (const auto& d : report.dirs) {
    if (!d.error) continue;
    const std::string line = "plugin folder " + d.dir.string() + " (" + std::string(registry::to_string(d.source)) +
                             ") not used: " + folder_reason(d);
    // The built-in folder may well be absent when WHEELFIT_PLUGIN_PATH supplies the plugins.
    if (d.source == registry::DirSource::builtin && d.error->is(Errc::not_found)) log::debug(line);
    else log::warn(line);
  }
  for (const auto& s : report.skipped) {
    const std::string line = "plugin " + s.file.string() + " skipped: " + s.reason;
    if (s.kind == registry::SkipReason::not_plugin_name) log::debug(line);
    else log::warn(line);
  }
  return report;
}

namespace {

// What `plugins` shows of a backend's policy data: its notation, label grammar, torch index and
// fallback combos per CPU arch.
struct PolicySummary {
  std::optional<semantics::Policy> policy;
  std::string error;  ///< why the policy data does not parse; "" when it does
};

PolicySummary summarize_policy(const registry::BackendInfo& b) {
  PolicySummary s;
  auto p = registry::make_policy(b, std::nullopt);
  if (!p) s.error = p.error().message;
  else s.policy = std::move(*p);
  return s;
}

boost::json::array templates_json(const std::vector<semantics::LabelTemplate>& templates) {
  boost::json::array out;
  for (const auto& t : templates) out.emplace_back(t.text());
  return out;
}

boost::json::object to_json(const registry::BackendInfo& b, const PolicySummary& summary) {
  boost::json::object o{
      {"name", b.name},
      {"description", b.description},
      {"file", b.origin},
      {"index_url", b.index_url},
      {"index_env", b.index_env},
      {"releases_repo", b.releases_repo},
      {"detection", b.has_detection},
  };
  if (const auto& p = summary.policy) {
    boost::json::object fallback;
    for (const auto& [arch, combo] : p->fallback_combos()) {
      fallback[arch] = boost::json::object{{p->notation().key, combo.line.str()}, {"torch", combo.torch.str()}};
    }
    o["line"] = boost::json::object{{"key", p->notation().key}, {"prefix", p->notation().prefix}, {"name", p->notation().name}};
    o["combo_labels"] = templates_json(p->combo_labels());
    o["torch_labels"] = templates_json(p->torch_labels());
    o["torch_index_pattern"] = p->torch_index_pattern();
    o["device"] = p->device_name();
    o["fallback"] = std::move(fallback);
    o["policy_version"] = p->version();
  } else {
    o["policy_version"] = nullptr;
    o["policy_error"] = summary.error;
  }
  return o;
}

std::string templates_text(const std::vector<semantics::LabelTemplate>& templates) {
  std::string out;
  for (const auto& t : templates) out += (out.empty() ? "+" : ", +") + t.text();
  return out.empty() ? "none" : out;
}

void print_human(const registry::BackendInfo& b, const PolicySummary& summary) {
  auto none = [](const std::string& s, const char* what) { return s.empty() ? std::string(what) : s; };
  std::cout << "\n" << b.name << (b.description.empty() ? "" : ": " + b.description) << "\n";
  std::cout << "  file:          " << b.origin << "\n";
  std::cout << "  index:         " << none(b.index_url, "none published");
  if (!b.index_env.empty()) std::cout << " (override: " << b.index_env << ")";
  std::cout << "\n";
  std::cout << "  releases repo: " << none(b.releases_repo, "none") << "\n";
  if (const auto& p = summary.policy) {
    std::cout << "  line:          " << p->notation().name << " (" << p->notation().key << ")\n";
    std::cout << "  combo labels:  " << templates_text(p->combo_labels()) << "\n";
    std::cout << "  torch labels:  " << templates_text(p->torch_labels()) << "\n";
    std::cout << "  torch index:   " << p->torch_index_pattern() << "\n";
    std::cout << "  fallback:      ";
    const char* sep = "";
    for (const auto& [arch, combo] : p->fallback_combos()) {
      std::cout << sep << arch << " " << p->combo_str(combo);
      sep = ", ";
    }
    std::cout << (p->fallback_combos().empty() ? "none\n" : "\n");
  } else {
    std::cout << "  policy:        the policy data does not parse: " << summary.error << "\n";
  }
  std::cout << "  detection:     " << (b.has_detection ? "yes" : "no") << "\n";
}

}  // namespace

int run_plugins(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, api::options::kPlugins);
  const bool json = parsed.has("--json");
  if (!parsed.positional.empty()) throw UsageError{"plugins: takes no arguments (got '" + parsed.positional.front() + "')"};

  registry::Registry reg;
  const auto report = registry::load_plugins(reg, registry::plugin_dirs());
  if (!report.ok()) return fail(json, api::kExitBadInput, "backend plugins: " + report.error->message + kPathHint);

  if (json) {
    boost::json::array dirs, backends, skipped;
    for (const auto& d : report.dirs) {
      dirs.push_back(boost::json::object{{"path", d.dir.string()},
                                         {"source", registry::to_string(d.source)},
                                         {"error", d.error ? boost::json::value(d.error->message) : boost::json::value(nullptr)}});
    }
    for (const auto* b : reg.backends()) backends.push_back(to_json(*b, summarize_policy(*b)));
    for (const auto& s : report.skipped) {
      skipped.push_back(boost::json::object{{"file", s.file.string()}, {"kind", registry::to_string(s.kind)}, {"reason", s.reason}});
    }
    // plugin_dir: the first folder searched (the only one before WHEELFIT_PLUGIN_PATH became a list).
    boost::json::object o{{"plugin_dir", report.dirs.front().dir.string()},
                          {"plugin_dirs", std::move(dirs)},
                          {"backends", std::move(backends)},
                          {"skipped", std::move(skipped)}};
    std::cout << boost::json::serialize(o) << "\n";
    return api::kExitResolved;
  }

  std::cout << "plugin folders (in search order; the first to supply a backend wins):\n";
  for (const auto& d : report.dirs) {
    std::cout << "  " << d.dir.string() << " (" << registry::to_string(d.source) << ")";
    if (d.error) std::cout << ": not used: " << folder_reason(d);
    std::cout << "\n";
  }
  if (reg.names().empty()) std::cout << "\nno backend plugin was loaded\n";
  for (const auto* b : reg.backends()) print_human(*b, summarize_policy(*b));
  if (!report.skipped.empty()) {
    std::cout << "\nskipped:\n";
    for (const auto& s : report.skipped) std::cout << "  " << s.file.string() << ": " << s.reason << "\n";
  }
  return api::kExitResolved;
}

}  // namespace wheelfit::cli
