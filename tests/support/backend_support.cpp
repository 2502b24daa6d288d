#include "support/backend_support.hpp"

#include <stdexcept>

#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/backends/rocm_backend.hpp"

namespace wheelfit::test {
namespace {

registry::BackendInfo read(const wheelfit_backend_v2* descriptor, const char* origin) {
  auto info = registry::read_descriptor(descriptor, origin);
  if (!info) throw std::logic_error(info.error().message);
  return *info;
}

semantics::Policy policy_of(const registry::BackendInfo& info) {
  if (auto done = policies::register_format(); !done) throw std::logic_error(done.error().message);  // benches have no catch_main
  auto p = registry::make_policy(info, std::nullopt);
  if (!p) throw std::logic_error(p.error().message);
  return std::move(*p);
}

/// A shipped backend read once: its descriptor as the registry reads a plugin's, then its policy.
struct InProcess {
  registry::BackendInfo info;
  semantics::Policy policy;
  InProcess(const wheelfit_backend_v2* descriptor, const char* origin)
      : info(read(descriptor, origin)), policy(policy_of(info)) {}
};

const InProcess& cuda() {
  static const InProcess backend(backends::cuda::descriptor(), "cuda backend (in-process)");
  return backend;
}

const InProcess& rocm() {
  static const InProcess backend(backends::rocm::descriptor(), "rocm backend (in-process)");
  return backend;
}

}  // namespace

const registry::BackendInfo& cuda_backend() { return cuda().info; }
const semantics::Policy& cuda_policy() { return cuda().policy; }
const registry::BackendInfo& rocm_backend() { return rocm().info; }
const semantics::Policy& rocm_policy() { return rocm().policy; }

const registry::Registry& shipped_backends() {
  static const registry::Registry reg = [] {
    registry::Registry r;
    if (!r.add(cuda_backend()) || !r.add(rocm_backend())) throw std::logic_error("shipped_backends: a backend was refused");
    return r;
  }();
  return reg;
}

}  // namespace wheelfit::test
