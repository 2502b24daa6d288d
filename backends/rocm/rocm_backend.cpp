#include "wheelfit/backends/rocm.hpp"

namespace wheelfit::backends::rocm {
registry::BackendInfo describe() {
  return registry::BackendInfo{
      .name = "rocm",
      .index_url = "",
      .index_env = "WHEELFIT_ROCM_WHEELS_INDEX",
      .releases_repo = "",
      .torch_label = "rocm",
      .origin = "built-in",
  };
}
}  // namespace wheelfit::backends::rocm
