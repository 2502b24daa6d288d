#include "wheelfit/machine/detect.hpp"

#include <algorithm>
#include <exception>
#include <set>

#include <boost/json.hpp>

#include "wheelfit/util/text.hpp"
#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/model/platform.hpp"

namespace wheelfit::machine {
namespace {
namespace json = boost::json;

// The facts a backend's detection may answer.
constexpr std::string_view kBackendFacts[] = {"driver_version", "driver_line", "gpus"};

bool is_backend_fact(std::string_view key) {
  return std::find(std::begin(kBackendFacts), std::end(kBackendFacts), key) != std::end(kBackendFacts);
}

using util::ascii_upper;

// Unlike util::join, leading "" items vanish (["", "sm_90"] -> "sm_90"): a plugin's payload list and the site
// folders have always been shown this way, and the fact parser would reject the ", sm_90" util::join makes.
std::string join_dropping_leading_empty(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += ", ";
    out += i;
  }
  return out;
}

// Whether an override variable for `key` is set (even to ""): the fact is then decided.
bool overridden(const Getenv& getenv, std::string_view key) {
  if (getenv("WHEELFIT_OVERRIDE_" + ascii_upper(key))) return true;
  for (const auto& other : override_aliases(key)) {
    if (getenv(other)) return true;
  }
  return false;
}

// The text form of a payload fact: a string, or an array of strings ("none" when empty).
std::optional<std::string> fact_text(const json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (!v.is_array()) return std::nullopt;
  std::vector<std::string> items;
  for (const auto& item : v.get_array()) {
    if (!item.is_string()) return std::nullopt;
    items.emplace_back(item.get_string());
  }
  if (items.empty()) return std::string("none");
  return join_dropping_leading_empty(items);
}

// Step 5: the chosen backend's facts; `notes` gets why a fact was not taken.
void take_backend_facts(Detection& det, const BackendReport& report, const Getenv& getenv) {
  for (const auto& [key, value] : report.facts) {
    if (!is_backend_fact(key)) {
      det.notes.push_back(report.backend + ": fact '" + key +
                          "' ignored (a backend answers driver_version, driver_line, gpus)");
      continue;
    }
    if (overridden(getenv, key)) continue;
    const auto p = report.provenance.find(key);
    const std::string origin = report.backend + ": " + (p != report.provenance.end() ? p->second : "detection");
    if (auto r = set_fact(det.machine, key, value, origin); !r) det.notes.push_back(r.error().message + "; ignored");
  }
  det.devices = report.devices;
}

// Step 3, first half: start the target interpreter's query (or take its cached answer). Returns
// nullopt when python and torch are both overridden (the interpreter is not asked).
Expected<std::optional<InterpreterInspection>> start_interpreter(Detection& det, const DetectOptions& options) {
  const Getenv& getenv = options.getenv;
  if (overridden(getenv, "python") && overridden(getenv, "torch")) {
    det.notes.push_back("python and torch come from overrides: the interpreter was not asked");
    return std::optional<InterpreterInspection>();
  }
  InterpreterOptions io;
#ifdef _WIN32
  io.python = options.python.value_or("python");  // Windows installs have no python3.exe
#else
  io.python = options.python.value_or("python3");
#endif
  io.path_env = getenv("PATH").value_or("");
  io.timeout = options.python_timeout;
  if (options.cache_dir) {
    if (!options.cache_dir->empty()) io.cache_dir = *options.cache_dir;
  } else {
    io.cache_dir = default_cache_dir(getenv);
#ifdef _WIN32
    if (!io.cache_dir) det.notes.push_back("interpreter cache: " + std::string(util::no_cache_root_reason()) + "; not cached");
#else
    if (!io.cache_dir) det.notes.push_back("interpreter cache: neither XDG_CACHE_HOME nor HOME is set; not cached");
#endif
  }
  auto started = InterpreterInspection::start(io);
  if (!started) return started.error();
  return std::optional<InterpreterInspection>(std::move(*started));
}

// Step 3, second half: python and torch (and the interpreter's machine) from its answer.
Expected<void> take_interpreter(Detection& det, const DetectOptions& options, Expected<InterpreterFacts> facts) {
  const Getenv& getenv = options.getenv;
  if (!facts) {
    if (options.python) return facts.error().with_context("--python");
    det.notes.push_back("python: " + facts.error().message + "; python and torch are unknown");
    return {};
  }
  Machine& m = det.machine;
  const InterpreterInfo& info = facts->info;
  det.notes.insert(det.notes.end(), facts->notes.begin(), facts->notes.end());
  const std::string origin = "interpreter " + facts->path + (facts->info_cached ? " (cached)" : "");
  if (!overridden(getenv, "python")) {
    if (auto r = set_fact(m, "python", info.python_fact(), origin); !r) det.notes.push_back(r.error().message + "; ignored");
  }
  if (!info.implementation.empty() && info.implementation != "cpython") {
    det.notes.push_back(facts->path + " is " + info.implementation +
                        ", not CPython: the wheels wheelfit picks are CPython builds and will not load in it");
  }
  if (!overridden(getenv, "torch")) {
    if (auto t = facts->packages.find("torch"); t != facts->packages.end()) {
      const std::string torigin = "dist-info " + t->second.metadata + (facts->packages_cached ? " (cached)" : "");
      if (auto r = set_fact(m, "torch", t->second.version, torigin); !r) det.notes.push_back(r.error().message + "; ignored");
    } else {
      det.notes.push_back("torch is not installed for " + facts->path + " (no torch dist-info in " +
                          (info.site_dirs.empty() ? std::string("any site folder")
                                                  : join_dropping_leading_empty(info.site_dirs)) +
                          ")");
    }
  }
  // An interpreter running under emulation reports its own machine: the wheels are for it.
  const std::string arch = model::normalize_cpu_arch(info.machine);
  if (!arch.empty() && arch != m.cpu_arch.value_or("") && !overridden(getenv, "cpu_arch")) {
    const std::string host = m.cpu_arch.value_or("");
    if (auto r = set_fact(m, "cpu_arch", arch, origin + " os.uname().machine"); r && !host.empty()) {
      det.notes.push_back("the host is " + host + " but " + facts->path + " runs as " + arch +
                          " (emulated?): cpu_arch follows the interpreter");
    }
  }
  det.interpreter = std::move(*facts);
  return {};
}

}  // namespace

