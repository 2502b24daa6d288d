#pragma once
// The shipped backends in-process, for tests that judge with their semantics: the backend's
// descriptor read as the registry reads a plugin's, and its own policy data with its rules.

#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/registry/registry.hpp"

namespace wheelfit::test {

/// The CUDA backend (backends/cuda) as a BackendInfo, and its built-in policy.
const registry::BackendInfo& cuda_backend();
const semantics::Policy& cuda_policy();
/// The ROCm backend (backends/rocm) as a BackendInfo, and its built-in policy.
const registry::BackendInfo& rocm_backend();
const semantics::Policy& rocm_policy();
/// A registry holding both (cuda, rocm), as the façade's calls take it.
const registry::Registry& shipped_backends();

}  // namespace wheelfit::test
