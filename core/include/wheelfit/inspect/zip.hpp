#pragma once
// A wheel is a zip: its central directory, read with bounds checks, and its members, inflated
// with zlib. Hostile archives are clear errors, never crashes: a truncated archive, an end
// record or directory pointing past the end, entries overlapping each other or the directory,
// more than `max_entries`, a member above `max_member` or with a ratio above `max_ratio`
// (a zip bomb), an unsupported method, a CRC mismatch. Zip64 is read (wheels above 4 GiB).

#include <cstdint>
#include <string>
#include <vector>

#include "wheelfit/inspect/source.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::inspect {

struct ZipLimits {
  std::uint64_t max_entries = 100000;
  std::uint64_t max_member = 1ull << 30;   ///< uncompressed bytes of one member
  std::uint64_t max_ratio = 1000;          ///< uncompressed / compressed, for members above 1 MiB
  std::uint64_t max_directory = 64u << 20; ///< central directory bytes
};

struct ZipEntry {
  std::string name;                 ///< as stored (UTF-8 or CP437 bytes), '/'-separated
  std::uint16_t method = 0;         ///< 0 stored, 8 deflate
  std::uint64_t compressed_size = 0, uncompressed_size = 0;
  std::uint32_t crc32 = 0;
  std::uint64_t local_header_offset = 0;
};

struct ZipDirectory {
  std::vector<ZipEntry> entries;
  std::uint64_t archive_size = 0;
};

/// Reads the end of central directory record(s) and the central directory. Errors are
/// Errc::invalid_input / too_large naming source.name() and what was wrong ("entry 3
/// 'a/b.so': local header offset 9000 is past the end of the 4096-byte archive").
Expected<ZipDirectory> read_zip_directory(ByteSource& source, const ZipLimits& limits = {});

/// One member's bytes (reads its local header, then exactly its data; inflates; checks size and
/// CRC-32). Errors name the source and the member.
Expected<std::string> read_zip_member(ByteSource& source, const ZipEntry& entry, const ZipLimits& limits = {});

}  // namespace wheelfit::inspect
