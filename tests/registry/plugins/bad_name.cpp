// A backend name outside [a-z0-9_-] (everything else valid).
#include "test_plugin.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = wheelfit::test_plugin::descriptor("Not A Name");
  return &descriptor;
}
