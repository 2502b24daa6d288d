// `wheelfit detect`: the arguments -> api::detect() (the façade) -> the report or the JSON. Also
// detect_host(), the detection `doctor` runs when no --machine is given.
#include <iostream>

#include "cli.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {

Expected<machine::Detection> detect_host(registry::Registry& reg, bool load, const std::optional<std::string>& python,
                                         const std::optional<std::string>& backend) {
  machine::DetectOptions options;
  options.python = python;
  options.backend = backend;
  options.label_backend = [&reg](std::string_view label) { return backend_of_torch_label(reg, label); };
  std::optional<std::string> load_note;
  auto det = machine::detect_machine(options, [&] {
    if (load) {
      if (auto loaded = load_backends(reg); !loaded) load_note = loaded.error().message + "; no backend detection ran";
    }
    return detect_backends(reg);
  });
  if (det && load_note) det->notes.insert(det->notes.begin(), *load_note);
  return det;
}

int run_detect(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, {"--python", "--backend"}, {"--json"});
  const bool as_json = args.has("--json");
  if (!args.positional.empty()) throw UsageError{"detect: unexpected argument '" + args.positional.front() + "'"};
  // The façade loads the plugins while the interpreter starts; an unusable folder is a note.
  const auto result = api::detect({args.value("--python"), args.value("--backend"), nullptr});
  if (result.error) return fail(as_json, result.exit_code, result.error->message);
  std::cout << (as_json ? result.json() : result.report());
  return kOk;
}

}  // namespace wheelfit::cli
