#pragma once
// WHEEL_INDEX_REGISTRY: backend name -> what the backend supplies (its default index, the
// env var that overrides it, its Releases repository, its torch label prefix). Fallback combos
// and arch rules are policy data (policies/), keyed by the backend name.
//
// Registration is explicit: the executable calls register_builtin_backends() (or, from the
// plugin issue on, loads plugins) once at start-up; nothing registers itself during static
// initialisation. Thread safety: register during start-up; lookups may run concurrently after.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::registry {

struct BackendInfo {
  std::string name;            ///< "cuda", "rocm"
  std::string index_url;       ///< default wheel index; empty when none is published
  std::string index_env;       ///< env var that overrides the index ("COMFY_ENV_CUDA_WHEELS_INDEX")
  std::string releases_repo;   ///< "Comfy-Forge/cuda-wheels"; empty when none
  std::string torch_label;     ///< the torch local-label prefix ("cu", "rocm")
  std::string origin;          ///< "built-in" or the plugin file
};

class Registry {
 public:
  /// Adds a backend. A second backend with the same name is refused (Errc::invalid_input naming
  /// both origins); the first stays.
  Expected<void> add(BackendInfo info);
  [[nodiscard]] const BackendInfo* find(std::string_view name) const;
  /// Names in sorted order.
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::map<std::string, BackendInfo, std::less<>> backends_;
};

/// Which index a resolve reads for `backend`: `cli_index` (--index) if given, else the backend's
/// env var if set and not blank, else the backend's default. A trailing '/' is added.
/// Errc::unsupported when the backend publishes no index and none was given.
struct IndexChoice {
  std::string url;
  std::string origin;  ///< "--index", "env COMFY_ENV_CUDA_WHEELS_INDEX", "default for cuda"
};
Expected<IndexChoice> choose_index(const BackendInfo& backend, const std::optional<std::string>& cli_index,
                                   const std::optional<std::string>& env_value);

}  // namespace wheelfit::registry
