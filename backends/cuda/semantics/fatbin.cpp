// CUDA fatbinary containers (the bytes of an ELF's .nv_fatbin / __nv_relfatbin section).
//
// The format is undocumented by NVIDIA; this layout is what nvcc 13.0 (V13.0.88) writes, checked
// byte by byte against `nvcc -fatbin` / `nvcc -shared` output for known -gencode lists (the
// `fatbinary --image3=kind=elf,sm=80,...` lines of `nvcc -dryrun` name what each entry must be),
// and it agrees with the public reverse-engineering notes (cuda-fatbin-decompression's kaitai
// description, nvopen-tools' FORMAT_SPECIFICATION.md). All fields are little-endian.
//
//   container header (16 bytes)
//     +0  u32 magic        0xBA55ED50
//     +4  u16 version      1
//     +6  u16 header_size  16 (the first entry starts here)
//     +8  u64 fat_size     bytes of entries + payloads after the header
//   entries, back to back until header_size + fat_size:
//     +0  u16 kind         1 = PTX, 2 = ELF (a SASS cubin); other kinds are skipped
//     +2  u16 version      0x0101
//     +4  u32 header_size  64 (ELF < sm_100), 112 (ELF sm_100+), 80 / 96 (PTX)
//     +8  u64 payload_size padded to 8; the payload follows the entry header
//     +16 u32 compressed_size (0 when stored), +20 u32 (0 or 0x40)
//     +24 u16 minor, +26 u16 major   (cubin ELF ABI 1.8; PTX ISA 9.0)
//     +28 u32 arch         80 for sm_80 / compute_80, 120 for sm_120
//     +32 u32 obj name offset, +36 u32 obj name length
//     +40 u64 flags        0x1 64-bit, 0x10 Linux host, 0x8000 compressed payload,
//                          0x100000 arch-specific ("a": sm_90a), 0x200000 family ("f": sm_100f)
//     +48 u64 0, +56 u64 uncompressed size (compressed payloads)
//
// Evidence (nvcc 13.0): `-gencode arch=compute_90a,code=sm_90a` gives an ELF entry with arch 90,
// flags 0x100011; `arch=compute_100f,code=compute_100f` a PTX entry with arch 100, flags
// 0x208011; plain sm_120 flags 0x1000011. A section may hold several containers back to back
// (`nvcc -shared` writes the device-link cubin's container, then the module's), possibly with
// zero padding between them.

// The walk reads through a SectionReader: the container and entry headers only, never a payload
// (a section of a gigabyte costs a few kilobytes of reads, read_device_code_at), or the same walk
// over a section held in memory (read_device_code). Both read the same bytes the same way.

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "wheelfit/backends/cuda_fatbin.hpp"
#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/registry/plugin_support.hpp"
#include "wheelfit/util/byte_reader.hpp"

namespace wheelfit::backends::cuda {

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint64_t kContainerHeader = 16;
constexpr std::uint64_t kMinEntryHeader = 48;  // through the flags word
constexpr std::uint64_t kFlagArchSpecific = 0x100000;
constexpr std::uint64_t kFlagFamilySpecific = 0x200000;
constexpr std::size_t kPaddingChunk = 4096;  // zero padding between containers is read this much at a time

Unexpected fail(std::string_view source, std::uint64_t at, const std::string& what) {
  return unexpected(Errc::invalid_input,
                    std::string(source) + ": fatbinary at offset " + std::to_string(at) + ": " + what);
}

// The walk over one section of `size` bytes.
class Walk {
 public:
  Walk(std::uint64_t size, const SectionReader& read, std::string_view source) : size_(size), read_(read), source_(source) {}

