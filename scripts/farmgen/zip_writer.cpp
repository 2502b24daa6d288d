#include "zip_writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace wheelfit::farmgen {
namespace {

void append16(std::string& s, std::uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}
void append32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void append64(std::string& s, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t to32(std::uint64_t v, bool zip64) {
  if (zip64) return 0xFFFFFFFFu;
  if (v >= 0xFFFFFFFFu) throw std::runtime_error("ZipWriter: a value above 4 GiB needs ZipBuildOptions::zip64");
  return static_cast<std::uint32_t>(v);
}

std::uint16_t len16(std::size_t v) {
  if (v > 0xFFFF) throw std::runtime_error("ZipWriter: a name or comment above 65535 bytes");
  return static_cast<std::uint16_t>(v);
}

constexpr std::uint16_t kVersion = 45;  // 4.5: Zip64
constexpr std::uint16_t kDosTime = 0, kDosDate = (2020 - 1980) << 9 | 1 << 5 | 1;

}  // namespace

namespace {
// deflate with zlib's window bits: -MAX_WBITS raw, 16 + MAX_WBITS gzip.
std::string deflate_with(std::string_view data, int level, int window_bits) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())) + 16, '\0');
  std::size_t in_pos = 0;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (zs.avail_in == 0 && in_pos < data.size()) {
      const std::size_t c = std::min<std::size_t>(data.size() - in_pos, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
      zs.avail_in = static_cast<uInt>(c);
      in_pos += c;
    }
    if (zs.total_out == out.size()) out.resize(out.size() * 2);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + zs.total_out);
    zs.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - zs.total_out, 1u << 30));
    ret = deflate(&zs, in_pos == data.size() && zs.avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
    if (ret == Z_STREAM_ERROR) {
      deflateEnd(&zs);
      throw std::runtime_error("deflate failed");
    }
  }
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
}  // namespace

std::string deflate_raw(std::string_view data, int level) { return deflate_with(data, level, -MAX_WBITS); }
std::string gzip_compress(std::string_view data, int level) { return deflate_with(data, level, 16 + MAX_WBITS); }

std::uint32_t crc32_of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t p = 0; p < data.size();) {
    const std::size_t c = std::min<std::size_t>(data.size() - p, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + p), static_cast<uInt>(c));
    p += c;
  }
  return static_cast<std::uint32_t>(crc);
}

void put_le16(std::string& bytes, std::uint64_t offset, std::uint16_t value) {
  for (int i = 0; i < 2; ++i) bytes.at(offset + i) = static_cast<char>((value >> (8 * i)) & 0xff);
}
void put_le32(std::string& bytes, std::uint64_t offset, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes.at(offset + i) = static_cast<char>((value >> (8 * i)) & 0xff);
}
void put_le64(std::string& bytes, std::uint64_t offset, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes.at(offset + i) = static_cast<char>((value >> (8 * i)) & 0xff);
}
std::uint16_t get_le16(std::string_view bytes, std::uint64_t offset) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes.at(offset)) |
                                    static_cast<unsigned char>(bytes.at(offset + 1)) << 8);
}
std::string random_bytes(std::size_t size, std::uint64_t seed) {
  std::string out(size, '\0');
  std::uint64_t x = seed;
  for (auto& c : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return out;
}

std::uint32_t get_le32(std::string_view bytes, std::uint64_t offset) {
  return static_cast<std::uint32_t>(get_le16(bytes, offset)) | static_cast<std::uint32_t>(get_le16(bytes, offset + 2)) << 16;
}
std::uint64_t get_le64(std::string_view bytes, std::uint64_t offset) {
  return static_cast<std::uint64_t>(get_le32(bytes, offset)) | static_cast<std::uint64_t>(get_le32(bytes, offset + 4)) << 32;
}

ZipWriter::ZipWriter(std::ostream& out, ZipBuildOptions options) : out_(out), options_(std::move(options)) {
  const auto p = out_.tellp();
  base_ = p < 0 ? 0 : static_cast<std::uint64_t>(p);
}

void ZipWriter::write(std::string_view bytes) {
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out_) throw std::runtime_error("ZipWriter: write failed");
  pos_ += bytes.size();
}

std::uint64_t ZipWriter::here() const { return pos_; }

void ZipWriter::append_entry_fields(std::string& out, const Pending& p, std::uint16_t extra_len) const {
  const bool z = options_.zip64;
  append16(out, p.method);
  append16(out, kDosTime);
  append16(out, kDosDate);
  append32(out, p.crc);
  append32(out, to32(p.csize, z));
  append32(out, to32(p.usize, z));
  append16(out, len16(p.name.size()));
  append16(out, extra_len);
}

void ZipWriter::append_zip64_extra(std::string& out, const Pending& p, bool with_offset) {
  append16(out, 0x0001);
  append16(out, with_offset ? 24 : 16);
  append64(out, p.usize);
  append64(out, p.csize);
  if (with_offset) append64(out, p.offset);
}

