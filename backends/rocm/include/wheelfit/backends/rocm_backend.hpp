#pragma once
// The ROCm backend's descriptor (semantics/descriptor.cpp): its policy data, its target
// functions over rocm_targets.hpp and rocm_offload.hpp, and its detection. The plugin's entry
// returns it; tests use it to have the ROCm backend in-process.

#include "wheelfit/registry/plugin_abi.h"

namespace wheelfit::backends::rocm {

const wheelfit_backend_v2* descriptor();

}  // namespace wheelfit::backends::rocm