  Expected<std::vector<FatbinEntry>> run() {
    if (size_ == 0) return fail(source_, 0, "empty (no container header)");
    std::uint64_t p = 0;
    while (p < size_) {
      auto next = skip_padding(p);  // zero padding between (and after) containers
      if (!next) return next.error();
      p = *next;
      if (p >= size_) break;
      auto end = container(p);
      if (!end) return end.error();
      p = *end;  // > p: a container is at least its 16-byte header
    }
    return std::move(out_);
  }

 private:
  // `length` bytes at `at` (inside the section: the caller checked); an error names `at`.
  Expected<util::Bytes> bytes(std::uint64_t start, std::uint64_t at, std::size_t length) {
    buffer_.resize(length);
    if (!read_(at, length, reinterpret_cast<unsigned char*>(buffer_.data()))) {
      return fail(source_, start, "the section could not be read at offset " + std::to_string(at) + " (" +
                                      std::to_string(length) + " bytes)");
    }
    return util::Bytes{buffer_, true};
  }

  // The first offset at or after `p` that is not a zero byte (or the section's end).
  Expected<std::uint64_t> skip_padding(std::uint64_t p) {
    while (p < size_) {
      auto head = bytes(p, p, 1);  // one byte first: there is rarely padding
      if (!head) return head.error();
      if (buffer_[0] != '\0') return p;
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size_ - p, kPaddingChunk));
      auto chunk = bytes(p, p, n);
      if (!chunk) return chunk.error();
      const auto nonzero = buffer_.find_first_not_of('\0');
      if (nonzero != std::string::npos) return p + nonzero;
      p += n;
    }
    return p;
  }

  // One container starting at `start`; returns its end (start + header + fat size).
  Expected<std::uint64_t> container(std::uint64_t start) {
    if (size_ - start < kContainerHeader) {
      return fail(source_, start, "container header needs 16 bytes, " + std::to_string(size_ - start) + " left");
    }
    auto h = bytes(start, start, kContainerHeader);
    if (!h) return h.error();
    const std::uint32_t magic = h->u32(0);
    if (magic != kFatbinMagic) return fail(source_, start, "bad magic " + util::hex(magic) + " (want 0xba55ed50)");
    const std::uint16_t header_size = h->u16(6);
    const std::uint64_t fat_size = h->u64(8);
    if (header_size < kContainerHeader) {
      return fail(source_, start, "container header size " + std::to_string(header_size) + " is below 16");
    }
    if (header_size > size_ - start || fat_size > size_ - start - header_size) {
      return fail(source_, start,
                  "container header size " + std::to_string(header_size) + " + fat size " + std::to_string(fat_size) +
                      " passes the end of the " + std::to_string(size_) + "-byte buffer");
    }
    const std::uint64_t end = start + header_size + fat_size;
    std::uint64_t p = start + header_size;
    for (unsigned index = 0; p < end; ++index) {
      auto next = entry(start, end, p, index);
      if (!next) return next.error();
      p = *next;  // > p: an entry is at least its 48-byte header
    }
    return end;
  }

  // The entry at `p` of the container [start, end); returns where the next one starts.
  Expected<std::uint64_t> entry(std::uint64_t start, std::uint64_t end, std::uint64_t p, unsigned index) {
    const std::string name = "entry " + std::to_string(index) + " (offset " + std::to_string(p) + ")";
    if (end - p < kMinEntryHeader) {
      return fail(source_, start, name + ": needs a 48-byte header, " + std::to_string(end - p) + " bytes left in the container");
    }
    auto h = bytes(start, p, kMinEntryHeader);
    if (!h) return h.error();
    const std::uint16_t kind = h->u16(0);
    const std::uint32_t entry_header = h->u32(4);
    const std::uint64_t payload = h->u64(8);
    if (entry_header < kMinEntryHeader || entry_header > end - p) {
      return fail(source_, start, name + ": header size " + std::to_string(entry_header) + " is below 48 or passes the container's end");
    }
    if (payload > end - p - entry_header) {
      return fail(source_, start, name + ": payload size " + std::to_string(payload) + " passes the container's end (" +
                                      std::to_string(end - p - entry_header) + " bytes left)");
    }
    const std::uint32_t arch = h->u32(28);
    const std::uint64_t flags = h->u64(40);
    if (kind == 1 || kind == 2) {
      if (arch == 0 || arch > 10000) {
        return fail(source_, start, name + ": arch " + std::to_string(arch) + " is not a compute capability");
      }
      FatbinEntry e;
      e.kind = kind == 1 ? FatbinEntry::Kind::ptx : FatbinEntry::Kind::sass;
      e.arch = arch;
      if ((flags & kFlagArchSpecific) != 0) {
        e.suffix = "a";
      } else if ((flags & kFlagFamilySpecific) != 0) {
        e.suffix = "f";
      }
      // Each distinct entry once: torch's thousands of containers repeat the same few.
      if (seen_.insert(e.str()).second) out_.push_back(std::move(e));
    }
    return p + entry_header + payload;
  }

  std::uint64_t size_;
  const SectionReader& read_;
  std::string_view source_;
  std::string buffer_;
  std::vector<FatbinEntry> out_;
  std::set<std::string> seen_;  // out_'s entries by name
};

