// A complete test backend, "fake": everything a real backend supplies, none of it CUDA.
// detect() counts its calls, so the tests see each call reach the plugin.
#include <string>

#include "wheelfit/registry/plugin_support.hpp"

namespace {

constexpr const char* kPolicy = R"({
  "format": 1,
  "version": "fake-1",
  "arch_policy": {},
  "arch_exceptions": {},
  "packages": {},
  "pytorch_matrix": {},
  "torch_family": {},
  "pypi_cuda": {},
  "min_driver": {},
  "fallback": {"fake": {"x86_64": {"cuda": "1.2", "torch": "3.4"}, "arm64": {"cuda": "5.6", "torch": "7.8"}}},
  "torch_index": "https://example.test/torch/fk{cuda_nodot}"
})";

int calls = 0;

std::string detect() {
  ++calls;
  return R"({"present": true, "facts": {"driver_version": "1.0", "gpus": ["fk1"]}, "provenance": {"driver_version": "fake probe"}, "notes": ["call )" +
         std::to_string(calls) + R"("]})";
}

}  // namespace

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v1 descriptor = [] {
    auto d = wheelfit::plugin::descriptor_v1("fake");
    d.description = "a test backend";
    d.index_url = "https://example.test/fake-wheels/";
    d.index_env = "WHEELFIT_FAKE_WHEELS_INDEX";
    d.releases_repo = "example/fake-wheels";
    d.torch_label = "fk";
    d.torch_index_pattern = "https://example.test/torch/fk{cuda_nodot}";
    d.policy_json = kPolicy;
    d.detect = &wheelfit::plugin::detect_entry<&detect>;
    return d;
  }();
  return &descriptor;
}
