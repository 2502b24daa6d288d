#pragma once
// A tiny writer of ELF files (ELFCLASS32/64, either byte order), PE DLLs and CUDA fatbinary
// containers for the inspect tests: enough structure for parse_binary to find DT_NEEDED,
// DT_SONAME, version needs, dynamic symbols and .nv_fatbin (and read_library its sections), and
// the offsets of every part so tests can corrupt it; a sparse library of any size (bench too).

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfit::test::bin {

inline void put(std::string& b, std::size_t off, unsigned width, std::uint64_t v, bool le = true) {
  if (b.size() < off + width) b.resize(off + width, '\0');
  for (unsigned i = 0; i < width; ++i) {
    const unsigned shift = le ? 8 * i : 8 * (width - 1 - i);
    b[off + i] = static_cast<char>((v >> shift) & 0xff);
  }
}
inline void append(std::string& b, unsigned width, std::uint64_t v, bool le = true) { put(b, b.size(), width, v, le); }
inline void align(std::string& b, std::size_t a) {
  while (b.size() % a != 0) b.push_back('\0');
}

struct StrTab {
  std::string data = std::string(1, '\0');
  std::uint32_t add(std::string_view s) {
    const auto o = static_cast<std::uint32_t>(data.size());
    data.append(s);
    data.push_back('\0');
    return o;
  }
};

// ---- fatbinary ----
struct FatEntry {
  std::uint16_t kind = 2;  // 1 PTX, 2 ELF
  std::uint32_t arch = 80;
  std::uint64_t flags = 0x11;
  std::uint32_t header_size = 64;
  std::string payload = "payload";
};

/// One entry's header (e.header_size bytes) declaring a payload of `payload_size` bytes.
inline std::string fatbin_entry_header(const FatEntry& e, std::uint64_t payload_size) {
  std::string h;
  append(h, 2, e.kind);
  append(h, 2, 0x0101);
  append(h, 4, e.header_size);
  append(h, 8, payload_size);
  append(h, 4, 0);
  append(h, 4, 0);
  append(h, 2, e.kind == 1 ? 0 : 8);  // minor
  append(h, 2, e.kind == 1 ? 9 : 1);  // major
  append(h, 4, e.arch);
  append(h, 4, 0);
  append(h, 4, 0);
  append(h, 8, e.flags);
  h.resize(e.header_size, '\0');
  return h;
}

/// A container's 16-byte header for `fat_size` bytes of entries.
inline std::string fatbin_container_header(std::uint64_t fat_size) {
  std::string out;
  append(out, 4, 0xBA55ED50u);
  append(out, 2, 1);
  append(out, 2, 16);
  append(out, 8, fat_size);
  return out;
}

/// One container: the 16-byte header, then each entry header and its payload padded to 8.
inline std::string fatbin_container(const std::vector<FatEntry>& entries) {
  std::string body;
  for (const FatEntry& e : entries) {
    const std::size_t start = body.size();
    const std::uint64_t padded = (e.payload.size() + 7) / 8 * 8;
    body += fatbin_entry_header(e, padded);
    body.resize(start + e.header_size, '\0');
    body += e.payload;
    body.resize(start + e.header_size + padded, '\0');
  }
  return fatbin_container_header(body.size()) + body;
}

// ---- ELF ----
struct Section {
  std::string name;
  std::uint32_t type = 1;  // SHT_PROGBITS
  std::string data;
  std::uint32_t link = 0, info = 0;
  std::uint64_t entsize = 0;
};

struct ElfImage {
  std::string bytes;
  bool is64 = true, le = true;
  std::uint64_t shoff = 0;
  std::map<std::string, std::uint64_t> data_offset;    // section name -> its bytes' offset
  std::map<std::string, std::uint64_t> header_offset;  // section name -> its section header's offset
  [[nodiscard]] unsigned addr() const { return is64 ? 8 : 4; }
  // Offsets of section header fields, by class.
  [[nodiscard]] std::uint64_t sh_name(const std::string& s) const { return header_offset.at(s); }
  [[nodiscard]] std::uint64_t sh_offset(const std::string& s) const { return header_offset.at(s) + (is64 ? 24 : 16); }
  [[nodiscard]] std::uint64_t sh_size(const std::string& s) const { return header_offset.at(s) + (is64 ? 32 : 20); }
  [[nodiscard]] std::uint64_t sh_link(const std::string& s) const { return header_offset.at(s) + (is64 ? 40 : 24); }
  [[nodiscard]] std::uint64_t sh_info(const std::string& s) const { return header_offset.at(s) + (is64 ? 44 : 28); }
  [[nodiscard]] std::uint64_t e_shoff() const { return is64 ? 40 : 32; }
  [[nodiscard]] std::uint64_t e_shentsize() const { return is64 ? 58 : 46; }
  [[nodiscard]] std::uint64_t e_shnum() const { return is64 ? 60 : 48; }
  [[nodiscard]] std::uint64_t e_shstrndx() const { return is64 ? 62 : 50; }
  void set(std::uint64_t off, unsigned width, std::uint64_t v) { put(bytes, off, width, v, le); }
};

/// Header, then each section's bytes (8-aligned), then .shstrtab, then the section header table
/// (so any truncation cuts the table). Section 0 is the null section; `sections` follow it.
inline ElfImage write_elf(bool is64, bool le, std::uint16_t machine, std::vector<Section> sections) {
  ElfImage img;
  img.is64 = is64;
  img.le = le;
  StrTab shstr;
  std::vector<std::uint32_t> names;
  for (const Section& s : sections) names.push_back(shstr.add(s.name));
  const std::uint32_t shstr_name = shstr.add(".shstrtab");
  sections.push_back(Section{".shstrtab", 3, shstr.data});
  names.push_back(shstr_name);

  std::string& b = img.bytes;
  const unsigned ehsize = is64 ? 64 : 52;
  b.resize(ehsize, '\0');
  std::vector<std::uint64_t> offsets;
  for (const Section& s : sections) {
    align(b, 8);
    offsets.push_back(b.size());
    img.data_offset[s.name] = b.size();
    b += s.data;
  }
  align(b, 8);
  img.shoff = b.size();
  const unsigned shentsize = is64 ? 64 : 40;
  const auto shnum = static_cast<std::uint16_t>(sections.size() + 1);
  b.resize(b.size() + shentsize, '\0');  // the null section header
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    img.header_offset[s.name] = b.size();
    const unsigned w = is64 ? 8 : 4;
    append(b, 4, names[i], le);
    append(b, 4, s.type, le);
    append(b, w, 0, le);  // flags
    append(b, w, 0, le);  // addr
    append(b, w, offsets[i], le);
    append(b, w, s.data.size(), le);
    append(b, 4, s.link, le);
    append(b, 4, s.info, le);
    append(b, w, 8, le);  // addralign
    append(b, w, s.entsize, le);
  }
  // The ELF header.
  b[0] = 0x7f;
  b[1] = 'E';
  b[2] = 'L';
  b[3] = 'F';
  b[4] = static_cast<char>(is64 ? 2 : 1);
  b[5] = static_cast<char>(le ? 1 : 2);
  b[6] = 1;
  put(b, 16, 2, 3, le);  // ET_DYN
  put(b, 18, 2, machine, le);
  put(b, 20, 4, 1, le);
  put(b, img.e_shoff(), is64 ? 8 : 4, img.shoff, le);
  put(b, is64 ? 52 : 40, 2, ehsize, le);
  put(b, img.e_shentsize(), 2, shentsize, le);
  put(b, img.e_shnum(), 2, shnum, le);
  put(b, img.e_shstrndx(), 2, shnum - 1, le);
  return img;
}

