// The plugin search list: WHEELFIT_PLUGIN_PATH's folders, then the built-in folder (relative to
// the running executable: on Windows its own plugins\ folder).
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>

#include "wheelfit/registry/registry.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/text.hpp"

#ifndef WHEELFIT_PLUGIN_INSTALL_DIR
#define WHEELFIT_PLUGIN_INSTALL_DIR "lib/wheelfit/plugins"
#endif
#ifndef WHEELFIT_INSTALL_PREFIX
#define WHEELFIT_INSTALL_PREFIX "/usr/local"
#endif

#ifdef _WIN32
// One folder holds wheelfit.exe, wheelfit.dll and plugins\ (the zip's layout): no prefix above it.
#define WHEELFIT_DEFAULT_PREFIX "C:\\Program Files\\wheelfit"
constexpr char kListSeparator = ';';  // as PATH: ':' is part of C:\...
#else
#define WHEELFIT_DEFAULT_PREFIX "/usr/local"
constexpr char kListSeparator = ':';
#endif

namespace wheelfit::registry {

namespace fs = std::filesystem;

std::string_view to_string(DirSource source) noexcept {
  static constexpr std::pair<DirSource, std::string_view> kNames[] = {
      {DirSource::env, "WHEELFIT_PLUGIN_PATH"}, {DirSource::builtin, "built-in"}, {DirSource::given, "given"}};
  return util::name_of(kNames, source);
}

fs::path builtin_plugin_dir() {
  boost::dll::fs::error_code ec;
  const fs::path exe = boost::dll::program_location(ec);
  return builtin_plugin_dir(ec ? fs::path() : exe);
}

fs::path builtin_plugin_dir(const fs::path& exe) {
  if (exe.empty() || !exe.is_absolute()) {
    // Where the executable is cannot be told (no /proc): the configured install prefix's folder,
    // never one relative to the current folder, whose contents anyone in it could choose.
    const fs::path prefix = fs::path(WHEELFIT_INSTALL_PREFIX).is_absolute() ? fs::path(WHEELFIT_INSTALL_PREFIX)
                                                                             : fs::path(WHEELFIT_DEFAULT_PREFIX);
    return prefix / WHEELFIT_PLUGIN_INSTALL_DIR;
  }
  const fs::path exe_dir = exe.parent_path();

#ifdef _WIN32
  // Installed (the zip): <folder>\wheelfit.exe next to <folder>\plugins, taken after the build
  // tree below (a zip holds no CMakeCache.txt; a build's <build>\tests\plugins holds test cases).
  const fs::path installed = exe_dir / WHEELFIT_PLUGIN_INSTALL_DIR;
#else
  // Installed: <prefix>/bin/wheelfit next to <prefix>/lib/wheelfit/plugins.
  const fs::path installed = exe_dir.parent_path() / WHEELFIT_PLUGIN_INSTALL_DIR;
#endif
  std::error_code fec;
#ifndef _WIN32
  if (fs::is_directory(installed, fec)) return installed;
#endif

  // Build tree: <build>/apps/wheelfit/wheelfit, <build>/tests/test_x; <build> holds CMakeCache.txt.
  fs::path dir = exe_dir;
  for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (fs::exists(dir / "CMakeCache.txt", fec)) return dir / "plugins";
    if (dir == dir.root_path()) break;
  }
  return installed;
}

namespace {

// `p` normalised, without a trailing separator ("/a/b/" -> "/a/b"; "/" stays).
fs::path normal(const fs::path& p) {
  fs::path n = p.lexically_normal();
  if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
  return n;
}

// The same folder: the same path once normalised, or (both existing) the same file system object.
bool same_folder(const fs::path& a, const fs::path& b) {
  if (normal(a) == normal(b)) return true;
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

}  // namespace

std::vector<PluginDir> plugin_dirs(std::optional<std::string_view> env_value, const fs::path& builtin) {
  std::vector<PluginDir> out;
  auto add = [&out](fs::path path, DirSource source) {
    for (const auto& d : out) {
      if (same_folder(d.path, path)) return;
    }
    out.push_back(PluginDir{std::move(path), source});
  };
  if (env_value) {
    std::string_view rest = *env_value;
    while (true) {
      const auto colon = rest.find(kListSeparator);
      const std::string_view entry = rest.substr(0, colon);
      if (!entry.empty()) add(util::path_from_utf8(entry), DirSource::env);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  add(builtin, DirSource::builtin);
  return out;
}

std::vector<PluginDir> plugin_dirs() {
  const std::optional<std::string> env = util::environment_utf8("WHEELFIT_PLUGIN_PATH");
  return plugin_dirs(env ? std::optional<std::string_view>(*env) : std::nullopt, builtin_plugin_dir());
}

}  // namespace wheelfit::registry
