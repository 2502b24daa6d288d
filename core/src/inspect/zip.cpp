// The zip reader: end records (plain and Zip64), the central directory with bounds and overlap
// checks, and members inflated by zlib with output bounded by the declared size.
#include "wheelfit/inspect/zip.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>

namespace wheelfit::inspect {
namespace {

// A zip record's signature and the size of its fixed part (APPNOTE 4.3).
struct RecordKind {
  std::uint32_t sig;
  std::uint64_t size;
};
constexpr RecordKind kEocd{0x06054b50, 22};          ///< end of central directory
constexpr RecordKind kZip64Locator{0x07064b50, 20};  ///< zip64 end of central directory locator
constexpr RecordKind kZip64Eocd{0x06064b50, 56};     ///< zip64 end of central directory
constexpr RecordKind kCentral{0x02014b50, 46};       ///< central directory header
constexpr RecordKind kLocal{0x04034b50, 30};         ///< local file header
constexpr std::uint64_t kMaxComment = 65535;
constexpr std::uint64_t kFirstTail = 65536;
constexpr std::uint64_t kRatioFloor = 1u << 20;  ///< max_ratio applies to members above 1 MiB

std::uint16_t le16(std::string_view b, std::size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data()) + at;
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
std::uint32_t le32(std::string_view b, std::size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data()) + at;
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
std::uint64_t le64(std::string_view b, std::size_t at) {
  return static_cast<std::uint64_t>(le32(b, at)) | (static_cast<std::uint64_t>(le32(b, at + 4)) << 32);
}

/// A printable form of an entry name for messages (control bytes escaped, long names cut).
std::string printable(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 200)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\'' || c == '\\') {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  if (name.size() > 200) out += "...";
  return out;
}

/// a + b > limit, without overflow.
bool passes(std::uint64_t a, std::uint64_t b, std::uint64_t limit) { return a > limit || b > limit - a; }

Unexpected bad(const ByteSource& s, const std::string& what) {
  return unexpected(Errc::invalid_input, s.name() + ": " + what);
}
Unexpected big(const ByteSource& s, const std::string& what) { return unexpected(Errc::too_large, s.name() + ": " + what); }

struct EndRecord {
  std::uint64_t entries = 0, cd_size = 0, cd_offset = 0;
  std::uint64_t dir_end = 0;  ///< where the directory must end: the (Zip64) end record
  bool zip64 = false;
};

/// Reads the Zip64 extra field (id 0x0001) of a central entry: the 64-bit values of the fields
/// whose 32-bit slots hold 0xFFFFFFFF, in the order usize, csize, offset. nullopt when fine.
std::optional<std::string> read_zip64_extra(std::string_view extra, ZipEntry& e, bool usize64, bool csize64,
                                            bool offset64) {
  std::size_t pos = 0;
  while (extra.size() - pos >= 4) {
    const std::uint16_t id = le16(extra, pos);
    const std::uint16_t len = le16(extra, pos + 2);
    pos += 4;
    if (len > extra.size() - pos) {
      return "extra field id " + std::to_string(id) + " declares " + std::to_string(len) + " bytes, only " + std::to_string(extra.size() - pos) + " remain";
    }
    if (id == 0x0001) {
      std::size_t at = pos;
      const std::size_t end = pos + len;
      auto take = [&](std::uint64_t& out, const char* what) -> std::optional<std::string> {
        if (end - at < 8) return std::string("the Zip64 extra field is too short for the ") + what;
        out = le64(extra, at);
        at += 8;
        return std::nullopt;
      };
      if (usize64) {
        if (auto err = take(e.uncompressed_size, "uncompressed size")) return err;
      }
      if (csize64) {
        if (auto err = take(e.compressed_size, "compressed size")) return err;
      }
      if (offset64) {
        if (auto err = take(e.local_header_offset, "local header offset")) return err;
      }
      return std::nullopt;
    }
    pos += len;
  }
  if (usize64 || csize64 || offset64) return "0xFFFFFFFF sizes or offset without a Zip64 extra field";
  return std::nullopt;
}

// The archive's tail read into `tail` (from `tail_offset`), and the offset in it of the last end
// record signature whose comment runs exactly to the end of the file. The last 64 KiB first (what
// a remote source fetched and cached when it opened); the full 64 KiB + 21 bytes a maximal
// comment needs only when that finds nothing.
Expected<std::size_t> find_end_record(ByteSource& source, std::string& tail, std::uint64_t& tail_offset) {
  const std::uint64_t size = source.size();
  std::uint64_t tail_len = 0;
  for (const std::uint64_t want : {std::min(size, kFirstTail), std::min(size, kMaxComment + kEocd.size)}) {
    if (want == tail_len) break;
    tail_len = want;
    tail_offset = size - tail_len;
    auto read = source.read(tail_offset, tail_len);
    if (!read) return read.error();
    tail = std::move(*read);
    if (tail.size() != tail_len) return bad(source, "short read of the archive's tail");
    for (std::size_t i = tail.size() - kEocd.size + 1; i-- > 0;) {
      if (le32(tail, i) == kEocd.sig && le16(tail, i + 20) == tail.size() - i - kEocd.size) return i;
    }
  }
  return bad(source, "no end of central directory record in the last " + std::to_string(tail_len) +
                         " bytes (truncated, or not a zip)");
}

// `len` bytes at `pos`: from the tail (read from `tail_offset`) when they lie in it, else read
// from the source.
Expected<std::string> read_at(ByteSource& source, const std::string& tail, std::uint64_t tail_offset, std::uint64_t pos,
                              std::uint64_t len) {
  if (pos >= tail_offset) return tail.substr(static_cast<std::size_t>(pos - tail_offset), static_cast<std::size_t>(len));
  return source.read(pos, len);
}

// The Zip64 end record, when a Zip64 locator sits right before the end record at `eocd_pos`:
// its entries, directory size and offset replace `rec`'s. `size`: the archive's, as first read.
Expected<void> read_zip64_end(ByteSource& source, const std::string& tail, std::uint64_t tail_offset, std::uint64_t eocd_pos,
                              std::uint64_t size, EndRecord& rec) {
  if (eocd_pos < kZip64Locator.size) return {};
  const std::uint64_t loc_pos = eocd_pos - kZip64Locator.size;
  auto loc_read = read_at(source, tail, tail_offset, loc_pos, kZip64Locator.size);
  if (!loc_read) return loc_read.error();
  const std::string loc = std::move(*loc_read);
  if (le32(loc, 0) != kZip64Locator.sig) return {};
  const std::uint32_t loc_disk = le32(loc, 4);
  const std::uint64_t rec_pos = le64(loc, 8);
  const std::uint32_t disks = le32(loc, 16);
  if (loc_disk != 0 || disks > 1) return bad(source, "multi-disk archives are not supported (Zip64 locator)");
  if (passes(rec_pos, kZip64Eocd.size, loc_pos)) {
    return bad(source, "the Zip64 locator points at offset " + std::to_string(rec_pos) + ", past the locator itself at " +
                           std::to_string(loc_pos) + " of the " + std::to_string(size) + "-byte archive");
  }
  auto r64_read = read_at(source, tail, tail_offset, rec_pos, kZip64Eocd.size);
  if (!r64_read) return r64_read.error();
  const std::string r64 = std::move(*r64_read);
  if (le32(r64, 0) != kZip64Eocd.sig) {
    return bad(source, "the Zip64 locator points at offset " + std::to_string(rec_pos) +
                           ", where there is no Zip64 end of central directory record");
  }
  const std::uint64_t rec_size = le64(r64, 4);
  if (rec_size < kZip64Eocd.size - 12 || passes(rec_pos + 12, rec_size, loc_pos)) {
    return bad(source, "the Zip64 end record at offset " + std::to_string(rec_pos) + " declares " + std::to_string(rec_size) +
                           " bytes, which does not fit before the locator at " + std::to_string(loc_pos));
  }
  if (le32(r64, 16) != 0 || le32(r64, 20) != 0 || le64(r64, 24) != le64(r64, 32)) {
    return bad(source, "multi-disk archives are not supported (Zip64 end record)");
  }
  rec.entries = le64(r64, 32);
  rec.cd_size = le64(r64, 40);
  rec.cd_offset = le64(r64, 48);
  rec.dir_end = rec_pos;
  rec.zip64 = true;
  return {};
}

// The directory `rec` declares within the limits and before the end record (of a `size`-byte archive).
Expected<void> check_directory_bounds(const ByteSource& source, const EndRecord& rec, const ZipLimits& limits,
                                      std::uint64_t size) {
  if (rec.entries > limits.max_entries) {
    return big(source, "the archive declares " + std::to_string(rec.entries) + " entries, above the limit of " +
                           std::to_string(limits.max_entries));
  }
  if (rec.cd_size > limits.max_directory) {
    return big(source, "the central directory is " + std::to_string(rec.cd_size) + " bytes, above the limit of " +
                           std::to_string(limits.max_directory));
  }
  if (passes(rec.cd_offset, rec.cd_size, rec.dir_end)) {
    return bad(source, "the central directory (offset " + std::to_string(rec.cd_offset) + ", " + std::to_string(rec.cd_size) +
                           " bytes) passes the end record at offset " + std::to_string(rec.dir_end) + " of the " +
                           std::to_string(size) + "-byte archive");
  }
  if (rec.entries > rec.cd_size / kCentral.size) {
    return bad(source, std::to_string(rec.entries) + " entries cannot fit in a " + std::to_string(rec.cd_size) + "-byte central directory");
  }
  return {};
}

Expected<EndRecord> read_end_record(ByteSource& source, const ZipLimits& limits, std::string& tail,
                                    std::uint64_t& tail_offset) {
  const std::uint64_t size = source.size();
  if (size < kEocd.size) {
    return bad(source, "a " + std::to_string(size) + "-byte file is too small to be a zip (no end of central directory record)");
  }
  auto at = find_end_record(source, tail, tail_offset);
  if (!at) return at.error();
  const std::uint64_t eocd_pos = tail_offset + *at;
  const std::string_view eocd = std::string_view(tail).substr(*at, kEocd.size);
  EndRecord rec;
  rec.entries = le16(eocd, 10);
  rec.cd_size = le32(eocd, 12);
  rec.cd_offset = le32(eocd, 16);
  rec.dir_end = eocd_pos;
  // disk, the directory's disk, and the entries on this disk (a one-disk archive's: all)
  const bool multi_disk = le16(eocd, 4) != 0 || le16(eocd, 6) != 0 || le16(eocd, 8) != rec.entries;
  if (auto zip64 = read_zip64_end(source, tail, tail_offset, eocd_pos, size, rec); !zip64) return zip64.error();
  if (!rec.zip64 && multi_disk) return bad(source, "multi-disk archives are not supported");
  if (auto bounds = check_directory_bounds(source, rec, limits, size); !bounds) return bounds.error();
  return rec;
}

// Entry `i` of the central directory `v`, its header at `pos` (moved past it), checked against
// the directory (`end`) and the `size`-byte archive.
Expected<ZipEntry> read_central_entry(const ByteSource& source, std::string_view v, std::size_t& pos, std::uint64_t i,
                                      const EndRecord& end, std::uint64_t size) {
  const std::string at = "entry " + std::to_string(i);
  if (v.size() - pos < kCentral.size) {
    return bad(source, at + ": the central directory (" + std::to_string(v.size()) + " bytes) ends inside its header at byte " +
                           std::to_string(pos) + " (directory size or entry count lies)");
  }
  if (le32(v, pos) != kCentral.sig) {
    return bad(source, at + ": no central directory header at directory byte " + std::to_string(pos) + " (offset " +
                           std::to_string(end.cd_offset + pos) + ")");
  }
  ZipEntry e;
  e.method = le16(v, pos + 10);
  e.crc32 = le32(v, pos + 16);
  e.compressed_size = le32(v, pos + 20);
  e.uncompressed_size = le32(v, pos + 24);
  const std::size_t name_len = le16(v, pos + 28), extra_len = le16(v, pos + 30), comment_len = le16(v, pos + 32);
  const std::uint16_t disk_start = le16(v, pos + 34);
  e.local_header_offset = le32(v, pos + 42);
  if (v.size() - pos - kCentral.size < name_len + extra_len + comment_len) {
    return bad(source, at + ": its name, extra field and comment (" + std::to_string(name_len + extra_len + comment_len) +
                           " bytes) pass the end of the central directory");
  }
  e.name.assign(v.substr(pos + kCentral.size, name_len));
  const std::string named = at + " '" + printable(e.name) + "'";
  if (e.name.empty()) return bad(source, at + ": an empty name");
  if (e.name.find('\0') != std::string::npos) return bad(source, named + ": a NUL byte in the name");
  const bool usize64 = e.uncompressed_size == 0xFFFFFFFFu, csize64 = e.compressed_size == 0xFFFFFFFFu,
             offset64 = e.local_header_offset == 0xFFFFFFFFu;
  if (auto err = read_zip64_extra(v.substr(pos + kCentral.size + name_len, extra_len), e, usize64, csize64, offset64)) {
    return bad(source, named + ": " + *err);
  }
  if (disk_start != 0 && disk_start != 0xFFFF) return bad(source, named + ": starts on disk " + std::to_string(disk_start));
  if (e.local_header_offset >= size) {
    return bad(source, named + ": local header offset " + std::to_string(e.local_header_offset) + " is past the end of the " +
                           std::to_string(size) + "-byte archive");
  }
  const std::uint64_t min_len = kLocal.size + e.name.size();
  if (passes(e.local_header_offset, min_len, end.cd_offset) ||
      passes(e.local_header_offset + min_len, e.compressed_size, end.cd_offset)) {
    return bad(source, named + ": its local header at offset " + std::to_string(e.local_header_offset) + " and " +
                           std::to_string(e.compressed_size) + " bytes of data pass the central directory at offset " +
                           std::to_string(end.cd_offset) + " of the " + std::to_string(size) + "-byte archive");
  }
  pos += kCentral.size + name_len + extra_len + comment_len;
  return e;
}

// Overlaps: in local-header order, each header + data must end before the next header.
Expected<void> check_overlaps(const ByteSource& source, const std::vector<ZipEntry>& entries) {
  std::vector<std::size_t> order(entries.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return entries[a].local_header_offset < entries[b].local_header_offset;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const ZipEntry& a = entries[order[k - 1]];
    const ZipEntry& b = entries[order[k]];
    const std::uint64_t a_end = a.local_header_offset + kLocal.size + a.name.size() + a.compressed_size;
    if (a_end > b.local_header_offset) {
      return bad(source, "entry " + std::to_string(order[k - 1]) + " '" + printable(a.name) + "' (local header at " +
                             std::to_string(a.local_header_offset) + ", data ending at or after " + std::to_string(a_end) + ") overlaps entry " +
                             std::to_string(order[k]) + " '" + printable(b.name) + "' at offset " + std::to_string(b.local_header_offset));
    }
  }
  return {};
}

}  // namespace