Expected<BackendReport> parse_backend_payload(std::string_view backend, std::string_view payload) {
  const std::string who = "backend " + std::string(backend) + ": detection payload";
  boost::system::error_code ec;
  const json::value doc = json::parse(payload, ec);
  if (ec) return unexpected(Errc::invalid_input, who + " is not JSON: " + ec.message());
  const json::object* o = doc.if_object();
  if (o == nullptr) return unexpected(Errc::invalid_input, who + " is not a JSON object");
  auto wrong = [&](std::string_view field, std::string_view want) {
    return unexpected(Errc::invalid_input, who + ": \"" + std::string(field) + "\" is not " + std::string(want));
  };
  BackendReport r;
  r.backend = std::string(backend);
  if (const auto* v = o->if_contains("present")) {
    if (!v->is_bool()) return wrong("present", "true or false");
    r.present = v->get_bool();
  }
  if (const auto* v = o->if_contains("error")) {
    if (!v->is_string()) return wrong("error", "a string");
    r.error = std::string(v->get_string());
  }
  if (const auto* v = o->if_contains("facts")) {
    if (!v->is_object()) return wrong("facts", "an object");
    for (const auto& f : v->get_object()) {
      const std::string key(f.key());
      if (auto text = fact_text(f.value())) r.facts.emplace_back(key, *text);
      else r.notes.push_back("fact '" + key + "' is not a string or a list of strings; ignored");
    }
  }
  if (const auto* v = o->if_contains("provenance")) {
    if (!v->is_object()) return wrong("provenance", "an object");
    for (const auto& p : v->get_object()) {
      if (p.value().is_string()) r.provenance.emplace(std::string(p.key()), std::string(p.value().get_string()));
    }
  }
  if (const auto* v = o->if_contains("devices")) {
    if (!v->is_array()) return wrong("devices", "a list");
    for (const auto& d : v->get_array()) {
      const json::object* dev = d.if_object();
      if (dev == nullptr) return wrong("devices", "a list of objects");
      DetectedDevice out;
      out.index = static_cast<int>(r.devices.size());
      if (const auto* i = dev->if_contains("index"); i && i->is_int64()) out.index = static_cast<int>(i->get_int64());
      if (const auto* n = dev->if_contains("name"); n && n->is_string()) out.name = std::string(n->get_string());
      if (const auto* t = dev->if_contains("target"); t && t->is_string()) out.target = std::string(t->get_string());
      r.devices.push_back(std::move(out));
    }
  }
  if (const auto* v = o->if_contains("notes")) {
    if (!v->is_array()) return wrong("notes", "a list");
    for (const auto& n : v->get_array()) {
      if (n.is_string()) r.notes.emplace_back(n.get_string());
    }
  }
  return r;
}

