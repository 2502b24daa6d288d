// The session's decisions (session/session.hpp): environment, transports, credentials, cache,
// backends, policy, machine and `--inspect`'s hook.
#include "wheelfit/session/session.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <boost/json.hpp>

#include "wheelfit/index/file_url.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/inspect/library.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::session {

std::optional<std::string> env(const char* name) {
  if (const char* v = std::getenv(name)) return std::string(v);
  return std::nullopt;
}

const net::Registry& transports_of(const net::Registry* given) {
  return given ? *given : net::default_registry();
}

Expected<std::string> take_credentials(const std::string& url, const std::string& what,
                                       const std::optional<std::string>& token, net::HttpOptions& net,
                                       const net::Registry& transports) {
  const auto* rules = transports.http_rules();
  if (!rules || !rules->take_credentials) return url;
  return rules->take_credentials(url, what, token, net);
}

Expected<std::filesystem::path> http_cache_root(const std::optional<std::string>& dir, const net::Registry& transports) {
  if (dir && !dir->empty()) return std::filesystem::path(*dir);
  const auto* keeping = transports.cache_keeping();
  if (!keeping || !keeping->default_dir) {
    return unexpected(Errc::usage, "no on-disk cache is registered with the transports (give --no-cache)");
  }
  auto root = keeping->default_dir();
  if (!root) return Error(root.error().code, root.error().message + " (or give --cache-dir DIR, or --no-cache)");
  return *root / "http";
}

Expected<std::uint64_t> cache_max_size(const std::optional<std::uint64_t>& given) {
  if (given) return *given;
  const auto value = env("WHEELFIT_CACHE_MAX_SIZE");
  if (!value || util::trim(*value).empty()) return net::kDefaultCacheMaxSize;
  auto size = util::parse_size(*value);
  if (!size) return size.error().with_context("WHEELFIT_CACHE_MAX_SIZE");
  return size;
}

Expected<std::unique_ptr<inspect::ByteSource>> open_wheel(const std::string& where, net::Transport* remote) {
  if (remote) return inspect::open_remote_source(*remote, where);
  auto path = index::to_path(where);
  if (!path) return path.error();
  return inspect::open_file_source(*path);
}

Expected<semantics::Policy> judging_policy_for(const registry::Registry& reg, const machine::Machine& m,
                                              const std::optional<std::string>& policy_file) {
  auto backend = judging_backend(reg, std::nullopt, m);
  if (!backend) return backend.error();
  auto policy = judging_policy(**backend, policy_file);
  if (!policy) return policy.error();
  if (auto targets = resolve::device_targets(m, *policy); !targets) return targets.error();
  return policy;
}

Expected<const registry::Registry*> backends_of(const registry::Registry* given, std::unique_ptr<registry::Registry>& owned) {
  if (given) return given;
  owned = std::make_unique<registry::Registry>();
  auto report = registry::load_plugins(*owned, registry::plugin_dirs());
  if (!report.ok()) return Error(report.error->code, "backend plugins: " + report.error->message);
  for (const auto& s : report.skipped) {
    if (s.kind != registry::SkipReason::not_plugin_name) log::warn("plugin " + s.file.string() + " skipped: " + s.reason);
  }
  return owned.get();
}

Expected<machine::Machine> detect_this_machine(const registry::Registry& reg, const std::optional<std::string>& python,
                                               const std::optional<std::string>& backend, std::string* torch_lib) {
  machine::DetectOptions options;
  options.python = python;
  if (machine::Machine probe; backend && machine::set_fact(probe, "backend", *backend, "--backend")) options.backend = backend;
  options.label_backend = [&reg](std::string_view label) { return backend_of_torch_label(reg, label); };
  auto det = machine::detect_machine(options, [&reg] { return detect_backends(reg); });
  if (!det) return det.error();
  for (const auto& note : det->notes) log::debug("detect: " + note);
  const auto torch = det->machine.provenance.find("torch");
  if (torch_lib && det->interpreter && torch != det->machine.provenance.end() && torch->second.starts_with("dist-info ")) {
    *torch_lib = det->interpreter->torch_lib;
  }
  return std::move(det->machine);
}

