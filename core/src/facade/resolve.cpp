// wheelfit::resolve(): everything a resolve decides, behind one call (wheelfit/wheelfit.hpp).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <boost/json.hpp>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/transports/releases.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/wheelfit.hpp"

#include "common.hpp"

namespace wheelfit::api {
namespace {

using detail::env;
using detail::is_remote;
using detail::open_wheel;

// "network: 45 requests on 3 connections, 2 retries; cache: 40 fresh, 2 revalidated (304)".
std::string fetch_note(const transport::Stats& s) {
  if (s.requests == 0 && s.cache_fresh == 0 && s.cache_revalidated == 0) return {};
  std::string out = "network: " + std::to_string(s.requests) + " request" + (s.requests == 1 ? "" : "s") + " on " +
                    std::to_string(s.connections) + " connection" + (s.connections == 1 ? "" : "s");
  if (s.retries) out += ", " + std::to_string(s.retries) + " retr" + (s.retries == 1 ? "y" : "ies");
  if (s.reconnects) out += ", " + std::to_string(s.reconnects) + " stale keep-alive reconnect" + (s.reconnects == 1 ? "" : "s");
  if (s.cache_fresh || s.cache_revalidated) {
    out += "; cache: " + std::to_string(s.cache_fresh) + " fresh, " + std::to_string(s.cache_revalidated) + " revalidated (304)";
  }
  return out;
}

// Which source answered the pages: "index", "releases-api" or "index+releases-api".
std::string answered_by(const index::IndexSnapshot& snap) {
  bool pages = false, api = false;
  for (const auto& [name, page] : snap.projects) {
    if (page.status != index::ProjectPage::Status::ok) continue;
    (page.source == "releases-api" ? api : pages) = true;
  }
  if (api && pages) return "index+releases-api";
  return api ? "releases-api" : "index";
}

// The envs given directly, as the workspace holds configs' envs.
Expected<config::Env> env_of(const EnvRequest& r) {
  config::Env e;
  e.name = r.name;
  e.file = "env " + r.name;
  if (r.name.empty()) return unexpected(Errc::invalid_input, "an env without a name");
  if (r.python) {
    auto v = model::NumericVersion::parse(*r.python);
    if (!v || v->parts().size() != 2) {
      return unexpected(Errc::invalid_input, e.file + ": python '" + *r.python + "' is not major.minor (such as 3.12)");
    }
    e.python = *v;
  }
  for (const auto& p : r.packages) {
    if (!model::is_valid_name(p)) return unexpected(Errc::invalid_input, e.file + ": '" + p + "' is not a package name");
    e.packages.push_back({p, model::normalize_name(p)});
  }
  return e;
}

}  // namespace

std::optional<std::string> backend_of_torch_label(const registry::Registry& registry, std::string_view local_label) {
  for (const auto* b : registry.backends()) {
    auto policy = registry::make_policy(*b, std::nullopt);
    if (policy && policy->parse_torch_label(local_label)) return b->name;
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

Expected<policies::Policy> judging_policy(const registry::BackendInfo& backend, const std::optional<std::string>& file_arg) {
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

resolve::InspectHook make_inspect_hook(const machine::Machine& m, const policies::Policy& policy,
                                       const transports::HttpOptions& net) {
  struct State {
    std::unique_ptr<transport::Transport> transport;
    std::map<std::string, resolve::Inspection> seen;  // by URL and Python
  };
  auto state = std::make_shared<State>();
  return [state, m, &policy, net](const resolve::Pick& pick) -> resolve::Inspection {
    const std::string key = pick.url + "|" + pick.python;
    if (auto it = state->seen.find(key); it != state->seen.end()) return it->second;
    resolve::Inspection out;
    // The env's Python; torch is the combo's (pinned with the pick), not the machine's.
    machine::Machine target = m;
    target.torch.reset();
    if (pick.python.size() > 3) {
      std::string v = pick.python.substr(2);
      const bool ft = v.back() == 't';
      if (ft) v.pop_back();
      if (auto py = model::NumericVersion::parse(v.substr(0, 1) + "." + v.substr(1))) {
        target.python = *py;
        target.python_free_threaded = ft;
      }
    }
    if (!state->transport && is_remote(pick.url)) {
      auto made = transports::make_transport(net);
      if (!made) {
        log::warn("--inspect: " + made.error().message + "; " + pick.filename + " not inspected");
        return out;
      }
      state->transport = std::move(*made);
    }
    auto source = open_wheel(pick.url, state->transport.get());
    auto explained = source ? inspect::explain_wheel(**source, pick.filename, target, policy)
                            : Expected<inspect::Explanation>(source.error());
    if (!explained) {
      log::warn("--inspect: " + pick.filename + " could not be read (" + explained.error().message +
                "); judged on its name and the policy only");
      state->seen.emplace(key, out);
      return out;
    }
    for (resolve::Demand d : {resolve::Demand::gpu_arch, resolve::Demand::glibc, resolve::Demand::cpu_arch, resolve::Demand::os,
                              resolve::Demand::line, resolve::Demand::python}) {
      for (const auto& r : explained->demands) {
        if (r.demand != d || r.verdict != inspect::Verdict::fails || out.reject) continue;
        out.reject = resolve::Failure{d, r.wheel + " (read from its binaries: " + r.detail + ")", r.machine};
      }
    }
    if (!out.reject) {
      for (const auto& r : explained->demands)
        if (r.demand == resolve::Demand::gpu_arch) out.arch_source = r.wheel + " (read from the wheel's binaries)";
    }
    log::info("--inspect: " + pick.filename + ": " +
              (out.reject ? "rejected (" + resolve::demand_name(out.reject->demand, policy.notation()) + ")" : "fits") + ", " +
              std::to_string(explained->bytes_fetched) + " of " + std::to_string(explained->wheel_size) + " bytes read");
    state->seen.emplace(key, out);
    return out;
  };
}

namespace {

// What the reports print of a trust choice.
std::optional<output::TlsNote> tls_note(const std::optional<transports::TrustChoice>& trust) {
  if (!trust) return std::nullopt;
  output::TlsNote note;
  note.trust_from = trust->source();
  for (const auto& l : trust->locations) note.trust.push_back({l.path, l.source});
  if (trust->client_cert) note.client_cert = output::TlsNote::Location{trust->client_cert->path, trust->client_cert->source};
  return note;
}

output::ReportContext context_of(const ResolveResult& r) {
  return output::ReportContext{r.machine,  r.workspace,  r.index_url,     r.index_origin,  r.policy_source,
                               r.packages_json_note, r.source, r.fetch_note, r.failover_note, tls_note(r.trust)};
}

}  // namespace

std::string ResolveResult::json() const {
  if (error || !resolution) {
    const std::string message = error ? error->message : "no result";
    return boost::json::serialize(boost::json::object{
               {"error", boost::json::object{{"exit_code", exit_code}, {"message", message}}}}) + "\n";
  }
  return output::json_report(*resolution, context_of(*this));
}

std::string ResolveResult::report() const {
  if (error || !resolution) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  return output::human_report(*resolution, context_of(*this));
}

Expected<std::string> ResolveResult::pixi_manifest() const {
  if (!resolution || !resolution->ok()) return unexpected(Errc::invalid_input, "nothing resolved: no manifest to write");
  return output::pixi_manifest(*resolution, context_of(*this));
}

ResolveResult resolve(const ResolveRequest& req) {
  const log::ScopedSink call_log(req.log_sink);
  ResolveResult r;

  // The backends: the caller's, or the default plugin folders.
  std::unique_ptr<registry::Registry> owned;
  auto loaded = detail::backends_of(req.backends, owned);
  if (!loaded) return detail::failed(std::move(r), kExitBadInput, loaded.error().message);
  const registry::Registry* reg = *loaded;

  // The environments.
  if (!req.configs.empty()) {
    auto ws = config::load_workspace(req.configs);
    if (!ws) return detail::failed(std::move(r), kExitBadInput, ws.error().message);
    r.workspace = std::move(*ws);
    for (const auto& e : r.workspace.envs)
      for (const auto& w : e.warnings) log::warn(w);
  }
  for (const auto& e : req.envs) {
    auto env_ = env_of(e);
    if (!env_) return detail::failed(std::move(r), kExitBadInput, env_.error().message);
    r.workspace.envs.push_back(std::move(*env_));
  }
  if (r.workspace.envs.empty()) return detail::failed(std::move(r), kExitBadInput, "resolve: no environments (give configs or envs)");

  // The machine: the caller's profile as it is (plus the env overrides), or this one detected.
  auto found = detail::machine_of(*reg, req.machine, req.env_overrides, req.python, req.backend);
  if (!found) return detail::failed(std::move(r), kExitBadInput, found.error().message);
  r.machine = std::move(*found);
  const machine::Machine& m = r.machine;

  // Backend and its index.
  auto judged = judging_backend(*reg, req.backend, m);
  if (!judged) return detail::failed(std::move(r), kExitBadInput, judged.error().message);
  const registry::BackendInfo* info = *judged;
  auto choice = registry::choose_index(*info, req.index, env(info->index_env.c_str()));
  if (!choice) {
    if (!choice.error().is(Errc::unsupported)) return detail::failed(std::move(r), kExitBadInput, choice.error().message);
    // "ROCm backend detected gfx90a with torch 2.7.1+rocm6.3; no ROCm wheel index is published yet; ..."
    auto own = registry::make_policy(*info, std::nullopt);
    const std::string shown = own ? own->notation().name : info->name;
    std::vector<std::string> targets;  // each of the backend's GPU targets once, in GPU order
    for (const auto& g : m.gpus.value_or(std::vector<std::string>{})) {
      auto t = own && own->rules() ? own->rules()->parse_target(g) : Expected<std::string>(g);
      if (t && std::find(targets.begin(), targets.end(), *t) == targets.end()) targets.push_back(*t);
    }
    std::string what = shown + " backend";
    for (std::size_t i = 0; i < targets.size(); ++i) what += (i == 0 ? " detected " : ", ") + targets[i];
    if (m.torch) what += " with torch " + m.torch->str();
    return detail::failed(std::move(r), kExitNoIndex, what + "; no " + shown + " wheel index is published yet; set one with --index URL" +
                                                (info->index_env.empty() ? "" : " or " + info->index_env));
  }
  r.index_origin = choice->origin;

  // Policy: the file named, else WHEELFIT_POLICY, else the backend's own data.
  auto policy = judging_policy(*info, req.policy_file);
  if (!policy) return detail::failed(std::move(r), kExitBadInput, policy.error().message);
  r.policy_source = policy->source();
  std::optional<model::Combo> combo;  // --combo, in the backend's notation
  if (req.combo) {
    auto parsed = policies::parse_combo_str(policy->notation(), *req.combo);
    if (!parsed) return detail::failed(std::move(r), kExitBadInput, "--combo: " + parsed.error().message);
    combo = *parsed;
  }

  // The index: a local mirror read as it is, or http(s) through the cache with the Releases API
  // as the failover when the pages cannot be read; or the caller's own transport.
  const bool local = transports::is_local(choice->url);
  const std::string where = choice->origin == "--index" ? "--index: " : choice->origin + ": ";
  r.index_url = local ? transports::to_url(choice->url, true) : index::normalize_base(choice->url);
  if (local && !req.transport) {
    if (auto root = transports::to_path(r.index_url); !root || !std::filesystem::is_directory(*root)) {
      return detail::failed(std::move(r), kExitBadInput, where + choice->url + ": no such directory");
    }
  }
  // Credentials in the index URL (and WHEELFIT_INDEX_TOKEN) leave the URL for the transport's
  // per-origin credentials: from here on no URL of this resolve carries a password.
  transports::HttpOptions net = req.network;
  if (!local) {
    if (auto url = transports::parse_url(r.index_url); !url) return detail::failed(std::move(r), kExitBadInput, where + url.error().message);
    auto clean = detail::take_credentials(r.index_url, choice->origin, env("WHEELFIT_INDEX_TOKEN"), net);
    if (!clean) return detail::failed(std::move(r), kExitBadInput, where + clean.error().message);
    r.index_url = std::move(*clean);
  }
  std::shared_ptr<transport::Transport> transport = req.transport;
  if (!transport) {
    auto made = transports::make_transport(net);
    if (!made) return detail::failed(std::move(r), kExitBadInput, made.error().message);
    std::unique_ptr<transport::Transport> stack = std::move(*made);
    if (!local && req.use_cache) {
      auto root = detail::http_cache_root(req.cache_dir);
      if (!root) return detail::failed(std::move(r), kExitBadInput, root.error().message);
      auto cap = detail::cache_max_size(req.cache_max_size);
      if (!cap) return detail::failed(std::move(r), kExitBadInput, cap.error().message);
      transports::CacheOptions cache{*root, req.offline, *cap};
      auto cached = transports::make_cache_transport(std::move(stack), cache);
      if (!cached) return detail::failed(std::move(r), kExitBadInput, "--cache-dir: " + cached.error().message);
      stack = std::move(*cached);
    }
    transport = std::move(stack);
    if (!local) r.trust = transports::choose_trust(req.network);  // what make_transport loaded
  }
  // The Releases repository: the request's, else WHEELFIT_RELEASES_REPO, else the backend's own
  // when its default index is used, else the one a github.io index URL names.
  std::optional<transports::ReleasesSource> releases;
  if (!local && !req.offline && !req.transport) {
    std::optional<std::string> repo = req.releases_repo;
    if (!repo) repo = env("WHEELFIT_RELEASES_REPO");
    if (repo && repo->empty()) repo.reset();
    if (!repo && choice->url == info->index_url && !info->releases_repo.empty()) repo = info->releases_repo;
    if (!repo) repo = transports::repo_of_pages_url(r.index_url);
    if (repo) {
      if (std::count(repo->begin(), repo->end(), '/') != 1 || repo->front() == '/' || repo->back() == '/') {
        return detail::failed(std::move(r), kExitBadInput, "--releases-repo / WHEELFIT_RELEASES_REPO: '" + *repo + "' is not OWNER/NAME");
      }
      releases = transports::ReleasesSource::from_env(*repo);
      if (auto api = transports::parse_url(releases->api_base)) {
        releases->token_over_http = transports::insecure_host_allowed(net.credentials.insecure_hosts, *api);
      }
    }
  }

  std::vector<std::string> names;
  for (const auto& e : r.workspace.envs)
    for (const auto& p : e.packages) names.push_back(p.name);
  const auto snapshot = transports::read_index_with_failover(*transport, r.index_url, names, releases);

  // Not one page could be read (and no failover answered): that is no verdict on the wheels.
  if (!snapshot.projects.empty() &&
      std::all_of(snapshot.projects.begin(), snapshot.projects.end(),
                  [](const auto& p) { return p.second.status == index::ProjectPage::Status::failed; })) {
    const auto& first = snapshot.projects.begin()->second;
    std::string why = "the index " + r.index_url + " (" + choice->origin + ") could not be read: " + first.error;
    if (snapshot.projects.size() > 1) why += " (and " + std::to_string(snapshot.projects.size() - 1) + " more pages)";
    if (!snapshot.failover_note.empty()) why += "; " + snapshot.failover_note;
    return detail::failed(std::move(r), kExitUnreadable, why);
  }
  resolve::Inputs inputs{r.workspace, m, *policy, snapshot, info->name};
  if (req.inspect) inputs.inspect = make_inspect_hook(m, *policy, net);  // read the picks' binaries
  inputs.combo = combo;
  inputs.fallback = req.fallback;
  auto resolution = resolve::resolve(inputs);
  if (!resolution) return detail::failed(std::move(r), kExitBadInput, resolution.error().message);
  resolution->warnings.insert(resolution->warnings.begin(), snapshot.warnings.begin(), snapshot.warnings.end());

  r.packages_json_note = snapshot.packages_json_note;
  r.source = answered_by(snapshot);
  r.fetch_note = fetch_note(transport->stats());
  r.failover_note = snapshot.failover_note;
  r.exit_code = resolution->ok() ? kExitResolved : kExitUnresolved;
  r.resolution = std::move(*resolution);
  return r;
}

}  // namespace wheelfit::api
