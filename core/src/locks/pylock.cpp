// pylock.toml read back (locks/read.hpp; PEP 751): each [[packages]] entry's wheels, one Entry
// each; its sdist, archive, VCS or directory source a warning.
#include "lock_text.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::locks::detail {

namespace {

/// The lock-version: PEP 751 says a reader refuses a major version it does not know.
Expected<void> check_lock_version(const toml::table& doc, std::string_view file) {
  auto version = string_at(doc, "lock-version", file, "the top-level");
  if (!version) return version.error();
  if (!*version) return bad(file, 1, "no lock-version: not a pylock.toml (PEP 751 requires one)");
  if (!(**version == "1" || (*version)->starts_with("1."))) {
    const toml::node& node = *doc.get("lock-version");
    return Error(Errc::unsupported, std::string(file) + ":" + std::to_string(line_of(node)) + ": lock-version " +
                                        shown(**version) + " is not 1.x, the version wheelfit reads");
  }
  return {};
}

/// One wheel of a package: `where` names it in messages.
Expected<Entry> wheel_entry(const toml::table& wheel, const Entry& package, std::string_view file) {
  Entry entry = package;
  entry.line = line_of(wheel);
  const std::string where = "the wheel of " + shown(package.name);
  auto url = string_at(wheel, "url", file, where);
  if (!url) return url.error();
  auto path = string_at(wheel, "path", file, where);
  if (!path) return path.error();
  auto name = string_at(wheel, "name", file, where);
  if (!name) return name.error();
  if (!*url && !*path) return bad(file, entry.line, where + " has neither url nor path");
  if (*path) {
    if (auto ok = check_inside(**path, file, entry.line); !ok) return ok.error();
    entry.path = **path;
  }
  if (*url) entry.url = **url;
  if (*name) {
    if (auto ok = check_file_name(**name, file, entry.line); !ok) return ok.error();
    entry.filename = **name;
  } else {
    auto from = *url ? file_name_of(**url, true, file, entry.line) : file_name_of(**path, false, file, entry.line);
    if (!from) return from.error();
    entry.filename = std::move(*from);
  }
  if (const toml::node* size = wheel.get("size")) {
    const auto* n = size->as_integer();
    if (!n || n->get() < 0) return bad(file, line_of(*size), "the size of " + shown(entry.filename) + " is not a non-negative integer");
    entry.size = static_cast<std::uint64_t>(n->get());
  }
  if (const toml::node* hashes = wheel.get("hashes")) {
    const auto* table = hashes->as_table();
    if (!table) return bad(file, line_of(*hashes), "the hashes of " + shown(entry.filename) + " are not a table");
    auto sha = string_at(*table, "sha256", file, "the hashes of " + shown(entry.filename) + ":");
    if (!sha) return sha.error();
    if (*sha) {
      auto hex = sha256_of(**sha, file, entry.line, shown(entry.filename));
      if (!hex) return hex.error();
      entry.sha256 = std::move(*hex);
    }
  }
  if (auto ok = check_wheel(entry, file); !ok) return ok.error();
  return entry;
}

/// One [[packages]] entry: its wheels into `lock`, what else it holds into `warnings`.
Expected<void> read_package(const toml::table& package, std::string_view file, LockFile& lock, Warnings& warnings) {
  Entry base;
  base.line = line_of(package);
  auto raw_name = string_at(package, "name", file, "a package's");
  if (!raw_name) return raw_name.error();
  if (!*raw_name) return bad(file, base.line, "a package without a name");
  auto name = project_name(**raw_name, file, base.line);
  if (!name) return name.error();
  base.name = std::move(*name);
  for (const auto& [key, target] : {std::pair<std::string_view, std::string*>{"version", &base.version}, {"index", &base.index}}) {
    auto value = string_at(package, key, file, "the package " + shown(base.name) + "'s");
    if (!value) return value.error();
    if (*value) *target = std::move(**value);
  }
  bool other = false;
  static constexpr std::pair<std::string_view, std::string_view> kSources[] = {
      {"sdist", "an sdist"}, {"archive", "an archive"}, {"vcs", "a VCS"}, {"directory", "a directory"}};
  for (const auto& [kind, words] : kSources) {
    if (const toml::node* node = package.get(kind)) {
      warnings.add(file, line_of(*node), shown(base.name) + " has " + std::string(words) + " source, not a wheel: skipped");
      other = true;
    }
  }
  const toml::node* wheels = package.get("wheels");
  if (!wheels) {
    if (!other) warnings.add(file, base.line, shown(base.name) + " lists no wheels: skipped");
    return {};
  }
  const auto* list = wheels->as_array();
  if (!list) return bad(file, line_of(*wheels), "the wheels of " + shown(base.name) + " are not an array");
  for (const toml::node& node : *list) {
    const auto* wheel = node.as_table();
    if (!wheel) return bad(file, line_of(node), "a wheel of " + shown(base.name) + " is not a table");
    auto entry = wheel_entry(*wheel, base, file);
    if (!entry) return entry.error();
    lock.entries.push_back(std::move(*entry));
  }
  return {};
}

}  // namespace

Expected<LockFile> parse_pylock(const toml::table& doc, std::string_view file) {
  if (auto ok = check_lock_version(doc, file); !ok) return ok.error();
  LockFile lock;
  lock.format = Format::pylock;
  Warnings warnings;
  if (const toml::node* packages = doc.get("packages")) {
    const auto* list = packages->as_array();
    if (!list) return bad(file, line_of(*packages), "packages is not an array of tables ([[packages]])");
    for (const toml::node& node : *list) {
      const auto* package = node.as_table();
      if (!package) return bad(file, line_of(node), "a package is not a table");
      if (auto ok = read_package(*package, file, lock, warnings); !ok) return ok.error();
    }
  }
  lock.warnings = warnings.sorted();
  return lock;
}

}  // namespace wheelfit::locks::detail
