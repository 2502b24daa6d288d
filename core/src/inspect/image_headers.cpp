// ELF and PE headers read by offset (image_headers.hpp): what parse_binary and read_library share.
#include "image_headers.hpp"

#include <algorithm>

#include "wheelfit/util/byte_reader.hpp"

namespace wheelfit::inspect::detail {

namespace {

using util::Bytes;

constexpr std::uint16_t kShnXindex = 0xffff;
constexpr unsigned kShtNobits = 8;
constexpr std::uint64_t kPeSectionRow = 40;
constexpr std::uint64_t kCoffSymbol = 18;
constexpr std::uint64_t kMaxLongName = 256;  // a PE long section name read from the COFF string table

// Where a section header's fields sit (bytes from its start), in ELF64 and ELF32.
struct ShdrLayout {
  std::uint64_t flags, addr, offset, size, link, info, entsize;
};
constexpr ShdrLayout kShdr64{8, 16, 24, 32, 40, 44, 56};
constexpr ShdrLayout kShdr32{8, 12, 16, 20, 24, 28, 36};

// One Elf64_Shdr / Elf32_Shdr at `o` of `b` (the caller checked its range).
ImageSection elf_section(const Bytes& b, std::uint64_t o, bool is64, std::uint64_t index) {
  ImageSection s;
  s.name_index = b.u32(o);
  s.type = b.u32(o + 4);
  // The same fields, address-sized ones 8 or 4 bytes wide.
  const auto& at = is64 ? kShdr64 : kShdr32;
  auto word = [&](std::uint64_t off) { return is64 ? b.u64(o + off) : std::uint64_t{b.u32(o + off)}; };
  s.flags = word(at.flags);
  s.addr = word(at.addr);
  s.offset = word(at.offset);
  s.size = word(at.size);
  s.link = b.u32(o + at.link);
  s.info = b.u32(o + at.info);
  s.entsize = word(at.entsize);
  s.has_bytes = s.type != kShtNobits;
  s.label = "section " + std::to_string(index);
  return s;
}

// The ELF header: e_ident, then the fields of its class.
struct ElfHeader {
  bool is64 = true;
  std::uint64_t shoff = 0, shentsize = 0, shnum = 0, shstrndx = 0;
};

Expected<ElfHeader> elf_header(const ImageReader& r, const ImageErrors& err, ImageLayout& out) {
  if (!err.fits(0, 16)) return err.past_end("e_ident", 0, 16);
  auto head = r.read(0, std::min<std::uint64_t>(r.size, 64));
  if (!head) return head.error();
  Bytes b{*head, true};
  const auto cls = static_cast<unsigned char>(b.data[4]);
  const auto data = static_cast<unsigned char>(b.data[5]);
  if (cls != 1 && cls != 2) return err.fail("EI_CLASS " + std::to_string(cls) + " is neither 1 (32-bit) nor 2 (64-bit)");
  if (data != 1 && data != 2) return err.fail("EI_DATA " + std::to_string(data) + " is neither 1 (LSB) nor 2 (MSB)");
  ElfHeader h;
  h.is64 = cls == 2;
  b.little_endian = data == 1;
  const std::uint64_t ehsize = h.is64 ? 64 : 52;
  if (!b.fits(0, ehsize)) return err.past_end("header", 0, ehsize);
  const unsigned addr = h.is64 ? 8 : 4;
  BinaryInfo& info = out.info;
  info.format = BinaryInfo::Format::elf;
  info.os = "linux";
  info.bits = h.is64 ? 64 : 32;
  info.little_endian = b.little_endian;
  info.machine = elf_machine_name(b.u16(18), h.is64, b.little_endian);
  out.phoff = b.get(h.is64 ? 32 : 28, addr);
  h.shoff = b.get(h.is64 ? 40 : 32, addr);
  const std::uint64_t base = h.is64 ? 54 : 42;
  out.phentsize = b.u16(base);
  out.phnum = b.u16(base + 2);
  h.shentsize = b.u16(base + 4);
  h.shnum = b.u16(base + 6);
  h.shstrndx = b.u16(base + 8);
  return h;
}

// The section header table, then each section's name from the section name string table.
Expected<void> elf_sections(const ImageReader& r, const ImageErrors& err, const ElfHeader& h, ImageLayout& out) {
  if (h.shoff == 0) return {};
  const bool is64 = h.is64;
  const std::uint64_t need = is64 ? 64 : 40;
  if (h.shentsize < need) return err.fail("e_shentsize " + std::to_string(h.shentsize) + " is below " + std::to_string(need));
  std::uint64_t count = h.shnum;
  std::uint64_t strndx = h.shstrndx;
  if (!err.fits(h.shoff, need)) return err.past_end("section header 0 (e_shoff)", h.shoff, need);
  if (count == 0 || strndx == kShnXindex) {
    auto first = r.read(h.shoff, need);
    if (!first) return first.error();
    const ImageSection s0 = elf_section(Bytes{*first, out.info.little_endian}, 0, is64, 0);
    if (count == 0) count = s0.size;       // extended numbering: sh_size of section 0
    if (strndx == kShnXindex) strndx = s0.link;  // sh_link of section 0
  }
  if (count > r.size / h.shentsize || !err.fits(h.shoff, count * h.shentsize)) {
    return err.past_end("section header table (e_shoff " + std::to_string(h.shoff) + ", e_shnum " + std::to_string(count) + ")",
                        h.shoff, count * h.shentsize);
  }
  auto table = r.read(h.shoff, count * h.shentsize);
  if (!table) return table.error();
  const Bytes b{*table, out.info.little_endian};
  out.sections.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) out.sections.push_back(elf_section(b, i * h.shentsize, is64, i));
  if (count == 0) return {};
  if (strndx >= count) {
    return err.fail("e_shstrndx " + std::to_string(strndx) + " is not below the section count " + std::to_string(count));
  }
  const ImageSection& names = out.sections[strndx];
  if (auto ok = check_table(names, "section name string table (e_shstrndx " + std::to_string(strndx) + ")", err); !ok) return ok;
  auto shstr = r.read(names.offset, names.size);
  if (!shstr) return shstr.error();
  const std::string names_label = names.label;
  for (std::size_t i = 0; i < out.sections.size(); ++i) {
    ImageSection& s = out.sections[i];
    auto name = string_at(*shstr, s.name_index, "sh_name of section " + std::to_string(i), names_label, err);
    if (!name) return name.error();
    s.name = std::move(*name);
    s.label = "section " + std::to_string(i) + " '" + s.name + "'";
  }
  return {};
}

// A PE section name: 8 bytes, NUL-padded; "/N" is offset N of the COFF string table.
Expected<std::string> pe_section_name(const ImageReader& r, std::string_view raw, std::uint64_t strings, const ImageErrors& err) {
  std::string name(raw.substr(0, raw.find('\0')));
  if (name.size() < 2 || name[0] != '/' || strings == 0) return name;
  std::uint64_t index = 0;
  for (const char c : std::string_view(name).substr(1)) {
    if (c < '0' || c > '9') return name;
    index = index * 10 + static_cast<std::uint64_t>(c - '0');
  }
  const std::uint64_t at = strings + index;
  if (!err.fits(at, 1)) return err.past_end("long section name " + name + " (the COFF string table)", at, 1);
  auto text = r.read(at, std::min(kMaxLongName, r.size - at));
  if (!text) return text.error();
  const auto nul = text->find('\0');
  if (nul == std::string::npos) return err.fail("long section name " + name + " at offset " + std::to_string(at) + " is not NUL-terminated");
  return text->substr(0, nul);
}

// The PE section table: `count` rows of 40 bytes at `at`.
Expected<void> pe_sections(const ImageReader& r, const ImageErrors& err, std::uint64_t at, std::uint64_t count,
                           std::uint64_t strings, ImageLayout& out) {
  if (!err.fits(at, count * kPeSectionRow)) {
    return err.past_end("section table (" + std::to_string(count) + " sections)", at, count * kPeSectionRow);
  }
  auto table = r.read(at, count * kPeSectionRow);
  if (!table) return table.error();
  const Bytes b{*table, true};
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t o = i * kPeSectionRow;
    auto name = pe_section_name(r, b.data.substr(o, 8), strings, err);
    if (!name) return name.error();
    ImageSection s;
    s.name = std::move(*name);
    const std::uint32_t virtual_size = b.u32(o + 8), raw_size = b.u32(o + 16);
    s.offset = b.u32(o + 20);
    // The raw data is padded to the file alignment: the section's own bytes are VirtualSize.
    s.size = virtual_size != 0 ? std::min(virtual_size, raw_size) : raw_size;
    s.has_bytes = raw_size != 0;
    s.flags = b.u32(o + 36);
    s.label = "section " + std::to_string(i) + " '" + s.name + "'";
    out.sections.push_back(std::move(s));
  }
  return {};
}

