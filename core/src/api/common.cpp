// What the façade's calls share (common.hpp).
#include "common.hpp"

#include <algorithm>
#include <cstdlib>

#include "wheelfit/index/file_url.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/inspect/library.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::api::detail {

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

bool is_remote(std::string_view s) { return s.starts_with("http://") || s.starts_with("https://"); }

Expected<std::unique_ptr<inspect::ByteSource>> open_wheel(const std::string& where, net::Transport* remote) {
  if (is_remote(where)) return inspect::open_remote_source(*remote, where);
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

}  // namespace wheelfit::api::detail
