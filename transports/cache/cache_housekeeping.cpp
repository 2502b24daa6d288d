// The cache's housekeeping (cache_housekeeping.hpp): usage, the size cap (least recently used
// first) and leftover temporary files.
#include "wheelfit/transports/cache_housekeeping.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

#include "wheelfit/util/atomic_file.hpp"
#ifdef _WIN32
#include <windows.h>

#include "wheelfit/util/win_file.hpp"
#include "wheelfit/util/win_file_id.hpp"
#endif

namespace wheelfit::transports {
namespace fs = std::filesystem;

namespace {

// wheelfit's own files, the only ones housekeeping touches: under v2/ the entries
// "<key>.entry" (under an older wheelfit's v1/: "<key>.json" and "<key>.body"), the key a
// lower-case sha256 in hex, and the temporary files of atomic writes of them or of the
// writability probe (".tmp-<name>-<pid>-<n>", the probe's name ".tmp-probe"). Anything else under
// the root is another program's.
enum class Format { v1, v2 };

bool is_cache_key(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_entry_name(std::string_view name, Format format) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos || !is_cache_key(name.substr(0, dot))) return false;
  const std::string_view ext = name.substr(dot);
  return format == Format::v2 ? ext == ".entry" : ext == ".json" || ext == ".body";
}

// The name an own temporary file was written for ("<key>.entry", ".tmp-probe"), when `name` is one.
std::optional<std::string> own_temp_target(std::string_view name, Format format) {
  const auto writer = util::temp_file_writer(name);
  if (!writer || *writer <= 0) return std::nullopt;  // 0: no "-<pid>-<n>" tail
  std::string_view target = name.substr(std::string_view(".tmp-").size());
  target = target.substr(0, target.rfind('-'));
  target = target.substr(0, target.rfind('-'));
  if (target != ".tmp-probe" && !is_entry_name(target, format)) return std::nullopt;
  return std::string(target);
}

struct EntryFile {
  fs::path path;
  std::uint64_t size = 0;
  struct timespec used {};  ///< the access time: when it was last written or served
};

struct TempFile {
  fs::path path;
  std::string target;  ///< the name it was written for
};

struct Scan {
  CacheUsage usage;
  std::vector<EntryFile> entries;  ///< v2/'s entries
  std::vector<TempFile> temps;     ///< v2/'s temporary files
  std::vector<fs::path> old;       ///< v1/'s files, its temporary files included
  /// Own names that are neither a regular file nor a folder (a FIFO, a device, a symlink): never
  /// read, counted nowhere, removed by prune and clean (unlinking a symlink leaves its target).
  std::vector<fs::path> strays;
};

#ifdef _WIN32
// The POSIX calls below, on Windows: an entry not followed (a reparse point is a "symlink", as
// lstat would say), its last-access time, the removal of a file or of a reparse point to a folder.
struct Entry {
  fs::file_type type = fs::file_type::not_found;
  std::uint64_t size = 0;
  struct timespec used {};
};

Entry entry_at(const fs::path& p) {
  Entry e;
  // One handle asking for attributes only: reading the entry's type another way (info_of) moved
  // its access time to now under wine, which would have made every scan a use.
  const auto stamp = util::win::file_stamp(p);
  if (!stamp) return e;
  e.type = stamp->reparse_point ? fs::file_type::symlink : stamp->directory ? fs::file_type::directory : fs::file_type::regular;
  e.size = stamp->size;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(stamp->accessed.time_since_epoch()).count();
  e.used.tv_sec = static_cast<std::time_t>(ns / 1'000'000'000);
  e.used.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return e;
}

/// 0 when removed or already gone (as ::unlink's ENOENT), else the Win32 error.
unsigned long remove_entry(const fs::path& p) {
  if (util::win::remove(p)) return 0;
  const unsigned long err = ::GetLastError();
  // A symlink or junction to a folder is removed as a folder (the link, never its target).
  if (::RemoveDirectoryW(util::win::os_path(p).c_str())) return 0;
  return err;
}

bool is_real_folder(const fs::path& p) { return entry_at(p).type == fs::file_type::directory; }
#else
bool is_real_folder(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
#endif

// Adds the own files of the entry folder `dir` to `s`; other files, links and folders are skipped.
Expected<void> scan_folder(const fs::path& dir, Format format, Scan& s) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
#ifdef _WIN32
    const Entry st = entry_at(it->path());
    if (st.type == fs::file_type::not_found || st.type == fs::file_type::directory) continue;
    const std::uint64_t size = st.size;
    const bool regular = st.type == fs::file_type::regular;
    const struct timespec used = st.used;
#else
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const bool regular = S_ISREG(st.st_mode);
    const struct timespec used = st.st_atim;
#endif
    const bool entry = is_entry_name(name, format);
    auto temp = entry ? std::nullopt : own_temp_target(name, format);
    if (!entry && !temp) continue;
    if (!regular) {
      s.strays.push_back(it->path());
    } else if (format == Format::v1) {
      s.usage.other_bytes += size;
      s.old.push_back(it->path());
    } else if (entry) {
      ++s.usage.entries;
      s.usage.bytes += size;
      s.entries.push_back(EntryFile{it->path(), size, used});
    } else {
      ++s.usage.temp_files;
      s.usage.other_bytes += size;
      s.temps.push_back(TempFile{it->path(), std::move(*temp)});
    }
  }
  if (ec) return unexpected(Errc::io_error, "cache " + dir.string() + " cannot be read: " + ec.message());
  return {};
}

// What the cache under `root` holds. A root that exists but holds neither v2/ nor v1/ is
// refused, unless `refuse_foreign` is false (after clean_cache removed a v1/).
Expected<Scan> scan(const fs::path& root, bool refuse_foreign = true) {
  Scan s;
  s.usage.root = root;
#ifdef _WIN32
  const auto st = util::win::info_of(root, true);
  if (!st) {
    if (st.error().is(Errc::not_found)) return s;  // not made yet: holds nothing
    return unexpected(Errc::io_error, "cache " + root.string() + " cannot be read: " + st.error().message);
  }
  if (st->type != fs::file_type::directory) return unexpected(Errc::io_error, "cache " + root.string() + " is not a folder");
#else
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    if (errno == ENOENT) return s;  // not made yet: holds nothing
    return unexpected(Errc::io_error, "cache " + root.string() + " cannot be read: " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return unexpected(Errc::io_error, "cache " + root.string() + " is not a folder");
#endif
  const bool v2 = is_real_folder(root / "v2"), v1 = is_real_folder(root / "v1");
  if (!v2 && !v1 && refuse_foreign) {
    return unexpected(Errc::invalid_input, "cache folder " + root.string() +
                                               " holds no wheelfit cache (no v2/ folder of entries); nothing in it was touched");
  }
  if (v2) {
    if (auto r = scan_folder(root / "v2", Format::v2, s); !r) return r.error();
  }
  if (v1) {
    if (auto r = scan_folder(root / "v1", Format::v1, s); !r) return r.error();
  }
  return s;
}

CacheCleanup compare(const CacheUsage& before, const CacheUsage& after) {
  CacheCleanup c;
  c.before = before;
  c.after = after;
  c.removed_entries = before.entries - std::min(before.entries, after.entries);
  c.removed_bytes = before.bytes - std::min(before.bytes, after.bytes);
  c.removed_temp_files = before.temp_files - std::min(before.temp_files, after.temp_files);
  return c;
}

}  // namespace

Expected<CacheUsage> cache_usage(const fs::path& root) {
  auto s = scan(root);
  if (!s) return s.error();
  return s->usage;
}

Expected<CacheCleanup> prune_cache(const fs::path& root, std::uint64_t max_bytes, std::chrono::seconds temp_age) {
  auto before = scan(root);
  if (!before) return before.error();
  // Only the temporary files of wheelfit's own names: one pass for each name written.
  std::set<std::string> targets;
  for (const auto& t : before->temps) targets.insert(t.target);
  for (const auto& t : targets) util::remove_stale_temp_files(root / "v2", t, temp_age);
  auto entries = std::move(before->entries);
  std::sort(entries.begin(), entries.end(), [](const EntryFile& a, const EntryFile& b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec, a.path) < std::tie(b.used.tv_sec, b.used.tv_nsec, b.path);
  });
#ifdef _WIN32
  for (const auto& p : before->strays) (void)remove_entry(p);
  std::uint64_t total = before->usage.bytes;
  for (const auto& e : entries) {
    if (total <= max_bytes) break;
    if (remove_entry(e.path) == 0) total -= e.size;  // gone already: another run removed it
  }
#else
  for (const auto& p : before->strays) (void)::unlink(p.c_str());  // a FIFO would block every later read
  std::uint64_t total = before->usage.bytes;
  for (const auto& e : entries) {
    if (total <= max_bytes) break;
    if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) total -= e.size;  // ENOENT: another run removed it
  }
