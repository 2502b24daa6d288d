// The mirror folder (wheelfit/mirror/mirror.hpp): made and marked as wheelfit's, recognised, locked;
// which of its names are wheelfit's own (folder.hpp). Decision 0022.
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include <boost/json.hpp>

#include "folder.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/own_file.hpp"
#include "wheelfit/util/read_file.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::mirror {
namespace fs = std::filesystem;

namespace detail {
namespace {

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The target of an atomic write's temporary file (".tmp-<target>-<pid>-<n>"), or nullopt.
std::optional<std::string_view> temp_target(std::string_view name) {
  constexpr std::string_view prefix = ".tmp-";
  const auto last = name.rfind('-');
  if (!name.starts_with(prefix) || last == std::string_view::npos || last <= prefix.size()) return std::nullopt;
  const auto before = name.rfind('-', last - 1);
  if (before == std::string_view::npos || before <= prefix.size()) return std::nullopt;
  const std::string_view target = name.substr(prefix.size(), before - prefix.size());
  if (!util::temp_file_writer(name, target)) return std::nullopt;
  return target;
}

}  // namespace

bool is_snapshot_id(std::string_view name) {
  // "YYYYMMDDTHHMMSSZ", then "-<n>" for a second snapshot within the second.
  if (name.size() < 16 || !digits(name.substr(0, 8)) || name[8] != 'T' || !digits(name.substr(9, 6)) || name[15] != 'Z') return false;
  return name.size() == 16 || (name[16] == '-' && digits(name.substr(17)));
}

bool is_snapshot_temp(std::string_view name) {
  constexpr std::string_view prefix = ".tmp-";
  const auto dash = name.rfind('-');
  if (!name.starts_with(prefix) || dash == std::string_view::npos || dash < prefix.size()) return false;
  return is_snapshot_id(name.substr(prefix.size(), dash - prefix.size())) && digits(name.substr(dash + 1));
}

bool is_link_temp(std::string_view name) {
  constexpr std::string_view prefix = ".current.tmp-";
  return name.starts_with(prefix) && digits(name.substr(prefix.size()));
}

bool is_metadata_name(std::string_view name, bool with_temp) {
  if (with_temp) {
    if (auto target = temp_target(name)) return is_metadata_name(*target);
  }
  constexpr std::string_view suffix = ".metadata";
  return name.size() == 64 + suffix.size() && name.ends_with(suffix) && lower_hex(name.substr(0, 64));
}

bool is_named_metadata(std::string_view name) {
  constexpr std::string_view suffix = ".whl.metadata";
  return name.ends_with(suffix) && deliver::is_delivered_name(name.substr(0, name.size() - 9));
}

}  // namespace detail

namespace {

using detail::each_entry;
using detail::io_error;

/// A name download() writes in OUT/pool (the files, their parts, metas and digest records, the
/// folder's lock, an atomic write's temporary file of one of them) or an older wheelfit's
/// name-keyed METADATA.
bool pool_name(std::string_view name) {
  if (name == ".wheelfit.lock" || detail::is_named_metadata(name)) return true;
  if (auto target = detail::temp_target(name)) return pool_name(*target);
  if (name.starts_with('.')) {
    name.remove_prefix(1);
    bool known = false;
    for (std::string_view suffix : {".part.meta", ".part", ".sha256"}) {
      if (known || !name.ends_with(suffix)) continue;
      name.remove_suffix(suffix.size());
      known = true;
    }
    if (!known) return false;
  }
  return deliver::is_delivered_name(name);
}

bool is_dir(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec) && !e.is_symlink(ec);
}

/// The folders of a mirror a run writes before its first publish.
enum class Where { out, pool, metadata, snapshots };

/// Whether `name`, in a folder of kind `where`, is a name a run leaves before it publishes
/// anything (the lock, the mark's temporary file, downloads, kept METADATA, a snapshot being
/// built); `inner`: set to the kind of the folder to look into when it is one.
bool own_name(Where where, std::string_view name, bool dir, std::optional<Where>& inner) {
  switch (where) {
    case Where::out:
      if (dir && (name == "pool" || name == "snapshots")) inner = name == "pool" ? Where::pool : Where::snapshots;
      return inner || name == ".lock" || detail::is_link_temp(name) || util::temp_file_writer(name, detail::kMark);
    case Where::pool:
      if (dir && name == ".metadata") inner = Where::metadata;
      return inner || pool_name(name);
    case Where::metadata: return detail::is_metadata_name(name, true);
    case Where::snapshots: return detail::is_snapshot_temp(name);
  }
  return false;
}