struct Need {
  std::string file;
  std::vector<std::string> versions;
};

struct Symbol {
  std::string name;
  bool defined = true;
  unsigned bind = 1;  // STB_GLOBAL
};

struct LibrarySpec {
  bool is64 = true, le = true;
  std::uint16_t machine = 62;
  std::vector<std::string> needed = {"libm.so.6", "libc10.so", "libcudart.so.12"};
  std::string soname = "libfoo.so.1";
  std::vector<Need> needs = {{"libc.so.6", {"GLIBC_2.9", "GLIBC_2.34", "GLIBC_PRIVATE", "GLIBC_2.10"}},
                             {"libstdc++.so.6", {"GLIBCXX_3.4.30", "CXXABI_1.3"}},
                             {"libm.so.6", {"GLIBC_2.2.5", "GLIBC_2.29"}}};
  std::vector<Symbol> symbols = {{"PyInit_foo", true, 1},  {"PyLong_FromLong", false, 1}, {"_Py_Dealloc", false, 1},
                                 {"printf", false, 1},      {"PyInit_local", true, 0},    {"wheelfit_helper", true, 1}};
  std::vector<Section> extra;  // appended after the dynamic sections (.nv_fatbin, ...)
};

/// A shared library as a linker would write one (sections only; no program headers).
inline ElfImage write_library(const LibrarySpec& spec) {
  const bool le = spec.le, is64 = spec.is64;
  const unsigned w = is64 ? 8 : 4;
  StrTab dynstr;
  // .dynamic (section 3, linked to .dynstr = 1)
  std::string dynamic;
  for (const std::string& n : spec.needed) {
    append(dynamic, w, 1, le);
    append(dynamic, w, dynstr.add(n), le);
  }
  append(dynamic, w, 14, le);
  append(dynamic, w, dynstr.add(spec.soname), le);
  append(dynamic, w, 0, le);
  append(dynamic, w, 0, le);
  // .dynsym (section 2)
  std::string dynsym(is64 ? 24 : 16, '\0');
  for (const Symbol& s : spec.symbols) {
    const std::uint32_t name = dynstr.add(s.name);
    const std::uint64_t info = (static_cast<std::uint64_t>(s.bind) << 4) | 2;  // STT_FUNC
    const std::uint64_t shndx = s.defined ? 5 : 0;
    if (is64) {
      append(dynsym, 4, name, le);
      append(dynsym, 1, info, le);
      append(dynsym, 1, 0, le);
      append(dynsym, 2, shndx, le);
      append(dynsym, 8, 0, le);
      append(dynsym, 8, 0, le);
    } else {
      append(dynsym, 4, name, le);
      append(dynsym, 4, 0, le);
      append(dynsym, 4, 0, le);
      append(dynsym, 1, info, le);
      append(dynsym, 1, 0, le);
      append(dynsym, 2, shndx, le);
    }
  }
  // .gnu.version_r (section 4)
  std::string verneed;
  for (std::size_t i = 0; i < spec.needs.size(); ++i) {
    const Need& n = spec.needs[i];
    const bool last = i + 1 == spec.needs.size();
    append(verneed, 2, 1, le);
    append(verneed, 2, n.versions.size(), le);
    append(verneed, 4, dynstr.add(n.file), le);
    append(verneed, 4, 16, le);
    append(verneed, 4, last ? 0 : 16 + 16 * n.versions.size(), le);
    for (std::size_t j = 0; j < n.versions.size(); ++j) {
      append(verneed, 4, 0, le);  // hash: not checked
      append(verneed, 2, 0, le);
      append(verneed, 2, 2 + j, le);
      append(verneed, 4, dynstr.add(n.versions[j]), le);
      append(verneed, 4, j + 1 == n.versions.size() ? 0 : 16, le);
    }
  }
  std::vector<Section> sections;
  sections.push_back(Section{".dynstr", 3, dynstr.data});
  sections.push_back(Section{".dynsym", 11, dynsym, 1, 1, static_cast<std::uint64_t>(is64 ? 24 : 16)});
  sections.push_back(Section{".dynamic", 6, dynamic, 1, 0, static_cast<std::uint64_t>(2 * w)});
  sections.push_back(Section{".gnu.version_r", 0x6ffffffe, verneed, 1, static_cast<std::uint32_t>(spec.needs.size())});
  sections.push_back(Section{".text", 1, std::string(16, '\xc3')});
  for (const Section& s : spec.extra) sections.push_back(s);
  return write_elf(is64, le, spec.machine, std::move(sections));
}

