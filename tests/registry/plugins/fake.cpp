// A complete test backend, "fake": everything a real backend supplies, none of it CUDA: its
// index, env var, Releases repo, policy data (format 2), target functions (test_plugin.hpp) and
// detection. detect() counts its calls, so the tests see each call reach the plugin.
#include <string>

#include "test_plugin.hpp"

namespace {

// The arch row is written loosely on purpose: the plugin's parse_target_list canonicalises it
// when the core reads the policy ("fk1;fk2+jit"), which shows the functions cross the boundary.
constexpr const char* kPolicy = R"({
  "format": 2,
  "version": "fake-1",
  "backend": {
    "line": {"key": "fake", "prefix": "fk", "name": "Fake"},
    "combo_labels": ["fk{line:nodot}torch{torch}"],
    "torch_labels": ["fk{line:nodot}"],
    "torch_index": "https://example.test/torch/fk{line_nodot}",
    "device": {"name": "fake target", "prefix": "fk ", "code_sections": [".fake_code"]},
    "driver": {"rule": "unknown", "why": "a fake backend has no driver"}
  },
  "arch_policy": {"linux": {"1.2": " FK1 ; fk2+jit "}},
  "arch_exceptions": {},
  "packages": {},
  "pytorch_matrix": {},
  "torch_family": {},
  "pypi_line": {},
  "fallback": {"x86_64": {"line": "1.2", "torch": "3.4"}, "arm64": {"line": "5.6", "torch": "7.8"}}
})";

int calls = 0;

std::string detect() {
  ++calls;
  return R"({"present": true, "facts": {"driver_version": "1.0", "gpus": ["fk1"]}, "provenance": {"driver_version": "fake probe"}, "notes": ["call )" +
         std::to_string(calls) + R"("]})";
}

}  // namespace

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = [] {
    auto d = wheelfit::test_plugin::descriptor("fake", kPolicy);
    d.description = "a test backend";
    d.index_url = "https://example.test/fake-wheels/";
    d.index_env = "WHEELFIT_FAKE_WHEELS_INDEX";
    d.releases_repo = "example/fake-wheels";
    d.detect = &wheelfit::plugin::detect_entry<&detect>;
    return d;
  }();
  return &descriptor;
}
