// ELF and PE parsing for extension modules (see binary.hpp). One reader serves ELFCLASS32 and
// ELFCLASS64 in either byte order: every record (header, section header, program header, dynamic
// entry, symbol, verneed, vernaux) is read by a function that checks the record's whole range
// once, naming it in the error, and then reads its fields at class-dependent offsets through
// util::Bytes. Nothing is cast from the buffer; no loop runs longer than the bytes allow.

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>

#include "wheelfit/util/byte_reader.hpp"
#include "wheelfit/inspect/binary.hpp"

namespace wheelfit::inspect {

namespace {

using util::Bytes;

// ---- ELF constants ----
constexpr unsigned kShtDynamic = 6, kShtNobits = 8, kShtDynsym = 11;
constexpr std::uint32_t kShtGnuVerneed = 0x6ffffffe;
constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2;
constexpr std::uint64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14;
constexpr std::uint64_t kDtVerneed = 0x6ffffffe, kDtVerneednum = 0x6fffffff;
constexpr std::uint16_t kShnXindex = 0xffff;
constexpr std::uint64_t kMaxVersionNeeds = 100000;  // far above any real library

std::string machine_name(unsigned m, bool is64, bool le) {
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

struct Shdr {
  std::uint64_t name = 0, type = 0, flags = 0, addr = 0, offset = 0, size = 0, link = 0, info = 0, entsize = 0;
  std::string label;  // "section 5 '.dynsym'" for messages
};
// Where a section header's fields sit (bytes from its start), in ELF64 and ELF32.
struct ShdrLayout {
  std::uint64_t flags, addr, offset, size, link, info, entsize;
};
constexpr ShdrLayout kShdr64{8, 16, 24, 32, 40, 44, 56};
constexpr ShdrLayout kShdr32{8, 12, 16, 20, 24, 28, 36};
struct Phdr {
  std::uint64_t type = 0, offset = 0, vaddr = 0, filesz = 0;
};
struct StrTab {
  std::uint64_t offset = 0, size = 0;
  std::string label;
};

// Parses `/GLIBC_(\d+(\.\d+)*)/` into its numbers; empty when the name is not one.
std::vector<unsigned> glibc_numbers(std::string_view name) {
  constexpr std::string_view prefix = "GLIBC_";
  if (name.substr(0, prefix.size()) != prefix) return {};
  std::vector<unsigned> parts;
  std::string_view rest = name.substr(prefix.size());
  while (true) {
    std::size_t n = 0;
    unsigned long v = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9' && n < 9) {
      v = v * 10 + static_cast<unsigned long>(rest[n] - '0');
      ++n;
    }
    if (n == 0) return {};
    parts.push_back(static_cast<unsigned>(v));
    rest = rest.substr(n);
    if (rest.empty()) return parts;
    if (rest[0] != '.') return {};
    rest = rest.substr(1);
  }
}

class ElfParser {
 public:
  ElfParser(std::string_view bytes, std::string_view source) : source_(source) { b_.data = bytes; }

  Expected<BinaryInfo> run(const std::vector<std::string>& device_section_names) {
    if (auto r = header(); !r) return r.error();
    if (auto r = program_headers(); !r) return r.error();
    if (auto r = section_headers(); !r) return r.error();
    if (auto r = dynamic(); !r) return r.error();
    if (auto r = version_needs(); !r) return r.error();
    if (auto r = symbols(); !r) return r.error();
    if (auto r = device_sections(device_section_names); !r) return r.error();
    return std::move(info_);
  }

 private:
  Unexpected fail(const std::string& what) const {
    return unexpected(Errc::invalid_input, std::string(source_) + ": ELF " + what);
  }
  Unexpected past_end(const std::string& what, std::uint64_t offset, std::uint64_t length) const {
    return fail(what + " (offset " + std::to_string(offset) + ", " + std::to_string(length) +
                " bytes) passes the end of the " + std::to_string(b_.data.size()) + "-byte file");
  }
  [[nodiscard]] unsigned addr() const { return is64_ ? 8 : 4; }