/// A PE image: DOS header ("MZ", e_lfanew), "PE\0\0", the COFF header (`sections` sections)
/// and an optional header whose magic is 0x20b (PE32+) or 0x10b (PE32).
inline std::string write_pe(std::uint16_t machine, std::uint16_t optional_magic, std::uint32_t lfanew = 0x80,
                            std::uint16_t sections = 1) {
  std::string b(lfanew, '\0');
  b[0] = 'M';
  b[1] = 'Z';
  put(b, 0x3c, 4, lfanew);
  b += std::string("PE\0\0", 4);
  append(b, 2, machine);
  append(b, 2, sections);
  append(b, 4, 0);     // timestamp
  append(b, 4, 0);
  append(b, 4, 0);
  append(b, 2, 240);   // optional header size
  append(b, 2, 0x2022);
  append(b, 2, optional_magic);
  b.resize(b.size() + 238, '\0');
  return b;
}

struct PeImage {
  std::string bytes;
  std::map<std::string, std::uint64_t> row_offset;   // section name -> its section table row's offset
  std::map<std::string, std::uint64_t> data_offset;  // section name -> its raw data's offset
};

/// A PE32+ DLL with `sections` (names cut to 8 bytes, as linkers write them: ".nv_fatbin" is
/// ".nv_fatb"): the headers, the section table, then each section's raw data at a 512-byte
/// boundary, padded to 512 (SizeOfRawData) while VirtualSize is the data's own size.
inline PeImage write_pe_library(std::uint16_t machine, const std::vector<Section>& sections) {
  PeImage img;
  std::string& b = img.bytes;
  b = write_pe(machine, 0x20b, 0x80, static_cast<std::uint16_t>(sections.size()));
  const std::size_t table = b.size();
  b.resize(table + 40 * sections.size(), '\0');
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    align(b, 512);
    const std::uint64_t row = table + 40 * i, data = b.size();
    img.row_offset[s.name] = row;
    img.data_offset[s.name] = data;
    const std::string name = s.name.substr(0, 8);
    for (std::size_t k = 0; k < name.size(); ++k) b[row + k] = name[k];
    put(b, row + 8, 4, s.data.size());           // VirtualSize
    put(b, row + 12, 4, 0x1000 * (i + 1));        // VirtualAddress
    put(b, row + 16, 4, (s.data.size() + 511) / 512 * 512);  // SizeOfRawData
    put(b, row + 20, 4, data);                    // PointerToRawData
    put(b, row + 36, 4, 0x40000040);              // initialised data, readable
    b += s.data;
  }
  align(b, 512);
  return img;
}