Expected<ZipDirectory> read_zip_directory(ByteSource& source, const ZipLimits& limits) {
  std::string tail;
  std::uint64_t tail_offset = 0;
  auto end = read_end_record(source, limits, tail, tail_offset);
  if (!end) return end.error();
  const std::uint64_t size = source.size();

  std::string cd;
  if (end->cd_offset >= tail_offset) {
    cd = tail.substr(static_cast<std::size_t>(end->cd_offset - tail_offset), static_cast<std::size_t>(end->cd_size));
  } else {
    auto r = source.read(end->cd_offset, end->cd_size);
    if (!r) return r.error();
    cd = std::move(*r);
  }
  tail.clear();
  tail.shrink_to_fit();
  if (cd.size() != end->cd_size) return bad(source, "short read of the central directory");

  ZipDirectory dir;
  dir.archive_size = size;
  dir.entries.reserve(static_cast<std::size_t>(end->entries));
  std::size_t pos = 0;
  const std::string_view v(cd);
  for (std::uint64_t i = 0; i < end->entries; ++i) {
    auto e = read_central_entry(source, v, pos, i, *end, size);
    if (!e) return e.error();
    dir.entries.push_back(std::move(*e));
  }
  if (pos != v.size()) {
    return bad(source, "the central directory declares " + std::to_string(v.size()) + " bytes but its " + std::to_string(end->entries) +
                           " entries end at byte " + std::to_string(pos) + " (directory size or entry count lies)");
  }
  if (auto overlaps = check_overlaps(source, dir.entries); !overlaps) return overlaps.error();
  return dir;
}