#endif
  auto after = scan(root);
  if (!after) return after.error();
  return compare(before->usage, after->usage);
}

Expected<CacheCleanup> clean_cache(const fs::path& root) {
  auto before = scan(root);
  if (!before) return before.error();
  auto unlink_own = [](const fs::path& p) -> Expected<void> {
#ifdef _WIN32
    const unsigned long err = remove_entry(p);
    if (err == 0) return {};
    return unexpected(Errc::io_error, "cache: " + p.string() + " cannot be removed: " + util::win::error_text(err));
#else
    if (::unlink(p.c_str()) == 0 || errno == ENOENT) return {};  // ENOENT: another run removed it
    return unexpected(Errc::io_error, "cache: " + p.string() + " cannot be removed: " + std::strerror(errno));
#endif
  };
  for (const auto& e : before->entries) {
    if (auto r = unlink_own(e.path); !r) return r.error();
  }
  for (const auto& t : before->temps) {
    if (auto r = unlink_own(t.path); !r) return r.error();
  }
  for (const auto& p : before->old) {
    if (auto r = unlink_own(p); !r) return r.error();
  }
  for (const auto& p : before->strays) {
    if (auto r = unlink_own(p); !r) return r.error();
  }
#ifdef _WIN32
  if (!before->old.empty()) (void)::RemoveDirectoryW(util::win::os_path(root / "v1").c_str());  // stays when not empty
#else
  if (!before->old.empty()) (void)::rmdir((root / "v1").c_str());  // stays when another program's file is in it
#endif
  auto after = scan(root, false);
  if (!after) return after.error();
  return compare(before->usage, after->usage);
}

}  // namespace wheelfit::transports
