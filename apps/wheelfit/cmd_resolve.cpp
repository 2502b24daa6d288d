// `wheelfit resolve`: configs + machine + index -> the report, the JSON, the pixi.toml.
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "wheelfit/backends/cuda.hpp"
#include "wheelfit/backends/rocm.hpp"
#include "wheelfit/config/workspace.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/policies/policy.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {
namespace {

struct ResolveArgs {
  std::vector<std::string> configs;
  std::optional<std::string> index, machine, policy, backend, output;
  bool json = false;
};

}  // namespace

int run_resolve(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, {"--index", "--machine", "--policy", "--backend", "--output"}, {"--json"}, {{"-o", "--output"}});
  ResolveArgs args{parsed.positional, parsed.value("--index"), parsed.value("--machine"), parsed.value("--policy"),
                   parsed.value("--backend"), parsed.value("--output"), parsed.has("--json")};
  if (args.configs.empty()) throw UsageError{"resolve: give at least one comfy-env.toml"};

  // Configs.
  auto workspace = config::load_workspace(args.configs);
  if (!workspace) return fail(args.json, kBadInput, workspace.error().message);
  for (const auto& e : workspace->envs)
    for (const auto& w : e.warnings) log::warn(w);

  // Machine: a profile describes another machine as it is; without one, the host fills the gaps.
  machine::Machine m;
  if (args.machine) {
    auto loaded = machine::load_machine_profile(*args.machine);
    if (!loaded) return fail(args.json, kBadInput, "--machine: " + loaded.error().message);
    m = std::move(*loaded);
  }
  if (auto r = machine::apply_env_overrides(m, machine::process_env()); !r) return fail(args.json, kBadInput, r.error().message);
  if (!args.machine) machine::fill_from_host(m);

  // Policy.
  std::optional<policies::Policy> loaded_policy;
  std::optional<std::string> policy_file = args.policy ? args.policy : env("WHEELFIT_POLICY");
  if (policy_file && policy_file->empty()) policy_file.reset();
  if (policy_file) {
    auto p = policies::load_policy_file(*policy_file);
    if (!p) return fail(args.json, kBadInput, (args.policy ? "--policy: " : "WHEELFIT_POLICY: ") + p.error().message);
    loaded_policy = std::move(*p);
  }
  const policies::Policy& policy = loaded_policy ? *loaded_policy : policies::builtin_policy();

  // Backend and its index.
  registry::Registry reg;
  (void)reg.add(backends::cuda::describe());
  (void)reg.add(backends::rocm::describe());
  std::string backend = args.backend.value_or("");
  if (backend.empty() && m.torch) {
    if (auto build = model::parse_torch_label(m.torch->local())) backend = build->backend;
  }
  if (backend.empty() && m.backend) backend = *m.backend;
  if (backend.empty() || backend == "cpu") {
    if (backend == "cpu") log::warn("the machine's backend is cpu: resolving against the cuda index; GPU demands will tell what fails");
    backend = "cuda";
  }
  const auto* info = reg.find(backend);
  if (!info) return fail(args.json, kBadInput, "--backend: unknown backend '" + backend + "' (known: cuda, rocm)");
  auto choice = registry::choose_index(*info, args.index, env(info->index_env.c_str()));
  if (!choice) {
    if (choice.error().is(Errc::unsupported)) {
      std::string what = info->name + " backend";
      if (m.torch) what += " with torch " + m.torch->str();
      return fail(args.json, kNoIndex, what + ": no " + info->name + " wheel index is published yet; set one with --index URL" +
                                           (info->index_env.empty() ? "" : " or " + info->index_env));
    }
    return fail(args.json, kBadInput, choice.error().message);
  }
  if (!transports::is_local(choice->url)) {
    return fail(args.json, kBadInput, "the index " + choice->url + " (" + choice->origin + ") needs the network transport, which this "
                                      "build does not have yet; give a local mirror with --index DIR or file:// URL");
  }
  const std::string index_url = transports::to_url(choice->url, true);
  if (auto root = transports::to_path(index_url); !root || !std::filesystem::is_directory(*root)) {
    return fail(args.json, kBadInput, (choice->origin == "--index" ? "--index: " : choice->origin + ": ") + choice->url +
                                          ": no such directory");
  }
  auto transport = transports::make_file_transport();

  std::vector<std::string> names;
  for (const auto& e : workspace->envs)
    for (const auto& p : e.packages) names.push_back(p.name);
  const auto snapshot = index::read_index(*transport, index_url, names);

  auto resolution = resolve::resolve({*workspace, m, policy, snapshot, backend});
  if (!resolution) return fail(args.json, kBadInput, resolution.error().message);

  output::ReportContext ctx{m, *workspace, index_url, choice->origin, policy.source(), snapshot.packages_json_note};
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
