// `wheelfit doctor`: every installed distribution with compiled modules, judged on the seven
// demands against this machine (or --machine FILE); what will not run here and why.
#include <boost/json.hpp>
#include <iostream>

#include "cli.hpp"
#include "wheelfit/inspect/doctor.hpp"
#include "wheelfit/machine/interpreter.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {
namespace json = boost::json;

int run_doctor(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, {"--python", "--machine", "--policy", "--site"}, {"--json"});
  const bool as_json = args.has("--json");
  if (!args.positional.empty()) throw UsageError{"doctor: unexpected argument '" + args.positional[0] + "'"};

  registry::Registry reg;
  auto target = judge_target(args, reg);
  if (!target) return fail(as_json, kBadInput, target.error().message);

  // The site folders: --site DIR, else the interpreter's (asked by the detection, or now).
  std::vector<std::string> sites;
  if (auto site = args.value("--site")) {
    sites.push_back(*site);
  } else if (target->interpreter) {
    sites = target->interpreter->info.site_dirs;
  } else {
    machine::InterpreterOptions options;
    options.python = args.value("--python").value_or("python3");
    options.path_env = env("PATH").value_or("");
    options.cache_dir = machine::default_cache_dir(machine::process_env());
    auto facts = machine::inspect_interpreter(options);
    if (!facts) return fail(as_json, kBadInput, "--python: " + facts.error().message);
    sites = facts->info.site_dirs;
  }
  if (sites.empty()) return fail(as_json, kBadInput, "no site folder to walk: the interpreter names none (give --site DIR)");

  auto report = inspect::doctor(sites, target->machine, target->policy);
  if (!report) return fail(as_json, kBadInput, report.error().message);

  if (as_json) {
    json::array dists;
    for (const auto& d : report->dists) {
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
    for (const auto& s : report->site_dirs) site_dirs.emplace_back(json::string(s));
    for (const auto& n : report->notes) notes.emplace_back(json::string(n));
    std::cout << json::serialize(json::object{{"site_dirs", site_dirs},
                                              {"distributions", report->distributions},
                                              {"ok", report->ok()},
                                              {"dists", dists},
                                              {"notes", notes}})
              << "\n";
    return report->ok() ? kOk : kUnresolved;
  }

  std::cout << "site folders:";
  for (const auto& s : report->site_dirs) std::cout << " " << s;
  std::cout << "\n" << report->distributions << " distributions, " << report->dists.size() << " with compiled modules\n\n";
  std::size_t failing = 0;
  for (const auto& d : report->dists) {
    std::vector<const inspect::DemandReport*> bad;
    for (const auto& r : d.explanation.demands)
      if (r.verdict == inspect::Verdict::fails) bad.push_back(&r);
    std::cout << d.name << " " << d.version << " (" << d.modules.size() << " compiled file" << (d.modules.size() == 1 ? "" : "s") << "): ";
    if (bad.empty()) {
      std::cout << "ok\n";
      continue;
    }
    ++failing;
    std::string names;
    for (const auto* r : bad) names += (names.empty() ? "" : ", ") + std::string(r->name);
    std::cout << "WILL NOT RUN (" << names << ")\n";
    for (const auto* r : bad) {
      std::cout << "  " << r->name << ": wheel " << r->wheel << "; machine " << r->machine << "\n"
                << "    " << r->detail << "\n";
    }
    for (const auto& w : d.explanation.warnings) std::cout << "  warning: " << w << "\n";
  }
  if (!report->notes.empty()) {
    std::cout << "\nnotes:\n";
    for (const auto& n : report->notes) std::cout << "  - " << n << "\n";
  }
  std::cout << "\n" << (failing == 0 ? "everything compiled here fits this machine" : std::to_string(failing) + " distribution" +
                                                                                      (failing == 1 ? "" : "s") + " will not run here")
            << "\n";
  return report->ok() ? kOk : kUnresolved;
}

}  // namespace wheelfit::cli
