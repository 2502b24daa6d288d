// ELF and PE parsing for extension modules (see binary.hpp). One reader serves ELFCLASS32 and
// ELFCLASS64 in either byte order: every record (header, section header, program header, dynamic
// entry, symbol, verneed, vernaux) is read by a function that checks the record's whole range
// once, naming it in the error, and then reads its fields at class-dependent offsets through
// util::Bytes. Nothing is cast from the buffer; no loop runs longer than the bytes allow.

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>

#include "image_headers.hpp"
#include "wheelfit/inspect/binary.hpp"
#include "wheelfit/util/byte_reader.hpp"

namespace wheelfit::inspect {

namespace {

using util::Bytes;

// ---- ELF constants ----
constexpr unsigned kShtDynamic = 6, kShtDynsym = 11;
constexpr std::uint32_t kShtGnuVerneed = 0x6ffffffe;
constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2;
constexpr std::uint64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14;
constexpr std::uint64_t kDtVerneed = 0x6ffffffe, kDtVerneednum = 0x6fffffff;
constexpr std::uint64_t kMaxVersionNeeds = 100000;  // far above any real library

using Shdr = detail::ImageSection;
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
    if (auto r = layout(); !r) return r.error();
    if (auto r = program_headers(); !r) return r.error();
    if (auto r = dynamic(); !r) return r.error();
    if (auto r = version_needs(); !r) return r.error();
    if (auto r = symbols(); !r) return r.error();
    if (auto r = device_sections(device_section_names); !r) return r.error();
    return std::move(info_);
  }

 private:
  [[nodiscard]] detail::ImageErrors errors() const { return {source_, b_.data.size(), "ELF"}; }
  Unexpected fail(const std::string& what) const { return unexpected(errors().fail(what)); }
  Unexpected past_end(const std::string& what, std::uint64_t offset, std::uint64_t length) const {
    return unexpected(errors().past_end(what, offset, length));
  }
  [[nodiscard]] unsigned addr() const { return is64_ ? 8 : 4; }

  // The ELF header and the section headers with their names (image_headers.hpp, shared with
  // read_library), read from the buffer.
  Expected<void> layout() {
    auto l = detail::read_elf_layout(detail::memory_reader(b_.data, source_));
    if (!l) return l.error();
    info_ = std::move(l->info);
    is64_ = info_.bits == 64;
    b_.little_endian = info_.little_endian;
    phoff_ = l->phoff;
    phentsize_ = l->phentsize;
    phnum_ = l->phnum;
    shdrs_ = std::move(l->sections);
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

  // A section's bytes must lie in the file (NOBITS sections have none).
  Expected<void> check_range(const Shdr& s) const {
    if (!s.has_bytes) return {};
    if (!b_.fits(s.offset, s.size)) return past_end(s.label + " (sh_offset, sh_size)", s.offset, s.size);
    return {};
  }

  Expected<StrTab> table(const Shdr& s, const std::string& what) const {
    if (auto ok = detail::check_table(s, what, errors()); !ok) return ok.error();
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
    return detail::string_at(b_.data.substr(t.offset, t.size), index, what, t.label, errors());
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
    for (const Shdr& s : shdrs_) {
      if (std::find(wanted.begin(), wanted.end(), s.name) == wanted.end()) continue;
      if (!s.has_bytes || s.size == 0) continue;
      if (auto r = check_range(s); !r) return r;
      info_.device_code.push_back(DeviceSection{s.name, std::string(b_.data.substr(s.offset, s.size))});
    }
    return {};
  }

  Bytes b_;
  std::string_view source_;
  bool is64_ = true;
  std::uint64_t phoff_ = 0, phentsize_ = 0, phnum_ = 0;
  std::vector<Phdr> phdrs_;
  std::vector<Shdr> shdrs_;
  std::optional<StrTab> dynstr_;
  std::uint64_t verneed_addr_ = 0, verneed_num_ = 0;
  BinaryInfo info_;
};

// A PE image: its machine and word size (image_headers.hpp); no section is read.
Expected<BinaryInfo> parse_pe(std::string_view bytes, std::string_view source) {
  auto l = detail::read_pe_layout(detail::memory_reader(bytes, source), false);
  if (!l) return l.error();
  return std::move(l->info);
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
