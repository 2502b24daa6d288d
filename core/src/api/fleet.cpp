// The resolve of a fleet (wheelfit/api.hpp: resolve_fleet, load_fleet, FleetResult), and
// api::resolve as the fleet of one. The work splits in three:
//   1. per request: the backends and the workspace (resolve_fleet's errors);
//   2. per machine: its profile with the env overrides, its judged backend and index choice
//      (a backend that publishes no index is that machine's exit 3);
//   3. per distinct (judged backend, index URL): the policy, --combo, the transport stack with
//      its cache and the Releases failover, and the snapshot (read_index_with_failover) - read
//      once, shared by every machine that judges with that backend against that index.
// Then resolve::resolve runs per distinct machine on the shared snapshot and policy (both
// immutable: several machines are resolved at once on the hardware's threads); a machine equal
// in every fact to one already judged, against the same part, gets a copy of its resolution.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/index/releases.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/index/file_url.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/api.hpp"
#include "wheelfit/api/results.hpp"
#include "wheelfit/session/session.hpp"
#include "wheelfit/session/torch_advice.hpp"

namespace wheelfit::api {
namespace {

using session::env;
using detail::failed;

// "network: 45 requests on 3 connections, 2 retries; cache: 40 fresh, 2 revalidated (304)".
std::string fetch_note(const net::Stats& s) {
  if (s.requests == 0 && s.cache_fresh == 0 && s.cache_revalidated == 0) return {};
  std::string out = "network: " + std::to_string(s.requests) + " request" + (s.requests == 1 ? "" : "s") + " on " +
                    std::to_string(s.connections) + " connection" + (s.connections == 1 ? "" : "s");
  if (s.retries) out += ", " + std::to_string(s.retries) + " retr" + (s.retries == 1 ? "y" : "ies");
  if (s.reconnects) out += ", " + std::to_string(s.reconnects) + " stale keep-alive reconnect" + (s.reconnects == 1 ? "" : "s");
  if (s.cache_fresh || s.cache_revalidated) {
    out += "; cache: " + std::to_string(s.cache_fresh) + " fresh, " + std::to_string(s.cache_revalidated) + " revalidated (304)";
  }
  return out;
}

// Which source answered the pages: "index", "releases-api" or "index+releases-api".
std::string answered_by(const index::IndexSnapshot& snap) {
  bool pages = false, api = false;
  for (const auto& [name, page] : snap.projects) {
    if (page.status != index::ProjectPage::Status::ok) continue;
    (page.source == "releases-api" ? api : pages) = true;
  }
  if (api && pages) return "index+releases-api";
  return api ? "releases-api" : "index";
}

// The envs given directly, as the workspace holds configs' envs.
Expected<config::Env> env_of(const EnvRequest& r) {
  config::Env e;
  e.name = r.name;
  e.file = "env " + r.name;
  if (r.name.empty()) return unexpected(Errc::invalid_input, "an env without a name");
  if (r.python) {
    auto v = model::NumericVersion::parse(*r.python);
    if (!v || v->parts().size() != 2) {
      return unexpected(Errc::invalid_input, e.file + ": python '" + *r.python + "' is not major.minor (such as 3.12)");
    }
    e.python = *v;
  }
  for (const auto& p : r.packages) {
    if (!model::is_valid_name(p)) return unexpected(Errc::invalid_input, e.file + ": '" + p + "' is not a package name");
    e.packages.push_back({p, model::normalize_name(p)});
  }
  return e;
}

// What a failure carries until it becomes a machine's result.
struct Failure {
  int code = kExitBadInput;
  std::string message;
};

// 1. The request's part: the backends and the environments.
struct RequestPart {
  std::unique_ptr<registry::Registry> owned;
  const registry::Registry* reg = nullptr;
  config::Workspace workspace;
  std::vector<std::string> names;  // every env's packages, as read_index takes them
};

Expected<void> prepare_request(const ResolveRequest& req, RequestPart& out) {
  auto loaded = session::backends_of(req.backends, out.owned);
  if (!loaded) return loaded.error();
  out.reg = *loaded;
  if (!req.configs.empty()) {
    auto ws = config::load_workspace(req.configs);
    if (!ws) return ws.error();
    out.workspace = std::move(*ws);
    for (const auto& e : out.workspace.envs)
      for (const auto& w : e.warnings) log::warn(w);
  }
  for (const auto& e : req.envs) {
    auto env_ = env_of(e);
    if (!env_) return env_.error();
    out.workspace.envs.push_back(std::move(*env_));
  }
  if (out.workspace.envs.empty()) return unexpected(Errc::invalid_input, "resolve: no environments (give configs or envs)");
  for (const auto& e : out.workspace.envs)
    for (const auto& p : e.packages) out.names.push_back(p.name);
  return {};
}

// 3. One (judged backend, index URL)'s part, read once: everything a machine's resolve needs
// besides the machine. `failure` set: every machine using it gets that result.
struct IndexPart {
  std::optional<Failure> failure;
  std::string index_url, index_origin, policy_source;
  std::optional<semantics::Policy> policy;
  std::optional<model::Combo> combo;  // --combo, in the backend's notation
  net::HttpOptions net;         // the request's, with the index URL's credentials
  std::optional<net::TrustChoice> trust;
  std::shared_ptr<const index::IndexSnapshot> snapshot;  // shared with each result (a mirror writes its facts back)
  std::shared_ptr<const resolve::PreparedCandidates> prepared;  // the snapshot's candidates, parsed once
  std::string source, fetch_note;
};

// The part's policy: the file named, else WHEELFIT_POLICY, else the backend's own data; and
// --combo in its notation. An error is the request's bad input.
Expected<void> take_policy(const ResolveRequest& req, const registry::BackendInfo& info, IndexPart& p) {
  auto policy = judging_policy(info, req.policy_file);
  if (!policy) return policy.error();
  p.policy_source = policy->source();
  if (req.combo) {
    auto parsed = semantics::parse_combo_str(policy->notation(), *req.combo);
    if (!parsed) return Error(parsed.error().code, "--combo: " + parsed.error().message);
    p.combo = *parsed;
  }
  p.policy = std::move(*policy);
  return {};
}

// The part's index URL (its credentials, and WHEELFIT_INDEX_TOKEN, taken out for the transport:
// from here on no URL of this resolve carries a password) and the transport it is read with: a
// local mirror read as it is, or http(s) through the cache; or the caller's own. The stack is the
// transport registry's (another scheme: whichever transport registered it). `where` opens errors.
Expected<std::shared_ptr<net::Transport>> index_transport(const ResolveRequest& req, const registry::IndexChoice& choice,
                                                          const std::string& where, IndexPart& p) {
  const auto& transports = session::transports_of(req.transports);
  const bool local = index::is_local(choice.url);
  const net::SchemeFacts facts = transports.facts(choice.url);
  p.index_url = local ? index::to_url(choice.url, true) : index::normalize_base(choice.url);
  if (!req.transport) {
    if (auto known = transports.check(p.index_url, where); !known) return known.error();
  }
  if (local && !req.transport) {
    auto root = index::to_path(p.index_url);
    if (!root) return unexpected(Errc::invalid_input, where + choice.url + ": no such directory");
    std::error_code ec;
    const bool dir = std::filesystem::is_directory(util::path_from_utf8(*root), ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {  // EACCES, ELOOP, ENAMETOOLONG: say which
      return unexpected(Errc::invalid_input, where + choice.url + ": cannot read it: " + ec.message());
    }
    if (!dir) return unexpected(Errc::invalid_input, where + choice.url + ": no such directory");
  }
  p.net = req.network;
  if (facts.credentials) {
    auto clean = session::take_credentials(p.index_url, choice.origin, env("WHEELFIT_INDEX_TOKEN"), p.net, transports);
    if (!clean) return Error(clean.error().code, where + clean.error().message);
    p.index_url = std::move(*clean);
  }
  if (req.transport) return req.transport;
  net::StackOptions stack{p.net, std::nullopt};
  if (facts.remote && req.use_cache && transports.cache_keeping()) {
    auto root = session::http_cache_root(req.cache_dir, transports);
    if (!root) return root.error();
    auto cap = session::cache_max_size(req.cache_max_size);
    if (!cap) return cap.error();
    stack.cache = net::CacheOptions{*root, req.offline, *cap};
  }
  auto made = transports.make(p.index_url, stack);
  if (!made) return made.error();
  if (const auto* rules = transports.http_rules(); facts.network_rules && rules && rules->choose_trust) {
    p.trust = rules->choose_trust(req.network);  // what the http transport loaded
  }
  return std::shared_ptr<net::Transport>(std::move(*made));
}

// The Releases failover's request: the repository is the request's, else WHEELFIT_RELEASES_REPO,
// else the backend's own when its default index is used, else (the failover derives it) the one
// a github.io index URL names.
Expected<index::ReleasesRequest> releases_request(const ResolveRequest& req, const registry::BackendInfo& info,
                                                  const registry::IndexChoice& choice, const IndexPart& p) {
  index::ReleasesRequest releases;
  // (A string, empty for none: GCC 12 warns falsely about an optional<string> here.)
  std::string repo = req.releases_repo ? *req.releases_repo : env("WHEELFIT_RELEASES_REPO").value_or("");
  if (repo.empty() && choice.url == info.index_url && !info.releases_repo.empty()) repo = info.releases_repo;
  if (!repo.empty() && (std::count(repo.begin(), repo.end(), '/') != 1 || repo.front() == '/' || repo.back() == '/')) {
    return unexpected(Errc::invalid_input, "--releases-repo / WHEELFIT_RELEASES_REPO: '" + repo + "' is not OWNER/NAME");
  }
  releases.repo = std::move(repo);
  if (const auto* rules = session::transports_of(req.transports).http_rules(); rules && rules->insecure_allowed) {
    releases.token_over_http = [rules, credentials = p.net.credentials](std::string_view url) {
      return rules->insecure_allowed(credentials, url);
    };
  }
  return releases;
}

// Why the part's snapshot is no verdict on the wheels, or "": not one page could be read (and no
// failover answered), or --max-time ran out with pages unread (a resolve on part of the index
// would be a wrong verdict).
std::string unreadable(const IndexPart& p, const registry::IndexChoice& choice) {
  const auto& pages = p.snapshot->projects;
  const auto failed = std::count_if(pages.begin(), pages.end(), [](const auto& pg) {
    return pg.second.status == index::ProjectPage::Status::failed;
  });
  if (!pages.empty() && static_cast<std::size_t>(failed) == pages.size()) {
    const auto& first = pages.begin()->second;
    std::string why = "the index " + p.index_url + " (" + choice.origin + ") could not be read: " + first.error;
    if (pages.size() > 1) why += " (and " + std::to_string(pages.size() - 1) + " more pages)";
    if (!p.snapshot->failover_note.empty()) why += "; " + p.snapshot->failover_note;
    return why;
  }
  if (failed > 0 && p.net.max_time && p.net.max_time->passed()) {
    return "the index " + p.index_url + " (" + choice.origin + ") could not be read: " + p.net.max_time->name() + " ran out with " +
           std::to_string(failed) + " of " + std::to_string(pages.size()) + " pages unread";
  }
  return {};
}

IndexPart read_index_part(const ResolveRequest& req, const RequestPart& rp, const registry::BackendInfo& info,
                          const registry::IndexChoice& choice) {
  IndexPart p;
  auto fail = [&p](int code, std::string message) {
    p.failure = Failure{code, std::move(message)};
    return std::move(p);
  };
  p.index_origin = choice.origin;
  if (auto taken = take_policy(req, info, p); !taken) return fail(kExitBadInput, taken.error().message);
  const std::string where = choice.origin == "--index" ? "--index: " : choice.origin + ": ";
  auto transport = index_transport(req, choice, where, p);
  if (!transport) return fail(kExitBadInput, transport.error().message);
  // The Releases API answers when the pages of a remote index cannot be read.
  const bool failover = session::transports_of(req.transports).facts(choice.url).remote && !req.offline && !req.transport;
  index::ReleasesRequest releases;
  if (failover) {
    auto made = releases_request(req, info, choice, p);
    if (!made) return fail(kExitBadInput, made.error().message);
    releases = std::move(*made);
  }
  p.snapshot = std::make_shared<const index::IndexSnapshot>(failover ? index::read_index_with_releases(**transport, p.index_url, rp.names, releases)
                                                                     : index::read_index(**transport, p.index_url, rp.names));
  if (auto why = unreadable(p, choice); !why.empty()) return fail(kExitUnreadable, why);
  p.source = answered_by(*p.snapshot);
  p.prepared = resolve::prepare_candidates(*p.snapshot, *p.policy, rp.names);
  // The transport is this index part's alone (or the caller's): its stats are the reads of this
  // snapshot, the same note for every machine that shares it. (--inspect reads through a
  // transport of its own.) The cache's size cap is applied when the stack goes, here.
  p.fetch_note = fetch_note((*transport)->stats());
  return p;
}

// "ROCm backend detected gfx90a with torch 2.7.1+rocm6.3; no ROCm wheel index is published yet; ..."
std::string no_index_message(const registry::BackendInfo& info, const machine::Machine& m) {
  auto own = registry::make_policy(info, std::nullopt);
  const std::string shown = own ? own->notation().name : info.name;
  std::vector<std::string> targets;  // each of the backend's GPU targets once, in GPU order
  for (const auto& g : m.gpus.value_or(std::vector<std::string>{})) {
    auto t = own && own->rules() ? own->rules()->parse_target(g) : Expected<std::string>(g);
    if (t && std::find(targets.begin(), targets.end(), *t) == targets.end()) targets.push_back(*t);
  }
  std::string what = shown + " backend";
  for (std::size_t i = 0; i < targets.size(); ++i) what += (i == 0 ? " detected " : ", ") + targets[i];
  if (m.torch) what += " with torch " + m.torch->str();
  return what + "; no " + shown + " wheel index is published yet; set one with --index URL" +
         (info.index_env.empty() ? "" : " or " + info.index_env);
}

// The fleet's index parts by (backend, index URL), read on first use.
class IndexParts {
 public:
  IndexParts(const ResolveRequest& req, const RequestPart& rp) : req_(req), rp_(rp) {}
  const IndexPart& get(const registry::BackendInfo& info, const registry::IndexChoice& choice) {
    auto key = std::make_pair(info.name, choice.url);
    auto it = parts_.find(key);
    if (it == parts_.end()) it = parts_.emplace(std::move(key), read_index_part(req_, rp_, info, choice)).first;
    return it->second;
  }
  [[nodiscard]] std::size_t reads() const { return parts_.size(); }

 private:
  const ResolveRequest& req_;
  const RequestPart& rp_;
  std::map<std::pair<std::string, std::string>, IndexPart> parts_;
};

// 2. One machine, up to its resolve: the result filled but for the resolution, and the index
// part it resolves against (nullptr when the result is already an error).
struct Pending {
  ResolveResult result;
  const IndexPart* part = nullptr;
  std::string backend;  // the judged backend's name
  std::string torch_lib = {};  // this machine's installed torch's library folder, when detected
};

Pending prepare_machine(const ResolveRequest& req, const RequestPart& rp, IndexParts& parts, machine::Machine m) {
  Pending out;
  ResolveResult& r = out.result;
  r.workspace = rp.workspace;
  r.machine = std::move(m);
  auto judged = judging_backend(*rp.reg, req.backend, r.machine);
  if (!judged) return {failed(std::move(r), kExitBadInput, judged.error().message), nullptr, {}};
  const registry::BackendInfo& info = **judged;
  auto choice = registry::choose_index(info, req.index, env(info.index_env.c_str()));
  if (!choice) {
    if (!choice.error().is(Errc::unsupported)) return {failed(std::move(r), kExitBadInput, choice.error().message), nullptr, {}};
    return {failed(std::move(r), kExitNoIndex, no_index_message(info, r.machine)), nullptr, {}};
  }
  const IndexPart& part = parts.get(info, *choice);
  r.index_origin = part.index_origin;
  r.index_url = part.index_url;
  r.policy_source = part.policy_source;
  if (part.failure) return {failed(std::move(r), part.failure->code, part.failure->message), nullptr, {}};
  r.trust = part.trust;
  out.part = &part;
  out.backend = info.name;
  return out;
}

// Runs `work(i)` for every i below `n` on at most `most` threads, and no more than one per core
// (on the calling thread when that is one); each thread's messages keep the caller's sink.
template <typename Work>
void for_each_on_cores(std::size_t n, std::size_t most, const Work& work) {
  const std::size_t threads = std::min({n, most, std::size_t{std::max(1u, std::thread::hardware_concurrency())}});
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) work(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  const auto sink = log::thread_sink();
  std::vector<std::jthread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, sink] {
      const log::ScopedSink carried(sink);
      for (std::size_t i = next++; i < n; i = next++) work(i);
    });
  }
}

