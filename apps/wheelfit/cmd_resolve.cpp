// `wheelfit resolve`: the arguments -> a ResolveRequest -> wheelfit::resolve() (the façade, which
// decides everything) -> the report or the JSON, the pixi.toml, the exit code.
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/wheelfit.hpp"

namespace wheelfit::cli {

api::ResolveRequest resolve_request(const Args& parsed) {
  if (parsed.has("--offline") && parsed.has("--no-cache")) throw UsageError{"--offline reads only the cache; it does not go with --no-cache"};
  api::ResolveRequest request;
  request.configs = parsed.positional;
  request.python = parsed.value("--python");
  request.backend = parsed.value("--backend");
  request.index = parsed.value("--index");
  request.policy_file = parsed.value("--policy");
  request.releases_repo = parsed.value("--releases-repo");
  request.network = http_options(parsed);
  request.use_cache = !parsed.has("--no-cache");
  request.cache_dir = parsed.value("--cache-dir");
  request.cache_max_size = cache_max_size(parsed);
  request.offline = parsed.has("--offline");
  request.combo = parsed.value("--combo");
  request.fallback = !parsed.has("--no-fallback");
  request.torch_index = parsed.value("--torch-index");  // resolve's and mirror's: where the torch is read
  return request;
}

int run_resolve(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv,
                                 {"--index", "--machine", "--policy", "--backend", "--output", "--python", "--retries",
                                  "--timeout", "--jobs", "--user-agent", "--proxy-auth", "--cache-dir", "--cache-max-size", "--releases-repo",
                                  "--allow-insecure-host", "--combo", "--cert", "--client-cert", "--machines",
                                  "--speed-limit", "--speed-time", "--max-time", "--format", "--pixi-pins", "--torch-index"},
                                 {"--json", "--no-cache", "--offline", "--inspect", "--no-fallback"}, {{"-o", "--output"}},
                                 {"--machine"});
  const bool json = parsed.has("--json");
  const std::optional<std::string> output = parsed.value("--output");
  const std::optional<std::string> format_flag = parsed.value("--format");
  const std::optional<std::string> pixi_pins = parsed.value("--pixi-pins");
  if ((format_flag || pixi_pins) && !output) throw UsageError{"--format and --pixi-pins say how -o FILE is written: give -o FILE"};
  std::optional<api::LockFormat> format;
  if (output) {
    auto f = api::lock_format_for(*output, format_flag);
    if (!f) throw UsageError{f.error().message};
    format = *f;
  }
  if (pixi_pins && *pixi_pins != "url" && *pixi_pins != "index") throw UsageError{"--pixi-pins: '" + *pixi_pins + "' is not url or index"};
  if (pixi_pins && format != api::LockFormat::pixi) throw UsageError{"--pixi-pins is for a pixi.toml (-o pixi.toml or --format pixi)"};
  if (parsed.positional.empty()) throw UsageError{"resolve: give at least one comfy-env.toml"};
  if (parsed.has("--offline") && parsed.has("--no-cache")) throw UsageError{"--offline reads only the cache; it does not go with --no-cache"};
  if (parsed.value("--cache-dir") && parsed.has("--no-cache")) throw UsageError{"--cache-dir does not go with --no-cache"};
  if (parsed.value("--cache-max-size") && parsed.has("--no-cache")) throw UsageError{"--cache-max-size does not go with --no-cache"};
  if (parsed.value("--machine") && parsed.value("--python")) {
    throw UsageError{"--python names this machine's interpreter; it does not go with --machine"};
  }
  if (parsed.value("--machines") && parsed.value("--python")) {
    throw UsageError{"--python names this machine's interpreter; it does not go with --machines"};
  }

  ResolveRequest request = resolve_request(parsed);
  request.inspect = parsed.has("--inspect");

  // The backends (plugins, loaded once, skipped files logged) and the profiles, if given: each
  // describes another machine as it is; without one, this machine is detected.
  registry::Registry reg;
  if (auto loaded = load_backends(reg); !loaded) return fail(json, kBadInput, loaded.error().message);
  request.backends = &reg;
  auto fleet = fleet_of(parsed);
  if (!fleet) return fail(json, kBadInput, fleet.error().message);
  if (fleet->size() > 1) {
    // Several machines: one index read, a report per machine and the summary table (or one JSON
    // object, "machines" and "summary"); the exit code is the worst machine's.
    if (output) throw UsageError{"-o/--output writes one machine's lock file (a manifest is per machine); it does not go with several machines"};
    const auto result = api::resolve_fleet(request, *fleet);
    if (result.error) return fail(json, result.exit_code, result.error->message);
    write_out(result, json);  // a row at a time: a fleet's whole text can run to gigabytes
    return result.exit_code;
  }
  if (fleet->size() == 1) request.machine = std::move(fleet->front().machine);  // the single resolve, unchanged

  const ResolveResult result = api::resolve(request);
  if (result.error) return fail(json, result.exit_code, result.error->message);
  const bool ok = result.exit_code == kOk;
  if (ok && output) {
    // --pixi-pins index: each pick by version from the index resolved against (a mirror's view).
    auto manifest = pixi_pins == "index" ? result.pixi_manifest(output::PixiPins{result.index_url}) : result.lock_file(*format);
    if (!manifest) return fail(json, kBadInput, manifest.error().message);
    if (auto w = output::write_file_atomically(*output, *manifest); !w) return fail(json, kOutput, w.error().message);
  }
  show(std::cout, json ? result.json() : result.report());
  if (ok && output && !json) show(std::cout, "wrote " + *output + "\n");
  return result.exit_code;
}

}  // namespace wheelfit::cli