Expected<machine::Machine> machine_of(const registry::Registry& reg, const std::optional<machine::Machine>& given,
                                      bool env_overrides, const std::optional<std::string>& python,
                                      const std::optional<std::string>& backend, std::string* torch_lib) {
  if (!given) return detect_this_machine(reg, python, backend, torch_lib);
  machine::Machine m = *given;
  if (env_overrides) {
    if (auto o = machine::apply_env_overrides(m, machine::process_env()); !o) return o.error();
  }
  return m;
}

std::optional<resolve::TorchArchs> installed_torch_archs(const std::string& lib_dir, const machine::Machine& m,
                                                         const semantics::Policy& policy, std::vector<std::string>& warnings) {
  if (lib_dir.empty() || !resolve::machine_combo(m, policy).combo) return std::nullopt;
  auto library = inspect::find_torch_library(lib_dir, policy);
  auto archs = library ? inspect::read_library_archs(*library, policy) : Expected<resolve::TorchArchs>(library.error());
  if (!archs) {
    warnings.push_back("torch's arch list was not read from its library (" + archs.error().message +
                       "); the policy's torch arch matrix judges it");
    return std::nullopt;
  }
  log::info("torch's arch list " + archs->list + ": " + archs->source);
  return std::move(*archs);
}

std::optional<std::string> backend_of_torch_label(const registry::Registry& registry, std::string_view local_label) {
  for (const auto* b : registry.backends()) {
    auto policy = registry.builtin_policy(b->name);  // read once per backend, not per machine
    if (policy && (*policy)->parse_torch_label(local_label)) return b->name;
  }
  return std::nullopt;
}

Expected<const registry::BackendInfo*> judging_backend(const registry::Registry& registry,
                                                       const std::optional<std::string>& name, const machine::Machine& m) {
  std::string backend = name.value_or("");
  if (backend.empty() && m.torch && !m.torch->local().empty()) {
    backend = backend_of_torch_label(registry, m.torch->local()).value_or("");
  }
  if (backend.empty() && m.backend) backend = *m.backend;
  if (backend.empty() || backend == "cpu") {
    if (backend == "cpu") {
      log::warn("the machine's backend is cpu: resolving against the " + std::string(kDefaultBackend) +
                " index; GPU demands will tell what fails");
    }
    backend = kDefaultBackend;
  }
  if (const auto* info = registry.find(backend)) return info;
  std::string known;
  for (const auto& n : registry.names()) known += (known.empty() ? "" : ", ") + n;
  return unexpected(Errc::invalid_input, "--backend: unknown backend '" + backend + "' (known: " +
                                             (known.empty() ? "none: no plugin was loaded" : known) + ")");
}

Expected<semantics::Policy> judging_policy(const registry::BackendInfo& backend, const std::optional<std::string>& file_arg) {
  std::optional<std::string> file = file_arg;
  const bool from_flag = file.has_value();
  if (!file) file = env("WHEELFIT_POLICY");
  if (file && file->empty()) file.reset();
  auto p = registry::make_policy(backend, file);
  if (!p) {
    return p.error().with_context(file ? (from_flag ? "--policy" : "WHEELFIT_POLICY")
                                       : "the " + backend.name + " backend's policy data");
  }
  return p;
}

machine::BackendPayloads detect_backends(const registry::Registry& reg) {
  machine::BackendPayloads out;
  for (const auto* b : reg.backends()) {
    if (!b->has_detection) continue;
    auto payload = reg.detect(b->name);
    if (payload) {
      out.emplace_back(b->name, std::move(*payload));
    } else if (!payload.error().is(Errc::unsupported)) {
      out.emplace_back(b->name, boost::json::serialize(boost::json::object{{"present", false}, {"error", payload.error().message}}));
    }
  }
  return out;
}