// The resolve proper, on the shared part; the result's notes are the part's. The torch the advice
// names gets its file from `torch_files`.
void finish_machine(const ResolveRequest& req, Pending& p, session::TorchAdviceFiles& torch_files) {
  ResolveResult& r = p.result;
  const IndexPart& part = *p.part;
  resolve::Inputs inputs{r.workspace, r.machine, *part.policy, *part.snapshot, p.backend};
  if (req.inspect) inputs.inspect = make_inspect_hook(r.machine, *part.policy, part.net, session::transports_of(req.transports));  // read the picks' binaries
  inputs.combo = part.combo;
  inputs.fallback = req.fallback;
  inputs.prepared = part.prepared.get();
  std::vector<std::string> torch_warnings;
  inputs.torch_archs = session::installed_torch_archs(p.torch_lib, r.machine, *part.policy, torch_warnings);
  auto resolution = resolve::resolve(inputs);
  if (!resolution) {
    r = failed(std::move(r), kExitBadInput, resolution.error().message);
    return;
  }
  resolution->warnings.insert(resolution->warnings.begin(), part.snapshot->warnings.begin(), part.snapshot->warnings.end());
  resolution->warnings.insert(resolution->warnings.end(), torch_warnings.begin(), torch_warnings.end());
  if (resolution->advice && resolution->advice->torch) torch_files.fill(*resolution->advice->torch, r.machine, part.index_url);
  r.packages_json_note = part.snapshot->packages_json_note;
  r.source = part.source;
  r.fetch_note = part.fetch_note;
  r.failover_note = part.snapshot->failover_note;
  r.index = part.snapshot;
  r.exit_code = resolution->ok() ? kExitResolved : kExitUnresolved;
  r.resolution = std::make_shared<const resolve::Resolution>(std::move(*resolution));
}

