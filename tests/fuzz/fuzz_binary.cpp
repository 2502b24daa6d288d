// libFuzzer target: ELF / PE / fatbinary parsing (parse_binary, parse_fatbin, extension_suffix).
// Any input must give a value or an error, never a crash, a hang or an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wheelfit/inspect/binary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto info = wheelfit::inspect::parse_binary(bytes, "fuzz.so");
  if (info) {
    for (const auto& e : info->cuda) (void)e.str();
  }
  auto fat = wheelfit::inspect::parse_fatbin(bytes, "fuzz.fatbin");
  if (fat) {
    for (const auto& e : *fat) (void)e.str();
  }
  (void)wheelfit::inspect::extension_suffix(bytes);
  return 0;
}
