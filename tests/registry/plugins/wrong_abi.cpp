// Built for the previous ABI: version 1, with the v1 descriptor's leading fields (abi_version,
// size, then strings). The core must refuse it before reading anything past the version.
#include <boost/config.hpp>
#include <cstdint>

namespace {
struct v1_descriptor {
  std::uint32_t abi_version;
  std::uint32_t size;
  const char* name;
  const char* description;
};
}  // namespace

extern "C" BOOST_SYMBOL_EXPORT const v1_descriptor* wheelfit_backend_entry(void) noexcept {
  static const v1_descriptor descriptor{1u, sizeof(v1_descriptor), "old", "built for ABI 1"};
  return &descriptor;
}
