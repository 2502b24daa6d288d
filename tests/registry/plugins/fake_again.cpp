// A second plugin claiming the backend name "fake": loaded after fake (file-name order), skipped.
#include "test_plugin.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = [] {
    auto d = wheelfit::test_plugin::descriptor("fake");
    d.description = "the same name again";
    return d;
  }();
  return &descriptor;
}
