// Publishing a mirror snapshot (wheelfit/mirror/mirror.hpp): the tree built beside the served one,
// renamed into place, `current` swapped by a renamed symlink.
// Linux only: the new tree is flushed with syncfs and `current` is a symbolic link renamed over
// the old one; Windows has neither (no syncfs; a symlink needs a privilege or developer mode, and
// no rename swaps one atomically), so there publish() and current_files() say so (decision 0036).
#ifdef _WIN32
#include "wheelfit/mirror/mirror.hpp"

namespace wheelfit::mirror {

std::string_view publish_unavailable() noexcept {
  return "mirror: publishing a mirror is Linux-only: its publish step flushes the new snapshot with syncfs and "
         "swaps OUT/current as a renamed symbolic link, which this Windows build does not do; run `wheelfit mirror` "
         "on a Linux host, or fetch the wheels here with `wheelfit download`";
}

Expected<std::vector<File>> current_files(const std::filesystem::path&) {
  return Error(Errc::unsupported, std::string(publish_unavailable()));
}

Expected<Published> publish(const Snapshot&) { return Error(Errc::unsupported, std::string(publish_unavailable())); }

}  // namespace wheelfit::mirror

#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <set>

#include <boost/json.hpp>

#include "folder.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"
#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/utc_time.hpp"
#include "wheelfit/version.hpp"

namespace wheelfit::mirror {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr const char* kManifest = "mirror.json";

using detail::each_entry;
using detail::io_error;

std::string utc_now(const char* format) { return util::format_utc(std::chrono::system_clock::now(), format); }

bool plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos && name.front() != '.';
}

/// Opens `dir` and flushes it with `flush` (fsync: the folder; syncfs: its file system); `what`
/// names what a failed flush could not flush.
Expected<void> flush_folder(const fs::path& dir, int (*flush)(int), const char* what) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(dir, "cannot open the folder to flush it", errno);
  const int rc = flush(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return io_error(dir, std::string("cannot flush ") + what, err);
  return {};
}

Expected<void> sync_dir(const fs::path& dir) { return flush_folder(dir, ::fsync, "the folder"); }

/// Where the METADATA of the wheel with this sha256 is kept: by the wheel's digest, never by its
/// name, so that a wheel replaced upstream under the same name (the farm's *-latest releases)
/// is served with its own METADATA, not the one before.
fs::path metadata_cache(const fs::path& pool, const std::string& wheel_sha256) {
  return pool / ".metadata" / (wheel_sha256 + ".metadata");
}

/// Flushes the file system that holds `dir` (every file and folder of a new snapshot at once).
Expected<void> sync_fs(const fs::path& dir) { return flush_folder(dir, ::syncfs, "the file system"); }

/// The METADATA of a wheel in the pool (whose digest is `wheel_sha256`), read from the wheel once
/// and cached (metadata_cache).
Expected<std::string> metadata_of(const fs::path& wheel, const fs::path& cached) {
  std::error_code ec;
  if (fs::is_regular_file(cached, ec)) return util::read_file(cached.string(), 64u << 20, "a METADATA file");
  auto source = inspect::open_file_source(wheel.string());
  if (!source) return source.error();
  auto dir = inspect::read_zip_directory(**source);
  if (!dir) return dir.error();
  const inspect::ZipEntry* found = nullptr;
  for (const auto& e : dir->entries) {
    const auto slash = e.name.find('/');
    if (slash == std::string::npos || e.name.substr(slash) != "/METADATA") continue;
    if (!std::string_view(e.name).substr(0, slash).ends_with(".dist-info")) continue;
    if (found) return Error(Errc::invalid_input, wheel.string() + ": more than one *.dist-info/METADATA");
    found = &e;
  }
  if (!found) return Error(Errc::invalid_input, wheel.string() + ": no <name>-<version>.dist-info/METADATA in the wheel");
  auto bytes = inspect::read_zip_member(**source, *found);
  if (!bytes) return bytes.error();
  fs::create_directories(cached.parent_path(), ec);
  if (ec) return io_error(cached.parent_path(), "cannot create", ec);
  if (auto w = util::write_file_atomic(cached, {*bytes}); !w) return w.error();
  return bytes;
}

