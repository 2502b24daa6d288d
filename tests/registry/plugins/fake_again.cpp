// A second plugin claiming the backend name "fake": loaded after fake (file-name order), skipped.
#include "wheelfit/registry/plugin_support.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v1 descriptor = [] {
    auto d = wheelfit::plugin::descriptor_v1("fake");
    d.description = "the same name again";
    return d;
  }();
  return &descriptor;
}