/// What write_sparse_library wrote where.
struct SparseLibrary {
  std::uint64_t file_size = 0;
  std::uint64_t fatbin_offset = 0, fatbin_size = 0;
  std::uint64_t header_bytes = 0;  ///< the bytes written: every header, no payload
};

/// A sparse ELF64 LSB shared library of `file_size` bytes at `path` (ftruncate: the holes read as
/// zeros and take no disk): the ELF header, a .nv_fatbin section at 4096 holding one container
/// whose entries' headers are written and whose payloads (`payload` bytes each, a multiple of 8)
/// are left as holes, then .shstrtab and the section header table at the file's end. file_size
/// is 0 in the result when the file could not be written.
inline SparseLibrary write_sparse_library(const std::string& path, std::uint64_t file_size, const std::vector<FatEntry>& entries,
                                          std::uint64_t payload) {
  SparseLibrary out;
  std::vector<std::pair<std::uint64_t, std::string>> pieces;
  out.fatbin_offset = 4096;
  std::uint64_t p = out.fatbin_offset + 16;
  for (const FatEntry& e : entries) {
    pieces.emplace_back(p, fatbin_entry_header(e, payload));
    p += e.header_size + payload;
  }
  out.fatbin_size = p - out.fatbin_offset;
  pieces.emplace_back(out.fatbin_offset, fatbin_container_header(out.fatbin_size - 16));
  const std::string shstr = std::string("\0.nv_fatbin\0.shstrtab\0", 22);
  const std::uint64_t shoff = file_size - 3 * 64, shstr_off = shoff - 64;
  if (shstr_off < p) return {};
  std::string shdrs(3 * 64, '\0');
  const auto section = [&](std::size_t i, std::uint32_t name, std::uint32_t type, std::uint64_t off, std::uint64_t size) {
    put(shdrs, i * 64, 4, name);
    put(shdrs, i * 64 + 4, 4, type);
    put(shdrs, i * 64 + 24, 8, off);
    put(shdrs, i * 64 + 32, 8, size);
    put(shdrs, i * 64 + 48, 8, 8);
  };
  section(1, 1, 1, out.fatbin_offset, out.fatbin_size);
  section(2, 12, 3, shstr_off, shstr.size());
  std::string header(64, '\0');
  header.replace(0, 7, std::string("\x7f" "ELF\x02\x01\x01", 7));
  put(header, 16, 2, 3);    // ET_DYN
  put(header, 18, 2, 62);   // x86_64
  put(header, 20, 4, 1);
  put(header, 40, 8, shoff);
  put(header, 52, 2, 64);
  put(header, 58, 2, 64);
  put(header, 60, 2, 3);
  put(header, 62, 2, 2);
  pieces.emplace_back(0, header);
  pieces.emplace_back(shstr_off, shstr);
  pieces.emplace_back(shoff, shdrs);
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return {};
  bool ok = ::ftruncate(fd, static_cast<off_t>(file_size)) == 0;
  for (const auto& [at, bytes] : pieces) {
    ok = ok && ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)) == static_cast<ssize_t>(bytes.size());
    out.header_bytes += bytes.size();
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok) return {};
  out.file_size = file_size;
  return out;
}

}  // namespace wheelfit::test::bin