// The resolve of `twin` (a machine with the same facts, hence the same backend and index part)
// for `p`: its own profile stays, with its provenance.
void copy_resolve(const Pending& twin, Pending& p) {
  const ResolveResult& from = twin.result;
  ResolveResult& r = p.result;
  r.packages_json_note = from.packages_json_note;
  r.source = from.source;
  r.fetch_note = from.fetch_note;
  r.failover_note = from.failover_note;
  r.index = from.index;
  r.exit_code = from.exit_code;
  r.resolution = from.resolution;  // shared, not copied: one resolution for all twins
}

// What differs between the machines of one fleet request: the machine's facts (after the
// overrides; not their provenance), which decide its backend, index part and resolve. A key for
// finding twins; exact because twins are then compared fact by fact (same_facts).
std::string twin_key(machine::Machine& m) {
  // Without the provenance, which is set aside for the while (no copy of the machine).
  decltype(m.provenance) provenance;
  provenance.swap(m.provenance);
  std::string key = machine::to_json(m);
  provenance.swap(m.provenance);
  return key;
}

// Where the advice's torch files are read from: the request's transport, else its network
// options and cache.
session::TorchAdviceSource torch_advice_source(const ResolveRequest& req) {
  return {req.transport, req.transports, req.network, req.torch_index, req.use_cache, req.cache_dir, req.cache_max_size, req.offline};
}

