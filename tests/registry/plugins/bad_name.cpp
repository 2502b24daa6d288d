// A backend name outside [a-z0-9_-].
#include "wheelfit/registry/plugin_support.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v1 descriptor = wheelfit::plugin::descriptor_v1("Not A Name");
  return &descriptor;
}