BackendChoice choose_backend(const std::optional<model::Version>& torch, const std::vector<BackendReport>& reports,
                             const LabelBackend& label_backend) {
  std::vector<const BackendReport*> sorted;
  for (const auto& r : reports) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->backend < b->backend; });
  std::vector<std::string> found;
  for (const auto* r : sorted) {
    if (r->present && !r->error) found.push_back(r->backend);
  }

  BackendChoice c;
  if (torch) {
    std::optional<std::string> named;
    if (util::ascii_lower(torch->local()) == "cpu") named = "cpu";
    else if (!torch->local().empty() && label_backend) named = label_backend(torch->local());
    if (named) {
      c.backend = *named;
      c.provenance = "torch " + torch->str() + " (label +" + torch->local() + ")";
      if (c.backend == "cpu") {
        if (!found.empty()) {
          c.notes.push_back("torch " + torch->str() + " is a CPU build although " + util::join(found, ", ") +
                            " detection found hardware; pass --backend " + found.front() + " to resolve for the GPU");
        }
      } else if (std::find(found.begin(), found.end(), c.backend) == found.end()) {
        const bool asked = std::any_of(sorted.begin(), sorted.end(), [&](auto* r) { return r->backend == c.backend; });
        c.notes.push_back("torch " + torch->str() + " is a " + c.backend + " build, but " +
                          (asked ? c.backend + " detection found no hardware" : "no " + c.backend + " detection ran"));
      }
      return c;
    }
  }
  if (!found.empty()) {
    c.backend = found.front();
    c.provenance = c.backend + " detection found hardware";
    if (found.size() > 1) {
      c.notes.push_back("several backends found hardware (" + util::join(found, ", ") + "); chose " + c.backend +
                        "; pass --backend NAME to choose another");
    }
    return c;
  }
  c.backend = "cpu";
  std::vector<std::string> asked;
  for (const auto* r : sorted) asked.push_back(r->backend);
  c.provenance =
      asked.empty() ? "no backend detection ran" : "no backend found hardware (" + util::join(asked, ", ") + ")";
  return c;
}

