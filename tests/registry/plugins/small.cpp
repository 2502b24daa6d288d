// The right version but a size smaller than wheelfit_backend_v2.
#include "test_plugin.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = [] {
    auto d = wheelfit::test_plugin::descriptor("small");
    d.size = 8;
    return d;
  }();
  return &descriptor;
}
