// libFuzzer target: sizes as people write them (--cache-max-size, WHEELFIT_CACHE_MAX_SIZE):
// util::parse_size. Besides "no crash": a size that parses, written back in bytes, reads the same.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wheelfit/util/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto n = wheelfit::util::parse_size(text);
  if (!n) return 0;
  auto again = wheelfit::util::parse_size(std::to_string(*n));
  if (!again || *again != *n) {
    std::fprintf(stderr, "size round trip failed: '%s' -> %llu\n", std::string(text).c_str(),
                 static_cast<unsigned long long>(*n));
    std::abort();
  }
  return 0;
}
