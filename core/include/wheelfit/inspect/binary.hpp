#pragma once
// What a compiled extension module demands, from its own bytes: ELF (32/64-bit, both byte
// orders) and PE (.pyd: machine and OS only), and the CUDA fatbinaries inside an ELF
// (.nv_fatbin / __nv_relfatbin sections). Every offset and size is checked against the buffer:
// a truncated or lying file is Errc::invalid_input naming `source` and the field, never a crash.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::inspect {

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

struct BinaryInfo {
  enum class Format { elf, pe };
  Format format = Format::elf;
  std::string machine;                    ///< "x86_64", "aarch64", "i386", "arm", "ppc64le", ... or "unknown (0x..)"
  std::string os;                         ///< "linux" (ELF) or "windows" (PE)
  unsigned bits = 64;
  bool little_endian = true;
  std::vector<std::string> needed;        ///< DT_NEEDED, in order ("libc10.so", "libcudart.so.12")
  std::optional<std::string> soname;      ///< DT_SONAME
  std::optional<std::string> max_glibc;   ///< the highest GLIBC_x.y in .gnu.version_r ("2.34")
  std::vector<std::string> glibc_versions;  ///< every GLIBC_x.y required, ascending
  std::vector<std::string> py_init;       ///< exported PyInit_* symbols
  std::vector<std::string> undefined_py;  ///< undefined Py*/_Py* symbols (the CPython ABI it calls)
  std::vector<FatbinEntry> cuda;          ///< every fatbinary entry found, in file order
};

/// Parses an ELF shared object or a PE image (by magic). Errc::unsupported for anything else.
Expected<BinaryInfo> parse_binary(std::string_view bytes, std::string_view source);

/// The extension-module suffix parts of a file name: "x.cpython-312-x86_64-linux-gnu.so" ->
/// {"cpython-312", "x86_64-linux-gnu"}; "x.abi3.so" -> {"abi3", ""}; "x.cp312-win_amd64.pyd";
/// nullopt for a name that is not an extension module.
struct ExtensionSuffix {
  std::string abi;       ///< "cpython-312", "cpython-313t", "abi3", "cp312" (Windows), ""
  std::string platform;  ///< "x86_64-linux-gnu", "win_amd64", ""
};
std::optional<ExtensionSuffix> extension_suffix(std::string_view filename);

}  // namespace wheelfit::inspect
