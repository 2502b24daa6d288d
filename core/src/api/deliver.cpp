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
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/utc_time.hpp"
#include "wheelfit/api.hpp"

#include "common.hpp"
#include "torch_family.hpp"

namespace wheelfit::api {
namespace {

namespace json = boost::json;

/// One wheel to fetch: the union of the picks of every resolved machine, by URL.
struct Wheel {
  deliver::Wanted wanted;
  std::string project;
  std::vector<std::string> anchors;   ///< the anchor texts it was picked under
  std::vector<std::string> machines;  ///< the machines that picked it
  /// What the index said of it beyond the link, written back by a mirror unchanged.
  std::optional<std::string> requires_python;                  ///< the link's data-requires-python
  std::vector<std::pair<std::string, std::string>> fields;     ///< its packages.json entry's string fields
  std::string version;  ///< the torch family's (with_torch): from its parsed file name, for the locks
};

/// The index's facts of a picked file: its link's data-requires-python, its packages.json fields.
void take_facts(Wheel& w, const index::IndexSnapshot& snap) {
  if (auto page = snap.projects.find(w.project); page != snap.projects.end()) {
    for (const auto& link : page->second.page.links) {
      if (link.url == w.wanted.url && link.requires_python) w.requires_python = link.requires_python;
    }
  }
  if (!snap.packages_json) return;
  auto entry = snap.packages_json->packages.find(w.project);
  if (entry == snap.packages_json->packages.end()) return;
  for (const auto& listed : entry->second.wheels) {
    if (listed.url == w.wanted.url || listed.filename == w.wanted.filename) w.fields = listed.fields;
  }
}

/// The file of `url` in the union (added, as `project`'s file with `sha256`, when new), with
/// `machine` among those that picked it.
Wheel& union_file(std::vector<Wheel>& out, std::map<std::string, std::size_t>& by_url, const std::string& url,
                  const std::string& project, const std::optional<std::string>& sha256, const std::string& machine) {
  auto [it, fresh] = by_url.try_emplace(url, out.size());
  if (fresh) {
    Wheel& w = out.emplace_back();
    w.wanted.url = url;
    w.wanted.filename = detail::file_name_of(url);
    w.wanted.sha256 = sha256;
    w.project = project;
  }
  Wheel& w = out[it->second];
  if (std::find(w.machines.begin(), w.machines.end(), machine) == w.machines.end()) w.machines.push_back(machine);
  return w;
}

/// A variant wheel's package-version variants file (PEP 825), published beside it: expected to be
/// the bytes the resolver judged (the page's digest, else the digest of the body it read).
void add_variants_file(std::vector<Wheel>& out, std::map<std::string, std::size_t>& by_url, const resolve::Pick& pick,
                       const std::string& machine, const index::IndexSnapshot* snap) {
  std::optional<std::string> sha256 = pick.variants_sha256;
  if (const index::VariantsDoc* doc = sha256 ? nullptr : detail::variants_doc(snap, pick)) {
    deliver::Sha256 h;
    h.update(doc->body);
    sha256 = h.hex();
  }
  Wheel& w = union_file(out, by_url, pick.variants_url, pick.name, sha256, machine);
  if (w.anchors.empty()) w.anchors.push_back(w.wanted.filename);
}

/// Every machine's picks, merged by URL; `variants_files`: with the variants files of the variant
/// wheels among them (a mirror publishes them; a download folder holds wheels only).
std::vector<Wheel> union_of_picks(const FleetResult& fleet, bool variants_files) {
  std::vector<Wheel> out;
  std::map<std::string, std::size_t> by_url;
  for (std::size_t m = 0; m < fleet.machines.size(); ++m) {
    const auto& r = fleet.machines[m];
    if (!r.resolution || !r.resolution->ok()) continue;
    for (const auto& pick : r.resolution->picks) {
      const std::string& name = fleet.fleet[m].name;
      const bool fresh = !by_url.count(pick.url);
      Wheel& w = union_file(out, by_url, pick.url, pick.name, pick.sha256, name);
      if (fresh && r.index) take_facts(w, *r.index);
      if (std::find(w.anchors.begin(), w.anchors.end(), pick.filename) == w.anchors.end()) w.anchors.push_back(pick.filename);
      if (variants_files && pick.variant_label && !pick.variants_url.empty()) add_variants_file(out, by_url, pick, name, r.index.get());
    }
  }
  return out;
}

/// A torch family file (torch_family.hpp) as a file to fetch and publish.
Wheel torch_wheel(detail::TorchFile t) {
  Wheel w;
  w.wanted.url = std::move(t.url);
  w.wanted.filename = t.filename;
  w.wanted.sha256 = std::move(t.sha256);
  w.project = std::move(t.project);
  w.anchors = {std::move(t.filename)};
  w.machines = std::move(t.machines);
  w.requires_python = std::move(t.requires_python);
  w.version = std::move(t.version);
  return w;
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
  const auto& transports = detail::transports_of(req.transports);
  net::StackOptions options;  // no cache: wheels are fetched once, into DIR
  options.network = req.network;
  options.network.jobs = jobs;
  options.network.per_host = jobs;
  if (req.index && detail::is_remote(*req.index)) {
    auto clean = detail::take_credentials(*req.index, "--index", detail::env("WHEELFIT_INDEX_TOKEN"), options.network, transports);
    if (!clean) return clean.error();
  }
  if (torch) {
    for (auto& [url, clean] : *torch) {
      if (!detail::is_remote(url)) continue;
      auto taken = detail::take_credentials(url, "--torch-index", std::nullopt, options.network, transports);
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
int fetch(const ResolveRequest& req, const std::vector<Wheel>& wheels, const std::filesystem::path& dir, unsigned jobs,
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
  for (const auto& w : wheels) wanted.push_back(w.wanted);
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
    detail::write_fleet_json(r, sink, false);
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

/// The packages.json fields of a farm wheel, from its file name: version (public), python, abi,
/// platform ("linux", "linux_aarch64", "windows", "macos", or the tag).
std::vector<std::pair<std::string, std::string>> name_fields(const std::string& filename) {
  std::vector<std::string> parts;
  std::string_view rest = std::string_view(filename).substr(0, filename.size() - (filename.ends_with(".whl") ? 4 : 0));
  for (std::size_t p; (p = rest.find('-')) != std::string_view::npos; rest.remove_prefix(p + 1)) parts.emplace_back(rest.substr(0, p));
  parts.emplace_back(rest);
  if (parts.size() < 5) return {};
  const std::string& version = parts[1];
  const std::string& py = parts[parts.size() - 3];
  const std::string& abi = parts[parts.size() - 2];
  const std::string& plat = parts.back();
  std::string platform = plat;
  if (plat.find("win") != std::string::npos) platform = "windows";
  else if (plat.find("macosx") != std::string::npos) platform = "macos";
  else if (plat.find("linux") != std::string::npos) platform = plat.find("aarch64") != std::string::npos ? "linux_aarch64" : "linux";
  const auto digits = py.find_first_of("0123456789");
  return {{"version", version.substr(0, version.find('+'))},
          {"python", digits == std::string::npos ? py : py.substr(digits)},
          {"abi", abi.starts_with("cp") && abi != "cp" ? std::string("cp") : abi},
          {"platform", platform}};
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
  if (r.error) m.status = detail::status_class(r);
  else if (!r.resolution || !r.resolution->ok()) m.status = "unresolved";
  return m;
}

/// A view's lock files (machines/<name>/): requirements.txt and pylock.toml pinning the files as
/// the mirror serves them (their digests as published), and with a base URL a pixi.toml pinning
/// each pick by version from the view's URL. `torch_set_aside`: why --with-torch left its torch
/// family out ("" when it did not), said in their comments.
void add_view_locks(mirror::Machine& machine, const ResolveResult& r,
                    const std::map<std::string, const deliver::Delivered*>& delivered,
                    const std::optional<std::string>& base_url, const std::vector<Wheel>& torch, bool with_torch,
                    const std::string& torch_set_aside) {
  auto wheels = r.locked_wheels();
  for (const auto& t : torch) {  // the machine's torch family, mirrored (--with-torch)
    if (std::find(t.machines.begin(), t.machines.end(), machine.name) == t.machines.end()) continue;
    output::LockedWheel w;
    w.name = t.project;
    w.filename = t.wanted.filename;
    w.version = t.version;
    wheels.push_back(std::move(w));
  }
  for (auto& w : wheels) {
    w.relative = !base_url;
    // From machines/<name>/ the shared files/ is two folders up.
    // A URL is percent-encoded; a path (PEP 751) is the file's own name.
    w.location = base_url ? mirror::file_href(w.filename, base_url, 0) : "../../files/" + w.filename;
    if (auto it = delivered.find(w.filename); it != delivered.end()) {
      w.size = it->second->bytes;
      w.sha256 = it->second->sha256;
    }
  }
  std::string view_url;
  if (base_url) {
    view_url = *base_url;
    while (!view_url.empty() && view_url.back() == '/') view_url.pop_back();
    view_url += "/machines/" + machine.name + "/";
  }
  auto comments = r.lock_comments(with_torch);  // with_torch: the pins are locked above, from the mirror
  if (!torch_set_aside.empty()) comments.push_back("--with-torch set this machine's torch family aside: " + torch_set_aside);
  comments.insert(comments.begin(), "The wheels of machine " + machine.name + " as this mirror serves them: pip install "
                                    "--require-hashes --no-deps --index-url " +
                                        (view_url.empty() ? std::string("<this folder's URL>") : view_url) + " -r requirements.txt");
  // A lock file that would carry a value as something else is not written (decision 0021).
  const auto take = [&](std::string& into, Expected<std::string> text) {
    if (text) into = std::move(*text);
    else log::warn("mirror: machine " + machine.name + ": " + text.error().message);
  };
  take(machine.requirements, output::requirements_txt(wheels, true, comments));
  comments.front() = "The wheels of machine " + machine.name + " as this mirror serves them (PEP 751): uv pip install -r pylock.toml";
  std::optional<std::string> python;
  if (r.machine.python) python = "==" + r.machine.python->truncated(2).str() + ".*";
  take(machine.pylock, output::pylock_toml(wheels, python, comments));
  if (!view_url.empty()) {
    if (auto pixi = r.pixi_manifest(output::PixiPins{view_url, with_torch})) machine.pixi = std::move(*pixi);
  }
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
  const auto wheels = union_of_picks(out.resolved, false);
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

MirrorResult mirror(const MirrorRequest& req) {
  MirrorResult out;
  if (const auto why = mirror::publish_unavailable(); !why.empty()) return detail::failed(std::move(out), kExitBadInput, std::string(why));
  if (req.fleet.empty()) return detail::failed(std::move(out), kExitBadInput, "mirror: give the machines (--machine FILE or --machines DIR)");
  if (req.out.empty()) return detail::failed(std::move(out), kExitBadInput, "mirror: give the output folder (--out DIR)");
  if (req.base_url && !detail::is_remote(*req.base_url)) {
    return detail::failed(std::move(out), kExitBadInput, "--base-url: '" + *req.base_url + "' is not an http(s) URL");
  }
  if (req.base_url && util::without_userinfo(*req.base_url) != *req.base_url) {
    // Every href, packages.json and mirror.json would publish it: refused, never echoed.
    return detail::failed(std::move(out), kExitBadInput,
                          "--base-url: '" + util::without_userinfo(*req.base_url) +
                              "' was given with a user name or password, which every page, packages.json and "
                              "mirror.json would publish: give the URL without them (clients keep the mirror's "
                              "credentials in their own index URL or netrc)");
  }
  if (auto ready = mirror::prepare(req.out); !ready) return detail::failed(std::move(out), folder_code(ready.error()), ready.error().message);
  // Held from before the resolve to after the publish: a second run on OUT waits (or stops).
  auto lock = mirror::lock(req.out, req.wait);
  if (!lock) return detail::failed(std::move(out), folder_code(lock.error()), lock.error().message);
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
  auto wheels = union_of_picks(out.resolved, true);
  std::vector<Wheel> torch;
  std::shared_ptr<net::Transport> torch_transport;  // reused by the fetch below
  if (req.with_torch) {
    auto bases = detail::torch_index_urls(req, out.resolved);  // their credentials go to the transport
    auto transport = download_transport(req.resolve, req.jobs, &bases);
    if (!transport) return detail::failed(std::move(out), kExitBadInput, transport.error().message);
    torch_transport = *transport;
    auto found = detail::torch_family(req, out.resolved, *torch_transport, bases);
    if (!found) {  // nothing is fetched or published without the whole family
      out.exit_code = kExitDownload;
      out.error = Error(found.error().code, util::redact(found.error().message));
      return out;
    }
    out.torch_choices = found->choices;
    out.torch_set_aside = std::move(found->set_aside);
    for (auto& t : found->files) torch.push_back(torch_wheel(std::move(t)));
    wheels.insert(wheels.end(), torch.begin(), torch.end());
  }
  std::optional<Error> failure;
  const int code = fetch(req.resolve, wheels, mirror::pool_dir(req.out), req.jobs, false, req.progress, out.files, failure,
                         std::move(torch_transport));
  if (code != kExitResolved) {  // a wheel missing or not verified: nothing is published
    out.exit_code = code;
    out.error = failure;
    return out;
  }
  std::vector<std::string> unverified;
  for (const auto& f : out.files) {
    if (!f.verified) unverified.push_back(f.filename);
  }
  if (!unverified.empty() && !req.allow_unverified) {
    out.exit_code = kExitDownload;
    out.error = Error(Errc::invalid_input,
                      std::to_string(unverified.size()) + " wheel" + (unverified.size() == 1 ? " has" : "s have") +
                          " no sha256 upstream (neither its page nor packages.json publishes one): " + unverified.front() +
                          (unverified.size() > 1 ? " and " + std::to_string(unverified.size() - 1) + " more" : std::string()) +
                          "; nothing is published (--allow-unverified publishes them, marked \"verified\": false in mirror.json)");
    return out;
  }
  // Pruning trusts that every machine resolved: a run that exits non-zero keeps what it does
  // not pick now.
  out.prune_skipped = req.prune && out.exit_code != kExitResolved;
  mirror::Snapshot s;
  s.out = req.out;
  s.base_url = req.base_url;
  s.prune = req.prune && !out.prune_skipped;
  s.locked = true;
  s.upstream_time = utc_now();
  std::set<std::string> projects;
  for (const auto& w : wheels) projects.insert(w.project);
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
  std::map<std::string, const deliver::Delivered*> delivered;
  for (const auto& f : out.files) delivered[f.filename] = &f;
  for (std::size_t m = 0; m < out.resolved.machines.size(); ++m) {
    const ResolveResult& r = out.resolved.machines[m];
    mirror::Machine machine = manifest_machine(out.resolved.fleet[m].name, r);
    const auto aside = std::find_if(out.torch_set_aside.begin(), out.torch_set_aside.end(),
                                    [&](const TorchSetAside& t) { return t.machine == machine.name; });
    if (machine.status == "resolved") {
      add_view_locks(machine, r, delivered, req.base_url, torch, req.with_torch && aside == out.torch_set_aside.end(),
                     aside == out.torch_set_aside.end() ? std::string() : aside->reason);
    }
    s.machines.push_back(std::move(machine));
  }
  for (std::size_t i = 0; i < wheels.size(); ++i) {
    const auto& w = wheels[i];
    const auto& f = out.files[i];
    mirror::File file;
    file.project = w.project;
    file.filename = f.filename;
    file.sha256 = f.sha256;
    file.size = f.bytes;
    file.anchors = w.anchors;
    file.machines = w.machines;
    file.verified = f.verified;
    file.requires_python = w.requires_python;
    // The upstream's packages.json fields as it gave them; from the file name where it gave none.
    file.fields = w.fields.empty() ? name_fields(f.filename) : w.fields;
    s.files.push_back(std::move(file));
  }
  auto published = mirror::publish(s);
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
