#pragma once
// Memory policy for a short-lived process that moves tens of MB through large buffers (index
// pages, packages.json, cache entries): the executables call it first thing; the library never
// does (an embedding process keeps its own policy).

namespace wheelfit::util {

/// glibc: serve blocks up to 32 MiB from the heap (glibc's threshold starts at 128 KiB and moves;
/// above it every block is a fresh mmap, unmapped on free) and keep up to 256 MiB of freed memory
/// instead of returning it to the kernel, so a buffer freed by one stage is reused by the next
/// rather than unmapped and faulted in again page by page. Page faults are cheap on bare metal
/// and dear under virtualisation without nested paging (firecracker/PVM: ~16 us each, measured
/// in docs/benchmarks.md). Returns whether the policy was applied (false elsewhere than glibc).
bool keep_freed_memory();

}  // namespace wheelfit::util