namespace {

// What the directory says of a member, before a byte of it is read: a supported method, sizes
// within the limits, and a local header inside the archive.
Expected<void> check_member(const ByteSource& source, const ZipEntry& entry, const ZipLimits& limits, const std::string& named) {
  const std::uint64_t usize = entry.uncompressed_size, csize = entry.compressed_size;
  if (entry.method != 0 && entry.method != 8) {
    return bad(source, named + ": compression method " + std::to_string(entry.method) +
                           " is not supported (only 0, stored, and 8, deflate)");
  }
  if (usize > limits.max_member) {
    return big(source, named + ": " + std::to_string(usize) + " bytes uncompressed, above the limit of " + std::to_string(limits.max_member));
  }
  if (entry.method == 0 && csize != usize) {
    return bad(source, named + ": stored, but its compressed size " + std::to_string(csize) + " differs from its size " + std::to_string(usize));
  }
  if (usize > kRatioFloor) {
    const bool over = csize == 0 || (limits.max_ratio <= std::numeric_limits<std::uint64_t>::max() / csize &&
                                     usize > csize * limits.max_ratio);
    if (over) {
      return big(source, named + ": " + std::to_string(usize) + " bytes from " + std::to_string(csize) +
                             " compressed (a zip bomb?): the ratio is above the limit of " + std::to_string(limits.max_ratio));
    }
  }
  if (passes(entry.local_header_offset, kLocal.size, source.size())) {
    return bad(source, named + ": local header offset " + std::to_string(entry.local_header_offset) + " is past the end of the " +
                           std::to_string(source.size()) + "-byte archive");
  }
  return {};
}

// The member's compressed bytes, after its local header (which must agree with the directory).
Expected<std::string> read_member_data(ByteSource& source, const ZipEntry& entry, const std::string& named) {
  const std::uint64_t size = source.size();
  const std::uint64_t csize = entry.compressed_size;
  // One read for the header and the data when the local extra field is small (the usual case).
  const std::uint64_t guess_extra = 64;
  const std::uint64_t room = size - entry.local_header_offset;
  std::uint64_t want = kLocal.size + entry.name.size() + guess_extra;
  want = passes(want, csize, room) ? room : want + csize;
  auto got = source.read(entry.local_header_offset, want);
  if (!got) return got.error();
  std::string buf = std::move(*got);
  if (buf.size() != want) return bad(source, named + ": short read of the local header");
  if (le32(buf, 0) != kLocal.sig) {
    return bad(source, named + ": no local header at offset " + std::to_string(entry.local_header_offset));
  }
  const std::uint16_t flags = le16(buf, 6);
  const std::uint16_t local_method = le16(buf, 8);
  const std::uint64_t name_len = le16(buf, 26), extra_len = le16(buf, 28);
  if (flags & 1u) return bad(source, named + ": encrypted members are not supported");
  if (local_method != entry.method) {
    return bad(source, named + ": the local header says method " + std::to_string(local_method) + ", the directory " +
                           std::to_string(entry.method));
  }
  if (name_len != entry.name.size() ||
      (kLocal.size + name_len <= buf.size() && buf.compare(kLocal.size, name_len, entry.name) != 0)) {
    return bad(source, named + ": the local header at offset " + std::to_string(entry.local_header_offset) +
                           " names a different member");
  }
  const std::uint64_t data_start = entry.local_header_offset + kLocal.size + name_len + extra_len;
  if (data_start > size || csize > size - data_start) {
    return bad(source, named + ": its data (" + std::to_string(csize) + " bytes at offset " + std::to_string(data_start) +
                           ") passes the end of the " + std::to_string(size) + "-byte archive");
  }
  const std::uint64_t in_buf = kLocal.size + name_len + extra_len;
  if (in_buf + csize <= buf.size()) {
    buf.resize(static_cast<std::size_t>(in_buf + csize));
    buf.erase(0, static_cast<std::size_t>(in_buf));
    return buf;
  }
  buf.clear();
  buf.shrink_to_fit();
  auto r = source.read(data_start, csize);
  if (!r) return r.error();
  if (r->size() != csize) return bad(source, named + ": short read of its data");
  return std::move(*r);
}

// `data` inflated into exactly `usize` bytes: output bounded by the declared size (a byte more
// is a zip bomb's), in chunks below zlib's uInt range.
Expected<std::string> inflate_member(const ByteSource& source, std::string& data, std::uint64_t usize, const std::string& named) {
  std::string out(static_cast<std::size_t>(usize), '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    return unexpected(Errc::io_error, source.name() + ": " + named + ": zlib could not start inflating");
  }
  constexpr std::size_t kChunk = std::size_t{1} << 30;  // below uInt's range
  std::size_t in_pos = 0, out_pos = 0;
  unsigned char scratch = 0;
  std::optional<std::string> failure;
  for (;;) {
    if (zs.avail_in == 0 && in_pos < data.size()) {
      const std::size_t c = std::min(kChunk, data.size() - in_pos);
      zs.next_in = reinterpret_cast<Bytef*>(data.data() + in_pos);
      zs.avail_in = static_cast<uInt>(c);
      in_pos += c;
    }
    const bool into_scratch = out_pos == out.size();
    if (into_scratch) {
      zs.next_out = &scratch;
      zs.avail_out = 1;
    } else {
      const std::size_t c = std::min(kChunk, out.size() - out_pos);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
      zs.avail_out = static_cast<uInt>(c);
    }
    const uInt before_out = zs.avail_out;
    const int ret = inflate(&zs, Z_NO_FLUSH);
    const std::size_t produced = before_out - zs.avail_out;
    if (into_scratch && produced > 0) {
      failure = "inflates past its declared size of " + std::to_string(usize) + " bytes (a zip bomb?)";
      break;
    }
    if (!into_scratch) out_pos += produced;
    if (ret == Z_STREAM_END) break;
    if (ret == Z_OK) continue;  // progress was made
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == data.size()) {
      failure = "the deflate data ends early (after " + std::to_string(out_pos) + " of " + std::to_string(usize) + " bytes)";
    } else if (ret == Z_MEM_ERROR) {
      failure = "zlib ran out of memory";
    } else {
      failure = std::string("corrupt deflate data (") + (zs.msg ? zs.msg : "zlib error " + std::to_string(ret)) + ")";
    }
    break;
  }
  inflateEnd(&zs);
  if (failure) return bad(source, named + ": " + *failure);
  if (out_pos != usize) {
    return bad(source, named + ": inflated to " + std::to_string(out_pos) + " bytes, the directory says " + std::to_string(usize));
  }
  return out;
}

