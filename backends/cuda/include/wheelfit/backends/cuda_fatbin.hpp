#pragma once
// CUDA fatbinaries: the containers in an ELF's .nv_fatbin / __nv_relfatbin section (the CUDA
// backend's device code, semantics/fatbin.cpp). Every offset and size is checked against the
// buffer: a truncated or lying section is Errc::invalid_input naming `source` and the field.

#include <string>
#include <string_view>
#include <vector>

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
/// size; then entries with kind, header size, payload size, sm arch). Errc::invalid_input naming
/// `source` for a bad magic, a size that passes the end, an entry header that lies.
Expected<std::vector<FatbinEntry>> parse_fatbin(std::string_view bytes, std::string_view source);

/// What read_device_code answers for a section's bytes: {"list": TORCH_CUDA_ARCH_LIST syntax
/// ("8.0;9.0+PTX"; PTX alone is "8.0ptx"), "entries": {"sass": ["sm_80", ...], "ptx": [...]}}
/// (each entry once, in file order), or {"error": "..."}.
std::string device_code_json(std::string_view section, std::string_view bytes);

}  // namespace wheelfit::backends::cuda
