#pragma once
// Private to deliver: a fast 64-bit checksum (XXH64, seed 0) of a part's bytes, computed as they
// are written and again over the bytes on disk before the rename. It tells whether what is on
// disk is what was received and hashed (the SHA-256 judges the bytes; this only compares two
// readings of them) at about a tenth of SHA-256's cost. Not a defence against an attacker: one
// who can write the part can write the final file too.

#include <cstdint>
#include <cstring>
#include <string_view>

namespace wheelfit::deliver::detail {

class Checksum {
 public:
  /// The next bytes, any amount.
  void update(std::string_view bytes) {
    const char* p = bytes.data();
    std::size_t n = bytes.size();
    total_ += n;
    if (held_ > 0) {  // complete a stripe begun by an earlier call
      const std::size_t take = n < kStripe - held_ ? n : kStripe - held_;
      std::memcpy(stripe_ + held_, p, take);
      held_ += take;
      p += take;
      n -= take;
      if (held_ < kStripe) return;
      consume(stripe_);
      held_ = 0;
    }
    for (; n >= kStripe; p += kStripe, n -= kStripe) consume(p);
    std::memcpy(stripe_, p, n);
    held_ = n;
  }

  /// The checksum of every byte so far (the object may go on).
  [[nodiscard]] std::uint64_t value() const {
    std::uint64_t h = total_ >= kStripe ? merged() : kP5;
    h += total_;
    const char* p = stripe_;
    const char* end = stripe_ + held_;
    for (; p + 8 <= end; p += 8) {
      h ^= round(0, load64(p));
      h = rotl(h, 27) * kP1 + kP4;
    }
    if (p + 4 <= end) {
      h ^= static_cast<std::uint64_t>(load32(p)) * kP1;
      h = rotl(h, 23) * kP2 + kP3;
      p += 4;
    }
    for (; p < end; ++p) {
      h ^= static_cast<std::uint64_t>(static_cast<unsigned char>(*p)) * kP5;
      h = rotl(h, 11) * kP1;
    }
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
  }

  void reset() { *this = Checksum(); }

 private:
  static constexpr std::size_t kStripe = 32;
  static constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full,
                                 kP3 = 0x165667B19E3779F9ull, kP4 = 0x85EBCA77C2B2AE63ull,
                                 kP5 = 0x27D4EB2F165667C5ull;

  static std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static std::uint64_t load64(const char* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static std::uint32_t load32(const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static std::uint64_t round(std::uint64_t acc, std::uint64_t input) { return rotl(acc + input * kP2, 31) * kP1; }
  static std::uint64_t merge(std::uint64_t acc, std::uint64_t v) { return (acc ^ round(0, v)) * kP1 + kP4; }

  void consume(const char* p) {
    v_[0] = round(v_[0], load64(p));
    v_[1] = round(v_[1], load64(p + 8));
    v_[2] = round(v_[2], load64(p + 16));
    v_[3] = round(v_[3], load64(p + 24));
  }
  [[nodiscard]] std::uint64_t merged() const {
    std::uint64_t h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
    for (const auto v : v_) h = merge(h, v);
    return h;
  }

  std::uint64_t v_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  std::uint64_t total_ = 0;
  char stripe_[kStripe] = {};
  std::size_t held_ = 0;
};

}  // namespace wheelfit::deliver::detail
