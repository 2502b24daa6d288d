// Backend "throwing": its detection throws inside the plugin; the core must get a value.
#include <stdexcept>
#include <string>

#include "wheelfit/registry/plugin_support.hpp"

namespace {
std::string detect() { throw std::runtime_error("the probe exploded \"loudly\""); }
}  // namespace

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v1 descriptor = [] {
    auto d = wheelfit::plugin::descriptor_v1("throwing");
    d.description = "a backend whose detection throws";
    d.detect = &wheelfit::plugin::detect_entry<&detect>;
    return d;
  }();
  return &descriptor;
}
