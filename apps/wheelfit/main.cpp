// wheelfit: which prebuilt CUDA wheel will actually run on this machine? The executable is thin:
// argument parsing, the log sink, exit codes. The work happens in the libraries.
//
// Exit codes: 0 resolved; 1 no combo covers every package; 2 bad input or usage;
//             3 the backend publishes no wheel index (ROCm today).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

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

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "0.0.0"
#endif

namespace {

using namespace wheelfit;

constexpr int kOk = 0, kUnresolved = 1, kBadInput = 2, kNoIndex = 3;

constexpr std::string_view kUsage = R"(usage: wheelfit <command> [options]

commands:
  resolve [CONFIG...]   resolve each [cuda] package of the comfy-env.toml files for this machine
  version               print the version

resolve options:
  --index URL           the wheel index (a directory, file:// URL); default: the backend's, or
                        COMFY_ENV_CUDA_WHEELS_INDEX
  --machine FILE        the target machine profile (TOML or JSON); default: the host's OS, CPU
                        arch and glibc, plus WHEELFIT_OVERRIDE_* / CONDA_OVERRIDE_* variables
  --policy FILE         policy data replacing the built-in copy (also WHEELFIT_POLICY)
  --backend NAME        cuda or rocm (default: from torch's label, else cuda)
  -o, --output FILE     write the pixi.toml (atomically; only when everything resolved)
  --json                print one JSON object instead of the report

exit codes: 0 resolved, 1 no combo covers every package, 2 bad input or usage,
            3 the backend publishes no wheel index
)";

struct UsageError {
  std::string message;
};

struct ResolveArgs {
  std::vector<std::string> configs;
  std::optional<std::string> index, machine, policy, backend, output;
  bool json = false;
};

ResolveArgs parse_resolve_args(const std::vector<std::string_view>& args) {
  ResolveArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    auto value = [&](std::optional<std::string>& slot) {
      std::string_view v;
      if (auto eq = a.find('='); eq != std::string_view::npos && a.starts_with("--")) {
        v = a.substr(eq + 1);
      } else {
        if (i + 1 >= args.size()) throw UsageError{std::string(a) + ": missing value"};
        v = args[++i];
      }
      if (slot) throw UsageError{std::string(a.substr(0, a.find('='))) + ": given twice"};
      slot = std::string(v);
    };
    auto is = [&](std::string_view flag) { return a == flag || (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '='); };
    if (is("--index")) value(out.index);
    else if (is("--machine")) value(out.machine);
    else if (is("--policy")) value(out.policy);
    else if (is("--backend")) value(out.backend);
    else if (is("--output") || a == "-o") value(out.output);
    else if (a == "--json") out.json = true;
    else if (a == "--") {
      for (++i; i < args.size(); ++i) out.configs.emplace_back(args[i]);
    } else if (a.starts_with("-") && a != "-") throw UsageError{"unknown option " + std::string(a)};
    else out.configs.emplace_back(a);
  }
  if (out.configs.empty()) throw UsageError{"resolve: give at least one comfy-env.toml"};
  return out;
}

int fail(bool json, int code, const std::string& message) {
  std::cerr << "wheelfit: " << message << "\n";
  if (json) {
    boost::json::object o{{"error", boost::json::object{{"exit_code", code}, {"message", message}}}};
    std::cout << boost::json::serialize(o) << "\n";
  }
  return code;
}

std::optional<std::string> env(const char* name) {
  if (const char* v = std::getenv(name)) return std::string(v);
  return std::nullopt;
}

int run_resolve(const ResolveArgs& args) {
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

}  // namespace

int main(int argc, char** argv) {
  log::set_sink([](log::Level level, std::string_view message) {
    if (level == log::Level::debug && !std::getenv("WHEELFIT_DEBUG")) return;
    std::cerr << (level == log::Level::warn ? "warning: " : "") << message << "\n";
  });
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kBadInput : kOk;
  }
  if (args[0] == "version" || args[0] == "--version") {
    std::cout << "wheelfit " << WHEELFIT_VERSION << "\n";
    return kOk;
  }
  const std::string_view command = args[0];
  args.erase(args.begin());
  bool json = false;
  for (auto a : args) json = json || a == "--json";
  try {
    if (command == "resolve") return run_resolve(parse_resolve_args(args));
    return fail(json, kBadInput, "unknown command '" + std::string(command) + "' (try wheelfit --help)");
  } catch (const UsageError& e) {
    return fail(json, kBadInput, e.message);
  } catch (const std::exception& e) {
    return fail(json, kBadInput, std::string("internal error: ") + e.what());
  }
}
