// Built for a future ABI: version 2. The core must refuse it before reading anything else.
#include "wheelfit/registry/plugin_support.hpp"

namespace {
struct future_descriptor {
  uint32_t abi_version;
  uint32_t size;
  const char* something_else;
};
}  // namespace

extern "C" BOOST_SYMBOL_EXPORT const future_descriptor* wheelfit_backend_entry(void) noexcept {
  static const future_descriptor descriptor{2u, sizeof(future_descriptor), "not a name"};
  return &descriptor;
}
