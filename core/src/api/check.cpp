// wheelfit::check(): each wheel a lock file pins, checked again (wheelfit/api.hpp, decision 0043).
// The door: the locks read (locks/read.hpp); their packages resolved on the machine, which reads
// the index once through the resolve's own transport stack, cache and credentials (api::resolve /
// resolve_fleet); then each entry looked up in that snapshot by its file name (listed? the same
// sha256? yanked?) and judged by its name on each machine (inspect::explain_name, as `explain`
// words it).
#include <algorithm>
#include <map>
#include <memory>

#include <boost/json.hpp>

#include "wheelfit/api.hpp"
#include "wheelfit/api/results.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/locks/read.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/session/session.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::api {
namespace {

namespace json = boost::json;

/// One machine an entry is judged on: its name (for a fleet's reasons) and its policy.
struct Judge {
  std::string name;  ///< "" for a single machine
  const machine::Machine* machine = nullptr;
  std::shared_ptr<const semantics::Policy> policy;  ///< its backend's, shared by the machines judged with it
  std::string error;  ///< why it cannot judge (its profile or backend failed)
};

/// Each page's links parsed as wheel names once (a lock of hundreds of wheels asks each page
/// again for every entry of its project).
class ParsedPages {
 public:
  const std::vector<std::optional<model::WheelName>>& of(const index::ProjectPage& page) {
    auto [it, fresh] = parsed_.try_emplace(&page);
    if (fresh) {
      for (const auto& link : page.page.links) {
        auto w = model::WheelName::parse(link.filename);
        it->second.push_back(w ? std::optional<model::WheelName>(std::move(*w)) : std::nullopt);
      }
    }
    return it->second;
  }

