// `wheelfit detect`: the arguments -> api::detect() (the façade) -> the report or the JSON.
#include <iostream>

#include "cli.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {

int run_detect(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, api::options::kDetect);
  const bool as_json = args.has("--json");
  if (!args.positional.empty()) throw UsageError{"detect: unexpected argument '" + args.positional.front() + "'"};
  // The façade loads the plugins while the interpreter starts; an unusable folder is a note.
  api::DetectRequest request;
  request.python = args.value("--python");
  request.backend = args.value("--backend");
  const auto result = api::detect(request);
  if (result.error) return fail(as_json, result.exit_code, result.error->message);
  show(std::cout, as_json ? result.json() : result.report());
  return api::kExitResolved;
}

}  // namespace wheelfit::cli
