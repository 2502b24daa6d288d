#pragma once
// The CUDA backend's descriptor: the cuda-wheels farm's index, its override variable and its
// Releases repository. (Detection and the plugin entry point arrive with the backends issue.)
#include "wheelfit/registry/registry.hpp"

namespace wheelfit::backends::cuda {
registry::BackendInfo describe();
}
