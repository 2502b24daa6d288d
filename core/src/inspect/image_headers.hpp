#pragma once
// The headers of an ELF or PE image, read by offset: the ELF header, its section header table and
// section names (.shstrtab); a PE's DOS and COFF headers and its section table. Shared by
// parse_binary (binary.cpp: a buffer held whole) and read_library (library.cpp: a file read with
// pread, never whole: torch's libtorch_cuda.so is gigabytes). Private to the inspect component.
//
// Every record's range is checked against the file's size before it is read; a truncated or
// lying header is Errc::invalid_input naming the source, the record and its offset ("x.so: ELF
// section header table (e_shoff 4096, e_shnum 9) (offset 4096, 576 bytes) passes the end of the
// 800-byte file"). Reentrant.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/inspect/binary.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::inspect::detail {

/// Random reads of one file for the header readers: `read(offset, length)` is called only for a
/// range inside [0, size), and returns exactly those bytes (or the file's error).
struct ImageReader {
  std::uint64_t size = 0;
  std::function<Expected<std::string>(std::uint64_t offset, std::uint64_t length)> read;
  std::string_view source;  ///< names the file in errors
};

/// A reader over `bytes` held in memory (they must outlive it).
ImageReader memory_reader(std::string_view bytes, std::string_view source);

/// One section as its header says (ELF section header, PE section table row).
struct ImageSection {
  std::string name;             ///< ".dynsym"; a PE name is at most 8 bytes unless a long name ("/4")
  std::uint64_t name_index = 0; ///< ELF sh_name
  std::uint64_t type = 0, flags = 0, addr = 0, offset = 0, size = 0, link = 0, info = 0, entsize = 0;
  bool has_bytes = true;        ///< false: SHT_NOBITS, or a PE section with no raw data
  std::string label;            ///< "section 5 '.dynsym'" for messages
};

/// What the headers say.
struct ImageLayout {
  BinaryInfo info;  ///< format, machine, os, bits, byte order (the rest is left empty)
  /// ELF: the program header table (binary.cpp reads it from the buffer).
  std::uint64_t phoff = 0, phentsize = 0, phnum = 0;
  std::vector<ImageSection> sections;  ///< in table order; ELF's null section 0 included
};

/// Errors of the header readers, worded as parse_binary words them.
struct ImageErrors {
  std::string_view source;
  std::uint64_t size = 0;
  std::string_view format;  ///< "ELF" or "PE"
  [[nodiscard]] Error fail(const std::string& what) const;
  /// "<what> (offset O, N bytes) passes the end of the S-byte file".
  [[nodiscard]] Error past_end(const std::string& what, std::uint64_t offset, std::uint64_t length) const;
  [[nodiscard]] bool fits(std::uint64_t offset, std::uint64_t length) const noexcept {
    return offset <= size && length <= size - offset;
  }
};

/// The ELF machine's name: "x86_64", "aarch64", ... or "unknown (0x..)".
std::string elf_machine_name(unsigned machine, bool is64, bool little_endian);

/// The ELF header and section headers with their names (an ELF of either class and byte order).
/// No section header table (e_shoff 0): no sections.
Expected<ImageLayout> read_elf_layout(const ImageReader& reader);

/// The PE headers (machine, word size) and, when `with_sections`, the section table: its rows'
/// raw data (PointerToRawData, the smaller of VirtualSize and SizeOfRawData; long names "/N" read
/// from the COFF string table).
Expected<ImageLayout> read_pe_layout(const ImageReader& reader, bool with_sections);

/// A string table section `s` must have bytes inside the file: `what` names its role.
Expected<void> check_table(const ImageSection& s, const std::string& what, const ImageErrors& err);

/// The NUL-terminated string at `index` of a string table's bytes `table` (named `label`); `what`
/// names the reference in errors.
Expected<std::string> string_at(std::string_view table, std::uint64_t index, const std::string& what,
                                const std::string& label, const ImageErrors& err);

}  // namespace wheelfit::inspect::detail
