#pragma once
// The ROCm backend's descriptor: a stub that is honest. No ROCm wheel index is published yet,
// so it supplies none; configuring one later is data (WHEELFIT_ROCM_WHEELS_INDEX or --index).
#include "wheelfit/registry/registry.hpp"

namespace wheelfit::backends::rocm {
registry::BackendInfo describe();
}