  Expected<void> header() {
    if (!b_.fits(0, 16)) return past_end("e_ident", 0, 16);
    const auto cls = static_cast<unsigned char>(b_.data[4]);
    const auto data = static_cast<unsigned char>(b_.data[5]);
    if (cls != 1 && cls != 2) return fail("EI_CLASS " + std::to_string(cls) + " is neither 1 (32-bit) nor 2 (64-bit)");
    if (data != 1 && data != 2) return fail("EI_DATA " + std::to_string(data) + " is neither 1 (LSB) nor 2 (MSB)");
    is64_ = cls == 2;
    b_.little_endian = data == 1;
    const std::uint64_t ehsize = is64_ ? 64 : 52;
    if (!b_.fits(0, ehsize)) return past_end("header", 0, ehsize);
    const unsigned machine = b_.u16(18);
    info_.format = BinaryInfo::Format::elf;
    info_.os = "linux";
    info_.bits = is64_ ? 64 : 32;
    info_.little_endian = b_.little_endian;
    info_.machine = machine_name(machine, is64_, b_.little_endian);
    phoff_ = b_.get(is64_ ? 32 : 28, addr());
    shoff_ = b_.get(is64_ ? 40 : 32, addr());
    const std::uint64_t base = is64_ ? 54 : 42;
    phentsize_ = b_.u16(base);
    phnum_ = b_.u16(base + 2);
    shentsize_ = b_.u16(base + 4);
    shnum_ = b_.u16(base + 6);
    shstrndx_ = b_.u16(base + 8);
    return {};
  }

  Expected<void> program_headers() {
    if (phoff_ == 0 || phnum_ == 0) return {};
    const std::uint64_t need = is64_ ? 56 : 32;
    if (phentsize_ < need) {
      return fail("e_phentsize " + std::to_string(phentsize_) + " is below " + std::to_string(need));
    }
    if (!b_.fits(phoff_, phnum_ * phentsize_)) return past_end("program header table (e_phoff, e_phnum)", phoff_, phnum_ * phentsize_);
    for (std::uint64_t i = 0; i < phnum_; ++i) {
      const std::uint64_t o = phoff_ + i * phentsize_;
      Phdr p;
      p.type = b_.u32(o);
      p.offset = b_.get(is64_ ? o + 8 : o + 4, addr());
      p.vaddr = b_.get(is64_ ? o + 16 : o + 8, addr());
      p.filesz = b_.get(is64_ ? o + 32 : o + 16, addr());
      phdrs_.push_back(p);
    }
    return {};
  }

  Expected<void> section_headers() {
    if (shoff_ == 0) return {};
    const std::uint64_t need = is64_ ? 64 : 40;
    if (shentsize_ < need) {
      return fail("e_shentsize " + std::to_string(shentsize_) + " is below " + std::to_string(need));
    }
    std::uint64_t count = shnum_;
    std::uint64_t strndx = shstrndx_;
    if (!b_.fits(shoff_, need)) return past_end("section header 0 (e_shoff)", shoff_, need);
    if (count == 0) count = b_.get(shoff_ + (is64_ ? 32 : 20), addr());  // extended numbering: sh_size of 0
    if (strndx == kShnXindex) strndx = b_.u32(shoff_ + (is64_ ? 40 : 24));  // sh_link of 0
    if (count > b_.data.size() / shentsize_ || !b_.fits(shoff_, count * shentsize_)) {
      return past_end("section header table (e_shoff " + std::to_string(shoff_) + ", e_shnum " + std::to_string(count) + ")",
                      shoff_, count * shentsize_);
    }
    shdrs_.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t o = shoff_ + i * shentsize_;
      Shdr s;
      s.name = b_.u32(o);
      s.type = b_.u32(o + 4);
      // Elf64_Shdr / Elf32_Shdr: the same fields, address-sized ones 8 or 4 bytes wide.
      const auto& at = is64_ ? kShdr64 : kShdr32;
      auto word = [&](std::uint64_t off) { return is64_ ? b_.u64(o + off) : std::uint64_t{b_.u32(o + off)}; };
      s.flags = word(at.flags);
      s.addr = word(at.addr);
      s.offset = word(at.offset);
      s.size = word(at.size);
      s.link = b_.u32(o + at.link);
      s.info = b_.u32(o + at.info);
      s.entsize = word(at.entsize);
      s.label = "section " + std::to_string(i);
      shdrs_.push_back(std::move(s));
    }
    if (count == 0) return {};
    if (strndx >= count) {
      return fail("e_shstrndx " + std::to_string(strndx) + " is not below the section count " + std::to_string(count));
    }
    auto shstr = table(shdrs_[strndx], "section name string table (e_shstrndx " + std::to_string(strndx) + ")");
    if (!shstr) return shstr.error();
    for (std::size_t i = 0; i < shdrs_.size(); ++i) {
      auto name = string_at(*shstr, shdrs_[i].name, "sh_name of section " + std::to_string(i));
      if (!name) return name.error();
      names_.emplace_back(*name);
      shdrs_[i].label = "section " + std::to_string(i) + " '" + names_.back() + "'";
    }
    return {};
  }