/// files/<name> in the snapshot: a hard link to the pool's file, a copy where links cannot be made.
/// Never over a name the snapshot holds already (a listed "x.whl.metadata" beside the wheel
/// "x.whl"'s METADATA): a name under files/ is one file's, served as immutable (decision 0041).
Expected<void> place(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return {};
  if (ec == std::errc::file_exists || fs::exists(fs::symlink_status(to, ec))) {
    return Error(Errc::invalid_input, "mirror: files/" + to.filename().string() +
                                          " would be two files (a listed file and a wheel's METADATA): not published");
  }
  fs::copy_file(from, to, fs::copy_options::none, ec);
  if (ec) return io_error(to, "cannot link or copy " + from.string(), ec);
  return {};
}

json::object file_json(const File& f, const std::string& metadata_sha256) {
  json::object o{{"filename", f.filename}, {"project", f.project}, {"sha256", f.sha256}, {"size", f.size}};
  if (f.requires_python) o["requires_python"] = *f.requires_python;
  json::array anchors, machines;
  for (const auto& a : f.anchors) anchors.emplace_back(a);
  for (const auto& m : f.machines) machines.emplace_back(m);
  o["anchors"] = std::move(anchors);
  o["machines"] = std::move(machines);
  o["metadata_sha256"] = metadata_sha256;
  o["verified"] = f.verified;
  o["yanked"] = f.yanked;
  if (f.yanked) o["yank_reason"] = f.yank_reason;
  json::object fields;
  for (const auto& [k, v] : f.fields) fields[k] = v;
  o["fields"] = std::move(fields);
  return o;
}

std::string string_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

Expected<File> file_from_json(const json::value& v, const fs::path& manifest, std::size_t i) {
  const std::string where = manifest.string() + ": files[" + std::to_string(i) + "]";
  if (!v.is_object()) return Error(Errc::invalid_input, where + ": not an object");
  const auto& o = v.get_object();
  File f;
  f.filename = string_at(o, "filename");
  f.project = string_at(o, "project");
  f.sha256 = string_at(o, "sha256");
  if (!plain_name(f.filename) || f.project.empty() || f.sha256.size() != 64) {
    return Error(Errc::invalid_input, where + ": needs a plain filename, a project and a 64-digit sha256");
  }
  if (const auto* s = o.if_contains("size"); s && s->is_int64() && s->get_int64() >= 0) f.size = static_cast<std::uint64_t>(s->get_int64());
  if (const auto* s = o.if_contains("size"); s && s->is_uint64()) f.size = s->get_uint64();
  if (const auto* rp = o.if_contains("requires_python"); rp && rp->is_string()) f.requires_python = std::string(rp->get_string());
  if (const auto* vf = o.if_contains("verified"); vf && vf->is_bool()) f.verified = vf->get_bool();
  if (const auto* y = o.if_contains("yanked"); y && y->is_bool()) f.yanked = y->get_bool();
  if (f.yanked) f.yank_reason = string_at(o, "yank_reason");
  if (const auto* a = o.if_contains("anchors"); a && a->is_array()) {
    for (const auto& x : a->get_array())
      if (x.is_string()) f.anchors.emplace_back(x.get_string());
  }
  if (const auto* fl = o.if_contains("fields"); fl && fl->is_object()) {
    for (const auto& [k, x] : fl->get_object())
      if (x.is_string()) f.fields.emplace_back(std::string(k), std::string(x.get_string()));
  }
  return f;
}

std::string packages_json(const Snapshot& s, const std::vector<File>& files) {
  std::map<std::string, std::vector<const File*>> by_project;
  for (const auto& f : files) by_project[f.project].push_back(&f);
  json::object packages;
  for (const auto& [project, list] : by_project) {
    bool torch_free = false;
    for (const auto& [p, tf] : s.torch_free)
      if (p == project) torch_free = tf;
    json::array wheels;
    for (const File* f : list) {
      if (!f->filename.ends_with(".whl")) continue;  // packages.json lists wheels only (a variants file is on the pages)
      json::object w{{"filename", f->filename}};
      for (const auto& [k, v] : f->fields) w[k] = v;
      w["url"] = file_href(f->filename, s.base_url, false);
      w["sha256"] = f->sha256;
      wheels.emplace_back(std::move(w));
    }
    packages[project] = json::object{{"torch_free", torch_free}, {"wheels", std::move(wheels)}};
  }
  return json::serialize(json::object{{"schema", 1}, {"repo", s.repo}, {"packages", std::move(packages)}}) + "\n";
}

