// `wheelfit doctor`: the arguments -> api::doctor() (the façade: every installed distribution with
// compiled modules, judged on the seven demands against this machine or --machine FILE) -> the
// report or the JSON. With --url URL: the proxy and the authentication a request to URL would use.
#include <iostream>

#include "cli.hpp"

namespace wheelfit::cli {

int run_doctor(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, api::options::kDoctor);
  const bool as_json = args.has("--json");
  if (!args.positional.empty()) throw UsageError{"doctor: unexpected argument '" + args.positional[0] + "'"};
  api::DoctorRequest request;
  request.python = args.value("--python");
  request.site = args.value("--site");
  request.policy_file = args.value("--policy");
  request.url = args.value("--url");
  if (request.url) request.network = http_options(args);
  return run_and_print(args, request, as_json, [](const auto& r) { return api::doctor(r); });
}

}  // namespace wheelfit::cli
