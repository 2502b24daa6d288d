#include "wheelfit/util/allocator.hpp"

#include <cstdlib>  // <features.h> first: it defines __GLIBC__

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace wheelfit::util {

bool keep_freed_memory() {
#if defined(__GLIBC__)
  // Fixing either threshold also turns off glibc's dynamic adjustment of both.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 256 << 20) == 1;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace wheelfit::util
