// Backend "throwing": its detection throws inside the plugin; the core must get a value.
#include <stdexcept>
#include <string>

#include "test_plugin.hpp"

namespace {
std::string detect() { throw std::runtime_error("the probe exploded \"loudly\""); }
}  // namespace

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = [] {
    auto d = wheelfit::test_plugin::descriptor("throwing");
    d.description = "a backend whose detection throws";
    d.detect = &wheelfit::plugin::detect_entry<&detect>;
    return d;
  }();
  return &descriptor;
}