  // A section's bytes must lie in the file (NOBITS sections have none).
  Expected<void> check_range(const Shdr& s) const {
    if (s.type == kShtNobits) return {};
    if (!b_.fits(s.offset, s.size)) return past_end(s.label + " (sh_offset, sh_size)", s.offset, s.size);
    return {};
  }

  Expected<StrTab> table(const Shdr& s, const std::string& what) const {
    if (s.type == kShtNobits) return fail(what + " is " + s.label + ", which has no bytes (SHT_NOBITS)");
    if (!b_.fits(s.offset, s.size)) return past_end(what + " " + s.label, s.offset, s.size);
    return StrTab{s.offset, s.size, s.label};
  }

  // The linked string table of section `s` (sh_link).
  Expected<StrTab> linked_table(const Shdr& s) const {
    if (s.link >= shdrs_.size()) {
      return fail(s.label + ": sh_link " + std::to_string(s.link) + " is not below the section count " +
                  std::to_string(shdrs_.size()));
    }
    return table(shdrs_[s.link], "string table of " + s.label);
  }

  Expected<std::string> string_at(const StrTab& t, std::uint64_t index, const std::string& what) const {
    if (index >= t.size) {
      return fail(what + ": string offset " + std::to_string(index) + " is past the end of the " +
                  std::to_string(t.size) + "-byte string table (" + t.label + ")");
    }
    const std::string_view rest = b_.data.substr(t.offset + index, t.size - index);
    const auto nul = rest.find('\0');
    if (nul == std::string_view::npos) {
      return fail(what + ": string at offset " + std::to_string(index) + " in " + t.label + " is not NUL-terminated");
    }
    return std::string(rest.substr(0, nul));
  }

  // A virtual address to a file offset through the PT_LOAD segments (for files without sections).
  std::optional<std::uint64_t> file_offset(std::uint64_t vaddr) const {
    for (const Phdr& p : phdrs_) {
      if (p.type == kPtLoad && vaddr >= p.vaddr && vaddr - p.vaddr < p.filesz) return p.offset + (vaddr - p.vaddr);
    }
    return std::nullopt;
  }

  const Shdr* find_type(std::uint64_t type) const {
    for (const Shdr& s : shdrs_) {
      if (s.type == type) return &s;
    }
    return nullptr;
  }

