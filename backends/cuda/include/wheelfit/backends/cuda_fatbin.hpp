#pragma once
// CUDA fatbinaries: the containers in an ELF's .nv_fatbin / __nv_relfatbin section (a PE's
// .nv_fatb) (the CUDA backend's device code, semantics/fatbin.cpp). Every offset and size is
// checked against the section's size: a truncated or lying section is Errc::invalid_input naming
// `source`, the container's offset and the field. The walk reads the container and entry
// headers only and skips every payload, so a section need not be held in memory.
// Pure functions: reentrant; only std::bad_alloc can escape.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/registry/plugin_abi.h"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::backends::cuda {

/// One fatbinary entry: SASS for sm_XY (an ELF cubin) or PTX for compute_XY.
struct FatbinEntry {
  enum class Kind { sass, ptx };
  Kind kind = Kind::sass;
  unsigned arch = 0;           ///< 90 for sm_90 / compute_90, 120 for sm_120
  std::string suffix;          ///< "" or "a" / "f" (sm_90a: arch-specific, no forward compatibility)
  [[nodiscard]] std::string str() const;  ///< "sm_90", "compute_90", "sm_90a"
};

/// Walks the fatbinary containers in `bytes` (each: magic 0xBA55ED50, version, header size, fat
/// size; then entries with kind, header size, payload size, sm arch): each distinct entry once,
/// in file order. Errc::invalid_input naming `source` for a bad magic, a size that passes the
/// end, an entry header that lies.
Expected<std::vector<FatbinEntry>> parse_fatbin(std::string_view bytes, std::string_view source);

/// Reads `length` bytes at `offset` of the section into `out`; false when they cannot be read.
using SectionReader = std::function<bool(std::uint64_t offset, std::size_t length, unsigned char* out)>;

/// The walk of parse_fatbin over a section of `size` bytes read through `read`: each container
/// header (16 bytes) and entry header (48 bytes) is read, zero padding between containers is
/// skipped, payloads are never read. Every step advances (a container by at least its header, an
/// entry by at least 48 bytes), so the walk ends. A failed read is Errc::invalid_input naming
/// the offset.
Expected<std::vector<FatbinEntry>> walk_fatbin(std::uint64_t size, const SectionReader& read, std::string_view source);

/// What read_device_code answers for a section's bytes: {"list": TORCH_CUDA_ARCH_LIST syntax
/// ("8.0;9.0+PTX"; PTX alone is "8.0ptx"), "entries": {"sass": ["sm_80", ...], "ptx": [...]}}
/// (each entry once, in file order), or {"error": "..."}.
std::string device_code_json(std::string_view section, std::string_view bytes);

/// What read_device_code_at answers (plugin_abi.h): the same JSON, the section read through the
/// core's `read` (headers only).
std::string device_code_at_json(std::string_view section, std::uint64_t size, wheelfit_section_read_fn read, void* ctx);

}  // namespace wheelfit::backends::cuda
