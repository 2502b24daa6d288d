// The CUDA backend plugin: its descriptor (the cuda-wheels farm's index, override variable and
// Releases repository, the PyTorch index pattern, the farm's policy data) and its detection,
// exported through the one C entry point of registry/plugin_abi.h.
#include <string_view>

#include "wheelfit/backends/cuda_detect.hpp"
#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::backends::cuda {
namespace detail {
/// policies/data/policy.json, embedded at build time (backends/cuda/CMakeLists.txt).
std::string_view policy_json();
}  // namespace detail
}  // namespace wheelfit::backends::cuda

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  namespace cuda = wheelfit::backends::cuda;
  static const wheelfit_backend_v1 descriptor = [] {
    auto d = wheelfit::plugin::descriptor_v1("cuda");
    d.description = "NVIDIA CUDA: wheels from the cuda-wheels farm; detection via NVML, libcuda, nvidia-smi, "
                    "/proc, /sys, WSL, PCI";
    d.index_url = "https://comfy-forge.github.io/cuda-wheels/";
    d.index_env = "COMFY_ENV_CUDA_WHEELS_INDEX";
    d.releases_repo = "Comfy-Forge/cuda-wheels";
    d.torch_label = "cu";
    d.torch_index_pattern = "https://download.pytorch.org/whl/cu{cuda_nodot}";
    d.policy_json = cuda::detail::policy_json().data();  // a NUL-terminated static array
    d.detect = &wheelfit::plugin::detect_entry<&cuda::detect_json>;  // never throws; wrapped anyway
    return d;
  }();
  return &descriptor;
}
