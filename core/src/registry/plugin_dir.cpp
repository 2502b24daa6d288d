// default_plugin_dir: WHEELFIT_PLUGIN_PATH, else relative to the running executable.
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>

#include "wheelfit/registry/registry.hpp"

#ifndef WHEELFIT_PLUGIN_INSTALL_DIR
#define WHEELFIT_PLUGIN_INSTALL_DIR "lib/wheelfit/plugins"
#endif

namespace wheelfit::registry {

namespace fs = std::filesystem;

fs::path default_plugin_dir() {
  if (const char* env = std::getenv("WHEELFIT_PLUGIN_PATH"); env != nullptr && *env != '\0') return fs::path(env);

  boost::dll::fs::error_code ec;
  const fs::path exe = boost::dll::program_location(ec);
  if (ec || exe.empty()) return fs::path(WHEELFIT_PLUGIN_INSTALL_DIR);  // relative: names what was expected
  const fs::path exe_dir = exe.parent_path();

  // Installed: <prefix>/bin/wheelfit next to <prefix>/lib/wheelfit/plugins.
  const fs::path installed = exe_dir.parent_path() / WHEELFIT_PLUGIN_INSTALL_DIR;
  std::error_code fec;
  if (fs::is_directory(installed, fec)) return installed;

  // Build tree: <build>/apps/wheelfit/wheelfit, <build>/tests/test_x; <build> holds CMakeCache.txt.
  fs::path dir = exe_dir;
  for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (fs::exists(dir / "CMakeCache.txt", fec)) return dir / "plugins";
    if (dir == dir.root_path()) break;
  }
  return installed;
}

}  // namespace wheelfit::registry