 private:
  std::map<const index::ProjectPage*, std::vector<std::optional<model::WheelName>>> parsed_;
};

/// A file of the index under a locked name: its links of that file name and their digests.
struct Listed {
  std::vector<const index::Link*> links;
  std::vector<std::string> digests;  ///< distinct, the pages' and packages.json's
};

Listed listed(const index::IndexSnapshot& snap, const index::ProjectPage& page, const locks::Entry& e, ParsedPages& parsed) {
  Listed out;
  auto add_digest = [&out](const std::optional<std::string>& d) {
    if (d && std::find(out.digests.begin(), out.digests.end(), *d) == out.digests.end()) out.digests.push_back(*d);
  };
  const auto* names = e.filename.empty() ? &parsed.of(page) : nullptr;
  for (std::size_t i = 0; i < page.page.links.size(); ++i) {
    const index::Link& link = page.page.links[i];
    // By file name; or, pinned by version (name==V --hash), the file of that version with the lock's digest.
    const bool same = names ? (*names)[i] && (*names)[i]->version.str() == e.version && link.sha256 && link.sha256 == e.sha256
                            : link.filename == e.filename;
    if (!same) continue;
    out.links.push_back(&link);
    add_digest(link.sha256);
    if (snap.packages_json) add_digest(snap.packages_json->sha256_for(link.url, link.filename));
  }
  return out;
}

/// A newer build of the locked wheel: the same project, Python, ABI and platform tags and local
/// label (the combo), a higher version, not yanked; the newest such file's name, or "".
std::string update_of(const index::ProjectPage& page, const std::string& filename, ParsedPages& parsed) {
  auto locked = model::WheelName::parse(filename);
  if (!locked) return {};
  const auto same_build = [&locked](const model::WheelName& w) {
    return w.python_tags == locked->python_tags && w.abi_tags == locked->abi_tags && w.platforms.size() == locked->platforms.size() &&
           std::equal(w.platforms.begin(), w.platforms.end(), locked->platforms.begin(),
                      [](const auto& a, const auto& b) { return a.tag == b.tag; }) &&
           w.version.local() == locked->version.local();
  };
  const auto& names = parsed.of(page);
  const model::WheelName* best = nullptr;
  std::string best_name;
  for (std::size_t i = 0; i < page.page.links.size(); ++i) {
    const auto& w = names[i];
    if (page.page.links[i].yanked || !w || !same_build(*w) || !(locked->version < w->version)) continue;
    if (!best || best->version < w->version) {
      best = &*w;
      best_name = page.page.links[i].filename;
    }
  }
  return best_name;
}

/// Why `filename` will not run on the judges ("" when it runs on each, or none can judge it).
std::string will_not_run(const std::string& filename, const std::vector<Judge>& judges) {
  std::string why;
  for (const auto& j : judges) {
    if (!j.policy) continue;
    auto e = inspect::explain_name(filename, *j.machine, *j.policy);
    if (!e || e->fits()) continue;
    std::string fails;
    for (const auto& d : e->demands) {
      if (d.verdict != inspect::Verdict::fails) continue;
      fails += (fails.empty() ? "" : "; ") + d.name + " fails: the wheel needs " + d.wheel + ", the machine has " + d.machine +
               (d.detail.empty() ? "" : " (" + d.detail + ")");
    }
    why += (why.empty() ? "" : "; ") + (j.name.empty() ? fails : "on " + j.name + ": " + fails);
  }
  return why;
}

/// The entry's status against the snapshot (nullptr: the index was not read, `unread` says why)
/// and the judges.
CheckEntry check_entry(const locks::Entry& e, const index::IndexSnapshot* snap, const std::string& unread, const std::vector<Judge>& judges,
                       ParsedPages& parsed) {
  CheckEntry c{e.name, e.version, e.filename, util::strip_credentials(e.url), e.sha256};
  c.line = e.line;
  auto set = [&c](CheckStatus s, std::string reason) {
    c.status = s;
    c.reason = std::move(reason);
    return c;
  };
  if (!snap) return set(CheckStatus::unchecked, unread);
  const auto page = snap->projects.find(e.name);
  if (page == snap->projects.end() || page->second.status == index::ProjectPage::Status::failed) {
    return set(CheckStatus::unchecked, "the index page of " + e.name + " could not be read" +
                                           (page == snap->projects.end() ? std::string() : ": " + page->second.error));
  }
  if (page->second.status == index::ProjectPage::Status::not_published) {
    return set(CheckStatus::gone, "the index no longer publishes " + e.name + " (" + page->second.error + ")");
  }
  const std::string what = e.filename.empty() ? e.name + " " + e.version : e.filename;
  const Listed found = listed(*snap, page->second, e, parsed);
  if (found.links.empty()) {
    return set(CheckStatus::gone, e.filename.empty() ? "no file of " + what + " with the locked sha256 is listed any more"
                                                     : what + " is no longer listed on the index");
  }
  if (!e.filename.empty()) c.update = update_of(page->second, e.filename, parsed);
  for (const auto& d : found.digests) {
    // pip takes a file matching any of a line's hashes: each of the lock's is one it accepts.
    const bool accepted = std::find(e.other_sha256.begin(), e.other_sha256.end(), d) != e.other_sha256.end();
    if (e.sha256 && d != *e.sha256 && !accepted) {
      return set(CheckStatus::digest_changed, "the index lists " + what + " with sha256 " + d + ", the lock " + *e.sha256 +
                                                   ": other bytes under the locked name (unknown; the lock is not updated)");
    }
  }
  for (const auto* link : found.links) {
    if (link->yanked) return set(CheckStatus::yanked, "yanked" + (link->yank_reason.empty() ? std::string() : ": " + link->yank_reason));
  }
  const std::string filename = e.filename.empty() ? found.links.front()->filename : e.filename;
  if (auto why = will_not_run(filename, judges); !why.empty()) return set(CheckStatus::will_not_run, why);
  if (!e.sha256) return set(CheckStatus::unchecked, "the lock pins no sha256 for it: its bytes cannot be checked");
  if (found.digests.empty()) return set(CheckStatus::unchecked, "the index publishes no sha256 for it: its bytes cannot be checked");
  return set(CheckStatus::ok, "");
}

/// The exit code an entry's status asks for.
int code_of(const CheckEntry& e, bool index_unread) {
  switch (e.status) {
    case CheckStatus::ok: return kExitResolved;
    case CheckStatus::digest_changed: return kExitDownload;
    case CheckStatus::unchecked: return index_unread ? kExitUnreadable : kExitUnresolved;
    default: return kExitUnresolved;
  }
}

/// The judges of the resolved machines: each with its judging backend's policy, read once per
/// backend (a fleet's machines share it).
std::vector<Judge> judges_of(const CheckRequest& req, const registry::Registry& reg, const FleetResult& fleet) {
  std::map<std::string, Expected<std::shared_ptr<const semantics::Policy>>> policies;  // by backend
  std::vector<Judge> out;
  for (std::size_t i = 0; i < fleet.machines.size(); ++i) {
    const ResolveResult& r = fleet.machines[i];
    Judge j{req.fleet.empty() ? std::string() : fleet.fleet[i].name, &r.machine, nullptr, ""};
    auto backend = r.error && r.exit_code == kExitBadInput ? Expected<const registry::BackendInfo*>(*r.error)
                                                            : session::judging_backend(reg, req.resolve.backend, r.machine);
    if (!backend) {
      j.error = backend.error().message;
    } else {
      auto [it, fresh] = policies.try_emplace((*backend)->name, nullptr);
      if (fresh) {
        auto policy = session::judging_policy(**backend, req.resolve.policy_file);
        it->second = policy ? Expected<std::shared_ptr<const semantics::Policy>>(std::make_shared<const semantics::Policy>(std::move(*policy)))
                            : Expected<std::shared_ptr<const semantics::Policy>>(policy.error());
      }
      if (it->second) j.policy = *it->second;
      else j.error = it->second.error().message;
    }
    out.push_back(std::move(j));
  }
  return out;
}

/// The packages of the locks, each once, as one environment to resolve.
ResolveRequest resolve_request_of(const CheckRequest& req, const std::vector<locks::LockFile>& files, const registry::Registry& reg) {
  ResolveRequest r = req.resolve;
  r.configs.clear();
  r.backends = &reg;
  std::vector<std::string> names;
  for (const auto& f : files) {
    for (const auto& e : f.entries) {
      if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
    }
    if (!r.index && f.index) r.index = f.index;
  }
  r.envs = {EnvRequest{"lock", std::nullopt, std::move(names)}};
  return r;
}

}  // namespace