  Expected<void> dynamic() {
    const std::uint64_t entsize = is64_ ? 16 : 8;
    std::uint64_t off = 0, size = 0;
    std::string label;
    std::optional<StrTab> strtab;
    if (const Shdr* s = find_type(kShtDynamic)) {
      if (auto r = check_range(*s); !r) return r;
      off = s->offset;
      size = s->size;
      label = s->label;
      auto t = linked_table(*s);
      if (!t) return t.error();
      strtab = *t;
    } else {
      const Phdr* dyn = nullptr;
      for (const Phdr& p : phdrs_) {
        if (p.type == kPtDynamic) dyn = &p;
      }
      if (dyn == nullptr) return {};  // static, or a file without a dynamic table
      if (!b_.fits(dyn->offset, dyn->filesz)) return past_end("PT_DYNAMIC segment", dyn->offset, dyn->filesz);
      off = dyn->offset;
      size = dyn->filesz;
      label = "PT_DYNAMIC segment";
    }
    std::vector<std::uint64_t> needed, soname;
    std::uint64_t strtab_addr = 0, strsz = 0;
    bool have_strtab = false;
    for (std::uint64_t p = off; size - (p - off) >= entsize; p += entsize) {
      const std::uint64_t tag = b_.get(p, addr());
      const std::uint64_t val = b_.get(p + addr(), addr());
      if (tag == kDtNull) break;
      if (tag == kDtNeeded) needed.push_back(val);
      if (tag == kDtSoname) soname.push_back(val);
      if (tag == kDtStrtab) {
        strtab_addr = val;
        have_strtab = true;
      }
      if (tag == kDtStrsz) strsz = val;
      if (tag == kDtVerneed) verneed_addr_ = val;
      if (tag == kDtVerneednum) verneed_num_ = val;
    }
    if (!strtab && (!needed.empty() || !soname.empty())) {
      if (!have_strtab) return fail(label + ": DT_NEEDED / DT_SONAME without DT_STRTAB");
      const auto o = file_offset(strtab_addr);
      if (!o) return fail(label + ": DT_STRTAB address " + util::hex(strtab_addr) + " is in no PT_LOAD segment");
      if (!b_.fits(*o, strsz)) return past_end("DT_STRTAB / DT_STRSZ", *o, strsz);
      strtab = StrTab{*o, strsz, "DT_STRTAB"};
    }
    dynstr_ = strtab;
    for (std::size_t i = 0; i < needed.size(); ++i) {
      auto s = string_at(*strtab, needed[i], label + ": DT_NEEDED " + std::to_string(i));
      if (!s) return s.error();
      info_.needed.push_back(std::move(*s));
    }
    if (!soname.empty()) {
      auto s = string_at(*strtab, soname.front(), label + ": DT_SONAME");
      if (!s) return s.error();
      info_.soname = std::move(*s);
    }
    return {};
  }

  Expected<void> version_needs() {
    std::uint64_t off = 0, size = 0, count = 0;
    std::string label;
    std::optional<StrTab> strtab;
    if (const Shdr* s = find_type(kShtGnuVerneed)) {
      if (auto r = check_range(*s); !r) return r;
      auto t = linked_table(*s);
      if (!t) return t.error();
      off = s->offset;
      size = s->size;
      count = s->info;
      label = s->label;
      strtab = *t;
    } else if (shdrs_.empty() && verneed_addr_ != 0 && dynstr_) {
      const auto o = file_offset(verneed_addr_);
      if (!o) return fail("DT_VERNEED address " + util::hex(verneed_addr_) + " is in no PT_LOAD segment");
      off = *o;
      size = b_.data.size() - std::min<std::uint64_t>(*o, b_.data.size());
      count = verneed_num_;
      label = "DT_VERNEED";
      strtab = dynstr_;
    } else {
      return {};
    }
    if (count > kMaxVersionNeeds) return fail(label + ": " + std::to_string(count) + " version needs (sh_info) is implausible");
    std::set<std::vector<unsigned>> versions;
    std::unordered_set<std::uint64_t> seen;  // record offsets visited: a looping chain is an error
    std::uint64_t vn = 0;                    // offset of the current Verneed inside the table
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::string what = label + ": verneed " + std::to_string(i);
      if (vn > size || size - vn < 16) return past_end(what + " (vn_next chain)", off + vn, 16);
      if (!seen.insert(vn).second) return fail(what + ": vn_next chain loops back to offset " + std::to_string(off + vn));
      const std::uint64_t p = off + vn;
      const unsigned cnt = b_.u16(p + 2);
      const std::uint32_t file = b_.u32(p + 4);
      const std::uint32_t aux = b_.u32(p + 8);
      const std::uint32_t next = b_.u32(p + 12);
      auto file_name = string_at(*strtab, file, what + " vn_file");
      if (!file_name) return file_name.error();
      std::uint64_t a = vn + aux;
      for (unsigned j = 0; j < cnt; ++j) {
        const std::string awhat = what + " ('" + *file_name + "') vernaux " + std::to_string(j);
        if (a > size || size - a < 16) return past_end(awhat + " (vn_aux / vna_next)", off + a, 16);
        if (!seen.insert(a).second) return fail(awhat + ": vna_next chain loops back to offset " + std::to_string(off + a));
        const std::uint32_t name = b_.u32(off + a + 8);
        const std::uint32_t anext = b_.u32(off + a + 12);
        auto vname = string_at(*strtab, name, awhat + " vna_name");
        if (!vname) return vname.error();
        if (auto nums = glibc_numbers(*vname); !nums.empty()) versions.insert(std::move(nums));
        if (anext == 0) break;
        a += anext;
      }
      if (next == 0) break;
      vn += next;
    }
    for (const auto& v : versions) {  // std::set of number vectors: numeric order (2.9 < 2.10)
      std::string text;
      for (std::size_t k = 0; k < v.size(); ++k) text += (k ? "." : "") + std::to_string(v[k]);
      info_.glibc_versions.push_back(std::move(text));
    }
    if (!info_.glibc_versions.empty()) info_.max_glibc = info_.glibc_versions.back();
    return {};
  }

