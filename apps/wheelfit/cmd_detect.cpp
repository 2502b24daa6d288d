// `wheelfit detect`: the machine as wheelfit sees it (the flat profile `--machine` reads), which
// source answered each fact, and why earlier sources did not. Also detect_host(), the detection
// `resolve` runs when no --machine is given.
#include <boost/json.hpp>
#include <iomanip>
#include <iostream>
#include <set>

#include "cli.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {
namespace json = boost::json;

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

namespace {

std::string fact_text(const json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_array()) {
    if (v.get_array().empty()) return "none";
    std::string out;
    for (const auto& item : v.get_array()) out += (out.empty() ? "" : ", ") + fact_text(item);
    return out;
  }
  return json::serialize(v);
}

std::string version_text(const std::vector<int>& v) {
  std::string out;
  for (int n : v) out += (out.empty() ? "" : ".") + std::to_string(n);
  return out;
}

json::object interpreter_json(const machine::InterpreterFacts& f) {
  json::object packages;
  for (const auto& [name, d] : f.packages) packages[name] = json::object{{"version", d.version}, {"metadata", d.metadata}};
  json::array dirs;
  for (const auto& d : f.info.site_dirs) dirs.emplace_back(json::string(d));
  return json::object{{"path", f.path},
                      {"executable", f.info.executable},
                      {"implementation", f.info.implementation},
                      {"version", version_text(f.info.version)},
                      {"abiflags", f.info.abiflags},
                      {"machine", f.info.machine},
                      {"venv", f.info.venv_config.empty() ? json::value(nullptr) : json::value(f.info.prefix)},
                      {"site_dirs", std::move(dirs)},
                      {"packages", std::move(packages)},
                      {"cached", f.info_cached}};
}

// The detection as one JSON object: the profile (facts + provenance), then notes, the
// interpreter and the devices, which `--machine` ignores.
json::object detection_json(const machine::Detection& d) {
  json::object out = json::parse(machine::to_json(d.machine)).as_object();
  json::array notes;
  for (const auto& n : d.notes) notes.emplace_back(json::string(n));
  out["notes"] = std::move(notes);
  out["interpreter"] = d.interpreter ? json::value(interpreter_json(*d.interpreter)) : json::value(nullptr);
  json::array devices;
  for (const auto& g : d.devices) devices.emplace_back(json::object{{"index", g.index}, {"name", g.name}, {"target", g.target}});
  out["devices"] = std::move(devices);
  return out;
}

void print_human(const machine::Detection& d) {
  const json::object profile = json::parse(machine::to_json(d.machine)).as_object();
  const json::object& provenance = profile.at("provenance").as_object();
  std::size_t width = 0;
  for (auto key : machine::profile_keys()) width = std::max(width, key.size());
  for (auto key : machine::profile_keys()) {
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << key;
    if (const auto* v = profile.if_contains(key)) {
      const std::string value = fact_text(*v);
      std::cout << std::setw(16) << value;
      if (const auto* p = provenance.if_contains(key)) std::cout << (value.size() >= 16 ? "  " : "") << p->as_string().c_str();
    } else {
      std::cout << "unknown";
    }
    std::cout << "\n";
  }
  if (!d.devices.empty()) {
    std::cout << "\nGPUs (" << d.machine.backend.value_or("?") << "):\n";
    for (const auto& g : d.devices) {
      std::cout << "  " << g.index << "  " << (g.target.empty() ? "?" : g.target) << (g.name.empty() ? "" : "  " + g.name) << "\n";
    }
  }
  if (d.interpreter) {
    const auto& f = *d.interpreter;
    std::cout << "\ninterpreter: " << f.path;
    if (!f.info.executable.empty() && f.info.executable != f.path) std::cout << " (runs " << f.info.executable << ")";
    std::cout << ", " << f.info.implementation << " " << version_text(f.info.version) << (f.info_cached ? ", cached" : "")
              << "\n";
    for (const auto& [name, dist] : f.packages) std::cout << "  " << name << " " << dist.version << "\n";
  }
  if (!d.notes.empty()) {
    std::cout << "\nnotes:\n";
    for (const auto& n : d.notes) std::cout << "  - " << n << "\n";
  }
}

}  // namespace

int run_detect(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, {"--python", "--backend"}, {"--json"});
  const bool as_json = args.has("--json");
  if (!args.positional.empty()) throw UsageError{"detect: unexpected argument '" + args.positional.front() + "'"};
  // A plugin folder that cannot be used is a note here: the rest of the machine is still told.
  registry::Registry reg;
  auto det = detect_host(reg, true, args.value("--python"), args.value("--backend"));
  if (!det) return fail(as_json, kBadInput, det.error().message);
  if (auto b = args.value("--backend"); b && *b != "cpu" && !reg.find(*b)) {
    std::string known = "cpu";
    for (const auto& name : reg.names()) known += ", " + name;
    return fail(as_json, kBadInput, "--backend: unknown backend '" + *b + "' (known: " + known + ")");
  }
  if (as_json) std::cout << json::serialize(detection_json(*det)) << "\n";
  else print_human(*det);
  return kOk;
}

}  // namespace wheelfit::cli