// The read_device_code JSON of a walk's entries.
std::string entries_json(const Expected<std::vector<FatbinEntry>>& entries) {
  if (!entries) return plugin::device_code_error(entries.error().message);
  // The arch list: one target per (cc, suffix), SASS and/or PTX, in order of first appearance.
  std::vector<ArchTarget> targets;
  std::vector<std::string> sass, ptx;
  for (const auto& e : *entries) {
    auto& names = e.kind == FatbinEntry::Kind::sass ? sass : ptx;
    if (std::find(names.begin(), names.end(), e.str()) == names.end()) names.push_back(e.str());
    const model::NumericVersion cc({e.arch / 10, e.arch % 10});
    const char variant = e.suffix.empty() ? '\0' : e.suffix[0];
    auto it = std::find_if(targets.begin(), targets.end(), [&](const ArchTarget& t) { return t.cc == cc && t.variant == variant; });
    if (it == targets.end()) {
      targets.push_back(ArchTarget{cc, false, variant, false});
      it = std::prev(targets.end());
    }
    (e.kind == FatbinEntry::Kind::sass ? it->sass : it->ptx) = true;
  }
  const std::string list = targets.empty() ? std::string() : ArchList(targets).str();
  return plugin::device_code_answer(list, {{"sass", sass}, {"ptx", ptx}});
}

}  // namespace

std::string FatbinEntry::str() const {
  return (kind == Kind::ptx ? "compute_" : "sm_") + std::to_string(arch) + suffix;
}

Expected<std::vector<FatbinEntry>> walk_fatbin(std::uint64_t size, const SectionReader& read, std::string_view source) {
  return Walk(size, read, source).run();
}

Expected<std::vector<FatbinEntry>> parse_fatbin(std::string_view bytes, std::string_view source) {
  const SectionReader from_memory = [bytes](std::uint64_t offset, std::size_t length, unsigned char* out) {
    if (offset > bytes.size() || length > bytes.size() - offset) return false;
    if (length != 0) std::memcpy(out, bytes.data() + offset, length);
    return true;
  };
  return walk_fatbin(bytes.size(), from_memory, source);
}

std::string device_code_json(std::string_view section, std::string_view bytes) {
  return entries_json(parse_fatbin(bytes, section));
}

std::string device_code_at_json(std::string_view section, std::uint64_t size, wheelfit_section_read_fn read, void* ctx) {
  if (read == nullptr) return plugin::device_code_error(std::string(section) + ": no read function given");
  const SectionReader through_core = [read, ctx](std::uint64_t offset, std::size_t length, unsigned char* out) {
    return read(ctx, offset, length, out) == 0;
  };
  return entries_json(walk_fatbin(size, through_core, section));
}

}  // namespace wheelfit::backends::cuda