  Expected<void> symbols() {
    const Shdr* s = find_type(kShtDynsym);
    if (s == nullptr) return {};
    if (auto r = check_range(*s); !r) return r;
    const std::uint64_t need = is64_ ? 24 : 16;
    const std::uint64_t entsize = s->entsize == 0 ? need : s->entsize;
    if (entsize < need) return fail(s->label + ": sh_entsize " + std::to_string(entsize) + " is below " + std::to_string(need));
    auto strtab = linked_table(*s);
    if (!strtab) return strtab.error();
    std::set<std::string> undefined;
    for (std::uint64_t i = 0; i < s->size / entsize; ++i) {
      const std::uint64_t p = s->offset + i * entsize;
      const std::uint32_t name = b_.u32(p);
      const unsigned info = static_cast<unsigned>(b_.get(is64_ ? p + 4 : p + 12, 1));
      const unsigned shndx = b_.u16(is64_ ? p + 6 : p + 14);
      if (name == 0) continue;
      auto text = string_at(*strtab, name, s->label + " symbol " + std::to_string(i) + " st_name");
      if (!text) return text.error();
      const unsigned bind = info >> 4;
      const bool global = bind == 1 || bind == 2;  // STB_GLOBAL, STB_WEAK
      const std::string_view n = *text;
      if (shndx != 0 && global && n.substr(0, 7) == "PyInit_") info_.py_init.push_back(std::move(*text));
      else if (shndx == 0 && (n.substr(0, 2) == "Py" || n.substr(0, 3) == "_Py")) undefined.insert(std::move(*text));
    }
    info_.undefined_py.assign(undefined.begin(), undefined.end());
    return {};
  }

  // The sections the caller names (a backend's device code), copied out for the backend to read.
  Expected<void> device_sections(const std::vector<std::string>& wanted) {
    for (std::size_t i = 0; i < shdrs_.size() && i < names_.size(); ++i) {
      if (std::find(wanted.begin(), wanted.end(), names_[i]) == wanted.end()) continue;
      const Shdr& s = shdrs_[i];
      if (s.type == kShtNobits || s.size == 0) continue;
      if (auto r = check_range(s); !r) return r;
      info_.device_code.push_back(DeviceSection{names_[i], std::string(b_.data.substr(s.offset, s.size))});
    }
    return {};
  }

  Bytes b_;
  std::string_view source_;
  bool is64_ = true;
  std::uint64_t phoff_ = 0, shoff_ = 0, phentsize_ = 0, phnum_ = 0, shentsize_ = 0, shnum_ = 0, shstrndx_ = 0;
  std::vector<Phdr> phdrs_;
  std::vector<Shdr> shdrs_;
  std::vector<std::string> names_;
  std::optional<StrTab> dynstr_;
  std::uint64_t verneed_addr_ = 0, verneed_num_ = 0;
  BinaryInfo info_;
};