std::string manifest_json(const Snapshot& s, const std::string& id, const std::vector<File>& files,
                          const std::vector<std::string>& metadata_sha256) {
  json::array machines;
  for (const auto& m : s.machines) {
    json::array names;
    for (const auto& f : files)
      if (std::find(f.machines.begin(), f.machines.end(), m.name) != f.machines.end()) names.emplace_back(f.filename);
    machines.emplace_back(json::object{{"name", m.name}, {"combo", m.combo}, {"tier", m.tier}, {"status", m.status},
                                       {"files", std::move(names)}});
  }
  json::array list;
  for (std::size_t i = 0; i < files.size(); ++i) list.emplace_back(file_json(files[i], metadata_sha256[i]));
  json::object o{{"schema", 1},
                 {"generator", "wheelfit " WHEELFIT_VERSION_STRING},
                 {"id", id},
                 {"published", utc_now("%Y-%m-%dT%H:%M:%SZ")},
                 {"upstream", s.upstream},
                 {"upstream_time", s.upstream_time},
                 {"base_url", s.base_url ? json::value(*s.base_url) : json::value(nullptr)},
                 {"machines", std::move(machines)},
                 {"files", std::move(list)}};
  return json::serialize(o) + "\n";
}

/// When a pool file arrived (its mtime), as PEP 700's upload-time: RFC 3339, UTC, microseconds.
Expected<std::string> mtime_of(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return io_error(file, "cannot read when it was downloaded (its mtime)", errno);
  char frac[24];
  std::snprintf(frac, sizeof frac, ".%06ldZ", st.st_mtim.tv_nsec / 1000);
  return util::format_utc(std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec)), "%Y-%m-%dT%H:%M:%S") + frac;
}

/// The snapshot folder `current` points at ("" when none).
std::string current_id(const fs::path& out) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(out / "current", ec);
  if (ec) return {};
  return target.filename().string();
}

}  // namespace

Expected<std::vector<File>> current_files(const fs::path& out) {
  const std::string id = current_id(out);
  if (id.empty()) return std::vector<File>{};
  const fs::path manifest = out / "snapshots" / id / kManifest;
  auto text = util::read_file(manifest.string(), 256u << 20, "a mirror manifest");
  if (!text) return text.error();
  boost::system::error_code ec;
  const json::value v = json::parse(*text, ec);
  if (ec || !v.is_object()) return Error(Errc::invalid_input, manifest.string() + ": not a JSON object" + (ec ? ": " + ec.message() : ""));
  const auto* files = v.get_object().if_contains("files");
  if (!files || !files->is_array()) return Error(Errc::invalid_input, manifest.string() + ": no \"files\" array");
  std::vector<File> out_files;
  for (std::size_t i = 0; i < files->get_array().size(); ++i) {
    auto f = file_from_json(files->get_array()[i], manifest, i);
    if (!f) return f.error();
    out_files.push_back(std::move(*f));
  }
  return out_files;
}

std::string_view publish_unavailable() noexcept { return {}; }

