#include "wheelfit/backends/cuda.hpp"

namespace wheelfit::backends::cuda {
registry::BackendInfo describe() {
  return registry::BackendInfo{
      .name = "cuda",
      .index_url = "https://comfy-forge.github.io/cuda-wheels/",
      .index_env = "COMFY_ENV_CUDA_WHEELS_INDEX",
      .releases_repo = "Comfy-Forge/cuda-wheels",
      .torch_label = "cu",
      .origin = "built-in",
  };
}
}  // namespace wheelfit::backends::cuda
