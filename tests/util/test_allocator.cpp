#include <catch2/catch.hpp>

#include <malloc.h>

#include <cstdlib>

#include "wheelfit/util/allocator.hpp"

using namespace wheelfit;

TEST_CASE("keep_freed_memory: large blocks from the heap, freed memory kept", "[util][allocator]") {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's allocator replaces glibc's and ignores mallopt: the policy reports it was not applied.
  CHECK_FALSE(util::keep_freed_memory());
#else
  REQUIRE(util::keep_freed_memory());
  const auto before = mallinfo2();
  void* block = std::malloc(8u << 20);  // glibc's default policy would mmap this (threshold 128 KiB)
  REQUIRE(block != nullptr);
  static_cast<volatile char*>(block)[0] = 1;
  const auto during = mallinfo2();
  CHECK(during.hblks == before.hblks);  // no new mmapped block
  // From the heap: its bytes in use grew by the block (the arena itself grows only when no free
  // space left by earlier tests could hold it).
  CHECK(during.uordblks >= before.uordblks + (8u << 20));
  std::free(block);
  const auto after = mallinfo2();
  CHECK(after.arena == during.arena);     // not trimmed: the next large buffer reuses these pages
  CHECK(after.fordblks >= (8u << 20));    // and they are free for it
#endif
}