namespace {

/// The snapshot's files refused before anything is written: a file name that is not plain or is
/// listed twice, a resolved machine whose name cannot name its view.
Expected<void> check_names(const Snapshot& s) {
  std::set<std::string> names;
  for (const auto& f : s.files) {
    if (!plain_name(f.filename)) return Error(Errc::invalid_input, "mirror: '" + f.filename + "' is not a plain file name");
    if (!names.insert(f.filename).second) return Error(Errc::invalid_input, "mirror: " + f.filename + " is listed twice");
  }
  for (const auto& m : s.machines) {
    if (const auto why = view_name_problem(m.name); !why.empty() && m.status == "resolved") {
      return Error(Errc::invalid_input, "mirror: the machine name '" + m.name + "' " + why +
                                            ": it cannot name its view (machines/<name>/); rename its profile");
    }
  }
  return {};
}

/// The names the served snapshot lists with other bytes than `files` give them (upstream replaced
/// the file under its name: the farm's *-latest releases), each warned about: files/<name> is
/// served as immutable, so a client that fetched the old bytes keeps them and fails the page's
/// sha256 until its cache is cleared (decision 0041).
std::vector<std::string> replaced_names(const std::vector<File>& files, const std::vector<File>& previous) {
  std::map<std::string, const File*> before;
  for (const auto& f : previous) before[f.filename] = &f;
  std::vector<std::string> out;
  for (const auto& f : files) {
    auto it = before.find(f.filename);
    if (it == before.end() || it->second->sha256 == f.sha256) continue;
    out.push_back(f.filename);
    log::warn("mirror: files/" + f.filename + " is published with other bytes than the served snapshot's (sha256 " +
              it->second->sha256 + " before, " + f.sha256 + " now: upstream replaced it under its name); a client that " +
              "cached the old file (served as immutable) fails its hash check until its cache is cleared");
  }
  return out;
}

/// The files the new snapshot lists: the snapshot's, then (without prune) the served snapshot's
/// that no machine picks now and the pool still holds (counted in `result.carried`; the others
/// go to `result.pruned`); sorted by project, then file name. The names upstream replaced go to
/// `result.replaced`.
std::vector<File> gather_files(const Snapshot& s, const fs::path& pool, Published& result) {
  std::vector<File> files = s.files;
  std::set<std::string> names;
  for (const auto& f : files) names.insert(f.filename);
  auto previous = current_files(s.out);
  if (!previous) {  // never a failed run for it: this run writes a good one (decision 0021)
    log::warn("mirror: " + previous.error().message + "; read as no previous files (none carried over)");
    previous = std::vector<File>{};
  }
  result.replaced = replaced_names(files, *previous);
  std::error_code ec;
  for (auto& f : *previous) {
    if (names.count(f.filename)) continue;
    if (s.prune || !fs::exists(pool / f.filename, ec)) {
      result.pruned.push_back(f.filename);
      continue;
    }
    f.machines.clear();
    names.insert(f.filename);
    files.push_back(std::move(f));
    ++result.carried;
  }
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) {
    return a.project != b.project ? a.project < b.project : a.filename < b.filename;
  });
  return files;
}

/// A folder this run made and removes when it ends unless kept (a failed run leaves no tree).
struct Cleanup {
  fs::path dir;
  bool keep = false;
  explicit Cleanup(fs::path made) : dir(std::move(made)) {}
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    std::error_code e;
    if (!keep) fs::remove_all(dir, e);
  }
};

/// The new snapshot's id: the time, with "-N" when a snapshot (or `current`) has it already.
std::string new_id(const fs::path& out, const fs::path& snapshots) {
  std::error_code ec;
  std::string id = utc_now("%Y%m%dT%H%M%SZ");
  for (int n = 2; fs::exists(snapshots / id, ec) || id == current_id(out); ++n) id = utc_now("%Y%m%dT%H%M%SZ") + "-" + std::to_string(n);
  return id;
}

/// What the pages say of each file beyond the manifest: its METADATA's sha256 (PEP 658; "" for a
/// variants file), its upload-time (PEP 700).
struct FileFacts {
  std::vector<std::string> metadata_sha256, upload_time;
};

/// Each file placed (hard-linked or copied) from the pool into `tmp`/files, checked against the
/// manifest's size, with its wheel's METADATA beside it (read once, kept by digest in the pool).
Expected<FileFacts> place_files(const std::vector<File>& files, const fs::path& pool, const fs::path& tmp) {
  FileFacts facts{std::vector<std::string>(files.size()), std::vector<std::string>(files.size())};
  std::error_code ec;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const File& f = files[i];
    const fs::path src = pool / f.filename;
    const auto size = fs::file_size(src, ec);
    if (ec) return io_error(src, "the downloaded wheel is missing from the pool", ec);
    if (size != f.size) {
      return Error(Errc::invalid_input, src.string() + ": " + std::to_string(size) + " bytes, the manifest says " +
                                            std::to_string(f.size));
    }
    if (auto p = place(src, tmp / "files" / f.filename); !p) return p.error();
    auto uploaded = mtime_of(src);  // every JSON entry has one (PEP 700)
    if (!uploaded) return uploaded.error();
    facts.upload_time[i] = std::move(*uploaded);
    // A package version's variants file (PEP 825) is published beside its wheels; it has no METADATA.
    if (!f.filename.ends_with(".whl")) continue;
    const fs::path cached = metadata_cache(pool, f.sha256);
    auto metadata = metadata_of(src, cached);
    if (!metadata) return metadata.error().with_context("mirror: the metadata of " + f.filename);
    deliver::Sha256 h;
    h.update(*metadata);
    facts.metadata_sha256[i] = h.hex();
    if (auto p = place(cached, tmp / "files" / (f.filename + ".metadata")); !p) return p.error();
  }
  return facts;
}