std::string_view to_string(CheckStatus s) noexcept {
  switch (s) {
    case CheckStatus::ok: return "ok";
    case CheckStatus::yanked: return "yanked";
    case CheckStatus::gone: return "gone";
    case CheckStatus::digest_changed: return "digest_changed";
    case CheckStatus::will_not_run: return "will_not_run";
    case CheckStatus::unchecked: break;
  }
  return "unchecked";
}

CheckResult check(const CheckRequest& req) {
  const log::ScopedSink call_log(req.resolve.log_sink);
  CheckResult out;
  if (req.locks.empty()) return detail::failed(std::move(out), kExitBadInput, "check: give the lock files (LOCK...)");
  std::vector<locks::LockFile> files;
  for (const auto& path : req.locks) {
    auto lock = locks::read_lock(path);
    if (!lock) return detail::failed(std::move(out), kExitBadInput, lock.error().message);
    files.push_back(std::move(*lock));
  }
  std::unique_ptr<registry::Registry> owned;
  auto reg = session::backends_of(req.resolve.backends, owned);
  if (!reg) return detail::failed(std::move(out), kExitBadInput, reg.error().message);
  const bool any = std::any_of(files.begin(), files.end(), [](const auto& f) { return !f.entries.empty(); });
  // The door: resolve the locks' packages on the machine(s) (the index read once), then judge each entry.
  const ResolveRequest resolve_req = resolve_request_of(req, files, **reg);
  if (any) {
    if (req.fleet.empty()) {
      out.resolved.fleet.push_back({"this machine", {}});
      out.resolved.machines.push_back(resolve(resolve_req));
    } else {
      out.resolved = resolve_fleet(resolve_req, req.fleet);
    }
  }
  if (out.resolved.error) return detail::failed(std::move(out), out.resolved.exit_code, out.resolved.error->message);
  const ResolveResult* first = nullptr;  // whose snapshot the entries are looked up in
  std::string unread;
  for (const auto& r : out.resolved.machines) {
    if (r.index && !first) first = &r;
    if (r.exit_code == kExitNoIndex || (r.exit_code == kExitBadInput && req.fleet.empty())) {
      return detail::failed(std::move(out), r.exit_code, r.error ? r.error->message : "no index");
    }
    if (r.exit_code == kExitUnreadable && unread.empty() && r.error) unread = r.error->message;
  }
  if (first) out.index_url = util::strip_credentials(first->index_url);
  const auto judges = judges_of(req, **reg, out.resolved);
  out.exit_code = kExitResolved;
  for (const auto& j : judges) {  // never "ok" on a machine that was not judged: said, and exit 2
    if (j.policy) continue;
    out.not_judged.push_back((j.name.empty() ? std::string("this machine") : j.name) + ": " + util::redact(j.error));
    out.exit_code = kExitBadInput;
  }
  ParsedPages parsed;
  for (const auto& f : files) {
    CheckedLock lock{f.path, std::string(locks::format_name(f.format)), {}, f.warnings};
    for (const auto& e : f.entries) {
      lock.entries.push_back(check_entry(e, first ? first->index.get() : nullptr, util::redact(unread), judges, parsed));
      out.exit_code = std::max(out.exit_code, code_of(lock.entries.back(), first == nullptr));
    }
    out.locks.push_back(std::move(lock));
  }
  return out;
}

