// The ROCm backend plugin, a stub that is honest: no ROCm wheel index is published yet, so it
// supplies none (configuring one later is data: WHEELFIT_ROCM_WHEELS_INDEX or --index), and its
// policy data has no fallback combos; its detection reads the KFD topology.
#include <string_view>

#include "wheelfit/backends/rocm_detect.hpp"
#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::backends::rocm {
namespace detail {
/// backends/rocm/data/policy.json, embedded at build time (backends/rocm/CMakeLists.txt).
std::string_view policy_json();
}  // namespace detail
}  // namespace wheelfit::backends::rocm

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  namespace rocm = wheelfit::backends::rocm;
  static const wheelfit_backend_v1 descriptor = [] {
    auto d = wheelfit::plugin::descriptor_v1("rocm");
    d.description = "AMD ROCm (stub): detects gfx targets from the KFD topology; no wheel index is published yet";
    d.index_url = "";
    d.index_env = "WHEELFIT_ROCM_WHEELS_INDEX";
    d.releases_repo = "";
    d.torch_label = "rocm";
    d.torch_index_pattern = "https://download.pytorch.org/whl/rocm{rocm}";
    d.policy_json = rocm::detail::policy_json().data();  // a NUL-terminated static array
    d.detect = &wheelfit::plugin::detect_entry<&rocm::detect_json>;  // never throws; wrapped anyway
    return d;
  }();
  return &descriptor;
}
