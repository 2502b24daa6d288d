#pragma once
// A static wheel index for a fleet, that any plain web server can serve (nginx, S3, an
// Artifactory generic repository): written into a folder wheelfit owns, published atomically.
//
//   OUT/.wheelfit-mirror              the mark: the folder is wheelfit's (prepare(), decision 0022)
//   OUT/current -> snapshots/<id>     the served root: point the web server here
//   OUT/snapshots/<id>/
//     index.html                      PEP 503 root page: one link per project
//     <project>/index.html            PEP 503 project page (normalised name): one anchor per file,
//                                     href "../files/<file>#sha256=<hex>" (or --base-url absolute),
//                                     data-requires-python, data-core-metadata and
//                                     data-dist-info-metadata = "sha256=<hex of the .metadata>",
//                                     data-yanked="<reason>" for a file yanked upstream (PEP 592)
//     files/<file>                    the wheel (a hard link into OUT/pool; a copy across devices);
//                                     a name here is served with other bytes only when upstream
//                                     replaced the file under its name (warned: decision 0041)
//     files/<file>.metadata           its METADATA (PEP 658 / 714)
//     index.json, <project>/index.json   the same pages as PEP 691 JSON (api-version 1.1)
//     machines/<name>/                a view per resolved machine: the same pages (HTML and JSON) for
//                                     exactly its picks (hrefs into the shared files/), and its lock
//                                     files: requirements.txt, pylock.toml, pixi.toml (with a base URL)
//     packages.json                   the farm's schema 1, so `wheelfit resolve --index` and the
//                                     farm's own readers use the mirror unchanged
//     mirror.json                     the manifest: upstream, its snapshot time, the machines
//                                     (name, combo, tier, status, files) and every file (project,
//                                     sha256, size, anchors, machines, packages.json fields, yanked
//                                     and yank_reason)
//   OUT/pool/<file>                   the verified downloads, kept across runs
//   OUT/pool/.metadata/<sha256>.metadata   each wheel's METADATA, by the wheel's digest
//
// Publishing: the new snapshot is built in OUT/snapshots/.tmp-<id>, renamed into place, and
// `current` is replaced by a renamed symlink (rename(2) is atomic): a reader sees the old tree or
// the new one, never a mix; a kill at any point leaves `current` on the previous complete tree.
// The snapshot before the current one is kept (a reader in the middle of it finishes); older ones
// and leftovers of killed runs are removed. Only names of wheelfit's shapes are ever removed
// (snapshots/<id>, snapshots/.tmp-<id>-<pid>, .current.tmp-<pid>, pool/.metadata/<sha256>.metadata,
// pool/<wheel>.metadata): what else a user keeps in OUT stays. Without `prune`, the files of the previous snapshot
// that no machine picks any more are carried over (their manifest entries say "machines": []);
// with it they leave the index and the pool.
//
// Thread safety: one run per OUT at a time: OUT/.lock (mirror::lock) is held by a whole mirror
// run, from before its first download to after its publish.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/answer/answer.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/util/expected.hpp"
#include "wheelfit/util/own_file.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::mirror {

/// One file of the mirror.
struct File {
  std::string project = {};            ///< PEP 503 normalised name
  std::string filename = {};           ///< the real file name (the upstream href's, decoded)
  std::string sha256 = {};             ///< lower-case hex, verified
  std::uint64_t size = 0;
  std::vector<std::string> anchors = {};   ///< anchor texts it is listed under (the farm lists torch-free wheels under synthetic names)
  std::optional<std::string> requires_python = {};
  std::vector<std::string> machines = {};  ///< the machines that picked it
  bool verified = true;                ///< its sha256 is upstream's; false: computed here (mirror.json says so)
  /// Extra packages.json fields, in order ("version", "cuda", "torch", "python", "abi", "platform").
  std::vector<std::pair<std::string, std::string>> fields = {};
  /// Yanked upstream (PEP 592), with its reason ("" none): the pages keep saying so.
  bool yanked = false;
  std::string yank_reason = {};
};

