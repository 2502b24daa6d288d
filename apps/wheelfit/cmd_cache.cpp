// `wheelfit cache info|prune|clean`: the arguments -> api::cache() (the façade) -> the report or
// the JSON.
#include <iostream>

#include "cli.hpp"

namespace wheelfit::cli {

int run_cache(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, api::options::kCache);
  const bool as_json = args.has("--json");
  if (args.positional.size() != 1) throw UsageError{"cache: give one of info, prune, clean"};
  api::CacheRequest request;
  const std::string& action = args.positional.front();
  if (action == "info") request.action = api::CacheAction::info;
  else if (action == "prune") request.action = api::CacheAction::prune;
  else if (action == "clean") request.action = api::CacheAction::clean;
  else throw UsageError{"cache: unknown action '" + action + "' (info, prune or clean)"};
  request.cache_dir = args.value("--cache-dir");
  request.max_size = cache_max_size(args);
  const auto result = api::cache(request);
  if (result.error) return fail(as_json, result.exit_code, result.error->message);
  show(std::cout, as_json ? result.json() : result.report());
  return api::kExitResolved;
}

}  // namespace wheelfit::cli
