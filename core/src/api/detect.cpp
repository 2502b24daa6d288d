// wheelfit::api::detect(): this machine as wheelfit sees it, and the texts `wheelfit detect` prints.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include <boost/json.hpp>

#include "wheelfit/api/results.hpp"
#include "wheelfit/session/session.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api {
namespace {

namespace json = boost::json;

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
                      {"torch_lib", f.torch_lib.empty() ? json::value(nullptr) : json::value(f.torch_lib)},
                      {"cached", f.info_cached}};
}

}  // namespace

std::string DetectResult::json() const {
  if (error || !detection) {
    return json::serialize(json::object{{"error", json::object{{"exit_code", exit_code},
                                                               {"message", error ? error->message : "no result"}}}}) + "\n";
  }
  const machine::Detection& d = *detection;
  // The profile (facts + provenance), then notes, the interpreter and the devices, which
  // `--machine` ignores.
  json::object out = json::parse(machine::to_json(d.machine)).as_object();
  json::array notes;
  for (const auto& n : d.notes) notes.emplace_back(json::string(n));
  out["notes"] = std::move(notes);
  out["interpreter"] = d.interpreter ? json::value(interpreter_json(*d.interpreter)) : json::value(nullptr);
  json::array devices;
  for (const auto& g : d.devices) devices.emplace_back(json::object{{"index", g.index}, {"name", g.name}, {"target", g.target}});
  out["devices"] = std::move(devices);
  return json::serialize(out) + "\n";
}

std::string DetectResult::report() const {
  if (error || !detection) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  const machine::Detection& d = *detection;
  std::ostringstream out;
  const json::object profile = json::parse(machine::to_json(d.machine)).as_object();
  const json::object& provenance = profile.at("provenance").as_object();
  // variant_properties is no detected fact: shown only when an override or profile gave it.
  std::vector<std::string_view> keys;
  for (auto key : machine::profile_keys())
    if (key != "variant_properties" || profile.if_contains(key)) keys.push_back(key);
  std::size_t width = 0;
  for (auto key : keys) width = std::max(width, key.size());
  for (auto key : keys) {
    out << std::left << std::setw(static_cast<int>(width + 2)) << key;
    if (const auto* v = profile.if_contains(key)) {
      const std::string value = fact_text(*v);
      out << std::setw(16) << value;
      if (const auto* p = provenance.if_contains(key)) out << (value.size() >= 16 ? "  " : "") << p->as_string().c_str();
    } else {
      out << "unknown";
    }
    out << "\n";
  }
  if (!d.devices.empty()) {
    out << "\nGPUs (" << d.machine.backend.value_or("?") << "):\n";
    for (const auto& g : d.devices) {
      out << "  " << g.index << "  " << (g.target.empty() ? "?" : g.target) << (g.name.empty() ? "" : "  " + g.name) << "\n";
    }
  }
  if (d.interpreter) {
    const auto& f = *d.interpreter;
    out << "\ninterpreter: " << f.path;
    if (!f.info.executable.empty() && f.info.executable != f.path) out << " (runs " << f.info.executable << ")";
    out << ", " << f.info.implementation << " " << version_text(f.info.version) << (f.info_cached ? ", cached" : "") << "\n";
    for (const auto& [name, dist] : f.packages) out << "  " << name << " " << dist.version << "\n";
  }
  if (!d.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : d.notes) out << "  - " << n << "\n";
  }
  return out.str();
}

DetectResult detect(const DetectRequest& req) {
  const log::ScopedSink call_log(req.log_sink);
  DetectResult r;
  registry::Registry owned;
  const registry::Registry* reg = req.backends ? req.backends : &owned;
  machine::DetectOptions options;
  options.python = req.python;
  options.backend = req.backend;
  options.label_backend = [&reg](std::string_view label) { return backend_of_torch_label(*reg, label); };
  std::optional<std::string> load_note;
  // Without the caller's backends, the plugins load while the interpreter starts; a plugin
  // folder that cannot be used is a note: the rest of the machine is still told.
  auto det = machine::detect_machine(options, [&] {
    if (!req.backends) {
      auto report = registry::load_plugins(owned, registry::plugin_dirs());
      if (!report.ok()) load_note = "backend plugins: " + report.error->message + "; no backend detection ran";
      for (const auto& s : report.skipped) {
        if (s.kind != registry::SkipReason::not_plugin_name) log::warn("plugin " + s.file.string() + " skipped: " + s.reason);
      }
    }
    return detect_backends(*reg);
  });
  if (!det) return detail::failed(std::move(r), kExitBadInput, det.error().message);
  if (load_note) det->notes.insert(det->notes.begin(), *load_note);
  if (req.backend && *req.backend != "cpu" && !reg->find(*req.backend)) {
    std::string known = "cpu";
    for (const auto& name : reg->names()) known += ", " + name;
    return detail::failed(std::move(r), kExitBadInput, "--backend: unknown backend '" + *req.backend + "' (known: " + known + ")");
  }
  r.exit_code = kExitResolved;
  r.detection = std::move(*det);
  return r;
}

}  // namespace wheelfit::api