/// A file of a machine's view: its name in machines/<name>/ and its text.
struct ViewFile {
  std::string name, text;
};

/// One machine of the fleet, for the manifest and its view (OUT/current/machines/<name>/).
struct Machine {
  std::string name, combo, tier, status;  ///< status: "resolved", "unresolved" or a failure's class ("bad input"), never its message (mirror.json is served)
  /// The view's lock files (view_files: one per lock format of output::formats(), such as
  /// requirements.txt, pylock.toml and, with a base URL, pixi.toml), each written as given; one
  /// with an empty text is not written. A resolved machine gets a view; others do not.
  std::vector<ViewFile> lock_files;
};

struct Snapshot {
  std::filesystem::path out;            ///< OUT
  std::optional<std::string> base_url;  ///< absolute hrefs under this URL (its "files/..."); else relative
  bool prune = false;
  bool locked = false;                  ///< the caller holds OUT's lock (mirror::lock); else publish takes it (Errc::usage when another run holds it)
  std::string upstream;                 ///< the index mirrored (no credentials)
  std::string upstream_time;            ///< when it was read (RFC 3339, UTC)
  std::string repo;                     ///< packages.json "repo" (the upstream's, when known)
  std::vector<std::pair<std::string, bool>> torch_free;  ///< packages.json torch_free per project, when known
  std::vector<Machine> machines;
  std::vector<File> files;              ///< each must be in OUT/pool already (mirror::pool_dir)
};

struct Published {
  std::filesystem::path root;                ///< OUT/snapshots/<id> (what OUT/current points at)
  std::string id;
  std::size_t files = 0, projects = 0;
  std::size_t carried = 0;                   ///< files kept from the previous snapshot (no --prune)
  std::vector<std::string> pruned;           ///< files that left the index (with prune)
  std::size_t snapshots_removed = 0;         ///< old snapshots and leftovers removed
  std::size_t unverified = 0;                ///< files whose sha256 upstream did not publish (File::verified)
  std::size_t views = 0;                     ///< machines/<name>/ views written (one per resolved machine)
  /// Files the served snapshot listed under the same name with other bytes (upstream replaced
  /// them): published, each warned about (log::warn), since files/ is served as immutable.
  std::vector<std::string> replaced = {};
};

/// Makes OUT when missing and marks it as wheelfit's (OUT/.wheelfit-mirror, written atomically
/// before anything else). An existing OUT is taken when it has the mark, when it is a mirror an
/// earlier wheelfit made (a snapshots/<id>/mirror.json of wheelfit's), or when it holds nothing
/// but what a run leaves before its first publish (the lock, the mark's temporary file, a pool of
/// downloads, an empty snapshots/): then marked. Else Errc::invalid_input naming OUT and the
/// first entry that is not wheelfit's. publish() checks the same.
Expected<void> prepare(const std::filesystem::path& out);

/// Takes OUT/.lock (util::FolderLock, made when missing) for a whole run: Errc::usage naming it
/// when another run holds it and `wait` is false.
Expected<util::FolderLock> lock(const std::filesystem::path& out, bool wait);

/// OUT/pool: where the wheels are downloaded before publish().
std::filesystem::path pool_dir(const std::filesystem::path& out);

/// The files of the snapshot OUT/current points at (from its mirror.json), or an empty list when
/// there is none yet. An error names the manifest when it is unreadable.
Expected<std::vector<File>> current_files(const std::filesystem::path& out);

/// Writes and publishes the snapshot (above). Errors (Errc::io_error, invalid_input) name the
/// path and the step; on an error `current` is untouched. A previous manifest current_files cannot
/// read is a warning (log::warn), read as no previous files.
/// On Windows: Errc::unsupported with publish_unavailable()'s text, nothing written.
Expected<Published> publish(const Snapshot& snapshot);