std::string CheckResult::json() const {
  if (error) {
    return json::serialize(json::object{{"error", json::object{{"exit_code", exit_code}, {"message", util::redact(error->message)}}}}) + "\n";
  }
  json::array locks_json;
  for (const auto& l : locks) {
    json::array entries, warnings;
    for (const auto& e : l.entries) {
      entries.push_back(json::object{{"name", e.name},
                                     {"version", e.version},
                                     {"filename", e.filename},
                                     {"url", e.url},
                                     {"sha256", e.sha256 ? json::value(*e.sha256) : json::value(nullptr)},
                                     {"status", to_string(e.status)},
                                     {"reason", util::redact(e.reason)},
                                     {"update", e.update.empty() ? json::value(nullptr) : json::value(e.update)},
                                     {"line", e.line}});
    }
    for (const auto& w : l.warnings) warnings.emplace_back(util::redact(w));
    locks_json.push_back(json::object{{"path", l.path}, {"format", l.format}, {"entries", std::move(entries)}, {"warnings", std::move(warnings)}});
  }
  json::array not_judged_json;
  for (const auto& n : not_judged) not_judged_json.emplace_back(n);
  json::object o{{"locks", std::move(locks_json)}, {"index", index_url}, {"not_judged", std::move(not_judged_json)}, {"exit_code", exit_code}};
  if (resolved.fleet.size() == 1 && !resolved.machines.empty()) {
    o["machine"] = json::parse(machine::to_json(resolved.machines.front().machine));
  } else {
    json::array machines;
    for (std::size_t i = 0; i < resolved.machines.size(); ++i) {
      machines.push_back(json::object{{"name", resolved.fleet[i].name}, {"machine", json::parse(machine::to_json(resolved.machines[i].machine))}});
    }
    o["machines"] = std::move(machines);
  }
  return json::serialize(o) + "\n";
}

std::string CheckResult::report() const {
  if (error) return "wheelfit: " + util::redact(error->message) + "\n";
  std::string out;
  std::map<std::string, std::size_t> counts;
  for (const auto& l : locks) {
    out += l.path + " (" + l.format + "):\n";
    for (const auto& e : l.entries) {
      ++counts[std::string(to_string(e.status))];
      out += "  " + std::string(to_string(e.status)) + "  " + e.name + " " + e.version +
             (e.filename.empty() ? std::string() : "  " + e.filename) + "\n";
      if (!e.reason.empty()) out += "      " + util::redact(e.reason) + "\n";
      if (!e.update.empty()) out += "      update: " + e.update + " (a newer build for the same combo)\n";
    }
    for (const auto& w : l.warnings) out += "  note: " + util::redact(w) + "\n";
  }
  if (!index_url.empty()) out += "index: " + index_url + "\n";
  for (const auto& n : not_judged) out += "not judged on " + n + "\n";
  std::string summary;
  for (const auto& [status, n] : counts) summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  return out + (summary.empty() ? "no wheel is locked\n" : summary + "\n");
}

}  // namespace wheelfit::api
