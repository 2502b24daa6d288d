#pragma once
// The façade: the one door to wheelfit for the CLI and for embedders. A call takes a plain
// request and returns the result object the CLI prints; everything a resolve decides (which
// backend, which index, which policy, the transport stack with its cache and Releases failover,
// "not one page could be read", --inspect) happens behind it. The C API (wheelfit.h) is a JSON
// wrapper over the same calls.
//
// Exit codes (ExitCode) are the CLI's: a call's result carries the one the CLI would exit with.
// Environment variables are read as the CLI reads them (the backend's index variable,
// WHEELFIT_POLICY, WHEELFIT_RELEASES_REPO, WHEELFIT_INDEX_TOKEN, WHEELFIT_OVERRIDE_* on a given
// machine, proxies, trust stores, NETRC and WHEELFIT_ALLOW_INSECURE_HOST in the transports). The
// userinfo of an index or wheel URL leaves the URL at the start of a call and goes to the
// transport as that origin's credential (the http rules of the transport registry): no result
// carries it. Every transport stack is composed by a transport registry (net/registry.hpp):
// the request's, else net::default_registry(), which the program fills at start-up
// (wheelfit::transports::register_transports); a URL whose scheme none reads is exit 2.
//
// Thread safety: calls may run concurrently, each with its own request; a caller-supplied
// Registry is only read. Log lines go to the process-wide sink of util/log.hpp.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/config/workspace.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/inspect/doctor.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/inspect/library.hpp"
#include "wheelfit/output/formats.hpp"
#include "wheelfit/output/locks.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/machine/detect.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/net/options.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/expected.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/api/exit_codes.hpp"
#include "wheelfit/session/session.hpp"

namespace wheelfit::api {

/// The backend a resolve uses when nothing names one (the cuda-wheels farm's).
using session::kDefaultBackend;

/// One environment given directly instead of through a comfy-env.toml.
struct EnvRequest {
  std::string name;                   ///< the env (pixi feature) name
  std::optional<std::string> python;  ///< "3.12"; nullopt: the machine's Python
  std::vector<std::string> packages;  ///< as requested ("flash_attn"); normalised names are derived
};

struct ResolveRequest {
  std::vector<std::string> configs;         ///< comfy-env.toml files (their envs first)
  std::vector<EnvRequest> envs;             ///< then these
  std::optional<machine::Machine> machine;  ///< nullopt: detect this machine
  bool env_overrides = true;                ///< apply WHEELFIT_OVERRIDE_* / CONDA_OVERRIDE_* to `machine`
  std::optional<std::string> python;        ///< detection's interpreter (only without `machine`)
  std::optional<std::string> backend;       ///< nullopt: automatic (judging_backend)
  std::optional<std::string> index;         ///< nullopt: the backend's variable, else its default
  std::optional<std::string> policy_file;   ///< nullopt: WHEELFIT_POLICY, else the backend's data
  std::optional<std::string> releases_repo; ///< nullopt: WHEELFIT_RELEASES_REPO, else derived
  net::HttpOptions network;
  bool use_cache = true;                    ///< the on-disk HTTP cache (http(s) indexes)
  std::optional<std::string> cache_dir;     ///< nullopt: $XDG_CACHE_HOME/wheelfit/http
  /// The cache's size cap, applied once the resolve's writes are done (least recently used
  /// entries first); nullopt: WHEELFIT_CACHE_MAX_SIZE, else net::kDefaultCacheMaxSize.
  std::optional<std::uint64_t> cache_max_size;
  bool offline = false;                     ///< answer only from the cache
  bool inspect = false;                     ///< read the would-be picks' binaries
  /// --combo: exactly this combo ("cu12.8/torch2.8", the backend's notation) as the only tier.
  std::optional<std::string> combo;
  bool fallback = true;                     ///< false (--no-fallback): tier 2 is not tried
  /// --torch-index: where the advice looks up the exact file of the torch it names when the
  /// machine's own cannot run (the policy's placeholders {line}, {line_nodot}); nullopt: the
  /// backend's torch index, read only when the index resolved against is http(s) (decision 0030).
  std::optional<std::string> torch_index;
  /// A transport of the caller's (an in-memory index, a company proxy): replaces the network
  /// options and the cache; the Releases failover is not used with it.
  std::shared_ptr<net::Transport> transport;
  /// The loaded backends; nullptr: load the default plugin folders (registry::plugin_dirs()).
  const registry::Registry* backends = nullptr;
  /// The transports (net/registry.hpp); nullptr: net::default_registry().
  const net::Registry* transports = nullptr;
  /// This call's messages (warnings, retries, debug), from every thread the call uses; empty:
  /// the process sink (log::set_sink). Called on the call's threads, one message at a time each.
  log::Sink log_sink;
};

/// A resolve's outcome and everything its reports print.
/// What `resolve -o FILE` writes.
enum class LockFormat { pixi, requirements, pylock };
/// The format from `--format` when given (Errc::usage for another value), else from the file
/// name: requirements*.txt, pylock.toml / pylock.<name>.toml (PEP 751's names), else pixi.
/// Through the format table (output/formats.hpp); a row the table gained beyond these three
/// (FormatTable::add) is Errc::usage here: output_format_for names it.
Expected<LockFormat> lock_format_for(const std::string& path, const std::optional<std::string>& format);
/// The row of the format table (output::formats()) that `-o path` writes: `--format`'s row when
/// given (Errc::usage for a name that is no lock format), else the first row whose file-name rule
/// takes the name, else pixi. The row lives as long as the table holds it.
Expected<const output::Format*> output_format_for(const std::string& path, const std::optional<std::string>& format);

struct ResolveResult {
  int exit_code = kExitBadInput;
  std::optional<Error> error;                     ///< set for exit codes 2, 3, 4 (and 70)
  /// Set for exit codes 0 and 1. Shared, read-only: the identical machines of a fleet hold one
  /// resolution (an unresolved one, every candidate's verdict in it, runs to megabytes).
  std::shared_ptr<const resolve::Resolution> resolution;
  machine::Machine machine;
  config::Workspace workspace;
  std::string index_url, index_origin, policy_source, packages_json_note;
  std::string source = "index";                   ///< "index", "releases-api", "index+releases-api"
  std::string fetch_note, failover_note;
  /// The TLS trust store and client certificate of a remote index read with wheelfit's own
  /// transport (request.network; README "TLS"); nullopt for a local index or a caller's transport.
  std::optional<net::TrustChoice> trust;
  /// The index as it was read (pages, packages.json), shared by the machines of a fleet that read
  /// the same one: what a mirror writes back (requires-python, packages.json's fields). Set with
  /// `resolution`.
  std::shared_ptr<const index::IndexSnapshot> index;