/// "" where publish() works (Linux); on Windows why it does not: the publish step is Linux-only
/// (the snapshot flushed with syncfs, `current` swapped as a renamed symbolic link), so the
/// `mirror` command stops with this text (exit 2) before it resolves or fetches anything.
std::string_view publish_unavailable() noexcept;

// The snapshot from an answer (answer/answer.hpp), after its files were fetched into the pool.

/// Sets each answer file's sha256 and size to those of `delivered` (one per file of the answer,
/// in its order: what deliver::download returned for them): the digests the mirror publishes.
void take_delivered(answer::Answer& answer, const std::vector<deliver::Delivered>& delivered);
/// The answer's files as the snapshot's (one per delivered file): the upstream's packages.json
/// fields as it gave them, else name_fields of the file name.
std::vector<File> files_of(const answer::Answer& answer, const std::vector<deliver::Delivered>& delivered);
/// The packages.json fields of a farm wheel, from its name parsed by model::WheelName: version
/// (public), python, abi, platform ("linux", "linux_aarch64", "windows", "macos", or the tags);
/// none for a name that is no wheel's.
std::vector<std::pair<std::string, std::string>> name_fields(const std::string& filename);
/// What a machine's view's lock files read besides the answer (pixi.toml reads the resolution).
struct ViewSource {
  const resolve::Resolution* resolution = nullptr;
  const output::ReportContext* context = nullptr;
};
/// A resolved machine's view's lock files: every lock format of output::formats(), written for
/// `machine` of `answer` as the view serves the files (relative "../../files/<file>", or under
/// `base_url`); `torch_locked`: its torch family is in the view. A format that refuses a value is
/// a warning naming the machine (log::warn), and no file. Not thread-safe with formats().add().
std::vector<ViewFile> view_files(const answer::Answer& answer, const answer::Machine& machine, const ViewSource& source,
                                 const std::optional<std::string>& base_url, bool torch_locked);

// The pieces, for tests.

/// The PEP 503 project page for `files` (all of one project), `up` folders below the tree's
/// root (1 for OUT/current/<project>/, 3 for a view's machines/<name>/<project>/); a yanked file's
/// anchor has data-yanked="<reason, escaped>" (PEP 592).
std::string project_page(const std::string& project, const std::vector<const File*>& files,
                         const std::vector<std::string>& metadata_sha256, const std::optional<std::string>& base_url,
                         int up = 1);
/// The root page listing `projects` (normalised names).
std::string root_page(const std::vector<std::string>& projects);
/// The same pages as PEP 691 JSON (api-version 1.1: PEP 700's size, upload-time and versions):
/// {"meta", "name", "files": [{filename, url, hashes, requires-python, core-metadata, size,
/// upload-time, yanked}], "versions"}; `upload_time` per file (RFC 3339, UTC); "yanked" is the
/// reason, or true without one, for a yanked file only. No "dist-info-metadata"
/// (PEP 714: pip 23.0 crashes on it).
std::string project_json(const std::string& project, const std::vector<const File*>& files,
                         const std::vector<std::string>& metadata_sha256, const std::vector<std::string>& upload_time,
                         const std::optional<std::string>& base_url, int up = 1);
/// {"meta", "projects": [{"name"}]}.
std::string root_json(const std::vector<std::string>& projects);
/// The href of a file: "<up times ../>files/<percent-encoded name>" or "<base_url>/files/<...>".
std::string file_href(const std::string& filename, const std::optional<std::string>& base_url, int up);
std::string file_href(const std::string& filename, const std::optional<std::string>& base_url, bool from_project_page);
/// Whether `name` may be a view's folder (machines/<name>/): a plain, visible path segment of
/// letters, digits, '.', '-', '_' and '+' ("" when it may; else why not).
std::string view_name_problem(std::string_view name);
/// '&', '<', '>', '"' and '\'' as entities (util::html_escape).
using util::html_escape;
/// Every byte outside RFC 3986's unreserved set percent-encoded ("+" -> "%2B").
std::string percent_encode(std::string_view text);

}  // namespace wheelfit::mirror
