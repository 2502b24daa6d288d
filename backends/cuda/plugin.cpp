// The CUDA backend plugin: exports the backend's descriptor (semantics/rules.cpp: the farm's
// index, override variable and Releases repository, its policy data, its target functions and
// its detection) through the one C entry point of registry/plugin_abi.h.
#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/registry/plugin_support.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY { return wheelfit::backends::cuda::descriptor(); }