// The tree's files are written without an fsync each (a hundred pages with the views), then
// flushed at once (syncfs) before the tree is renamed into place: durable where it matters,
// before `current` can point at it.
constexpr util::AtomicWriteOptions kFlushedLater{.durable = false};

/// The pages of a tree (the union at the root, a view under machines/<name>/), HTML and JSON, of
/// the files `which`, `up` folders below the snapshot's root; the projects listed.
Expected<std::vector<std::string>> write_tree(const fs::path& root, const std::vector<File>& files, const FileFacts& facts,
                                              const std::vector<std::size_t>& which, const std::optional<std::string>& base_url,
                                              int up) {
  std::error_code ec;
  fs::create_directories(root, ec);  // a view of a machine that picked nothing is an empty index
  if (ec) return io_error(root, "cannot create", ec);
  std::map<std::string, std::vector<std::size_t>> projects_of;
  for (auto i : which) projects_of[files[i].project].push_back(i);
  std::vector<std::string> listed;
  for (const auto& [project, idx] : projects_of) {
    if (!plain_name(project)) return Error(Errc::invalid_input, "mirror: '" + project + "' is not a project name");
    listed.push_back(project);
    std::vector<const File*> list;
    std::vector<std::string> meta, times;
    for (auto i : idx) {
      list.push_back(&files[i]);
      meta.push_back(facts.metadata_sha256[i]);
      times.push_back(facts.upload_time[i]);
    }
    fs::create_directories(root / project, ec);
    if (ec) return io_error(root / project, "cannot create", ec);
    if (auto w = util::write_file_atomic(root / project / "index.html", {project_page(project, list, meta, base_url, up)}, kFlushedLater); !w) {
      return w.error();
    }
    if (auto w = util::write_file_atomic(root / project / "index.json", {project_json(project, list, meta, times, base_url, up)},
                                         kFlushedLater);
        !w) {
      return w.error();
    }
  }
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"index.html", root_page(listed)}, {"index.json", root_json(listed)}}) {
    if (auto w = util::write_file_atomic(root / name, {text}, kFlushedLater); !w) return w.error();
  }
  return listed;
}

/// A view per resolved machine (machines/<name>/): its picks' pages and its lock files; the
/// views written.
Expected<std::size_t> write_views(const Snapshot& s, const fs::path& tmp, const std::vector<File>& files, const FileFacts& facts) {
  std::size_t views = 0;
  for (const auto& m : s.machines) {
    if (m.status != "resolved") continue;
    std::vector<std::size_t> picks;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (std::find(files[i].machines.begin(), files[i].machines.end(), m.name) != files[i].machines.end()) picks.push_back(i);
    }
    const fs::path view = tmp / "machines" / m.name;
    if (auto made = write_tree(view, files, facts, picks, s.base_url, 3); !made) return made.error();
    for (const auto& [name, text] : m.lock_files) {
      if (text.empty()) continue;
      if (auto w = util::write_file_atomic(view / name, {text}, kFlushedLater); !w) return w.error();
    }
    ++views;
  }
  return views;
}

/// The tree in `cleanup.dir` renamed into place as snapshots/`id`, then `current` swapped (a
/// symlink renamed over it) and the folder holding it flushed; `cleanup` then keeps the tree.
Expected<void> swap_current(const fs::path& out, const fs::path& snapshots, const std::string& id, Cleanup& cleanup) {
  const fs::path final_dir = snapshots / id;
  if (::rename(cleanup.dir.c_str(), final_dir.c_str()) != 0) return io_error(final_dir, "cannot rename the new snapshot into place", errno);
  cleanup.dir = final_dir;
  std::error_code ec;
  const fs::path link_tmp = out / (".current.tmp-" + std::to_string(::getpid()));
  fs::remove(link_tmp, ec);
  if (::symlink(("snapshots/" + id).c_str(), link_tmp.c_str()) != 0) return io_error(link_tmp, "cannot create the symlink", errno);
  if (::rename(link_tmp.c_str(), (out / "current").c_str()) != 0) {
    const int err = errno;
    fs::remove(link_tmp, ec);
    return io_error(out / "current", "cannot replace", err);
  }
  cleanup.keep = true;
  return sync_dir(out);
}