namespace {

// 4. Each backend's detection run and its payload parsed into a report (`payload_count`: how
// many payloads came); what failed goes to `notes`.
std::vector<BackendReport> run_backends(const BackendDetector& detector, std::size_t& payload_count,
                                        std::vector<std::string>& notes) {
  BackendPayloads payloads;
  if (detector) {
    try {
      payloads = detector();
    } catch (const std::exception& e) {
      notes.push_back(std::string("backend detection failed: ") + e.what());
    }
  }
  payload_count = payloads.size();
  std::vector<BackendReport> reports;
  for (const auto& [name, text] : payloads) {
    auto r = parse_backend_payload(name, text);
    if (!r) {
      notes.push_back(r.error().message);
      continue;
    }
    if (r->error) notes.push_back(name + ": detection failed: " + *r->error);
    reports.push_back(std::move(*r));
  }
  return reports;
}

// 5. The chosen backend's facts from its report; for cpu, "no GPU" when every backend asked
// (each of `payload_count` payloads a report) found none.
void take_chosen_backend(Detection& det, const std::vector<BackendReport>& reports, std::size_t payload_count,
                         const Getenv& getenv) {
  Machine& m = det.machine;
  if (m.backend == "cpu") {
    const bool all_absent = !reports.empty() && reports.size() == payload_count &&
                            std::none_of(reports.begin(), reports.end(), [](const auto& r) { return r.present || r.error; });
    if (all_absent && !overridden(getenv, "gpus")) {
      std::vector<std::string> asked;
      for (const auto& r : reports) asked.push_back(r.backend);
      (void)set_fact(m, "gpus", "none", "no backend found a GPU (" + util::join(asked, ", ") + ")");
    }
  } else if (m.backend) {
    const auto it = std::find_if(reports.begin(), reports.end(), [&](const auto& r) { return r.backend == *m.backend; });
    if (it == reports.end()) {
      det.notes.push_back("no " + *m.backend + " detection ran (no plugin for it, or it has none): its driver and GPU facts are unknown");
    } else {
      take_backend_facts(det, *it, getenv);
    }
  }
}

}  // namespace

Expected<Detection> detect_machine(const DetectOptions& options, const BackendDetector& detector) {
  Detection det;
  Machine& m = det.machine;
  const Getenv& getenv = options.getenv;

  // 1. Overrides.
  if (auto r = apply_env_overrides(m, getenv); !r) return r.error();
  if (options.backend) {
    if (options.backend->find_first_not_of(" \t") == std::string::npos) {
      return unexpected(Errc::invalid_input, "--backend: an empty backend name");
    }
    if (auto r = set_fact(m, "backend", *options.backend, "--backend"); !r) return r.error();
  }

  // 2. The host. An override set to "" keeps its fact unknown.
  if (options.host) {
    std::vector<std::string_view> unknown_on_purpose;
    for (const std::string_view key : {"os", "cpu_arch", "glibc"}) {
      if (overridden(getenv, key) && !m.provenance.count(std::string(key))) unknown_on_purpose.push_back(key);
    }
    fill_from_host(m);
    for (const auto key : unknown_on_purpose) (void)set_fact(m, key, "", "");
  }

  // 3. The interpreter: its query starts now and runs while the backends detect (step 4).
  std::optional<InterpreterInspection> inspection;
  std::optional<Error> start_error;
  if (auto started = start_interpreter(det, options)) {
    inspection = std::move(*started);
  } else if (options.python) {
    return started.error().with_context("--python");
  } else {
    start_error = started.error();
  }

  // 4. The backends' detection.
  std::vector<std::string> backend_notes;
  std::size_t payload_count = 0;
  std::vector<BackendReport> reports = run_backends(detector, payload_count, backend_notes);

  // 3, collected: python, torch.
  if (start_error) {
    if (auto r = take_interpreter(det, options, Expected<InterpreterFacts>(*start_error)); !r) return r.error();
  } else if (inspection) {
    if (auto r = take_interpreter(det, options, inspection->finish()); !r) return r.error();
  }
  det.notes.insert(det.notes.end(), backend_notes.begin(), backend_notes.end());

  // 4, continued: the backend.
  std::sort(reports.begin(), reports.end(), [](const auto& a, const auto& b) { return a.backend < b.backend; });
  if (!m.backend && !overridden(getenv, "backend")) {
    BackendChoice choice = choose_backend(m.torch, reports, options.label_backend);
    if (auto r = set_fact(m, "backend", choice.backend, choice.provenance); !r) det.notes.push_back(r.error().message);
    det.notes.insert(det.notes.end(), choice.notes.begin(), choice.notes.end());
  }

  // 5. The chosen backend's facts.
  take_chosen_backend(det, reports, payload_count, getenv);
  for (const auto& r : reports) {
    for (const auto& n : r.notes) det.notes.push_back(r.backend + ": " + n);
  }
  return det;
}

}  // namespace wheelfit::machine
