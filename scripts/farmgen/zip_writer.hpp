#pragma once
// Building zips (wheels): members stored or deflated with zlib, optional Zip64 records, and the
// layout (where each header lies) so negative tests can patch bytes. wheelfit-farmgen writes its
// --with-files wheels with it; the tests and benchmarks build their lying zips with it.
//
//   auto zip = wheelfit::farmgen::build_zip({{"pkg/_ext.so", elf_bytes}, {"pkg/__init__.py", "", false}});
//   auto lay = wheelfit::farmgen::build_zip_layout(members);   // lay.bytes + offsets
//   wheelfit::farmgen::put_le32(lay.bytes, lay.central_offsets[0] + kCentralLocalOffset, 999999);
//
// ZipWriter streams to a seekable std::ostream (the benchmark writes a 500 MB wheel to disk with
// it without holding it in memory).

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfit::farmgen {

struct ZipMember {
  std::string name;
  std::string data;
  bool deflate = true;
};

struct ZipBuildOptions {
  bool zip64 = false;   ///< Zip64 end record + locator, and Zip64 extra fields in every header
  std::string comment;  ///< the archive comment
};

/// Where things are in a built zip (byte offsets into `bytes`).
struct ZipLayout {
  std::string bytes;
  std::vector<std::uint64_t> local_offsets;    ///< each member's local header
  std::vector<std::uint64_t> data_offsets;     ///< each member's (compressed) data
  std::vector<std::uint64_t> central_offsets;  ///< each member's central directory header
  std::uint64_t cd_offset = 0, cd_size = 0;
  std::uint64_t eocd_offset = 0;               ///< the end of central directory record
  std::optional<std::uint64_t> zip64_eocd_offset, zip64_locator_offset;
};

// Field offsets inside the records, for patching.
namespace zip_offsets {
inline constexpr std::uint64_t kLocalMethod = 8, kLocalCrc = 14, kLocalCompressed = 18, kLocalUncompressed = 22,
                               kLocalNameLen = 26, kLocalExtraLen = 28;
inline constexpr std::uint64_t kCentralMethod = 10, kCentralCrc = 16, kCentralCompressed = 20, kCentralUncompressed = 24,
                               kCentralNameLen = 28, kCentralExtraLen = 30, kCentralLocalOffset = 42;
inline constexpr std::uint64_t kEocdEntriesDisk = 8, kEocdEntries = 10, kEocdCdSize = 12, kEocdCdOffset = 16,
                               kEocdCommentLen = 20;
inline constexpr std::uint64_t kZip64LocatorRecordOffset = 8;  ///< in the locator: the Zip64 end record's offset
inline constexpr std::uint64_t kZip64EocdEntries = 32, kZip64EocdCdSize = 40, kZip64EocdCdOffset = 48;
}  // namespace zip_offsets

/// A complete zip of `members`, in order.
std::string build_zip(const std::vector<ZipMember>& members);
/// The same, with options and the layout.
ZipLayout build_zip_layout(const std::vector<ZipMember>& members, const ZipBuildOptions& options = {});

/// `size` pseudo-random bytes (xorshift64 from `seed`): a member deflate cannot shrink.
std::string random_bytes(std::size_t size, std::uint64_t seed);

/// Raw deflate (no zlib header), as zip stores it.
std::string deflate_raw(std::string_view data, int level = 6);
/// A gzip member (RFC 1952), as an HTTP server sends `Content-Encoding: gzip`.
std::string gzip_compress(std::string_view data, int level = 6);
/// zlib's CRC-32.
std::uint32_t crc32_of(std::string_view data);

/// Little-endian patching and reading (the offset must be inside `bytes`).
void put_le16(std::string& bytes, std::uint64_t offset, std::uint16_t value);
void put_le32(std::string& bytes, std::uint64_t offset, std::uint32_t value);
void put_le64(std::string& bytes, std::uint64_t offset, std::uint64_t value);
std::uint16_t get_le16(std::string_view bytes, std::uint64_t offset);
std::uint32_t get_le32(std::string_view bytes, std::uint64_t offset);
std::uint64_t get_le64(std::string_view bytes, std::uint64_t offset);

/// Streams a zip to a seekable output. Offsets in layout() are relative to the stream position
/// at construction. Throws std::runtime_error when the stream fails.
class ZipWriter {
 public:
  explicit ZipWriter(std::ostream& out, ZipBuildOptions options = {});
  /// One member from memory.
  void add(const ZipMember& member);
  /// One stored member of `size` bytes produced by `fill(buffer, n)` in chunks (never held whole).
  void add_stored(const std::string& name, std::uint64_t size, const std::function<void(char*, std::size_t)>& fill);
  /// Writes the central directory and the end records; the layout (without bytes).
  ZipLayout finish();

 private:
  struct Pending {
    std::string name;
    std::uint16_t method = 0;
    std::uint32_t crc = 0;
    std::uint64_t csize = 0, usize = 0, offset = 0;
  };
  void write(std::string_view bytes);
  std::uint64_t here() const;
  std::string local_header(const Pending& p) const;
  /// The fields a local and a central header share: method, time, date, CRC-32, sizes, name and
  /// extra lengths.
  void append_entry_fields(std::string& out, const Pending& p, std::uint16_t extra_len) const;
  /// The Zip64 extended information: the sizes, and in the central header the local offset.
  static void append_zip64_extra(std::string& out, const Pending& p, bool with_offset);

  std::ostream& out_;
  ZipBuildOptions options_;
  std::uint64_t base_ = 0;
  std::uint64_t pos_ = 0;
  std::vector<Pending> members_;
  ZipLayout layout_;
};

}  // namespace wheelfit::farmgen