/// After the swap: old snapshots (all but `id` and `previous_id`), leftovers of killed runs, with
/// prune the pool's files `result.pruned` names, and the METADATA no listed file needs. Only
/// wheelfit's names: a snapshots/keep-me/ of the user's stays (decision 0022).
void tidy(const fs::path& out, const std::string& id, const std::string& previous_id, bool prune, const std::vector<File>& files,
          Published& result) {
  const fs::path snapshots = out / "snapshots", pool = pool_dir(out);
  std::error_code ec;
  each_entry(snapshots, [&](const fs::directory_entry& e) {
    const auto n = e.path().filename().string();
    if (n == id || n == previous_id || !(detail::is_snapshot_id(n) || detail::is_snapshot_temp(n))) return;
    fs::remove_all(e.path(), ec);
    ++result.snapshots_removed;
  });
  each_entry(out, [&](const fs::directory_entry& e) {
    if (detail::is_link_temp(e.path().filename().string())) fs::remove(e.path(), ec);
  });
  if (prune) {
    for (const auto& n : result.pruned) {
      fs::remove(pool / n, ec);
      fs::remove(deliver::digest_record_path(pool / n), ec);
    }
  }
  // The METADATA kept for wheels this snapshot no longer lists (the snapshots hold their own
  // links), and the name-keyed ones older versions kept beside the wheels.
  std::set<std::string> kept;
  for (const auto& f : files) kept.insert(f.sha256 + ".metadata");
  each_entry(pool / ".metadata", [&](const fs::directory_entry& e) {
    const auto n = e.path().filename().string();
    if (detail::is_metadata_name(n, true) && !kept.count(n)) fs::remove(e.path(), ec);
  });
  each_entry(pool, [&](const fs::directory_entry& e) {
    if (detail::is_named_metadata(e.path().filename().string())) fs::remove(e.path(), ec);
  });
}

}  // namespace

Expected<Published> publish(const Snapshot& s) {
  const fs::path& out = s.out;
  if (auto ok = prepare(out); !ok) return ok.error();
  std::optional<util::FolderLock> held;
  if (!s.locked) {
    auto taken = lock(out, false);  // a direct caller is told at once, never left waiting
    if (!taken) return taken.error();
    held.emplace(std::move(*taken));
  }
  const fs::path pool = pool_dir(out), snapshots = out / "snapshots";
  std::error_code ec;
  fs::create_directories(snapshots, ec);
  if (ec) return io_error(snapshots, "cannot create", ec);
  if (auto ok = check_names(s); !ok) return ok.error();
  Published result;
  const std::vector<File> files = gather_files(s, pool, result);

  // Build the new tree beside the served one.
  const std::string id = new_id(out, snapshots);
  const fs::path tmp = snapshots / (".tmp-" + id + "-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp / "files", ec);
  if (ec) return io_error(tmp, "cannot create the new snapshot", ec);
  Cleanup cleanup(tmp);
  auto facts = place_files(files, pool, tmp);
  if (!facts) return facts.error();
  std::vector<std::size_t> all(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) all[i] = i;
  auto projects = write_tree(tmp, files, *facts, all, s.base_url, 1);
  if (!projects) return projects.error();
  auto views = write_views(s, tmp, files, *facts);
  if (!views) return views.error();
  result.views = *views;
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"packages.json", packages_json(s, files)},
                                   {kManifest, manifest_json(s, id, files, facts->metadata_sha256)}}) {
    if (auto w = util::write_file_atomic(tmp / name, {text}, kFlushedLater); !w) return w.error();
  }
  if (auto synced = sync_fs(tmp); !synced) return synced.error();

  // Publish, then tidy what the new snapshot no longer needs.
  const std::string previous_id = current_id(out);
  if (auto swapped = swap_current(out, snapshots, id, cleanup); !swapped) return swapped.error();
  tidy(out, id, previous_id, s.prune, files, result);
  result.root = snapshots / id;
  result.id = id;
  result.files = files.size();
  result.unverified = static_cast<std::size_t>(std::count_if(files.begin(), files.end(), [](const File& f) { return !f.verified; }));
  result.projects = projects->size();
  return result;
}

}  // namespace wheelfit::mirror

#endif  // _WIN32
