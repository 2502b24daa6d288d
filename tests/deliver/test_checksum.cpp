// deliver's private XXH64 (core/src/deliver/checksum.hpp): the check before a part's rename
// compares it over the bytes as written and as read back, so it must be XXH64 (published
// vectors) and must not depend on how the bytes are cut into calls.

#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "../../core/src/deliver/checksum.hpp"

using wheelfit::deliver::detail::Checksum;

namespace {

std::uint64_t xxh64(std::string_view bytes) {
  Checksum c;
  c.update(bytes);
  return c.value();
}

}  // namespace

TEST_CASE("deliver checksum: XXH64 (seed 0) of the published vectors", "[deliver][checksum]") {
  struct Row {
    std::string text;
    std::uint64_t want;
  };
  for (const Row& r : {Row{"", 0xEF46DB3751D8E999ull}, Row{"a", 0xD24EC4F1A98C6E5Bull},
                       Row{"abc", 0x44BC2CF5AD770999ull},
                       Row{"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1ull}}) {
    INFO("'" << r.text << "'");
    CHECK(xxh64(r.text) == r.want);
  }
}

TEST_CASE("deliver checksum: the same value however the bytes are cut", "[deliver][checksum]") {
  std::mt19937_64 rng(23);
  std::string data((1u << 20) + 77, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  const std::uint64_t whole = xxh64(data);
  for (std::size_t cut : {1u, 3u, 31u, 32u, 33u, 4096u, 65537u}) {
    INFO("pieces of " << cut);
    Checksum c;
    for (std::size_t at = 0; at < data.size(); at += cut) c.update(std::string_view(data).substr(at, cut));
    CHECK(c.value() == whole);
    CHECK(c.value() == c.value());  // value() does not end the object
  }
  Checksum c;
  c.update("stale");
  c.reset();
  c.update(data);
  CHECK(c.value() == whole);
  data[data.size() / 2] ^= 1;  // one bit
  CHECK(xxh64(data) != whole);
}