namespace {

// What an explanation of a would-be pick rejects it for: the first failing demand of the
// binaries' (torch left to the combo), then the variant (PEP 825) judged by the wheel's own
// *.dist-info/variant.json, as `explain` judges it.
std::optional<resolve::Failure> inspect_reject(const inspect::Explanation& e) {
  for (resolve::Demand d : {resolve::Demand::gpu_arch, resolve::Demand::glibc, resolve::Demand::cpu_arch, resolve::Demand::os,
                            resolve::Demand::line, resolve::Demand::python, resolve::Demand::variant}) {
    for (const auto& r : e.demands) {
      if (r.demand != d || r.verdict != inspect::Verdict::fails) continue;
      const char* from = d == resolve::Demand::variant ? " (read from its *.dist-info/variant.json: " : " (read from its binaries: ";
      return resolve::Failure{d, r.wheel + from + r.detail + ")", r.machine};
    }
  }
  return std::nullopt;
}

// A variant wheel whose own variant.json gives its label other properties than the index's
// variants file did: said, since the pick was chosen (and ordered) by the index's.
void warn_variant_differs(const resolve::Pick& pick, const inspect::Explanation& e) {
  if (!pick.variant_label || !e.variant_properties) return;
  auto own = *e.variant_properties, index = pick.variant_properties;
  std::sort(own.begin(), own.end());
  std::sort(index.begin(), index.end());
  if (own == index) return;
  const auto listed = [](const std::vector<std::string>& p) { return p.empty() ? std::string("none") : util::join(p, ", "); };
  log::warn("--inspect: " + pick.filename + ": its *.dist-info/variant.json gives variant " + *pick.variant_label +
            " the properties " + listed(*e.variant_properties) + ", the index's variants file " + listed(pick.variant_properties) +
            " (" + pick.variants_url + "); judged by the wheel's own");
}

// The machine an inspection judges on: the env's Python; torch the combo's (pinned with the
// pick), not the machine's, except a variant wheel's `abi_dependency :: torch`, judged against
// the torch the resolver judged it against.
machine::Machine inspect_target(const machine::Machine& m, const resolve::Pick& pick) {
  machine::Machine target = m;
  target.torch.reset();
  if (pick.variant_label && !pick.variant_torch.empty()) {
    if (auto torch = model::Version::parse(pick.variant_torch)) target.torch = std::move(*torch);
  }
  if (pick.python.size() > 3) {
    std::string v = pick.python.substr(2);
    const bool ft = v.back() == 't';
    if (ft) v.pop_back();
    if (auto py = model::NumericVersion::parse(v.substr(0, 1) + "." + v.substr(1))) {
      target.python = *py;
      target.python_free_threaded = ft;
    }
  }
  return target;
}

}  // namespace

resolve::InspectHook make_inspect_hook(const machine::Machine& m, const semantics::Policy& policy,
                                       const net::HttpOptions& net, const net::Registry& transports) {
  struct State {
    std::unique_ptr<net::Transport> transport;
    std::map<std::string, resolve::Inspection> seen;  // by URL, Python and the variant's torch
  };
  auto state = std::make_shared<State>();
  return [state, m, &policy, net, &transports](const resolve::Pick& pick) -> resolve::Inspection {
    const std::string key = pick.url + "|" + pick.python + "|" + pick.variant_torch;
    if (auto it = state->seen.find(key); it != state->seen.end()) return it->second;
    resolve::Inspection out;
    const bool remote = transports.facts(pick.url).remote;
    if (!state->transport && remote) {
      auto made = transports.make(net::StackOptions{net, std::nullopt});
      if (!made) {
        log::warn("--inspect: " + made.error().message + "; " + pick.filename + " not inspected");
        return out;
      }
      state->transport = std::move(*made);
    }
    auto source = open_wheel(pick.url, remote ? state->transport.get() : nullptr);
    auto explained = source ? inspect::explain_wheel(**source, pick.filename, inspect_target(m, pick), policy)
                            : Expected<inspect::Explanation>(source.error());
    if (!explained) {
      log::warn("--inspect: " + pick.filename + " could not be read (" + explained.error().message +
                "); judged on its name and the policy only");
      state->seen.emplace(key, out);
      return out;
    }
    out.reject = inspect_reject(*explained);
    warn_variant_differs(pick, *explained);
    if (!out.reject) {
      for (const auto& r : explained->demands)
        if (r.demand == resolve::Demand::gpu_arch) out.arch_source = r.wheel + " (read from the wheel's binaries)";
    }
    log::info("--inspect: " + pick.filename + ": " +
              (out.reject ? "rejected (" + resolve::demand_name(out.reject->demand, policy.notation()) + ")" : "fits") + ", " +
              explained->read_text(remote));
    state->seen.emplace(key, out);
    return out;
  };
}

}  // namespace wheelfit::session