// Every machine of `given` resolved (nullopt: this machine, detected). The request's failure
// is `error`; each machine's is its own result.
FleetResult resolve_all(const ResolveRequest& req, const std::vector<std::optional<machine::Machine>>& given) {
  FleetResult out;
  RequestPart rp;
  if (auto ready = prepare_request(req, rp); !ready) return failed(std::move(out), kExitBadInput, ready.error().message);

  // Machines and their index parts, in order, on this thread (the reads are the transports'
  // own business: a snapshot's pages are fetched in parallel there).
  // Identical machines are judged once (their backend, index part and resolve): a fleet of
  // thousands holds a few hundred distinct ones.
  IndexParts parts(req, rp);
  std::vector<Pending> pending;
  pending.reserve(given.size());  // no reallocation: `todo` points into it
  std::vector<Pending*> todo;     // the machines to resolve
  std::vector<std::pair<std::size_t, std::size_t>> twins;  // (machine, the identical one judged), in `pending`
  std::unordered_map<std::string, std::vector<std::size_t>> judged;  // by twin_key
  for (const auto& m : given) {
    std::string torch_lib;
    auto found = session::machine_of(*rp.reg, m, req.env_overrides, req.python, req.backend, &torch_lib);
    if (!found) {
      ResolveResult r;
      r.workspace = rp.workspace;
      pending.push_back({failed(std::move(r), kExitBadInput, found.error().message), nullptr, {}});
      continue;
    }
    auto& same = judged[twin_key(*found)];
    auto twin = std::find_if(same.begin(), same.end(), [&](std::size_t j) {
      return machine::same_facts(pending[j].result.machine, *found);
    });
    if (twin != same.end()) {
      twins.emplace_back(pending.size(), *twin);
      // Its backend and index part, or its failure; not yet resolved. The twin's machine is set
      // aside while its row is copied: this row holds its own.
      Pending& first = pending[*twin];
      machine::Machine held = std::move(first.result.machine);
      first.result.machine = {};
      Pending p = first;
      first.result.machine = std::move(held);
      p.result.machine = std::move(*found);
      pending.push_back(std::move(p));
      continue;
    }
    same.push_back(pending.size());
    pending.push_back(prepare_machine(req, rp, parts, std::move(*found)));
    pending.back().torch_lib = std::move(torch_lib);
    if (pending.back().part) todo.push_back(&pending.back());
  }
  out.index_reads = parts.reads();

  // The resolves, on up to one thread per core.
  session::TorchAdviceFiles torch_files(torch_advice_source(req));
  for_each_on_cores(todo.size(), todo.size(), [&](std::size_t i) { finish_machine(req, *todo[i], torch_files); });
  out.resolves = todo.size();
  for (auto [i, twin] : twins) {
    Pending& p = pending[i];
    if (!p.part) continue;  // the twin's failure before the resolve: the same for this one
    // A resolve that failed may name the twin's profile (a device target refused): judge this
    // machine itself, for a message naming its own file.
    if (!pending[twin].result.resolution) {
      finish_machine(req, p, torch_files);
      ++out.resolves;
      continue;
    }
    copy_resolve(pending[twin], p);
  }

  out.exit_code = kExitResolved;
  out.machines.reserve(pending.size());
  for (auto& p : pending) {
    out.exit_code = std::max(out.exit_code, p.result.exit_code);
    out.machines.push_back(std::move(p.result));
  }
  return out;
}

}  // namespace

