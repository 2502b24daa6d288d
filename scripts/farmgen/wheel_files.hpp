#pragma once
// The wheel files of `wheelfit-farmgen --with-files`: real, installable wheels (a valid zip with
// the package, a small native module and the dist-info pip checks), so downloads, mirrors and
// `explain` are tested on real bytes. Deterministic: the same spec gives the same bytes (fixed
// zip times, members in a fixed order).
#include <string>
#include <string_view>

namespace wheelfit::farmgen {

struct WheelSpec {
  std::string project;       ///< the PEP 503 project name ("flash-attn"), METADATA's Name
  std::string name;          ///< the distribution name of the file ("flash_attn"), the import package
  std::string version;       ///< with its local label ("2.8.3+cu128torch2.8")
  std::string python;        ///< the CPython tag ("cp312"): python and ABI tag
  std::string platform_tags; ///< as the file name writes them ("manylinux_2_24_x86_64.manylinux_2_28_x86_64")
};

/// The wheel's bytes. Members: {name}/__init__.py; {name}/_C.cpython-3XY-<arch>-linux-gnu.so (an
/// ELF64 shared object header for the tags' CPU) or {name}/_C.cp3XY-win_amd64.pyd (a PE32+ header)
/// for a Windows tag; {name}-{version}.dist-info/METADATA (Metadata-Version 2.1, Name, Version,
/// Requires-Python), WHEEL (Root-Is-Purelib: false, one Tag line per tag) and RECORD (each
/// member's urlsafe-base64 sha256 and size, RECORD itself without).
std::string wheel_bytes(const WheelSpec& spec);

/// The METADATA text wheel_bytes puts in the wheel (what a mirror extracts for PEP 658).
std::string wheel_metadata(const WheelSpec& spec);

}  // namespace wheelfit::farmgen
