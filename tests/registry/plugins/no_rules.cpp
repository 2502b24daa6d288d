// ABI 2 without the required match_targets function (NULL).
#include "test_plugin.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = [] {
    auto d = wheelfit::test_plugin::descriptor("no_rules");
    d.match_targets = nullptr;
    return d;
  }();
  return &descriptor;
}
