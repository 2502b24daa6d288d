// The ROCm backend plugin: exports the backend's descriptor (semantics/descriptor.cpp) through
// the one C entry point of registry/plugin_abi.h.
#include "wheelfit/backends/rocm_backend.hpp"
#include "wheelfit/registry/plugin_support.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY { return wheelfit::backends::rocm::descriptor(); }
