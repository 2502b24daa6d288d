// The right version but a size smaller than wheelfit_backend_v1.
#include "wheelfit/registry/plugin_support.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v1 descriptor = [] {
    auto d = wheelfit::plugin::descriptor_v1("small");
    d.size = 8;
    return d;
  }();
  return &descriptor;
}