ResolveResult resolve(const ResolveRequest& request) {
  // The fleet of one: request.machine as given, or this machine detected.
  const log::ScopedSink call_log(request.log_sink);
  auto fleet = resolve_all(request, {request.machine});
  if (fleet.error) {
    ResolveResult r;
    return failed(std::move(r), fleet.exit_code, fleet.error->message);
  }
  return std::move(fleet.machines.front());
}

FleetResult resolve_fleet(const ResolveRequest& request, const std::vector<FleetMachine>& machines) {
  const log::ScopedSink call_log(request.log_sink);
  if (machines.empty()) {
    FleetResult out;
    return failed(std::move(out), kExitBadInput, "resolve: no machines in the fleet");
  }
  std::set<std::string> names;
  for (const auto& m : machines) {
    if (!names.insert(m.name).second) {
      FleetResult out;
      return failed(std::move(out), kExitBadInput, "resolve: two machines are named '" + m.name + "'");
    }
  }
  std::vector<std::optional<machine::Machine>> given;
  for (const auto& m : machines)
    if (!m.error) given.emplace_back(m.machine);
  auto out = resolve_all(request, given);
  out.fleet = machines;
  if (out.error) {
    out.machines.clear();
    return out;
  }
  // A profile that did not load is its own row (bad input, its reason) in its place: one broken
  // file in a folder of profiles must not cost every other machine its resolve.
  std::vector<ResolveResult> rows;
  rows.reserve(machines.size());
  auto resolved = out.machines.begin();
  for (const auto& m : machines) {
    if (!m.error) {
      rows.push_back(std::move(*resolved++));
      continue;
    }
    rows.push_back(failed(ResolveResult{}, kExitBadInput, m.error->message));
    out.exit_code = std::max<int>(out.exit_code, kExitBadInput);
  }
  out.machines = std::move(rows);
  return out;
}

