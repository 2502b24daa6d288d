// libFuzzer target: the cache's entry sidecar (one JSON line: what a cache folder holds, which
// another process or a torn write may have left) and the Cache-Control it reads from a response.
// Besides "no crash": a sidecar that parses survives a round trip through its own JSON line.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cache_entry.hpp"

namespace c = wheelfit::transports::cache_detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (auto meta = c::meta_from_json(text, why)) {
    const std::string line = c::meta_to_json(*meta);
    std::string why_again;
    auto again = c::meta_from_json(line, why_again);
    if (!again || c::meta_to_json(*again) != line) {
      std::fprintf(stderr, "sidecar round trip failed: %s (%s)\n", line.c_str(), why_again.c_str());
      std::abort();
    }
  }
  (void)c::parse_cache_control({{"cache-control", std::string(text)}});
  return 0;
}