std::string pe_machine(unsigned machine, unsigned& bits) {
  switch (machine) {
    case 0x8664: bits = 64; return "x86_64";
    case 0xAA64: bits = 64; return "aarch64";
    case 0x14c: bits = 32; return "i386";
    case 0x1c4: bits = 32; return "arm";
    default: return "unknown (" + util::hex(machine) + ")";
  }
}

}  // namespace

ImageReader memory_reader(std::string_view bytes, std::string_view source) {
  return ImageReader{bytes.size(),
                     [bytes](std::uint64_t offset, std::uint64_t length) -> Expected<std::string> {
                       return std::string(bytes.substr(offset, length));
                     },
                     source};
}

Error ImageErrors::fail(const std::string& what) const {
  return Error(Errc::invalid_input, std::string(source) + ": " + std::string(format) + " " + what);
}

Error ImageErrors::past_end(const std::string& what, std::uint64_t offset, std::uint64_t length) const {
  return fail(what + " (offset " + std::to_string(offset) + ", " + std::to_string(length) + " bytes) passes the end of the " +
              std::to_string(size) + "-byte file");
}

std::string elf_machine_name(unsigned m, bool is64, bool le) {
  switch (m) {
    case 3: return "i386";
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 40: return "arm";
    case 20: return "ppc";
    case 21: return le ? "ppc64le" : "ppc64";
    case 22: return is64 ? "s390x" : "s390";
    case 243: return is64 ? "riscv64" : "riscv32";
    case 8: return "mips";
    case 2: return "sparc";
    case 43: return "sparc64";
    case 258: return "loongarch64";
    default: return "unknown (" + util::hex(m) + ")";
  }
}

