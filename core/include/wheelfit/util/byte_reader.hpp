#pragma once
// Bounds-checked reads of little/big-endian integers from a byte view, for the binary parsers
// (core/src/inspect/binary.cpp, the backends' device-code readers).
// Every read goes through `fits` first; `get` assumes it (callers check a whole record's range
// once, naming the record, then read its fields). No reinterpret_cast, no alignment assumptions.

#include <cstdint>
#include <string>
#include <string_view>

namespace wheelfit::util {

struct Bytes {
  std::string_view data;
  bool little_endian = true;

  /// True when [offset, offset + length) lies inside the buffer (overflow-safe).
  [[nodiscard]] bool fits(std::uint64_t offset, std::uint64_t length) const noexcept {
    return offset <= data.size() && length <= data.size() - offset;
  }
  /// An unsigned integer of `width` bytes (1, 2, 4 or 8) at `offset`; precondition: fits().
  [[nodiscard]] std::uint64_t get(std::uint64_t offset, unsigned width) const noexcept {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) {
      const auto byte = static_cast<std::uint64_t>(static_cast<unsigned char>(data[offset + i]));
      const unsigned shift = little_endian ? 8 * i : 8 * (width - 1 - i);
      v |= byte << shift;
    }
    return v;
  }
  [[nodiscard]] std::uint16_t u16(std::uint64_t offset) const noexcept {
    return static_cast<std::uint16_t>(get(offset, 2));
  }
  [[nodiscard]] std::uint32_t u32(std::uint64_t offset) const noexcept {
    return static_cast<std::uint32_t>(get(offset, 4));
  }
  [[nodiscard]] std::uint64_t u64(std::uint64_t offset) const noexcept { return get(offset, 8); }
};

inline std::string hex(std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return "0x" + out;
}

}  // namespace wheelfit::util
