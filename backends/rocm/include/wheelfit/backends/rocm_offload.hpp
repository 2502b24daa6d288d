#pragma once
// A reader of clang offload bundles, as an ELF `.hip_fatbin` section holds them: which gfx
// targets a HIP binary carries device code for.
//
// Layout (clang/lib/Driver/OffloadBundler.cpp, BinaryFileHandler; integers little-endian):
//   "__CLANG_OFFLOAD_BUNDLE__"          24 bytes
//   number of entries                   uint64
//   per entry: offset, size, id length  uint64 each (offset from the start of this bundle)
//              id                       that many bytes: "hipv4-amdgcn-amd-amdhsa--gfx90a",
//                                       "host-x86_64-unknown-linux"
//   the entries' code objects           clang aligns them (HIP: 4096), padding with zeros
// A linked `.hip_fatbin` holds one bundle per translation unit, back to back: each starts at the
// section's 4096-byte alignment (clang/lib/CodeGen/CGCUDANV.cpp) and the linker fills the gaps
// with zeros, so zero bytes between bundles and after the last one are skipped.
// Newer clang may compress a bundle ("CCOB" magic, clang's CompressedOffloadBundle); that is
// reported as unsupported, never misread.
//
// Every field is checked against the section before it is used: a bad section gives ok = false
// and an error naming the byte offset (from the start of `data`) and what is wrong. Never reads
// outside [data, data + size); never throws for bad input (only std::bad_alloc can escape).
// Pure and reentrant; the result owns its strings.

#include <cstddef>
#include <string>
#include <vector>

namespace wheelfit::backends::rocm {

/// What scan_offload_bundles found. On failure `targets` and `ids` are empty.
struct OffloadScan {
  bool ok = false;
  std::string error;  ///< "" when ok
  /// The canonical gfx target ids (rocm_targets.hpp) of the hip / hipv4 amdgcn-amd-amdhsa
  /// entries, in order of first appearance, deduplicated.
  std::vector<std::string> targets;
  /// Every entry id of every bundle, in order (the host entry of each bundle included).
  std::vector<std::string> ids;
};

/// Scans the contents of a `.hip_fatbin` section: one or more bundles, zero padding between and
/// after them. An empty section, anything that is not a bundle, a compressed bundle, or a hip
/// amdgcn entry whose target id does not parse (parse_target) fails.
[[nodiscard]] OffloadScan scan_offload_bundles(const unsigned char* data, std::size_t size);

}  // namespace wheelfit::backends::rocm