Expected<BinaryInfo> parse_pe(std::string_view bytes, std::string_view source) {
  const Bytes b{bytes, true};
  const auto fail = [&](const std::string& what) {
    return unexpected(Errc::invalid_input, std::string(source) + ": PE " + what);
  };
  if (!b.fits(0, 64)) return fail("DOS header needs 64 bytes, the file has " + std::to_string(bytes.size()));
  const std::uint32_t lfanew = b.u32(0x3c);
  if (!b.fits(lfanew, 24)) {
    return fail("e_lfanew " + std::to_string(lfanew) + ": the PE signature and COFF header pass the end of the " +
                std::to_string(bytes.size()) + "-byte file");
  }
  if (bytes.substr(lfanew, 4) != std::string_view("PE\0\0", 4)) {
    return fail("no 'PE\\0\\0' signature at e_lfanew " + std::to_string(lfanew));
  }
  const unsigned machine = b.u16(lfanew + 4);
  BinaryInfo info;
  info.format = BinaryInfo::Format::pe;
  info.os = "windows";
  info.little_endian = true;
  switch (machine) {
    case 0x8664: info.machine = "x86_64"; info.bits = 64; break;
    case 0xAA64: info.machine = "aarch64"; info.bits = 64; break;
    case 0x14c: info.machine = "i386"; info.bits = 32; break;
    case 0x1c4: info.machine = "arm"; info.bits = 32; break;
    default: info.machine = "unknown (" + util::hex(machine) + ")"; break;
  }
  // The optional header's magic, when present, says PE32 (0x10b) or PE32+ (0x20b).
  const unsigned opt_size = b.u16(lfanew + 20);
  if (opt_size >= 2 && b.fits(lfanew + 24, 2)) {
    const unsigned magic = b.u16(lfanew + 24);
    if (magic == 0x10b) info.bits = 32;
    if (magic == 0x20b) info.bits = 64;
  }
  return info;
}

}  // namespace

Expected<BinaryInfo> parse_binary(std::string_view bytes, std::string_view source,
                                  const std::vector<std::string>& device_sections) {
  if (bytes.size() >= 4 && bytes.substr(0, 4) == "\x7f" "ELF") return ElfParser(bytes, source).run(device_sections);
  if (bytes.size() >= 2 && bytes.substr(0, 2) == "MZ") return parse_pe(bytes, source);
  return unexpected(Errc::unsupported, std::string(source) + ": neither an ELF nor a PE file (" +
                                           std::to_string(bytes.size()) + " bytes, no \\x7fELF or MZ magic)");
}

std::optional<ExtensionSuffix> extension_suffix(std::string_view filename) {
  const auto slash = filename.find_last_of("/\\");
  std::string_view base = slash == std::string_view::npos ? filename : filename.substr(slash + 1);
  const auto ends_with_ci = [](std::string_view s, std::string_view tail) {
    if (s.size() < tail.size()) return false;
    for (std::size_t i = 0; i < tail.size(); ++i) {
      char c = s[s.size() - tail.size() + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != tail[i]) return false;
    }
    return true;
  };
  std::string_view stem;
  if (ends_with_ci(base, ".so")) {
    stem = base.substr(0, base.size() - 3);
  } else if (ends_with_ci(base, ".pyd")) {
    stem = base.substr(0, base.size() - 4);
  } else {
    return std::nullopt;
  }
  // A module name has no dot: everything after the first one is the tag.
  const auto dot = stem.find('.');
  if (dot == 0 || stem.empty()) return std::nullopt;
  ExtensionSuffix out;
  if (dot == std::string_view::npos) return out;
  const std::string_view tag = stem.substr(dot + 1);
  if (tag.empty() || tag.find('.') != std::string_view::npos) return std::nullopt;
  if (tag == "abi3") {
    out.abi = "abi3";
    return out;
  }
  // "cpython-312-x86_64-linux-gnu", "pypy310-pp73-x86_64-linux-gnu": the ABI is two dash parts;
  // "cp312-win_amd64" (Windows): one.
  std::size_t split = tag.find('-');
  if (split != std::string_view::npos && (tag.substr(0, 8) == "cpython-" || tag.substr(0, 4) == "pypy")) {
    split = tag.find('-', split + 1);
  }
  out.abi = std::string(tag.substr(0, split));
  if (split != std::string_view::npos) out.platform = std::string(tag.substr(split + 1));
  return out;
}

}  // namespace wheelfit::inspect
