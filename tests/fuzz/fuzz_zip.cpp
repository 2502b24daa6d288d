// libFuzzer target: the zip reader (read_zip_directory, then read_zip_member on the first few
// entries) over an in-memory source. Small limits keep a zip bomb from turning into a timeout.
#include <cstddef>
#include <cstdint>
#include <string>

#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto source = wheelfit::inspect::memory_source(std::string(reinterpret_cast<const char*>(data), size), "fuzz.whl");
  wheelfit::inspect::ZipLimits limits;
  limits.max_entries = 1000;
  limits.max_member = 1u << 20;
  limits.max_directory = 1u << 20;
  auto dir = wheelfit::inspect::read_zip_directory(*source, limits);
  if (!dir) return 0;
  std::size_t n = 0;
  for (const auto& entry : dir->entries) {
    if (++n > 8) break;
    (void)wheelfit::inspect::read_zip_member(*source, entry, limits);
  }
  return 0;
}