std::string ZipWriter::local_header(const Pending& p) const {
  const bool z = options_.zip64;
  std::string h;
  append32(h, 0x04034b50);
  append16(h, kVersion);
  append16(h, 0);  // flags
  append_entry_fields(h, p, z ? 20 : 0);
  h += p.name;
  if (z) append_zip64_extra(h, p, false);
  return h;
}

void ZipWriter::add(const ZipMember& member) {
  Pending p;
  p.name = member.name;
  p.method = member.deflate ? 8 : 0;
  p.crc = crc32_of(member.data);
  p.usize = member.data.size();
  const std::string compressed = member.deflate ? deflate_raw(member.data) : std::string();
  const std::string_view data = member.deflate ? std::string_view(compressed) : std::string_view(member.data);
  p.csize = data.size();
  p.offset = here();
  const std::string h = local_header(p);
  layout_.local_offsets.push_back(p.offset);
  write(h);
  layout_.data_offsets.push_back(here());
  write(data);
  members_.push_back(std::move(p));
}

void ZipWriter::add_stored(const std::string& name, std::uint64_t size,
                           const std::function<void(char*, std::size_t)>& fill) {
  Pending p;
  p.name = name;
  p.method = 0;
  p.usize = p.csize = size;
  p.offset = here();
  const std::string h = local_header(p);  // CRC patched below
  layout_.local_offsets.push_back(p.offset);
  write(h);
  layout_.data_offsets.push_back(here());
  std::string buf(std::size_t{4} << 20, '\0');
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::uint64_t left = size; left > 0;) {
    const std::size_t c = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
    fill(buf.data(), c);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(c));
    write(std::string_view(buf.data(), c));
    left -= c;
  }
  p.crc = static_cast<std::uint32_t>(crc);
  std::string crc_bytes;
  append32(crc_bytes, p.crc);
  const auto end = out_.tellp();
  out_.seekp(static_cast<std::streamoff>(base_ + p.offset + 14));
  out_.write(crc_bytes.data(), 4);
  out_.seekp(end);
  if (!out_) throw std::runtime_error("ZipWriter: the output is not seekable");
  members_.push_back(std::move(p));
}

ZipLayout ZipWriter::finish() {
  const bool z = options_.zip64;
  layout_.cd_offset = here();
  for (const Pending& p : members_) {
    std::string c;
    append32(c, 0x02014b50);
    append16(c, kVersion);  // made by
    append16(c, kVersion);  // needed
    append16(c, 0);  // flags
    append_entry_fields(c, p, z ? 28 : 0);
    append16(c, 0);  // comment
    append16(c, 0);  // disk
    append16(c, 0);  // internal attributes
    append32(c, 0644u << 16);
    append32(c, to32(p.offset, z));
    c += p.name;
    if (z) append_zip64_extra(c, p, true);
    layout_.central_offsets.push_back(here());
    write(c);
  }
  layout_.cd_size = here() - layout_.cd_offset;
  const std::uint64_t count = members_.size();
  if (z) {
    layout_.zip64_eocd_offset = here();
    std::string r;
    append32(r, 0x06064b50);
    append64(r, 44);
    append16(r, kVersion);
    append16(r, kVersion);
    append32(r, 0);
    append32(r, 0);
    append64(r, count);
    append64(r, count);
    append64(r, layout_.cd_size);
    append64(r, layout_.cd_offset);
    write(r);
    layout_.zip64_locator_offset = here();
    std::string l;
    append32(l, 0x07064b50);
    append32(l, 0);
    append64(l, *layout_.zip64_eocd_offset);
    append32(l, 1);
    write(l);
  } else if (count >= 0xFFFF) {
    throw std::runtime_error("ZipWriter: 65535 members or more need ZipBuildOptions::zip64");
  }
  layout_.eocd_offset = here();
  std::string e;
  append32(e, 0x06054b50);
  append16(e, 0);
  append16(e, 0);
  append16(e, z ? 0xFFFF : static_cast<std::uint16_t>(count));
  append16(e, z ? 0xFFFF : static_cast<std::uint16_t>(count));
  append32(e, to32(layout_.cd_size, z));
  append32(e, to32(layout_.cd_offset, z));
  append16(e, len16(options_.comment.size()));
  e += options_.comment;
  write(e);
  out_.flush();
  return layout_;
}

ZipLayout build_zip_layout(const std::vector<ZipMember>& members, const ZipBuildOptions& options) {
  std::ostringstream out;
  ZipWriter w(out, options);
  for (const auto& m : members) w.add(m);
  ZipLayout layout = w.finish();
  layout.bytes = std::move(out).str();
  return layout;
}

std::string build_zip(const std::vector<ZipMember>& members) { return build_zip_layout(members).bytes; }

}  // namespace wheelfit::farmgen