Expected<void> check_table(const ImageSection& s, const std::string& what, const ImageErrors& err) {
  if (!s.has_bytes) return err.fail(what + " is " + s.label + ", which has no bytes (SHT_NOBITS)");
  if (!err.fits(s.offset, s.size)) return err.past_end(what + " " + s.label, s.offset, s.size);
  return {};
}

Expected<std::string> string_at(std::string_view table, std::uint64_t index, const std::string& what, const std::string& label,
                                const ImageErrors& err) {
  if (index >= table.size()) {
    return err.fail(what + ": string offset " + std::to_string(index) + " is past the end of the " + std::to_string(table.size()) +
                    "-byte string table (" + label + ")");
  }
  const std::string_view rest = table.substr(index);
  const auto nul = rest.find('\0');
  if (nul == std::string_view::npos) {
    return err.fail(what + ": string at offset " + std::to_string(index) + " in " + label + " is not NUL-terminated");
  }
  return std::string(rest.substr(0, nul));
}

Expected<ImageLayout> read_elf_layout(const ImageReader& reader) {
  const ImageErrors err{reader.source, reader.size, "ELF"};
  ImageLayout out;
  auto h = elf_header(reader, err, out);
  if (!h) return h.error();
  if (auto ok = elf_sections(reader, err, *h, out); !ok) return ok.error();
  return out;
}

Expected<ImageLayout> read_pe_layout(const ImageReader& reader, bool with_sections) {
  const ImageErrors err{reader.source, reader.size, "PE"};
  if (reader.size < 64) return err.fail("DOS header needs 64 bytes, the file has " + std::to_string(reader.size));
  auto dos = reader.read(0, 64);
  if (!dos) return dos.error();
  const std::uint32_t lfanew = Bytes{*dos, true}.u32(0x3c);
  if (!err.fits(lfanew, 24)) {
    return err.fail("e_lfanew " + std::to_string(lfanew) + ": the PE signature and COFF header pass the end of the " +
                    std::to_string(reader.size) + "-byte file");
  }
  auto coff_bytes = reader.read(lfanew, 24);
  if (!coff_bytes) return coff_bytes.error();
  const Bytes coff{*coff_bytes, true};
  if (coff.data.substr(0, 4) != std::string_view("PE\0\0", 4)) {
    return err.fail("no 'PE\\0\\0' signature at e_lfanew " + std::to_string(lfanew));
  }
  ImageLayout out;
  BinaryInfo& info = out.info;
  info.format = BinaryInfo::Format::pe;
  info.os = "windows";
  info.little_endian = true;
  info.machine = pe_machine(coff.u16(4), info.bits);
  // The optional header's magic, when present, says PE32 (0x10b) or PE32+ (0x20b).
  const unsigned opt_size = coff.u16(20);
  if (opt_size >= 2 && err.fits(lfanew + 24, 2)) {
    auto magic_bytes = reader.read(lfanew + 24, 2);
    if (!magic_bytes) return magic_bytes.error();
    const unsigned magic = Bytes{*magic_bytes, true}.u16(0);
    if (magic == 0x10b) info.bits = 32;
    if (magic == 0x20b) info.bits = 64;
  }
  if (!with_sections) return out;
  const std::uint64_t symbols = coff.u32(12), nsymbols = coff.u32(16);
  const std::uint64_t strings = symbols == 0 ? 0 : symbols + nsymbols * kCoffSymbol;
  if (auto ok = pe_sections(reader, err, std::uint64_t{lfanew} + 24 + opt_size, coff.u16(6), strings, out); !ok) return ok.error();
  return out;
}

}  // namespace wheelfit::inspect::detail
