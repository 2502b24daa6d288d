// The per-user folders (user_folders.hpp).
#include "wheelfit/util/user_folders.hpp"

#include "wheelfit/util/native_text.hpp"

#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::util {
namespace fs = std::filesystem;

namespace {

// The variable as an absolute path; nullopt when unset, empty or relative.
std::optional<fs::path> absolute_var(const EnvReader& getenv, std::string_view name) {
  const auto value = getenv(name);
  if (!value || value->empty()) return std::nullopt;
  fs::path p = path_from_utf8(*value);
  if (!p.is_absolute()) return std::nullopt;
  return p;
}

}  // namespace

std::optional<std::string> env_utf8(std::string_view name) { return environment_utf8(std::string(name).c_str()); }

std::optional<fs::path> user_cache_root(const EnvReader& getenv) {
  if (auto xdg = absolute_var(getenv, "XDG_CACHE_HOME")) return *xdg / "wheelfit";
#ifdef _WIN32
  if (auto local = win::local_app_data()) return *local / "wheelfit";
  if (auto local = absolute_var(getenv, "LOCALAPPDATA")) return *local / "wheelfit";
#else
  if (auto home = absolute_var(getenv, "HOME")) return *home / ".cache" / "wheelfit";
#endif
  return std::nullopt;
}

std::string_view no_cache_root_reason() noexcept {
#ifdef _WIN32
  return "Windows names no LocalAppData folder, and neither XDG_CACHE_HOME nor LOCALAPPDATA is set to an absolute path";
#else
  return "neither XDG_CACHE_HOME nor HOME is set to an absolute path";
#endif
}

std::optional<fs::path> default_netrc(const EnvReader& getenv) {
#ifdef _WIN32
  auto home = getenv("HOME");
  if (!home || home->empty()) home = getenv("USERPROFILE");
  if (!home || home->empty()) return std::nullopt;
  const fs::path dir = path_from_utf8(*home);
  if (!win::info_of(dir / ".netrc", true) && win::info_of(dir / "_netrc", true)) return dir / "_netrc";
  return dir / ".netrc";
#else
  const auto home = getenv("HOME");
  if (!home || home->empty()) return std::nullopt;
  return fs::path(*home + "/.netrc");
#endif
}

}  // namespace wheelfit::util
