// `wheelfit check LOCK...`: the arguments -> a CheckRequest -> wheelfit::check() (the façade
// decides everything) -> the report or the JSON, the exit code.
#include <iostream>

#include "cli.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::cli {

int run_check(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, api::options::kCheck);
  const bool json = parsed.has("--json");
  if (parsed.positional.empty()) throw UsageError{"check: give at least one lock file (pixi.toml, requirements.txt, pylock.toml)"};
  if (parsed.value("--machine") && parsed.value("--python")) {
    throw UsageError{"--python names this machine's interpreter; it does not go with --machine"};
  }
  api::CheckRequest request;
  request.resolve = resolve_request(parsed);  // its configs (the positional words) are ignored: they are the locks
  request.locks = parsed.positional;
  registry::Registry reg;
  if (auto why = take_machines(parsed, reg, request.resolve, request.fleet)) return fail(json, api::kExitBadInput, *why);
  const auto result = api::check(request);
  if (result.error) return fail(json, result.exit_code, result.error->message);
  show(std::cout, json ? result.json() : result.report());
  return result.exit_code;
}

}  // namespace wheelfit::cli
