// wheelfit::api::doctor(): the installed distributions judged against a machine, and the texts
// `wheelfit doctor` prints.
#include <sstream>

#include <boost/json.hpp>

#include "wheelfit/api/results.hpp"
#include "wheelfit/session/session.hpp"
#include "wheelfit/machine/interpreter.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api {
namespace json = boost::json;

namespace {

json::object route_json(const net::ProxyPlan& p) {
  json::object o{{"url", p.url},
                 {"proxy", p.proxy ? json::value(json::string(*p.proxy)) : json::value(nullptr)},
                 {"source", p.source},
                 {"method", p.method},
                 {"detail", p.detail}};
  if (!p.note.empty()) o["note"] = p.note;  // Windows: a PAC script / WPAD not followed
  return o;
}

std::string route_report(const net::ProxyPlan& p) {
  std::ostringstream out;
  out << "url:    " << p.url << "\nproxy:  " << p.proxy.value_or("none") << " (" << p.source << ")\nmethod: " << p.method
      << "\n";
  if (!p.detail.empty()) out << "        " << p.detail << "\n";
  if (!p.note.empty()) out << "note:   " << p.note << "\n";
  return out.str();
}

}  // namespace

std::string DoctorResult::json() const {
  if (!error && route) return json::serialize(json::object{{"route", route_json(*route)}}) + "\n";
  if (error || !doctor) {
    return json::serialize(json::object{{"error", json::object{{"exit_code", exit_code},
                                                               {"message", error ? error->message : "no result"}}}}) + "\n";
  }
  json::array dists;
  for (const auto& d : doctor->dists) {
    json::array failing, modules;
    for (const auto& r : d.explanation.demands)
      if (r.verdict == inspect::Verdict::fails) failing.emplace_back(json::string(r.name));
    for (const auto& m : d.modules) modules.emplace_back(json::string(m));
    json::object e = json::parse(explanation_json(d.explanation)).as_object();
    dists.push_back(json::object{{"name", d.name},
                                 {"version", d.version},
                                 {"dist_info", d.dist_info},
                                 {"fits", d.fits()},
                                 {"failing", failing},
                                 {"modules", modules},
                                 {"demands", e["demands"]},
                                 {"files", e["files"]},
                                 {"warnings", e["warnings"]}});
  }
  json::array site_dirs, notes;
  for (const auto& s : doctor->site_dirs) site_dirs.emplace_back(json::string(s));
  for (const auto& n : doctor->notes) notes.emplace_back(json::string(n));
  return json::serialize(json::object{{"site_dirs", site_dirs},
                                      {"distributions", doctor->distributions},
                                      {"ok", doctor->ok()},
                                      {"dists", dists},
                                      {"notes", notes}}) + "\n";
}

std::string DoctorResult::report() const {
  if (!error && route) return route_report(*route);
  if (error || !doctor) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  std::ostringstream out;
  out << "site folders:";
  for (const auto& s : doctor->site_dirs) out << " " << s;
  out << "\n" << doctor->distributions << " distributions, " << doctor->dists.size() << " with compiled modules\n\n";
  std::size_t failing = 0;
  for (const auto& d : doctor->dists) {
    std::vector<const inspect::DemandReport*> bad;
    for (const auto& r : d.explanation.demands)
      if (r.verdict == inspect::Verdict::fails) bad.push_back(&r);
    out << d.name << " " << d.version << " (" << d.modules.size() << " compiled file" << (d.modules.size() == 1 ? "" : "s") << "): ";
    if (bad.empty()) {
      out << "ok\n";
      continue;
    }
    ++failing;
    std::string names;
    for (const auto* r : bad) names += (names.empty() ? "" : ", ") + r->name;
    out << "WILL NOT RUN (" << names << ")\n";
    for (const auto* r : bad) out << "  " << r->name << ": wheel " << r->wheel << "; machine " << r->machine << "\n    " << r->detail << "\n";
    for (const auto& w : d.explanation.warnings) out << "  warning: " << w << "\n";
  }
  if (!doctor->notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : doctor->notes) out << "  - " << n << "\n";
  }
  out << "\n" << (failing == 0 ? "everything compiled here fits this machine"
                               : std::to_string(failing) + " distribution" + (failing == 1 ? "" : "s") + " will not run here")
      << "\n";
  return out.str();
}

DoctorResult doctor(const DoctorRequest& req) {
  const log::ScopedSink call_log(req.log_sink);
  DoctorResult r;
  if (req.url) {  // the network route only: no machine, no interpreter
    const auto* rules = session::transports_of(req.transports).http_rules();
    if (!rules || !rules->plan_proxy) {
      return detail::failed(std::move(r), kExitBadInput, "--url: no http transport is registered to plan a route with");
    }
    auto plan = rules->plan_proxy(req.network, *req.url);
    if (!plan) return detail::failed(std::move(r), kExitBadInput, plan.error().message);
    r.route = std::move(*plan);
    r.exit_code = kExitResolved;
    return r;
  }
  std::unique_ptr<registry::Registry> owned;
  auto reg = session::backends_of(req.backends, owned);
  if (!reg) return detail::failed(std::move(r), kExitBadInput, reg.error().message);

  // The machine: the caller's, or detected (which also asks the interpreter for its site folders).
  machine::Machine m;
  std::optional<machine::InterpreterFacts> interpreter;
  if (req.machine) {
    auto given = session::machine_of(**reg, req.machine, req.env_overrides, std::nullopt, std::nullopt);
    if (!given) return detail::failed(std::move(r), kExitBadInput, given.error().message);
    m = std::move(*given);
  } else {
    machine::DetectOptions options;
    options.python = req.python;
    options.label_backend = [&reg](std::string_view label) { return backend_of_torch_label(**reg, label); };
    auto det = machine::detect_machine(options, [&reg] { return detect_backends(**reg); });
    if (!det) return detail::failed(std::move(r), kExitBadInput, det.error().message);
    for (const auto& note : det->notes) log::debug("detect: " + note);
    m = std::move(det->machine);
    interpreter = std::move(det->interpreter);
  }
  auto policy = session::judging_policy_for(**reg, m, req.policy_file);
  if (!policy) return detail::failed(std::move(r), kExitBadInput, policy.error().message);

  // The site folders: the one given, else the interpreter's (asked by the detection, or now).
  std::vector<std::string> sites;
  if (req.site) {
    sites.push_back(*req.site);
  } else if (interpreter) {
    sites = interpreter->info.site_dirs;
  } else {
    machine::InterpreterOptions options;
    options.python = req.python.value_or("python3");
    options.path_env = session::env("PATH").value_or("");
    options.cache_dir = machine::default_cache_dir(machine::process_env());
    auto facts = machine::inspect_interpreter(options);
    if (!facts) return detail::failed(std::move(r), kExitBadInput, "--python: " + facts.error().message);
    sites = facts->info.site_dirs;
  }
  if (sites.empty()) return detail::failed(std::move(r), kExitBadInput, "no site folder to walk: the interpreter names none (give --site DIR)");

  auto report = inspect::doctor(sites, m, *policy);
  if (!report) return detail::failed(std::move(r), kExitBadInput, report.error().message);
  r.exit_code = report->ok() ? kExitResolved : kExitUnresolved;
  r.doctor = std::move(*report);
  return r;
}

}  // namespace wheelfit::api