Expected<std::vector<FleetMachine>> load_fleet(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = util::path_from_utf8(dir);
  if (!fs::is_directory(folder, ec)) return unexpected(Errc::not_found, "--machines: " + dir + ": no such directory");
  std::vector<fs::path> files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const auto ext = it->path().extension();
    if (ext != ".toml" && ext != ".json") continue;
    std::error_code type_ec;
    const auto type = it->status(type_ec).type();  // through a symlink: what would be read
    if (type == fs::file_type::regular) {
      files.push_back(it->path());
    } else if (type != fs::file_type::directory) {
      // A FIFO would block the read forever, a device would be read as a profile: neither is one.
      log::warn("--machines: " + it->path().string() + ": " + util::not_regular_text(type) + "; skipped");
    }
  }
  if (ec) return unexpected(Errc::io_error, "--machines: " + dir + ": " + ec.message());
  if (files.empty()) return unexpected(Errc::invalid_input, "--machines: " + dir + ": no machine profile (*.toml, *.json) in it");
  std::sort(files.begin(), files.end());
  std::vector<FleetMachine> out(files.size());
  std::set<std::string> names;
  for (std::size_t i = 0; i < files.size(); ++i) {
    out[i].name = files[i].stem().string();
    if (!names.insert(out[i].name).second) {
      const std::string& name = out[i].name;
      return unexpected(Errc::invalid_input, "--machines: " + dir + ": two profiles are named '" + name + "' (" +
                                                 name + ".toml and " + name + ".json)");
    }
  }
  // The profiles are read and parsed on up to one thread per core (a fleet of thousands of files
  // is otherwise a third of its resolve); each lands in its own row, so the order is the files'.
  for_each_on_cores(files.size(), files.size() / 64 + 1, [&](std::size_t i) {
    try {
      auto m = machine::load_machine_profile(files[i].string());
      if (m) out[i].machine = std::move(*m);
      else out[i].error = m.error().with_context("--machines");  // the message names the file
    } catch (const std::exception& e) {  // out of memory: this profile's error, not the process's end
      out[i].error = Error(Errc::io_error, "--machines: " + files[i].string() + ": " + e.what());
    }
  });
  return out;
}

}  // namespace wheelfit::api
