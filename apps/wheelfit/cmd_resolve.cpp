// `wheelfit resolve`: the arguments -> a ResolveRequest -> wheelfit::resolve() (the façade, which
// decides everything) -> the report or the JSON, the lock file (-o, a row of the format table), the
// exit code.
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::cli {

int run_resolve(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, api::options::kResolve);
  const bool json = parsed.has("--json");
  const std::optional<std::string> output = parsed.value("--output");
  const std::optional<std::string> format_flag = parsed.value("--format");
  const std::optional<std::string> pixi_pins = parsed.value("--pixi-pins");
  if ((format_flag || pixi_pins) && !output) throw UsageError{"--format and --pixi-pins say how -o FILE is written: give -o FILE"};
  const output::Format* format = nullptr;  // the format table's row (output/formats.hpp)
  if (output) {
    auto f = api::output_format_for(*output, format_flag);
    if (!f) throw UsageError{f.error().message};
    format = *f;
  }
  if (pixi_pins && *pixi_pins != "url" && *pixi_pins != "index") throw UsageError{"--pixi-pins: '" + *pixi_pins + "' is not url or index"};
  if (pixi_pins && format->name != "pixi") throw UsageError{"--pixi-pins is for a pixi.toml (-o pixi.toml or --format pixi)"};
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

  ResolveRequest request = resolve_request(parsed);  // --inspect too (a resolve row of the table)

  // The backends (plugins, loaded once, skipped files logged) and the profiles, if given: each
  // describes another machine as it is; without one, this machine is detected.
  registry::Registry reg;
  if (auto loaded = load_backends(reg); !loaded) return fail(json, api::kExitBadInput, loaded.error().message);
  request.backends = &reg;
  auto fleet = fleet_of(parsed);
  if (!fleet) return fail(json, api::kExitBadInput, fleet.error().message);
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
  const bool ok = result.exit_code == api::kExitResolved;
  if (ok && output) {
    // --pixi-pins index: each pick by version from the index resolved against (a mirror's view).
    auto manifest = result.write_output(*format, pixi_pins == "index" ? output::PixiPins{result.index_url} : output::PixiPins{});
    if (!manifest) return fail(json, api::kExitBadInput, manifest.error().message);
    if (auto w = output::write_file_atomically(*output, *manifest); !w) return fail(json, api::kExitOutput, w.error().message);
  }
  show(std::cout, json ? result.json() : result.report());
  if (ok && output && !json) show(std::cout, "wrote " + *output + "\n");
  return result.exit_code;
}

}  // namespace wheelfit::cli
