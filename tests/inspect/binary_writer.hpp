#pragma once
// A tiny writer of ELF files (ELFCLASS32/64, either byte order) and CUDA fatbinary containers for
// the inspect tests: enough structure for parse_binary to find DT_NEEDED, DT_SONAME, version
// needs, dynamic symbols and .nv_fatbin, and the offsets of every part so tests can corrupt it.

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

/// One container: the 16-byte header, then each entry header and its payload padded to 8.
inline std::string fatbin_container(const std::vector<FatEntry>& entries) {
  std::string body;
  for (const FatEntry& e : entries) {
    const std::size_t start = body.size();
    const std::uint64_t padded = (e.payload.size() + 7) / 8 * 8;
    append(body, 2, e.kind);
    append(body, 2, 0x0101);
    append(body, 4, e.header_size);
    append(body, 8, padded);
    append(body, 4, 0);
    append(body, 4, 0);
    append(body, 2, e.kind == 1 ? 0 : 8);  // minor
    append(body, 2, e.kind == 1 ? 9 : 1);  // major
    append(body, 4, e.arch);
    append(body, 4, 0);
    append(body, 4, 0);
    append(body, 8, e.flags);
    body.resize(start + e.header_size, '\0');
    body += e.payload;
    body.resize(start + e.header_size + padded, '\0');
  }
  std::string out;
  append(out, 4, 0xBA55ED50u);
  append(out, 2, 1);
  append(out, 2, 16);
  append(out, 8, body.size());
  return out + body;
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

/// A PE image: DOS header ("MZ", e_lfanew), "PE\0\0", the COFF header and an optional header
/// whose magic is 0x20b (PE32+) or 0x10b (PE32).
inline std::string write_pe(std::uint16_t machine, std::uint16_t optional_magic, std::uint32_t lfanew = 0x80) {
  std::string b(lfanew, '\0');
  b[0] = 'M';
  b[1] = 'Z';
  put(b, 0x3c, 4, lfanew);
  b += std::string("PE\0\0", 4);
  append(b, 2, machine);
  append(b, 2, 1);     // sections
  append(b, 4, 0);     // timestamp
  append(b, 4, 0);
  append(b, 4, 0);
  append(b, 2, 240);   // optional header size
  append(b, 2, 0x2022);
  append(b, 2, optional_magic);
  b.resize(b.size() + 238, '\0');
  return b;
}

}  // namespace wheelfit::test::bin
