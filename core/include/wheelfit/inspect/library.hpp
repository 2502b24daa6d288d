#pragma once
// A shared library's device code, read from its headers without reading the file whole: torch's
// own libtorch_cuda.so (1-2 GiB; its .nv_fatbin about 1 GiB) or torch_cuda.dll (.nv_fatb). The
// ELF or PE headers locate the sections the policy names (backend.device.code_sections; a PE
// section name holds at most 8 bytes, so ".nv_fatb" is ".nv_fatbin"), and the backend walks each
// through DeviceRules::read_code_at, reading its containers' and entries' headers and skipping
// their payloads (CUDA: a few kilobytes of a gigabyte). No size cap. Decision 0027.
//
// Errors name the file: Errc::not_found (no such file), Errc::io_error (a folder, a FIFO, a
// device: refused unread; a read that failed), Errc::unsupported (neither ELF nor PE),
// Errc::invalid_input (a header or a section that lies, device code the backend refuses, naming
// the section and the offset), Errc::not_found again for a library with no device-code section.
// Thread safety: reentrant; it only reads the file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/inspect/binary.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/torch_gate.hpp"

namespace wheelfit::inspect {

/// What read_library read.
struct LibraryCode {
  std::string path;
  /// Format, machine, OS, word size and byte order from the headers (no DT_NEEDED, glibc or
  /// symbols: those sections are not read).
  BinaryInfo info;
  std::vector<std::string> sections;       ///< the device-code sections walked, in file order
  semantics::DeviceRules::DeviceCode device;  ///< their device code, merged ("" list: none)
  std::uint64_t file_size = 0;
  std::uint64_t bytes_read = 0;  ///< every byte read, headers included
};

/// True for a file name read as a library: "*.so", "*.so.N", "*.dll", "*.pyd" (any case for
/// the Windows ones).
[[nodiscard]] bool is_library_name(std::string_view filename);

/// Reads `path`'s headers and walks its device-code sections (see the top of this file). A
/// library with no such section has an empty `device` and `sections`.
[[nodiscard]] Expected<LibraryCode> read_library(const std::string& path, const semantics::Policy& policy);

/// The targets a torch library was built for, as the resolver judges torch
/// (resolve::Inputs::torch_archs): the list and entries of read_library, the source "read from
/// <path>: N SASS, M PTX entries" (the backend's kinds, upper-cased). Errc::not_found naming the
/// file and the sections looked for when it has no device code.
[[nodiscard]] Expected<resolve::TorchArchs> read_library_archs(const std::string& path, const semantics::Policy& policy);

/// In torch's library folder (torch/lib), the library holding its device code: of the files
/// named libtorch*.so* and torch*.dll, the one whose device-code sections are the largest (only
/// headers are read). Errc::not_found naming the folder when it does not exist or no file has
/// such a section (a CPU build of torch).
[[nodiscard]] Expected<std::string> find_torch_library(const std::string& lib_dir, const semantics::Policy& policy);

/// `wheelfit explain LIB`: a library's device code judged on the machine's GPUs by the rule the
/// resolver applies to torch (resolve::judge_torch).
struct LibraryExplanation {
  LibraryCode library;
  resolve::TorchVerdict verdict;      ///< verdict.archs: the library's (always set)
  std::string machine;                ///< the machine's GPUs as reports write them ("sm 8.6, 12.0")
  std::vector<std::string> served;    ///< per GPU that it runs on: "sm 8.6 runs sm_80 (sass)"
  std::vector<std::string> warnings;  ///< the machine's targets could not be read, ...
  /// The verdict in words: "it runs here", "it will not run here: nothing in it runs on sm 12.0
  /// (<the backend's no-kernel error>)", "not checked: <why>".
  std::string summary;
};

/// read_library_archs, then the verdict. Errors: read_library_archs's.
[[nodiscard]] Expected<LibraryExplanation> explain_library(const std::string& path, const machine::Machine& machine,
                                                           const semantics::Policy& policy);

}  // namespace wheelfit::inspect
