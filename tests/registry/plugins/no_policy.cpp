// ABI 2 with an empty policy_json (required: it names the line and the label grammar).
#include "test_plugin.hpp"

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = wheelfit::test_plugin::descriptor("no_policy", "");
  return &descriptor;
}
