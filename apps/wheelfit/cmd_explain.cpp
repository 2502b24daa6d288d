// `wheelfit explain WHEEL|LIB`: the arguments -> an ExplainRequest -> api::explain() (the façade)
// -> the report or the JSON.
#include <iostream>

#include "cli.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {

int run_explain(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, api::options::kExplain);
  const bool as_json = args.has("--json");
  if (args.positional.size() != 1) throw UsageError{"explain: give exactly one WHEEL (a .whl file, its URL, or a wheel file name) or a library file"};
  if (args.value("--machine") && args.value("--python")) {
    throw UsageError{"--python names this machine's interpreter; it does not go with --machine"};
  }
  api::ExplainRequest request;
  request.wheel = args.positional[0];
  request.python = args.value("--python");
  request.policy_file = args.value("--policy");
  request.network = http_options(args);
  return run_and_print(args, request, as_json, [](const auto& r) { return api::explain(r); });
}

}  // namespace wheelfit::cli
