#pragma once
// Word-at-a-time byte tests (exact as booleans; "bit twiddling hacks", hasless/haszero), shared by
// the URL code (model/url.cpp) and the index page parsers (index/links*.cpp). Pure; thread-safe.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace wheelfit::util::word {

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
/// The high bit of each zero byte of v.
constexpr std::uint64_t zero_byte_bits(std::uint64_t v) noexcept { return (v - kOnes) & ~v & kHighs; }
/// Nonzero when some byte of v equals b.
constexpr std::uint64_t byte_bits(std::uint64_t v, unsigned char b) noexcept { return zero_byte_bits(v ^ (kOnes * b)); }
/// Nonzero when some byte of v is below n (n <= 128).
constexpr std::uint64_t below_bits(std::uint64_t v, unsigned char n) noexcept { return (v - kOnes * n) & ~v & kHighs; }
/// The 8 bytes at p, in the machine's order.
inline std::uint64_t load_word(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
/// Does `s` hold a byte for which word_test (on 8 bytes) / byte_test (on one) says yes?
template <class WordTest, class ByteTest>
bool any_byte(std::string_view s, WordTest word_test, ByteTest byte_test) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    if (word_test(load_word(s.data() + i)) != 0) return true;
  }
  for (; i < s.size(); ++i) {
    if (byte_test(static_cast<unsigned char>(s[i]))) return true;
  }
  return false;
}

}  // namespace wheelfit::util::word
