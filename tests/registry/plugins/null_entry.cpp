// The entry point returns no descriptor.
#include "wheelfit/registry/plugin_support.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY { return nullptr; }