// The member's bytes against the directory's CRC-32.
Expected<void> check_crc(const ByteSource& source, const std::string& out, const ZipEntry& entry, const std::string& named) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t p = 0; p < out.size();) {
    const std::size_t c = std::min<std::size_t>(out.size() - p, std::size_t{1} << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + p), static_cast<uInt>(c));
    p += c;
  }
  if (static_cast<std::uint32_t>(crc) != entry.crc32) {
    char buf_crc[2][16];
    std::snprintf(buf_crc[0], sizeof buf_crc[0], "%08x", static_cast<unsigned>(crc));
    std::snprintf(buf_crc[1], sizeof buf_crc[1], "%08x", static_cast<unsigned>(entry.crc32));
    return bad(source, named + ": CRC-32 mismatch: the data gives " + buf_crc[0] + ", the directory says " + buf_crc[1]);
  }
  return {};
}

}  // namespace

Expected<std::string> read_zip_member(ByteSource& source, const ZipEntry& entry, const ZipLimits& limits) {
  const std::string named = "entry '" + printable(entry.name) + "'";
  if (auto ok = check_member(source, entry, limits, named); !ok) return ok.error();
  auto data = read_member_data(source, entry, named);
  if (!data) return data.error();
  auto out = entry.method == 0 ? std::move(data) : inflate_member(source, *data, entry.uncompressed_size, named);
  if (!out) return out.error();
  if (auto crc = check_crc(source, *out, entry, named); !crc) return crc.error();
  return out;
}

}  // namespace wheelfit::inspect