  /// The object `wheelfit resolve --json` prints, or {"error": {"exit_code", "message"}}.
  [[nodiscard]] std::string json() const;
  /// The human report; on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
  /// The pixi.toml text (only for a resolved result); each pick by URL, or by version from
  /// `pins.index`.
  [[nodiscard]] Expected<std::string> pixi_manifest(const output::PixiPins& pins = {}) const;
  /// The picks as lock entries (absolute URLs, credential-free), and the comments a lock file
  /// opens with (the combo, the torch family pins it cannot lock).
  [[nodiscard]] std::vector<output::LockedWheel> locked_wheels() const;
  /// `pins_locked`: the torch family pins are locked too (a mirror that holds them), so no
  /// comment names them as not locked.
  [[nodiscard]] std::vector<std::string> lock_comments(bool pins_locked = false) const;
  /// The lock file of a resolved result: pixi.toml, requirements.txt (`name @ URL --hash`), or
  /// pylock.toml (PEP 751).
  [[nodiscard]] Expected<std::string> lock_file(LockFormat format) const;
  /// The text of `format` (a row of output::formats()) for this result: its one machine as the
  /// answer holds it (answer/answer.hpp); `pins` for pixi.toml. Errc::invalid_input when nothing
  /// resolved, or as the writer refuses a value (decision 0021).
  [[nodiscard]] Expected<std::string> write_output(const output::Format& format, const output::PixiPins& pins = {}) const;
  /// What the reports and the lock writers read besides the resolution: the machine, the
  /// workspace, the index and its notes, the TLS trust.
  [[nodiscard]] output::ReportContext report_context() const;
  /// Its status class, from the exit code: "resolved", "unresolved", "no index", "unreadable
  /// index", "bad input" or "internal error": a fleet's summary column, and what a mirror's
  /// mirror.json publishes (never the message, which names local paths).
  [[nodiscard]] std::string status_class() const;
};

/// Resolves the request. Never throws for anything the request or the world contains: those
/// are results with their exit code; an exception escaping is a bug.
ResolveResult resolve(const ResolveRequest& request);

/// Where a result's text goes as it is made, piece by piece (the CLI: stdout). Each piece ends
/// where a line or a JSON value ends, never inside a character.
using TextSink = output::TextSink;

/// One machine of a fleet: a name for the reports (the profile's file stem) and its profile.
struct FleetMachine {
  std::string name;
  machine::Machine machine;
  /// Set when the profile did not load (load_fleet): `machine` is empty, and the machine's result
  /// in resolve_fleet is this error, exit code kExitBadInput, while every other machine resolves.
  std::optional<Error> error = {};
};

/// Loads every machine profile (*.toml, *.json; not recursive, other files ignored) of a folder,
/// sorted by file name, each named by its file stem. A profile that does not load is its
/// machine's FleetMachine::error (the message opens "--machines: " and names the file); an entry
/// that is not a regular file (a FIFO, a device, a folder) is skipped with a warning naming it.
/// Errors (each opening "--machines: "): the folder is missing or holds no profile; two profiles
/// share a stem (a.toml and a.json).
Expected<std::vector<FleetMachine>> load_fleet(const std::string& dir);

/// A fleet's resolves: one per machine, in the order given.
struct FleetResult {
  /// The worst (max) of the machines' exit codes (0 all resolved, 1 one is unresolved, 2 one's
  /// profile did not load, 3 one's backend publishes no index, ...), or the code of an error of
  /// the whole request (then `error` is set and `machines` empty): no machines, two with one
  /// name, no environments, a config that does not load, no backend plugin.
  int exit_code = kExitBadInput;
  std::optional<Error> error;
  std::vector<FleetMachine> fleet;        ///< the machines, as given
  /// One per fleet machine, same order: each as api::resolve would return it for that machine
  /// (its own error for a machine-level failure; fetch_note is the shared transport's, the same
  /// for every machine that read the same index).
  std::vector<ResolveResult> machines;
  std::size_t index_reads = 0;            ///< distinct (backend, index) snapshots read
  /// Resolves run: machines equal in every fact after the overrides, judged with the same backend
  /// against the same index, are resolved once and share the result (their provenance aside).
  std::size_t resolves = 0;
  /// {"machines": [{"name": name, <ResolveResult::json()'s keys, or "error">}, ...],
  ///  ("name", not "machine": the single object has "machine", the profile as judged)
  ///  "summary": [{"machine", "combo" (null when none), "tier" (null when none), "status"}]}; or
  /// {"error": {"exit_code", "message"}}. status: "resolved", "unresolved", "no index",
  /// "unreadable index", "bad input", "internal error".
  [[nodiscard]] std::string json() const;
  /// Each machine's report under a "== name ==" heading, then "summary:" and the summary table;
  /// on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
  /// json() / report(), written to `sink` a row at a time as it is made, never the fleet's whole
  /// text at once (an unresolved row, every candidate's verdict in it, runs to megabytes). The
  /// rows that share a resolution (identical machines) share its text but for their profile:
  /// what does not depend on the profile is serialised once, and dropped after its last row.
  /// Returns how many such texts were made: the distinct resolutions written. An exception the
  /// sink throws ends the writing there and reaches the caller.
  std::size_t write_json(const TextSink& sink) const;
  /// write_json, `close` false: without the object's closing brace and newline, for the keys a
  /// download or a mirror adds after the fleet's (no re-parse).
  std::size_t write_json(const TextSink& sink, bool close) const;
  std::size_t write_report(const TextSink& sink) const;
  /// The summary table alone: columns machine, combo ("cu12.8/torch2.8", the backend's notation;
  /// "-" when none), tier ("bootstrap", "fallback", "requested", "-"), status; aligned, a header line.
  [[nodiscard]] std::string summary() const;
};

/// Resolves the request for each machine (request.machine and request.python are ignored; the
/// env overrides apply to each profile when request.env_overrides): the backends and workspace
/// are read once, and each distinct (judged backend, index URL)'s policy, transport stack and
/// snapshot once, shared by every machine that uses it; the machines' resolves then run on up to
/// one thread per core, once per distinct machine: identical profiles (every fact equal, the same
/// backend and index) are judged once and each gets a copy of that resolution, under its own name
/// and with its own profile and provenance. A machine's own failure (its profile did not load, its backend publishes
/// no index, a bad override, a device target its backend refuses) is that machine's result.
/// Never throws for what the request or the world contains. api::resolve is this for a fleet of
/// one.
FleetResult resolve_fleet(const ResolveRequest& request, const std::vector<FleetMachine>& machines);

/// What `wheelfit explain` judges: one wheel, against a machine.
struct ExplainRequest {
  /// A local .whl, a file:// or http(s) URL (read with Range requests), or a bare wheel file
  /// name that is not a file here (then only the name is judged); or a local library (*.so,
  /// *.so.N, *.dll, *.pyd: its device code read by its headers, never whole).
  std::string wheel;
  std::optional<machine::Machine> machine;  ///< nullopt: detect this machine
  bool env_overrides = true;                ///< apply WHEELFIT_OVERRIDE_* / CONDA_OVERRIDE_* to `machine`
  std::optional<std::string> python;        ///< detection's interpreter (only without `machine`)
  std::optional<std::string> policy_file;   ///< nullopt: WHEELFIT_POLICY, else the backend's data
  net::HttpOptions network;
  const registry::Registry* backends = nullptr;  ///< nullptr: load the default plugin folders
  /// The transports (net/registry.hpp); nullptr: net::default_registry().
  const net::Registry* transports = nullptr;
  /// This call's messages (warnings, retries, debug), from every thread the call uses; empty:
  /// the process sink (log::set_sink). Called on the call's threads, one message at a time each.
  log::Sink log_sink;
};

struct ExplainResult {
  int exit_code = kExitBadInput;                   ///< 0 fits, 1 a demand fails, 2 bad input, 4 unreadable
  std::optional<Error> error;
  std::optional<inspect::Explanation> explanation;
  /// A library given instead of a wheel (libtorch_cuda.so, torch_cuda.dll; inspect/library.hpp):
  /// its device code judged on the GPUs (exit 1 when it cannot run on one); `explanation` is empty.
  std::optional<inspect::LibraryExplanation> library;
  std::string origin;                              ///< "file", "url", "name" or "library"
  /// The object `wheelfit explain --json` prints, or {"error": {"exit_code", "message"}}.
  [[nodiscard]] std::string json() const;
  /// The human report; on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
};

/// Judges one wheel on the seven demands from its name and its binaries (inspect/explain.hpp).
ExplainResult explain(const ExplainRequest& request);

/// What `wheelfit detect` detects: this machine.
struct DetectRequest {
  std::optional<std::string> python;   ///< the interpreter (nullopt: python3 on PATH, a note when absent)
  std::optional<std::string> backend;  ///< --backend: wins over everything (a name no plugin supplies is an error)
  /// The loaded backends; nullptr: the default plugin folders are loaded while the interpreter
  /// starts, and a folder that cannot be used is a note, not an error.
  const registry::Registry* backends = nullptr;
  /// This call's messages (warnings, retries, debug), from every thread the call uses; empty:
  /// the process sink (log::set_sink). Called on the call's threads, one message at a time each.
  log::Sink log_sink;
};

struct DetectResult {
  int exit_code = kExitBadInput;   ///< 0, or 2 for a bad override, --backend or --python
  std::optional<Error> error;
  std::optional<machine::Detection> detection;
  /// The object `wheelfit detect --json` prints (a valid profile for --machine, plus notes,
  /// interpreter, devices), or {"error": {"exit_code", "message"}}.
  [[nodiscard]] std::string json() const;
  /// The human report; on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
};

/// Detects this machine (machine/detect.hpp) with the loaded backends' detection.
DetectResult detect(const DetectRequest& request);

/// What `wheelfit doctor` walks: the installed distributions of an interpreter's site folders.
struct DoctorRequest {
  std::optional<std::string> python;        ///< the interpreter (nullopt: python3 on PATH)
  std::optional<std::string> site;          ///< one site folder instead of the interpreter's
  std::optional<machine::Machine> machine;  ///< nullopt: detect this machine
  bool env_overrides = true;                ///< apply WHEELFIT_OVERRIDE_* / CONDA_OVERRIDE_* to `machine`
  std::optional<std::string> policy_file;   ///< nullopt: WHEELFIT_POLICY, else the backend's data
  const registry::Registry* backends = nullptr;  ///< nullptr: load the default plugin folders
  /// Instead of the distributions: the route a request to this URL would take (the proxy, where
  /// it came from, the authentication; for Negotiate the service and the Kerberos credential).
  std::optional<std::string> url;
  net::HttpOptions network;          ///< the proxy settings `url` is planned with
  /// The transports (net/registry.hpp); nullptr: net::default_registry().
  const net::Registry* transports = nullptr;
  /// This call's messages (warnings, retries, debug), from every thread the call uses; empty:
  /// the process sink (log::set_sink). Called on the call's threads, one message at a time each.
  log::Sink log_sink;
};

struct DoctorResult {
  int exit_code = kExitBadInput;            ///< 0 everything fits, 1 something will not run, 2 bad input
  std::optional<Error> error;
  std::optional<inspect::DoctorReport> doctor;
  std::optional<net::ProxyPlan> route;  ///< DoctorRequest::url's route (then no `doctor`)
  /// The object `wheelfit doctor --json` prints, or {"error": {"exit_code", "message"}}.
  [[nodiscard]] std::string json() const;
  /// The human report; on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
};

/// Judges every installed distribution with compiled files (inspect/doctor.hpp).
DoctorResult doctor(const DoctorRequest& request);

/// What `wheelfit cache` does to the on-disk HTTP cache.
enum class CacheAction {
  info,   ///< what it holds: folder, entries, bytes, temporary files
  prune,  ///< the least recently used entries beyond the size cap, and stale temporary files, removed
  clean,  ///< everything removed
};

struct CacheRequest {
  CacheAction action = CacheAction::info;
  std::optional<std::string> cache_dir;    ///< nullopt: $XDG_CACHE_HOME/wheelfit/http, as resolve uses
  std::optional<std::uint64_t> max_size;   ///< nullopt: WHEELFIT_CACHE_MAX_SIZE, else net::kDefaultCacheMaxSize
  /// Whose housekeeping (the cache decorator's, net/registry.hpp); nullptr: net::default_registry().
  const net::Registry* transports = nullptr;
  /// This call's messages; empty: the process sink (log::set_sink).
  log::Sink log_sink;
};

struct CacheResult {
  int exit_code = kExitBadInput;  ///< 0, or 2 (no cache folder can be named, a bad WHEELFIT_CACHE_MAX_SIZE, an I/O error)
  std::optional<Error> error;
  CacheAction action = CacheAction::info;
  std::uint64_t max_size = 0;                        ///< the size cap in force
  std::optional<net::CacheCleanup> outcome;   ///< before and after (info: the same)
  /// {"action", "dir", "max_size", "entries", "bytes", "temp_files", "other_bytes", "removed":
  /// {"entries", "bytes", "temp_files"}} (the counts after the action), or {"error": {...}}.
  [[nodiscard]] std::string json() const;
  /// The human report; on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
};

/// Looks after the on-disk HTTP cache (the cache housekeeping of the transport registry).
CacheResult cache(const CacheRequest& request);

/// `wheelfit download`: resolve (one machine, or a fleet), then fetch every picked wheel into a
/// folder, verified (deliver/download.hpp: resumable, atomic, idempotent).
struct DownloadRequest {
  ResolveRequest resolve;            ///< its machine (or this one detected) when `fleet` is empty
  std::vector<FleetMachine> fleet;   ///< the machines; the union of their picks is fetched
  std::string dir;                   ///< created when missing
  unsigned jobs = 4;                 ///< files in flight (1-64)
  deliver::ProgressHook progress;    ///< optional; called on the calling thread
  /// Another run holding DIR's lock (DIR/.wheelfit.lock) is waited for (log::info says so);
  /// false (--no-wait): exit 2 at once, naming it. The lock is held for the whole run.
  bool wait = true;
};

struct DownloadResult {
  /// kExitResolved, kExitUnresolved (nothing is fetched for an unresolved machine), the resolve's
  /// error codes, or kExitDownload when a file could not be fetched or did not verify.
  int exit_code = kExitBadInput;
  std::optional<Error> error;
  bool is_fleet = false;                  ///< more than one machine: `resolved` is the fleet's
  FleetResult resolved;                   ///< one machine: a fleet of one
  std::vector<deliver::Delivered> files;  ///< in pick order, each file once
  /// The resolve object (one machine) or the fleet's, plus "downloads": [{filename, url, path,
  /// bytes, sha256, status: "fetched" | "present" | "failed", verified, resumed (an earlier run's
  /// part continued), continued (any 206: that, or a cut mid-body continued), error}].
  [[nodiscard]] std::string json() const;
  /// The resolve report, then one line per file and a total.
  [[nodiscard]] std::string report() const;
  /// json() / report() written to `sink` as they are made (FleetResult::write_json).
  void write_json(const TextSink& sink) const;
  void write_report(const TextSink& sink) const;
};

DownloadResult download(const DownloadRequest& request);

/// `wheelfit check LOCK...`: each wheel a lock file pins, checked again against the index and the
/// machine (decision 0043): is it still listed under its name with its sha256, not yanked, and
/// does it run here?
struct CheckRequest {
  /// The index, the network, the cache, the backend, the policy and the machine (nullopt:
  /// detected), as a resolve takes them. Its configs and envs are ignored: the lock's packages are
  /// what is read. Without `resolve.index`: the index the first lock names (requirements
  /// --index-url, pixi's index), else the backend's own.
  ResolveRequest resolve;
  std::vector<FleetMachine> fleet;   ///< several machines (--machines): an entry runs when it runs on each
  std::vector<std::string> locks;    ///< the lock files (pixi.toml, requirements*.txt, pylock*.toml)
};

/// What became of one locked wheel.
enum class CheckStatus { ok, yanked, gone, digest_changed, will_not_run, unchecked };
/// "ok", "yanked", "gone", "digest_changed", "will_not_run", "unchecked".
std::string_view to_string(CheckStatus s) noexcept;

struct CheckEntry {
  std::string name = {}, version = {}, filename = {};
  std::string url = {};                   ///< as locked, credentials taken out ("" for an entry by index)
  std::optional<std::string> sha256 = {}; ///< the lock's
  CheckStatus status = CheckStatus::unchecked;
  std::string reason = {};                ///< why it is not ok ("" when ok): the index's yank reason, the demand that fails, ...
  std::string update = {};                ///< a newer build of the same package for the same combo, Python and platform ("" none)
  std::size_t line = 0;                   ///< where the lock pins it
};

struct CheckedLock {
  std::string path;
  std::string format;                ///< "pixi", "requirements", "pylock"
  std::vector<CheckEntry> entries;
  std::vector<std::string> warnings; ///< lines that pin no wheel (an sdist, a VCS URL), named
};

struct CheckResult {
  /// 0 every entry ok; 1 one is will_not_run, yanked or gone, or unchecked for want of a digest;
  /// 4 the index could not be read; 5 one is digest_changed (the worst wins); 2 a lock that cannot
  /// be read, or bad input; 3 no index.
  int exit_code = kExitBadInput;
  std::optional<Error> error;
  std::vector<CheckedLock> locks;
  /// The machines no entry could be judged on ("<name>: <why>": a profile that did not load, a
  /// backend or policy that failed): the check of the others stands, and the exit code is at least 2.
  std::vector<std::string> not_judged;
  std::string index_url;             ///< what was read (credential-free)
  FleetResult resolved;              ///< the machines as judged (their profiles) and the index read
  /// {"locks": [{"path", "format", "entries": [{"name", "version", "filename", "url", "sha256",
  /// "status", "reason", "update", "line"}], "warnings"}], "index", "not_judged", "machine": {...} (one
  /// machine) or "machines": [{"name", "machine"}]}; or {"error": {"exit_code", "message"}}.
  [[nodiscard]] std::string json() const;
  /// One line per entry ("ok  flash-attn 2.8.3+cu128torch2.8  <file>", or its status and reason),
  /// a heading per lock, then a count per status; on an error, "wheelfit: <message>\n".
  [[nodiscard]] std::string report() const;
};

/// Checks every entry of every lock (each read in full first: a lock that cannot be read is exit
/// 2, naming the file and line). The index is read once for all locks, through the same transport
/// stack, cache and credentials as a resolve of their packages.
CheckResult check(const CheckRequest& request);

/// `wheelfit mirror`: the fleet resolved, the union of its picks downloaded into OUT/pool, and a
/// static index of them published into OUT (mirror/mirror.hpp has the layout).
struct MirrorRequest {
  ResolveRequest resolve;             ///< the index, network, cache, offline (the pool and the cache alone)
  std::vector<FleetMachine> fleet;    ///< at least one machine
  std::string out;
  std::optional<std::string> base_url;  ///< absolute hrefs under this URL; else relative
  bool prune = false;                 ///< drop the files no machine picks any more (only in a run that exits 0)
  unsigned jobs = 4;
  deliver::ProgressHook progress;
  bool wait = true;                   ///< as DownloadRequest::wait, for OUT/.lock
  /// Publish wheels whose upstream gives no sha256 (marked "verified": false in mirror.json);
  /// without it such a wheel is exit 5 and nothing is published.
  bool allow_unverified = false;
  /// Mirror each machine's torch family pins too (--with-torch): torch, torchvision and
  /// torchaudio at the resolve's versions, the newest file of each that fits the machine's
  /// Python and platform, from `torch_index` (the policy's placeholders: {line}, {line_nodot})
  /// or the backend's torch index; fetched and verified as the picks are.
  bool with_torch = false;
  std::optional<std::string> torch_index;
};

/// A machine whose torch family `mirror --with-torch` left out: the torch of its combo cannot run
/// on its GPUs (resolve/torch_gate.hpp). Its wheels are mirrored; its view's lock files name it.
struct TorchSetAside {
  std::string machine;
  std::string combo;   ///< "cu12.6/torch2.8"
  std::string reason;  ///< "torch cannot run on sm 12.0: ..."
};

struct MirrorResult {
  /// 0 every machine resolved and the snapshot was published; 1 a machine is unresolved (the
  /// others' wheels are still published, nothing pruned; nothing at all when no machine
  /// resolved); kExitDownload when a file failed or is unverified (nothing published);
  /// kExitOutput when the mirror could not be written; 2 / 3 / 4 as for resolve.
  int exit_code = kExitBadInput;
  std::optional<Error> error;
  FleetResult resolved;
  std::vector<deliver::Delivered> files;
  std::optional<mirror::Published> published;
  std::string unpublished;  ///< why nothing was published though nothing failed ("" when published)
  bool prune_skipped = false;  ///< --prune was given but the run did not exit 0: nothing was pruned
  /// with_torch: the torch family files chosen, one per distinct (torch index, pin, Python,
  /// platform): machines that share all four share the choice (and each page is parsed once).
  std::size_t torch_choices = 0;
  /// with_torch: the machines whose torch family was set aside, in fleet order.
  std::vector<TorchSetAside> torch_set_aside;
  /// {"machines": ..., "summary": ..., "downloads": [...], "published": {root, id, files,
  /// projects, carried, pruned, snapshots_removed, unverified} or null, "unpublished": reason,
  /// "torch_set_aside": [{"machine", "combo", "reason"}] (only when one was set aside)}.
  [[nodiscard]] std::string json() const;
  [[nodiscard]] std::string report() const;
  /// json() / report() written to `sink` as they are made (FleetResult::write_json).
  void write_json(const TextSink& sink) const;
  void write_report(const TextSink& sink) const;
};

MirrorResult mirror(const MirrorRequest& request);

/// An Explanation as `explain --json` prints it (wheel, fits, binaries_read, demands, files,
/// warnings, bytes_fetched, wheel_size, downloaded_whole), as JSON text; `doctor` reuses it.
std::string explanation_json(const inspect::Explanation& e);
/// The demands, one block each, as the human reports print them.
std::string demands_text(const inspect::Explanation& e, const std::string& indent);

// --- Decisions shared by the commands: the session's (wheelfit/session/session.hpp), named here
// as they were before 0.2.
using session::backend_of_torch_label;
using session::detect_backends;
using session::judging_backend;
using session::judging_policy;
using session::make_inspect_hook;

}  // namespace wheelfit::api
