// `wheelfit explain WHEEL`: the arguments -> an ExplainRequest -> api::explain() (the façade)
// -> the report or the JSON. Also judge_target(), the machine and policy `doctor` judges by.
#include <iostream>

#include "cli.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {

Expected<JudgeTarget> judge_target(const Args& args, registry::Registry& reg) {
  JudgeTarget t;
  if (auto loaded = load_backends(reg); !loaded) return loaded.error();
  if (auto file = args.value("--machine")) {
    auto m = machine::load_machine_profile(*file);
    if (!m) return m.error().with_context("--machine");
    if (auto r = machine::apply_env_overrides(*m, machine::process_env()); !r) return r.error();
    t.machine = std::move(*m);
  } else {
    auto det = detect_host(reg, false, args.value("--python"), std::nullopt);
    if (!det) return det.error();
    for (const auto& note : det->notes) log::debug("detect: " + note);
    t.machine = std::move(det->machine);
    t.interpreter = std::move(det->interpreter);
  }
  // Policy: --policy / WHEELFIT_POLICY, else the judging backend's own data.
  auto backend = judging_backend(reg, std::nullopt, t.machine);
  if (!backend) return backend.error();
  auto policy = judging_policy(**backend, args.value("--policy"));
  if (!policy) return policy.error();
  if (auto targets = resolve::device_targets(t.machine, *policy); !targets) return targets.error();
  t.policy = std::move(*policy);
  return t;
}

int run_explain(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, {"--machine", "--python", "--policy", "--timeout", "--retries", "--user-agent"}, {"--json"});
  const bool as_json = args.has("--json");
  if (args.positional.size() != 1) throw UsageError{"explain: give exactly one WHEEL (a .whl file, its URL, or a wheel file name)"};
  if (args.value("--machine") && args.value("--python")) {
    throw UsageError{"--python names this machine's interpreter; it does not go with --machine"};
  }
  api::ExplainRequest request;
  request.wheel = args.positional[0];
  request.python = args.value("--python");
  request.policy_file = args.value("--policy");
  request.network = http_options(args);
  registry::Registry reg;
  if (auto loaded = load_backends(reg); !loaded) return fail(as_json, kBadInput, loaded.error().message);
  request.backends = &reg;
  if (auto file = args.value("--machine")) {
    auto m = machine::load_machine_profile(*file);
    if (!m) return fail(as_json, kBadInput, "--machine: " + m.error().message);
    request.machine = std::move(*m);
  }
  const auto result = api::explain(request);
  if (result.error) return fail(as_json, result.exit_code, result.error->message);
  std::cout << (as_json ? result.json() : result.report());
  return result.exit_code;
}

}  // namespace wheelfit::cli
