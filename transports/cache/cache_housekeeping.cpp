// The cache's housekeeping (cache_housekeeping.hpp): usage, the size cap (least recently used
// first) and leftover temporary files.
#include "wheelfit/transports/cache_housekeeping.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include "wheelfit/util/atomic_file.hpp"

namespace wheelfit::transports {
namespace fs = std::filesystem;

namespace {

struct EntryFile {
  fs::path path;
  std::uint64_t size = 0;
  struct timespec used {};  ///< the access time: when it was last written or served
};

struct Scan {
  CacheUsage usage;
  std::vector<EntryFile> entries;
};

bool is_entry_name(const std::string& name) { return name.size() > 6 && name.front() != '.' && name.ends_with(".entry"); }

// Every file under `dir` (recursively), its bytes added to `bytes`.
Expected<void> add_tree(const fs::path& dir, std::uint64_t& bytes) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) bytes += it->file_size(fec);
  }
  if (ec) return unexpected(Errc::io_error, "cache " + dir.string() + " cannot be read: " + ec.message());
  return {};
}

Expected<Scan> scan(const fs::path& root) {
  Scan s;
  s.usage.root = root;
  std::error_code ec;
  const auto root_status = fs::status(root, ec);
  if (!fs::exists(root_status)) return s;
  if (!fs::is_directory(root_status)) return unexpected(Errc::io_error, "cache " + root.string() + " is not a folder");
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() != "v2") {
      std::error_code fec;
      if (it->is_directory(fec)) {
        if (auto t = add_tree(p, s.usage.other_bytes); !t) return t.error();
      } else if (it->is_regular_file(fec)) {
        s.usage.other_bytes += it->file_size(fec);
      }
      continue;
    }
    std::error_code vec;
    for (fs::directory_iterator e(p, vec), vend; !vec && e != vend; e.increment(vec)) {
      const std::string name = e->path().filename().string();
      struct stat st {};
      if (::lstat(e->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      const auto size = static_cast<std::uint64_t>(st.st_size);
      if (is_entry_name(name)) {
        ++s.usage.entries;
        s.usage.bytes += size;
        s.entries.push_back(EntryFile{e->path(), size, st.st_atim});
      } else {
        if (util::temp_file_writer(name)) ++s.usage.temp_files;
        s.usage.other_bytes += size;
      }
    }
    if (vec) return unexpected(Errc::io_error, "cache " + p.string() + " cannot be read: " + vec.message());
  }
  if (ec) return unexpected(Errc::io_error, "cache " + root.string() + " cannot be read: " + ec.message());
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
  util::remove_stale_temp_files(root / "v2", std::nullopt, temp_age);
  auto entries = std::move(before->entries);
  std::sort(entries.begin(), entries.end(), [](const EntryFile& a, const EntryFile& b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec, a.path) < std::tie(b.used.tv_sec, b.used.tv_nsec, b.path);
  });
  std::uint64_t total = before->usage.bytes;
  for (const auto& e : entries) {
    if (total <= max_bytes) break;
    if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) total -= e.size;  // ENOENT: another run removed it
  }
  auto after = scan(root);
  if (!after) return after.error();
  return compare(before->usage, after->usage);
}

Expected<CacheCleanup> clean_cache(const fs::path& root) {
  auto before = scan(root);
  if (!before) return before.error();
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code rec;
    fs::remove_all(it->path(), rec);
    if (rec) return unexpected(Errc::io_error, "cache: " + it->path().string() + " cannot be removed: " + rec.message());
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return unexpected(Errc::io_error, "cache " + root.string() + " cannot be read: " + ec.message());
  }
  auto after = scan(root);
  if (!after) return after.error();
  return compare(before->usage, after->usage);
}

}  // namespace wheelfit::transports
