#pragma once
// What a compiled extension module demands, from its own bytes: ELF (32/64-bit, both byte
// orders) and PE (.pyd: machine and OS only), and the raw bytes of the sections holding device
// code that the caller names (a backend's code_sections; the backend reads them). Every offset
// and size is checked against the buffer: a truncated or lying file is Errc::invalid_input
// naming `source` and the field, never a crash.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::inspect {

/// One section of device code, copied out of the binary for the backend to read.
struct DeviceSection {
  std::string name;   ///< ".nv_fatbin", ".hip_fatbin"
  std::string bytes;  ///< the section's contents
};

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
  std::vector<DeviceSection> device_code;  ///< the named device-code sections, in file order
};

/// Parses an ELF shared object or a PE image (by magic). Errc::unsupported for anything else.
/// `device_sections` names the ELF sections whose bytes are copied into device_code.
Expected<BinaryInfo> parse_binary(std::string_view bytes, std::string_view source,
                                  const std::vector<std::string>& device_sections = {});

/// The extension-module suffix parts of a file name: "x.cpython-312-x86_64-linux-gnu.so" ->
/// {"cpython-312", "x86_64-linux-gnu"}; "x.abi3.so" -> {"abi3", ""}; "x.cp312-win_amd64.pyd";
/// nullopt for a name that is not an extension module.
struct ExtensionSuffix {
  std::string abi;       ///< "cpython-312", "cpython-313t", "abi3", "cp312" (Windows), ""
  std::string platform;  ///< "x86_64-linux-gnu", "win_amd64", ""
};
std::optional<ExtensionSuffix> extension_suffix(std::string_view filename);

}  // namespace wheelfit::inspect
