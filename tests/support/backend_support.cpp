#include "support/backend_support.hpp"

#include <stdexcept>

#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/backends/rocm_backend.hpp"

namespace wheelfit::test {
namespace {

registry::BackendInfo read(const wheelfit_backend_v2* descriptor, const char* origin) {
  auto info = registry::read_descriptor(descriptor, origin);
  if (!info) throw std::logic_error(info.error().message);
  return *info;
}

policies::Policy policy_of(const registry::BackendInfo& info) {
  auto p = registry::make_policy(info, std::nullopt);
  if (!p) throw std::logic_error(p.error().message);
  return std::move(*p);
}

}  // namespace

const registry::BackendInfo& cuda_backend() {
  static const auto info = read(backends::cuda::descriptor(), "cuda backend (in-process)");
  return info;
}

const policies::Policy& cuda_policy() {
  static const auto policy = policy_of(cuda_backend());
  return policy;
}

const registry::BackendInfo& rocm_backend() {
  static const auto info = read(backends::rocm::descriptor(), "rocm backend (in-process)");
  return info;
}

const policies::Policy& rocm_policy() {
  static const auto policy = policy_of(rocm_backend());
  return policy;
}

}  // namespace wheelfit::test
