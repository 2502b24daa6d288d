// `wheelfit resolve`: configs + machine + index -> the report, the JSON, the pixi.toml.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "wheelfit/config/workspace.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/policies/policy.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/releases.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {
namespace {

struct ResolveArgs {
  std::vector<std::string> configs;
  std::optional<std::string> index, machine, policy, backend, output, python;
  bool json = false;
};

// "45 requests, 2 retries, 40 from the cache (38 fresh, 2 revalidated), 1.2 MB" for the report.
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

}  // namespace

int run_resolve(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv,
                                 {"--index", "--machine", "--policy", "--backend", "--output", "--python", "--retries",
                                  "--timeout", "--jobs", "--user-agent", "--cache-dir", "--releases-repo"},
                                 {"--json", "--no-cache", "--offline", "--inspect"}, {{"-o", "--output"}});
  ResolveArgs args{parsed.positional,          parsed.value("--index"),  parsed.value("--machine"),
                   parsed.value("--policy"),   parsed.value("--backend"), parsed.value("--output"),
                   parsed.value("--python"),   parsed.has("--json")};
  if (args.configs.empty()) throw UsageError{"resolve: give at least one comfy-env.toml"};
  if (parsed.has("--offline") && parsed.has("--no-cache")) throw UsageError{"--offline reads only the cache; it does not go with --no-cache"};
  if (parsed.value("--cache-dir") && parsed.has("--no-cache")) throw UsageError{"--cache-dir does not go with --no-cache"};
  const transports::HttpOptions net = http_options(parsed);

  // The backends: plugins, loaded once, before anything asks for one.
  registry::Registry reg;
  if (auto loaded = load_backends(reg); !loaded) return fail(args.json, kBadInput, loaded.error().message);

  // Configs.
  auto workspace = config::load_workspace(args.configs);
  if (!workspace) return fail(args.json, kBadInput, workspace.error().message);
  for (const auto& e : workspace->envs)
    for (const auto& w : e.warnings) log::warn(w);

  // Machine: a profile describes another machine as it is (only the env overrides apply);
  // without one, this machine is detected, as `wheelfit detect` shows it.
  machine::Machine m;
  if (args.machine) {
    if (args.python) throw UsageError{"--python names this machine's interpreter; it does not go with --machine"};
    auto loaded = machine::load_machine_profile(*args.machine);
    if (!loaded) return fail(args.json, kBadInput, "--machine: " + loaded.error().message);
    m = std::move(*loaded);
    if (auto r = machine::apply_env_overrides(m, machine::process_env()); !r) return fail(args.json, kBadInput, r.error().message);
  } else {
    // --backend also picks whose detected facts are taken, when it is a backend a profile names.
    std::optional<std::string> detect_backend = args.backend;
    if (machine::Machine probe; detect_backend && !machine::set_fact(probe, "backend", *detect_backend, "--backend")) {
      detect_backend.reset();
    }
    auto detected = detect_host(reg, false, args.python, detect_backend);
    if (!detected) return fail(args.json, kBadInput, detected.error().message);
    for (const auto& note : detected->notes) log::debug("detect: " + note);
    m = std::move(detected->machine);
  }

  // Backend and its index.
  auto judged = judging_backend(reg, args.backend, m);
  if (!judged) return fail(args.json, kBadInput, judged.error().message);
  const registry::BackendInfo* info = *judged;
  auto choice = registry::choose_index(*info, args.index, env(info->index_env.c_str()));
  if (!choice) {
    if (choice.error().is(Errc::unsupported)) {
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
      return fail(args.json, kNoIndex, what + "; no " + shown + " wheel index is published yet; set one with --index URL" +
                                           (info->index_env.empty() ? "" : " or " + info->index_env));
    }
    return fail(args.json, kBadInput, choice.error().message);
  }

  // Policy: --policy / WHEELFIT_POLICY, else the backend's own policy data.
  auto loaded_policy = judging_policy(*info, args.policy);
  if (!loaded_policy) return fail(args.json, kBadInput, loaded_policy.error().message);
  const policies::Policy& policy = *loaded_policy;

  // The index: a local mirror read as it is, or http(s) through the cache (unless --no-cache)
  // with the Releases API as the failover when the pages cannot be read.
  const bool local = transports::is_local(choice->url);
  const std::string index_url = local ? transports::to_url(choice->url, true) : index::normalize_base(choice->url);
  if (local) {
    if (auto root = transports::to_path(index_url); !root || !std::filesystem::is_directory(*root)) {
      return fail(args.json, kBadInput, (choice->origin == "--index" ? "--index: " : choice->origin + ": ") + choice->url +
                                            ": no such directory");
    }
  } else if (auto url = transports::parse_url(index_url); !url) {
    return fail(args.json, kBadInput, (choice->origin == "--index" ? "--index: " : choice->origin + ": ") + url.error().message);
  }
  auto made = transports::make_transport(net);
  if (!made) return fail(args.json, kBadInput, made.error().message);
  std::unique_ptr<transport::Transport> transport = std::move(*made);
  if (!local && !parsed.has("--no-cache")) {
    transports::CacheOptions cache{parsed.value("--cache-dir").value_or(""), parsed.has("--offline")};
    if (cache.dir.empty()) {
      auto dir = transports::default_cache_dir();
      if (!dir) return fail(args.json, kBadInput, dir.error().message + " (or give --cache-dir DIR, or --no-cache)");
      cache.dir = *dir / "http";  // beside interpreters/, the detection cache
    }
    auto cached = transports::make_cache_transport(std::move(transport), cache);
    if (!cached) return fail(args.json, kBadInput, "--cache-dir: " + cached.error().message);
    transport = std::move(*cached);
  }
  // The Releases repository: --releases-repo, else WHEELFIT_RELEASES_REPO, else the backend's
  // own when its default index is used, else the one a github.io index URL names.
  std::optional<transports::ReleasesSource> releases;
  if (!local && !parsed.has("--offline")) {
    std::optional<std::string> repo = parsed.value("--releases-repo");
    if (!repo) repo = env("WHEELFIT_RELEASES_REPO");
    if (repo && repo->empty()) repo.reset();
    if (!repo && choice->url == info->index_url && !info->releases_repo.empty()) repo = info->releases_repo;
    if (!repo) repo = transports::repo_of_pages_url(index_url);
    if (repo) {
      if (std::count(repo->begin(), repo->end(), '/') != 1 || repo->front() == '/' || repo->back() == '/') {
        return fail(args.json, kBadInput, "--releases-repo / WHEELFIT_RELEASES_REPO: '" + *repo + "' is not OWNER/NAME");
      }
      releases = transports::ReleasesSource::from_env(*repo);
    }
  }

  std::vector<std::string> names;
  for (const auto& e : workspace->envs)
    for (const auto& p : e.packages) names.push_back(p.name);
  const auto snapshot = transports::read_index_with_failover(*transport, index_url, names, releases);

  // Not one page could be read (and no failover answered): that is no verdict on the wheels.
  if (std::all_of(snapshot.projects.begin(), snapshot.projects.end(),
                  [](const auto& p) { return p.second.status == index::ProjectPage::Status::failed; })) {
    const auto& first = snapshot.projects.begin()->second;
    std::string why = "the index " + index_url + " (" + choice->origin + ") could not be read: " + first.error;
    if (snapshot.projects.size() > 1) why += " (and " + std::to_string(snapshot.projects.size() - 1) + " more pages)";
    if (!snapshot.failover_note.empty()) why += "; " + snapshot.failover_note;
    return fail(args.json, kUnreadable, why);
  }
  resolve::Inputs inputs{*workspace, m, policy, snapshot, info->name};
  if (parsed.has("--inspect")) inputs.inspect = make_inspect_hook(m, policy, net);  // read the picks' binaries
  auto resolution = resolve::resolve(inputs);
  if (!resolution) return fail(args.json, kBadInput, resolution.error().message);
  resolution->warnings.insert(resolution->warnings.begin(), snapshot.warnings.begin(), snapshot.warnings.end());

  output::ReportContext ctx{m,
                            *workspace,
                            index_url,
                            choice->origin,
                            policy.source(),
                            snapshot.packages_json_note,
                            answered_by(snapshot),
                            fetch_note(transport->stats()),
                            snapshot.failover_note};
  if (resolution->ok() && args.output) {
    auto manifest = output::pixi_manifest(*resolution, ctx);
    if (!manifest) return fail(args.json, kBadInput, manifest.error().message);
    if (auto w = output::write_file_atomically(*args.output, *manifest); !w) return fail(args.json, kBadInput, w.error().message);
  }
  if (args.json) std::cout << output::json_report(*resolution, ctx);
  else std::cout << output::human_report(*resolution, ctx);
  if (resolution->ok() && args.output && !args.json) std::cout << "wrote " << *args.output << "\n";
  return resolution->ok() ? kOk : kUnresolved;
}


}  // namespace wheelfit::cli
