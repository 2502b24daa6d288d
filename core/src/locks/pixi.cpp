// pixi.toml read back (locks/read.hpp): the wheels its [pypi-dependencies] tables pin, as
// output::pixi_manifest writes them (`{ url = "...#sha256=HEX" }`, `{ version = "==X", index }`)
// and as people write them (`{ path }`, `"==X"`).
#include <algorithm>

#include "lock_text.hpp"

namespace wheelfit::locks::detail {

namespace {

/// A [pypi-dependencies] table and the dotted key it sits at, for messages.
struct DependencyTable {
  std::string where;
  const toml::table* table;
};

/// `parent`'s [pypi-dependencies] and (`with_targets`) its [target.<t>.pypi-dependencies] into `out`.
void tables_of(const toml::table& parent, const std::string& prefix, std::vector<DependencyTable>& out, bool with_targets = true) {
  if (const auto* deps = table_at(parent, "pypi-dependencies")) out.push_back({prefix + "pypi-dependencies", deps});
  const auto* targets = with_targets ? table_at(parent, "target") : nullptr;
  if (!targets) return;
  for (const auto& [target, node] : *targets) {
    if (const auto* t = node.as_table()) tables_of(*t, prefix + "target." + std::string(target.str()) + ".", out, false);
  }
}

/// Every [pypi-dependencies] table pixi reads: top level, per target, per feature (and its targets).
std::vector<DependencyTable> dependency_tables(const toml::table& doc) {
  std::vector<DependencyTable> out;
  tables_of(doc, "", out);
  if (const auto* features = table_at(doc, "feature")) {
    for (const auto& [feature, node] : *features) {
      if (const auto* f = node.as_table()) tables_of(*f, "feature." + std::string(feature.str()) + ".", out);
    }
  }
  return out;
}

/// [pypi-options] index-url, at the top level or else the first feature's (in file order).
Expected<std::optional<std::string>> options_index(const toml::table& doc, std::string_view file) {
  std::vector<std::pair<std::string, const toml::table*>> options;
  if (const auto* top = table_at(doc, "pypi-options")) options.emplace_back("pypi-options", top);
  if (const auto* features = table_at(doc, "feature")) {
    for (const auto& [feature, node] : *features) {
      const auto* f = node.as_table();
      if (const auto* o = f ? table_at(*f, "pypi-options") : nullptr) options.emplace_back("feature." + std::string(feature.str()) + ".pypi-options", o);
    }
    std::stable_sort(options.begin() + (table_at(doc, "pypi-options") ? 1 : 0), options.end(),
                     [](const auto& a, const auto& b) { return line_of(*a.second) < line_of(*b.second); });
  }
  for (const auto& [where, table] : options) {
    auto index = string_at(*table, "index-url", file, "[" + where + "]");
    if (!index) return index.error();
    if (*index) return index;
  }
  return std::optional<std::string>();
}

/// Reads one table's dependencies into a LockFile.
struct Reader {
  std::string_view file;
  LockFile& lock;
  Warnings& warnings;

  Expected<void> dependency(std::string_view key, const toml::node& node, const std::string& where) {
    Entry entry;
    entry.line = line_of(node);
    auto name = project_name(key, file, entry.line);
    if (!name) return name.error();
    entry.name = std::move(*name);
    const std::string what = "[" + where + "] " + shown(key);
    if (const auto* spec = node.as_string()) return by_version(std::move(entry), spec->get(), what);
    const auto* table = node.as_table();
    if (!table) return bad(file, entry.line, what + " is neither a version string nor a table");
    std::optional<std::string> values[4];  // url, path, version, index
    constexpr std::string_view kKeys[] = {"url", "path", "version", "index"};
    for (std::size_t i = 0; i < std::size(kKeys); ++i) {
      auto value = string_at(*table, kKeys[i], file, what + "'s");
      if (!value) return value.error();
      values[i] = std::move(*value);
    }
    auto& [url, path, version, index] = values;
    if (index) entry.index = *index;
    if (table->contains("git") || (url && is_vcs(*url))) {
      warnings.add(file, entry.line, what + " is a VCS source, not a wheel: skipped");
      return {};
    }
    if (url || path) return by_location(std::move(entry), url ? *url : *path, url.has_value(), what);
    if (version) return by_version(std::move(entry), *version, what);
    warnings.add(file, entry.line, what + " pins no wheel (no url, path or version): skipped");
    return {};
  }

  Expected<void> by_version(Entry entry, const std::string& spec, const std::string& what) {
    auto version = exact_pin(spec);
    if (!version) {
      warnings.add(file, entry.line, what + " " + shown(spec) + " pins no one version: skipped");
      return {};
    }
    entry.version = std::move(*version);
    lock.entries.push_back(std::move(entry));
    return {};
  }

  Expected<void> by_location(Entry entry, const std::string& location, bool url, const std::string& what) {
    if (!url) {
      if (auto ok = check_inside(location, file, entry.line); !ok) return ok;
    }
    auto filename = file_name_of(location, url, file, entry.line);
    if (!filename) return filename.error();
    if (!is_wheel_file(*filename)) {
      warnings.add(file, entry.line, what + " " + shown(*filename) + " is not a wheel (an sdist, an archive or a folder): skipped");
      return {};
    }
    entry.filename = std::move(*filename);
    (url ? entry.url : entry.path) = location;
    if (auto ok = check_wheel(entry, file); !ok) return ok;
    if (const auto fragment = url ? fragment_sha256(location) : std::nullopt) {
      auto hex = sha256_of(*fragment, file, entry.line, shown(entry.filename));
      if (!hex) return hex.error();
      entry.sha256 = std::move(*hex);
    }
    lock.entries.push_back(std::move(entry));
    return {};
  }
};

}  // namespace

bool has_pypi_dependencies(const toml::table& doc) { return !dependency_tables(doc).empty(); }

Expected<LockFile> parse_pixi(const toml::table& doc, std::string_view file) {
  LockFile lock;
  lock.format = Format::pixi;
  Warnings warnings;
  Reader reader{file, lock, warnings};
  for (const auto& [where, table] : dependency_tables(doc)) {
    for (const auto& [key, node] : *table) {
      if (auto ok = reader.dependency(key.str(), node, where); !ok) return ok.error();
    }
  }
  // toml++ keeps a table's keys sorted: file order is the entries' lines.
  std::stable_sort(lock.entries.begin(), lock.entries.end(), [](const Entry& a, const Entry& b) { return a.line < b.line; });
  auto index = options_index(doc, file);
  if (!index) return index.error();
  lock.index = std::move(*index);
  if (!lock.index) {
    const auto named = std::find_if(lock.entries.begin(), lock.entries.end(), [](const Entry& e) { return !e.index.empty(); });
    if (named != lock.entries.end()) lock.index = named->index;
  }
  lock.warnings = warnings.sorted();
  return lock;
}

}  // namespace wheelfit::locks::detail