/// The first name under `dir` (as "<rel>/<name>") that is not own_name(), "" when none; a
/// sub-folder that cannot be listed is named itself.
std::string foreign_under(const fs::path& dir, const std::string& rel, Where where, std::error_code& ec) {
  std::string foreign;
  ec = each_entry(dir, [&](const fs::directory_entry& e) {
    if (!foreign.empty()) return;
    const std::string name = e.path().filename().string(), at = rel.empty() ? name : rel + "/" + name;
    std::optional<Where> inner;
    if (!own_name(where, name, is_dir(e), inner)) {
      foreign = at;
    } else if (inner) {
      std::error_code sub;
      foreign = foreign_under(e.path(), at, *inner, sub);
      if (sub) foreign = at;
    }
  });
  return foreign;
}

/// Whether a wheelfit made `out` before the mark existed: a snapshot of it holds its mirror.json.
bool made_by_wheelfit(const fs::path& out) {
  bool found = false;
  each_entry(out / "snapshots", [&](const fs::directory_entry& e) {
    const std::string id = e.path().filename().string();
    if (found || !detail::is_snapshot_id(id)) return;
    auto text = util::read_file((e.path() / "mirror.json").string(), 256u << 20, "a mirror manifest");
    if (!text) return;
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(*text, ec);
    const auto* generator = !ec && v.is_object() ? v.get_object().if_contains("generator") : nullptr;
    found = generator && generator->is_string() && std::string_view(generator->get_string()).starts_with("wheelfit ");
  });
  return found;
}

bool marked(const fs::path& out) {
#ifdef _WIN32
  const auto info = util::win::info_of(out / detail::kMark, false);
  return info && info->type == fs::file_type::regular;
#else
  struct stat st {};
  return ::lstat((out / detail::kMark).c_str(), &st) == 0 && S_ISREG(st.st_mode);
#endif
}

/// The mark, written whole or not at all (a kill leaves at most its temporary file, which the
/// next run takes for wheelfit's); never through a link planted at its name.
Expected<void> mark(const fs::path& out) {
  if (const auto why = util::not_regular_file(out / detail::kMark); !why.empty()) {
    return Error(Errc::invalid_input, (out / detail::kMark).string() + ": " + why + "; remove it, then run again");
  }
  return util::write_file_atomic(out / detail::kMark,
                                 {"This folder is a wheelfit mirror (wheelfit mirror --out). wheelfit replaces current and\n"
                                  "removes only its own names here: old snapshots/<id>/, pool files it downloaded, pool/.metadata/<sha256>.metadata.\n"});
}

}  // namespace

Expected<void> prepare(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) {
    fs::create_directories(out, ec);
    if (ec) return io_error(out, "cannot create the mirror folder", ec);
    return mark(out);  // a kill before it leaves an empty folder: taken for wheelfit's next time
  }
  if (!fs::is_directory(out, ec)) return Error(Errc::invalid_input, out.string() + ": not a folder");
  if (marked(out)) return {};
  if (!made_by_wheelfit(out)) {  // else a mirror of an earlier wheelfit: marked now, and served on
    const std::string foreign = foreign_under(out, "", Where::out, ec);
    if (ec) return io_error(out, "cannot list the folder", ec);
    if (!foreign.empty() && !marked(out)) {  // else marked meanwhile, by a run beside this one
      return Error(Errc::invalid_input, out.string() + ": not a wheelfit mirror (no " + detail::kMark +
                                            " and no mirror.json of wheelfit's in it) and not empty: it holds " + foreign +
                                            "; give a new or empty folder");
    }
  }
  return mark(out);
}

fs::path pool_dir(const fs::path& out) { return out / "pool"; }

Expected<util::FolderLock> lock(const fs::path& out, bool wait) {
  return util::FolderLock::take(out / ".lock", {.wait = wait, .deadline = {}, .purpose = "mirroring into " + out.string()});
}

}  // namespace wheelfit::mirror
