// wheelfit::download() and wheelfit::mirror(): a resolve (one machine or a fleet), the picked
// wheels fetched and verified (deliver/download.hpp), and for a mirror a static index published
// (mirror/mirror.hpp).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include <boost/json.hpp>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/answer/answer.hpp"
#include "wheelfit/resolve/torch_family.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/utc_time.hpp"
#include "wheelfit/api.hpp"

#include "wheelfit/api/results.hpp"
#include "wheelfit/session/session.hpp"

namespace wheelfit::api {
namespace {

namespace json = boost::json;

/// The answer of a fleet's machines (answer/answer.hpp); `variants_files`: with the variants
/// files of the variant wheels among the picks (a mirror publishes them; a download folder holds
/// wheels only).
answer::Answer answer_of(const FleetResult& fleet, bool variants_files) {
  std::vector<answer::MachineInput> in;
  for (std::size_t m = 0; m < fleet.machines.size(); ++m) {
    const auto& r = fleet.machines[m];
    in.push_back({fleet.fleet[m].name, r.resolution.get(), r.index.get(), r.index_url, r.machine.python});
  }
  return answer::build(in, answer::BuildOptions{variants_files});
}

/// A fleet of one: the single resolve, named after its machine profile (or "this machine").
FleetResult fleet_of_one(ResolveResult r, const ResolveRequest& req) {
  FleetResult f;
  f.exit_code = r.exit_code;
  if (r.error && !r.resolution) f.error = r.error;
  f.fleet.push_back({req.machine ? "machine" : "this machine", r.machine});
  f.machines.push_back(std::move(r));
  f.index_reads = 1;
  f.resolves = 1;
  return f;
}

FleetResult resolve_all(const ResolveRequest& req, const std::vector<FleetMachine>& fleet) {
  if (fleet.empty()) return fleet_of_one(resolve(req), req);
  return resolve_fleet(req, fleet);
}

/// The transport the wheels are fetched with: the caller's, else one made from the resolve's
/// network options, with the index URL's credentials for its origin (a private mirror's wheels
/// need them as its pages do), and those of each URL in `torch` (--torch-index), whose value
/// becomes the URL without them.
Expected<std::shared_ptr<net::Transport>> download_transport(const ResolveRequest& req, unsigned jobs,
                                                                   std::map<std::string, std::string>* torch = nullptr) {
  if (req.transport) return req.transport;
  const auto& transports = session::transports_of(req.transports);
  net::StackOptions options;  // no cache: wheels are fetched once, into DIR
  options.network = req.network;
  options.network.jobs = jobs;
  options.network.per_host = jobs;
  if (req.index && transports.facts(*req.index).credentials) {
    auto clean = session::take_credentials(*req.index, "--index", session::env("WHEELFIT_INDEX_TOKEN"), options.network, transports);
    if (!clean) return clean.error();
  }
  if (torch) {
    for (auto& [url, clean] : *torch) {
      if (!transports.facts(url).credentials) continue;
      auto taken = session::take_credentials(url, "--torch-index", std::nullopt, options.network, transports);
      if (!taken) return Error(taken.error().code, "--with-torch: " + taken.error().message);
      clean = std::move(*taken);
    }
  }
  auto made = transports.make(options);
  if (!made) return made.error();
  return std::shared_ptr<net::Transport>(std::move(*made));
}

/// Fetches the wheels into `dir`; the exit code (kExitDownload when one failed) and the files.
/// `made`: the transport the caller already made for this fetch (download_transport), if any.
int fetch(const ResolveRequest& req, const std::vector<answer::File>& wheels, const std::filesystem::path& dir, unsigned jobs,
          bool locked, const deliver::ProgressHook& progress, std::vector<deliver::Delivered>& files,
          std::optional<Error>& error, std::shared_ptr<net::Transport> made = nullptr) {
  if (jobs < 1 || jobs > 64) {
    error = Error(Errc::invalid_input, "--jobs: " + std::to_string(jobs) + " is not from 1 to 64");
    return kExitBadInput;
  }
  if (wheels.empty()) return kExitResolved;
  auto transport = made ? Expected<std::shared_ptr<net::Transport>>(std::move(made)) : download_transport(req, jobs);
  if (!transport) {
    error = Error(Errc::invalid_input, util::redact(transport.error().message));
    return kExitBadInput;
  }
  std::vector<deliver::Wanted> wanted;
  for (const auto& w : wheels) wanted.push_back({w.url, w.filename, w.sha256, std::nullopt});
  deliver::DownloadOptions options;
  options.dir = dir;
  options.progress = progress;
  options.offline = req.offline;
  options.locked = locked;
  files = deliver::download(**transport, wanted, options);
  const auto failed = std::count_if(files.begin(), files.end(), [](const auto& f) { return f.status == deliver::Delivered::Status::failed; });
  if (failed == 0) return kExitResolved;
  const auto first = std::find_if(files.begin(), files.end(), [](const auto& f) { return f.error.has_value(); });
  error = Error(Errc::io_error, std::to_string(failed) + " of " + std::to_string(files.size()) + " wheel" +
                                    (files.size() == 1 ? "" : "s") + " could not be downloaded" +
                                    (first != files.end() ? ": " + first->error->message : std::string()));
  return kExitDownload;
}

const char* status_name(deliver::Delivered::Status s) {
  switch (s) {
    case deliver::Delivered::Status::fetched: return "fetched";
    case deliver::Delivered::Status::present: return "present";
    case deliver::Delivered::Status::failed: break;
  }
  return "failed";
}

json::array downloads_json(const std::vector<deliver::Delivered>& files) {
  json::array out;
  for (const auto& f : files) {
    json::object o{{"filename", f.filename}, {"url", util::redact(f.url)}, {"path", f.path.string()},
                   {"bytes", f.bytes}, {"sha256", f.sha256}, {"status", status_name(f.status)},
                   {"verified", f.verified}, {"resumed", f.resumed}, {"continued", f.continued}};
    o["error"] = f.error ? json::value(util::redact(f.error->message)) : json::value(nullptr);
    out.push_back(std::move(o));
  }
  return out;
}

std::string downloads_text(const std::vector<deliver::Delivered>& files) {
  if (files.empty()) return {};
  std::string out = "downloads:\n";
  std::uint64_t fetched = 0, present = 0;
  std::size_t failed = 0;
  for (const auto& f : files) {
    out += "  " + std::string(status_name(f.status)) + "  " + f.filename;
    if (f.status == deliver::Delivered::Status::failed) {
      ++failed;
      std::string why = util::redact(f.error ? f.error->message : "failed");
      if (why.starts_with(f.filename + ": ")) why.erase(0, f.filename.size() + 2);  // named once on the line
      out += ": " + why + "\n";
      continue;
    }
    (f.status == deliver::Delivered::Status::fetched ? fetched : present) += f.bytes;
    out += "  " + util::human_bytes(f.bytes) + (f.verified ? "  sha256 verified" : "  sha256 not published: not verified") +
           (f.resumed ? "  (resumed)" : f.continued ? "  (continued after a cut)" : "") + "\n";
  }
  out += "total: " + util::human_bytes(fetched) + " fetched, " + util::human_bytes(present) + " already there";
  if (failed) out += ", " + std::to_string(failed) + " failed";
  return out + "\n";
}

/// The resolve JSON (one machine's object, or the fleet's) to `sink`, then the keys of `more`
/// after its own: the text spliced, not parsed again (a fleet's runs to gigabytes).
void write_resolved_json(const FleetResult& r, bool is_fleet, const json::object& more, const TextSink& sink) {
  if (is_fleet || r.machines.empty()) {
    r.write_json(sink, false);
  } else {
    const std::string one = r.machines.front().json();
    sink(std::string_view(one).substr(0, one.size() - 2));  // its "}\n" held back
  }
  const std::string keys = json::serialize(more);
  sink(keys.size() > 2 ? "," + keys.substr(1) + "\n" : std::string("}\n"));
}

void write_resolved_report(const FleetResult& r, bool is_fleet, const TextSink& sink) {
  if (is_fleet || r.machines.empty()) r.write_report(sink);
  else sink(r.machines.front().report());
}

/// The exit code of a folder that could not be made or locked: 2 when another run holds it
/// (--no-wait) or it is not wheelfit's, 6 when the system refused (EACCES, ENOSPC, EIO).
int folder_code(const Error& e) { return e.code == Errc::io_error ? kExitOutput : kExitBadInput; }

std::string error_json(int code, const Error& e) {
  return json::serialize(json::object{{"error", json::object{{"exit_code", code}, {"message", util::redact(e.message)}}}}) + "\n";
}

std::string utc_now() { return util::format_utc(std::chrono::system_clock::now(), "%Y-%m-%dT%H:%M:%SZ"); }

/// "cu12.8/torch2.8", the tier, the status of each machine, for the manifest. A failed machine's
/// status is its class ("bad input"): mirror.json is served with the pages, and the message (in
/// the run's report) names local paths.
mirror::Machine manifest_machine(const std::string& name, const ResolveResult& r) {
  mirror::Machine m;
  m.name = name;
  m.combo = m.tier = "-";
  m.status = "resolved";
  if (r.resolution && r.resolution->combo) m.combo = r.resolution->combo_str(*r.resolution->combo);
  if (r.resolution && r.resolution->tier) m.tier = *r.resolution->tier;
  if (r.error) m.status = r.status_class();
  else if (!r.resolution || !r.resolution->ok()) m.status = "unresolved";
  return m;
}

}  // namespace

DownloadResult download(const DownloadRequest& req) {
  DownloadResult out;
  out.is_fleet = req.fleet.size() > 1;
  if (req.dir.empty()) return detail::failed(std::move(out), kExitBadInput, "download: give the folder (-d DIR)");
  out.resolved = resolve_all(req.resolve, req.fleet);
  out.exit_code = out.resolved.exit_code;
  if (out.resolved.error) {
    out.error = out.resolved.error;
    return out;
  }
  const auto wheels = answer_of(out.resolved, false).files;
  // Held while anything is written: a second run on DIR waits (or, --no-wait, stops) before it
  // opens a part; a resolve that picks nothing creates no folder.
  std::optional<util::FolderLock> lock;
  if (!wheels.empty()) {
    auto taken = deliver::lock_folder(req.dir, {.wait = req.wait, .deadline = {}, .purpose = "downloading into " + req.dir});
    if (!taken) return detail::failed(std::move(out), folder_code(taken.error()), taken.error().message);
    lock.emplace(std::move(*taken));
  }
  std::optional<Error> failure;
  const int code = fetch(req.resolve, wheels, req.dir, req.jobs, true, req.progress, out.files, failure);
  if (code == kExitBadInput) {
    out.exit_code = code;
    out.error = failure;
    return out;
  }
  out.exit_code = std::max(out.exit_code, code);
  return out;
}

void DownloadResult::write_json(const TextSink& sink) const {
  if (error) return sink(error_json(exit_code, *error));
  write_resolved_json(resolved, is_fleet, json::object{{"downloads", downloads_json(files)}}, sink);
}

void DownloadResult::write_report(const TextSink& sink) const {
  if (error) return sink("wheelfit: " + util::redact(error->message) + "\n");
  write_resolved_report(resolved, is_fleet, sink);
  sink(downloads_text(files));
}

std::string DownloadResult::json() const {
  return detail::collected([this](const TextSink& sink) { write_json(sink); });
}

std::string DownloadResult::report() const {
  return detail::collected([this](const TextSink& sink) { write_report(sink); });
}

namespace {

/// --with-torch: the torch family of each resolved machine whose torch can run on its GPUs added
/// to `answer` (resolve::torch_family), the others named in `out.torch_set_aside`; `transport`
/// the one made for it, which the fetch reuses. kExitResolved, or the run's exit code with
/// `out.error` set: nothing is fetched or published without the whole family.
int add_torch_family(const MirrorRequest& req, MirrorResult& out, answer::Answer& answer, std::shared_ptr<net::Transport>& transport) {
  std::vector<resolve::TorchMachine> machines;
  for (std::size_t m = 0; m < out.resolved.machines.size(); ++m) {
    const ResolveResult& r = out.resolved.machines[m];
    machines.push_back({out.resolved.fleet[m].name, r.resolution.get(), &r.machine});
  }
  auto bases = resolve::torch_index_urls(machines, req.torch_index);  // their credentials go to the transport
  auto made = download_transport(req.resolve, req.jobs, &bases);
  if (!made) {
    out = detail::failed(std::move(out), kExitBadInput, made.error().message);
    return kExitBadInput;
  }
  transport = *made;
  resolve::TorchChooser chooser(
      [t = transport](const std::string& base, const std::vector<std::string>& names) { return index::read_index(*t, base, names); },
      bases, "--with-torch");
  auto found = resolve::torch_family(machines, req.torch_index, chooser);
  if (!found) {
    out.error = Error(found.error().code, util::redact(found.error().message));
    return kExitDownload;
  }
  out.torch_choices = found->choices;
  for (auto& t : found->set_aside) {
    for (auto& m : answer.machines) {
      if (m.name == t.machine) m.torch_set_aside = t.reason;
    }
    out.torch_set_aside.push_back({std::move(t.machine), std::move(t.combo), std::move(t.reason)});
  }
  answer::add_torch_family(answer, std::move(found->files));
  return kExitResolved;
}

/// The error of fetched files that no sha256 upstream verified, unless --allow-unverified.
std::optional<Error> unverified_error(const MirrorRequest& req, const std::vector<deliver::Delivered>& files) {
  std::vector<std::string> unverified;
  for (const auto& f : files) {
    if (!f.verified) unverified.push_back(f.filename);
  }
  if (unverified.empty() || req.allow_unverified) return std::nullopt;
  return Error(Errc::invalid_input,
               std::to_string(unverified.size()) + " wheel" + (unverified.size() == 1 ? " has" : "s have") +
                   " no sha256 upstream (neither its page nor packages.json publishes one): " + unverified.front() +
                   (unverified.size() > 1 ? " and " + std::to_string(unverified.size() - 1) + " more" : std::string()) +
                   "; nothing is published (--allow-unverified publishes them, marked \"verified\": false in mirror.json)");
}

/// What a mirror publishes (mirror::publish): the fetched files, each machine's view with its lock
/// files written from the answer through the format table, the upstream's packages.json facts.
mirror::Snapshot snapshot_of(const MirrorRequest& req, const MirrorResult& out, answer::Answer& answer) {
  mirror::Snapshot s;
  s.out = req.out;
  s.base_url = req.base_url;
  s.prune = req.prune && !out.prune_skipped;
  s.locked = true;
  s.upstream_time = utc_now();
  std::set<std::string> projects;
  for (const auto& w : answer.files) projects.insert(w.project);
  for (const auto& r : out.resolved.machines) {
    if (!r.index_url.empty()) s.upstream = util::redact(r.index_url);
    if (!r.index || !r.index->packages_json) continue;
    // packages.json's own facts: its repo, and each mirrored project's torch_free.
    const auto& pj = *r.index->packages_json;
    if (s.repo.empty()) s.repo = util::redact(pj.repo);
    for (const auto& [name, entry] : pj.packages) {
      const bool known = std::any_of(s.torch_free.begin(), s.torch_free.end(), [&](const auto& tf) { return tf.first == name; });
      if (projects.count(name) && !known) s.torch_free.emplace_back(name, entry.torch_free);
    }
  }
  mirror::take_delivered(answer, out.files);  // the views lock the files as the mirror serves them
  for (std::size_t m = 0; m < out.resolved.machines.size(); ++m) {
    const ResolveResult& r = out.resolved.machines[m];
    mirror::Machine machine = manifest_machine(out.resolved.fleet[m].name, r);
    const answer::Machine& am = answer.machines[m];
    if (machine.status == "resolved") {
      const output::ReportContext context = r.report_context();
      machine.lock_files = mirror::view_files(answer, am, {r.resolution.get(), &context}, req.base_url,
                                              req.with_torch && am.torch_set_aside.empty());
    }
    s.machines.push_back(std::move(machine));
  }
  s.files = mirror::files_of(answer, out.files);
  return s;
}

/// The request's own errors, before anything is made: none, or why.
std::optional<std::string> mirror_request_problem(const MirrorRequest& req) {
  if (const auto why = mirror::publish_unavailable(); !why.empty()) return std::string(why);
  if (req.fleet.empty()) return "mirror: give the machines (--machine FILE or --machines DIR)";
  if (req.out.empty()) return "mirror: give the output folder (--out DIR)";
  if (req.base_url && !model::url::is_http(*req.base_url)) return "--base-url: '" + *req.base_url + "' is not an http(s) URL";
  if (req.base_url && util::without_userinfo(*req.base_url) != *req.base_url) {
    // Every href, packages.json and mirror.json would publish it: refused, never echoed.
    return "--base-url: '" + util::without_userinfo(*req.base_url) +
           "' was given with a user name or password, which every page, packages.json and "
           "mirror.json would publish: give the URL without them (clients keep the mirror's "
           "credentials in their own index URL or netrc)";
  }
  return std::nullopt;
}

}  // namespace

MirrorResult mirror(const MirrorRequest& req) {
  MirrorResult out;
  if (auto why = mirror_request_problem(req)) return detail::failed(std::move(out), kExitBadInput, *why);
  if (auto ready = mirror::prepare(req.out); !ready) return detail::failed(std::move(out), folder_code(ready.error()), ready.error().message);
  // Held from before the resolve to after the publish: a second run on OUT waits (or stops).
  auto lock = mirror::lock(req.out, req.wait);
  if (!lock) return detail::failed(std::move(out), folder_code(lock.error()), lock.error().message);
  // The door: resolve, the answer, (the torch family), fetch, publish; each a call into its owner.
  out.resolved = resolve_fleet(req.resolve, req.fleet);
  out.exit_code = out.resolved.exit_code;
  if (out.resolved.error) {
    out.error = out.resolved.error;
    return out;
  }
  const bool any_resolved = std::any_of(out.resolved.machines.begin(), out.resolved.machines.end(),
                                        [](const ResolveResult& r) { return r.resolution && r.resolution->ok(); });
  if (!any_resolved) {  // an upstream answering empty pages, a wrong --index: the served tree stays
    out.unpublished = "no machine resolved: nothing was fetched or published, and " + req.out + "/current is as it was";
    return out;
  }
  answer::Answer answer = answer_of(out.resolved, true);
  std::shared_ptr<net::Transport> transport;  // --with-torch's, reused by the fetch
  if (req.with_torch) {
    if (const int code = add_torch_family(req, out, answer, transport); code != kExitResolved) {
      out.exit_code = code;
      return out;
    }
  }
  std::optional<Error> failure;
  const int code = fetch(req.resolve, answer.files, mirror::pool_dir(req.out), req.jobs, false, req.progress, out.files, failure,
                         std::move(transport));
  if (code != kExitResolved) {  // a wheel missing: nothing is published
    out.exit_code = code;
    out.error = failure;
    return out;
  }
  if (auto unverified = unverified_error(req, out.files)) {  // nor when one is not verified
    out.exit_code = kExitDownload;
    out.error = std::move(unverified);
    return out;
  }
  // Pruning trusts that every machine resolved: a run that exits non-zero keeps what it does
  // not pick now.
  out.prune_skipped = req.prune && out.exit_code != kExitResolved;
  auto published = mirror::publish(snapshot_of(req, out, answer));
  if (!published) {
    out.exit_code = folder_code(published.error());
    out.error = Error(published.error().code, util::redact(published.error().message));
    return out;
  }
  out.published = std::move(*published);
  return out;
}

void MirrorResult::write_json(const TextSink& sink) const {
  if (error) return sink(error_json(exit_code, *error));
  json::object o;
  o["downloads"] = downloads_json(files);
  if (published) {
    json::array pruned;
    for (const auto& p : published->pruned) pruned.emplace_back(p);
    o["published"] = json::object{{"root", published->root.string()}, {"id", published->id},
                                  {"files", published->files}, {"projects", published->projects},
                                  {"carried", published->carried}, {"pruned", std::move(pruned)},
                                  {"snapshots_removed", published->snapshots_removed},
                                  {"unverified", published->unverified},
                                  {"views", published->views}};
  } else {
    o["published"] = nullptr;
  }
  o["unpublished"] = unpublished.empty() ? json::value(nullptr) : json::value(unpublished);
  o["prune_skipped"] = prune_skipped;
  if (!torch_set_aside.empty()) {  // only when --with-torch set one aside: the object is otherwise as it was
    json::array set_aside;
    for (const auto& t : torch_set_aside) set_aside.push_back(json::object{{"machine", t.machine}, {"combo", t.combo}, {"reason", t.reason}});
    o["torch_set_aside"] = std::move(set_aside);
  }
  write_resolved_json(resolved, true, o, sink);
}

std::string MirrorResult::json() const {
  return detail::collected([this](const TextSink& sink) { write_json(sink); });
}

std::string MirrorResult::report() const {
  return detail::collected([this](const TextSink& sink) { write_report(sink); });
}

void MirrorResult::write_report(const TextSink& sink) const {
  if (error) return sink("wheelfit: " + util::redact(error->message) + "\n");
  resolved.write_report(sink);
  std::string text = downloads_text(files);
  for (const auto& t : torch_set_aside) {
    text += "--with-torch: machine " + t.machine + ": the torch family of " + t.combo + " is set aside: " + t.reason + "\n";
  }
  if (published) {
    text += "published " + published->root.string() + ": " + std::to_string(published->files) + " wheel" +
            (published->files == 1 ? "" : "s") + " of " + std::to_string(published->projects) + " project" +
            (published->projects == 1 ? "" : "s") + ", " + std::to_string(published->views) + " machine view" +
            (published->views == 1 ? "" : "s") + " (machines/<name>/)";
    if (published->carried) text += ", " + std::to_string(published->carried) + " kept from before (no machine picks them; --prune drops them)";
    if (!published->pruned.empty()) text += ", " + std::to_string(published->pruned.size()) + " pruned";
    if (published->unverified) {
      text += ", " + std::to_string(published->unverified) + " not verified (upstream publishes no sha256; " +
              "mirror.json marks them \"verified\": false)";
    }
    text += "\nserve " + (std::filesystem::path(published->root).parent_path().parent_path() / "current").string() +
            " with any web server; resolve against it with --index <its URL>\n";
  }
  if (prune_skipped) text += "not pruned: --prune acts only in a run where every machine resolves\n";
  if (!unpublished.empty()) text += "not published: " + unpublished + "\n";
  sink(text);
}

}  // namespace wheelfit::api
