// The zip reader against built archives, honest and hostile: every prefix of a small zip, lying
// end records and directories, overlapping entries, entry-count limits, bombs (with the peak
// allocation measured), CRC and method errors, Zip64 with a lying locator.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "support/wheel_builder.hpp"
#include "wheelfit/inspect/zip.hpp"

using namespace wheelfit;
using namespace wheelfit::inspect;
using namespace wheelfit::test;

// --- allocation probe: the largest single operator new while armed --------------------------------

namespace {
std::atomic<bool> g_probe_armed{false};
std::atomic<std::size_t> g_probe_largest{0};

void* probe_alloc(std::size_t size) {
  if (g_probe_armed.load(std::memory_order_relaxed)) {
    std::size_t prev = g_probe_largest.load(std::memory_order_relaxed);
    while (size > prev && !g_probe_largest.compare_exchange_weak(prev, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

struct AllocProbe {
  AllocProbe() {
    g_probe_largest = 0;
    g_probe_armed = true;
  }
  ~AllocProbe() { g_probe_armed = false; }
  [[nodiscard]] std::size_t largest() const { return g_probe_largest.load(); }
};
}  // namespace

// Default visibility (the project builds with -fvisibility=hidden): the C++ runtime's own
// allocations must reach these too, or a sanitizer sees its new paired with our free.
#define WHEELFIT_EXPORT __attribute__((visibility("default")))
WHEELFIT_EXPORT void* operator new(std::size_t size) { return probe_alloc(size); }
WHEELFIT_EXPORT void* operator new[](std::size_t size) { return probe_alloc(size); }
WHEELFIT_EXPORT void operator delete(void* p) noexcept { std::free(p); }
WHEELFIT_EXPORT void operator delete[](void* p) noexcept { std::free(p); }
WHEELFIT_EXPORT void operator delete(void* p, std::size_t) noexcept { std::free(p); }
WHEELFIT_EXPORT void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
WHEELFIT_EXPORT void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return probe_alloc(size);
  } catch (...) {
    return nullptr;
  }
}
WHEELFIT_EXPORT void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return probe_alloc(size);
  } catch (...) {
    return nullptr;
  }
}
WHEELFIT_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
WHEELFIT_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

const std::vector<ZipMember>& small_members() {
  static const std::vector<ZipMember> members = {
      {"pkg/__init__.py", "from ._ext import *\n", false},
      {"pkg/_ext.cpython-312-x86_64-linux-gnu.so", std::string("\x7f" "ELF", 4) + std::string(300, 'x') + "tail", true},
      {"pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n", true},
      {"pkg-1.0.dist-info/RECORD", "", true},
  };
  return members;
}

Expected<ZipDirectory> dir_of(const std::string& bytes, const ZipLimits& limits = {}) {
  auto src = memory_source(bytes, "t.whl");
  return read_zip_directory(*src, limits);
}

/// A lie told about a zip: what it is, the bytes it patches, and a part of the error it causes.
struct Lie {
  const char* what;
  std::function<void(ZipLayout&)> patch;
  const char* message;
};

/// A patch setting the end record's entry counts (on this disk, and in all) to `n`.
std::function<void(ZipLayout&)> entry_count(std::uint16_t n) {
  return [n](ZipLayout& z) {
    put_le16(z.bytes, z.eocd_offset + kEocdEntries, n);
    put_le16(z.bytes, z.eocd_offset + kEocdEntriesDisk, n);
  };
}

/// The directory of small_members(), built with `options` and patched by `lie`, is refused: an
/// error naming the file and what lies. Returns the error for the caller's checks of its code.
Error refused(const Lie& lie, const ZipBuildOptions& options = {}) {
  auto lay = build_zip_layout(small_members(), options);
  lie.patch(lay);
  auto r = dir_of(lay.bytes);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::StartsWith("t.whl: "));
  CHECK_THAT(r.error().message, Catch::Contains(lie.message));
  return r.error();
}

/// Reads the directory and every member; the first error, or the members.
Expected<std::vector<std::string>> read_all(const std::string& bytes, const ZipLimits& limits = {}) {
  auto src = memory_source(bytes, "t.whl");
  auto dir = read_zip_directory(*src, limits);
  if (!dir) return dir.error();
  std::vector<std::string> out;
  for (const auto& e : dir->entries) {
    auto m = read_zip_member(*src, e, limits);
    if (!m) return m.error();
    out.push_back(std::move(*m));
  }
  return out;
}

std::string zeros(std::size_t n) { return std::string(n, '\0'); }

std::string pseudo_random(std::size_t n, std::uint64_t seed) {
  std::string s(n, '\0');
  for (auto& c : s) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    c = static_cast<char>(seed & 0xff);
  }
  return s;
}

}  // namespace

TEST_CASE("zip: built archives read back, plain and Zip64, with and without a comment", "[inspect][zip]") {
  struct Row {
    bool zip64;
    std::string comment;
  };
  const auto row = GENERATE(Row{false, ""}, Row{false, "a comment PK\x05\x06 with a fake signature"}, Row{true, ""},
                            Row{true, "zip64 + comment"});
  CAPTURE(row.zip64, row.comment);
  std::vector<ZipMember> members = small_members();
  members.push_back({"pkg/data.bin", pseudo_random(200000, 7), true});
  std::string low_entropy = pseudo_random(3u << 20, 11);  // above 1 MiB: the ratio limit applies
  for (auto& c : low_entropy) c = static_cast<char>(c & 3);
  members.push_back({"pkg/low-entropy.bin", low_entropy, true});
  const auto lay = build_zip_layout(members, ZipBuildOptions{row.zip64, row.comment});
  auto src = memory_source(lay.bytes, "t.whl");
  auto dir = read_zip_directory(*src);
  REQUIRE(dir);
  REQUIRE(dir->archive_size == lay.bytes.size());
  REQUIRE(dir->entries.size() == members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& e = dir->entries[i];
    CAPTURE(e.name);
    CHECK(e.name == members[i].name);
    CHECK(e.method == (members[i].deflate ? 8 : 0));
    CHECK(e.uncompressed_size == members[i].data.size());
    CHECK(e.local_header_offset == lay.local_offsets[i]);
    CHECK(e.crc32 == crc32_of(members[i].data));
    auto m = read_zip_member(*src, e);
    REQUIRE(m);
    CHECK(*m == members[i].data);
  }
}

TEST_CASE("zip: every prefix of a small zip is a clear error, never a crash", "[inspect][zip]") {
  const std::string zip = build_zip(small_members());
  for (std::size_t len = 0; len < zip.size(); ++len) {
    CAPTURE(len);
    auto r = read_all(zip.substr(0, len));
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK_THAT(r.error().message, Catch::Contains("t.whl"));
  }
  // The whole file reads.
  REQUIRE(read_all(zip));
}

TEST_CASE("zip: every single-byte corruption of a small zip is a value, never a crash", "[inspect][zip]") {
  const std::string zip = build_zip(small_members());
  std::size_t failures = 0;
  for (std::size_t at = 0; at < zip.size(); ++at) {
    for (const unsigned x : {0x01u, 0x80u, 0xffu}) {
      std::string bad = zip;
      bad[at] = static_cast<char>(static_cast<unsigned char>(bad[at]) ^ x);
      auto r = read_all(bad);
      if (!r) {
        ++failures;
        CAPTURE(at, x, r.error().message);
        CHECK((r.error().is(Errc::invalid_input) || r.error().is(Errc::too_large)));
        CHECK_THAT(r.error().message, Catch::Contains("t.whl"));
      }
    }
  }
  CHECK(failures > zip.size());  // most corruptions are caught
}

TEST_CASE("zip: lying end records, directories and offsets are invalid_input naming what lies", "[inspect][zip]") {
  const auto lies = std::vector<Lie>{
      {"directory offset past the end",
       [](ZipLayout& z) { put_le32(z.bytes, z.eocd_offset + kEocdCdOffset, static_cast<std::uint32_t>(z.bytes.size() + 100)); },
       "passes the end record"},
      {"directory size past the end record",
       [](ZipLayout& z) { put_le32(z.bytes, z.eocd_offset + kEocdCdSize, static_cast<std::uint32_t>(z.cd_size + 1)); },
       "passes the end record"},
      {"directory size too small",
       [](ZipLayout& z) { put_le32(z.bytes, z.eocd_offset + kEocdCdSize, static_cast<std::uint32_t>(z.cd_size - 10)); },
       "pass the end of the central directory"},
      {"directory offset inside the data",
       [](ZipLayout& z) { put_le32(z.bytes, z.eocd_offset + kEocdCdOffset, static_cast<std::uint32_t>(z.cd_offset - 8)); },
       "no central directory header"},
      {"more entries than the directory holds", entry_count(5), "entry 4"},
      {"fewer entries than the directory holds", entry_count(3), "directory size or entry count lies"},
      {"absurd entry count", entry_count(60000), "cannot fit"},
      {"multi-disk", [](ZipLayout& z) { put_le16(z.bytes, z.eocd_offset + 4, 1); }, "multi-disk"},
      {"comment length lies", [](ZipLayout& z) { put_le16(z.bytes, z.eocd_offset + kEocdCommentLen, 5); },
       "no end of central directory record"},
      {"local header offset past the end",
       [](ZipLayout& z) { put_le32(z.bytes, z.central_offsets[1] + kCentralLocalOffset, 9000); },
       "entry 1 'pkg/_ext.cpython-312-x86_64-linux-gnu.so': local header offset 9000 is past the end"},
      {"data passes the directory",
       [](ZipLayout& z) { put_le32(z.bytes, z.central_offsets[3] + kCentralCompressed, static_cast<std::uint32_t>(z.cd_size + 50)); },
       "entry 3 'pkg-1.0.dist-info/RECORD': its local header at offset"},
      {"name length passes the directory",
       [](ZipLayout& z) { put_le16(z.bytes, z.central_offsets[3] + kCentralNameLen, 4000); },
       "pass the end of the central directory"},
      {"extra field length lies",
       [](ZipLayout& z) { put_le16(z.bytes, z.central_offsets[3] + kCentralExtraLen, 4000); },
       "pass the end of the central directory"},
      {"entry overlaps the next (same local header)",
       [](ZipLayout& z) {
         put_le32(z.bytes, z.central_offsets[2] + kCentralLocalOffset, static_cast<std::uint32_t>(z.local_offsets[1]));
       },
       "overlaps entry"},
      {"entry data runs into the next header",
       [](ZipLayout& z) {
         const auto size = get_le32(z.bytes, z.central_offsets[0] + kCentralCompressed);
         put_le32(z.bytes, z.central_offsets[0] + kCentralCompressed, size + 5);
         put_le32(z.bytes, z.central_offsets[0] + kCentralUncompressed, size + 5);
       },
       "entry 0 'pkg/__init__.py' (local header at 0"},
      {"central header signature", [](ZipLayout& z) { z.bytes[z.central_offsets[2]] = 'X'; },
       "entry 2: no central directory header"},
  };
  for (const Lie& lie : lies) {
    CAPTURE(lie.what);
    CHECK(refused(lie).is(Errc::invalid_input));
  }
}

TEST_CASE("zip: member-level lies are invalid_input naming the member", "[inspect][zip]") {
  struct Row {
    const char* what;
    std::size_t member;
    std::function<void(ZipLayout&)> patch;
    const char* message;
  };
  const auto rows = std::vector<Row>{
      {"wrong CRC (deflated)", 1, [](ZipLayout& z) { put_le32(z.bytes, z.central_offsets[1] + kCentralCrc, 0x12345678); },
       "CRC-32 mismatch"},
      {"wrong CRC (stored)", 0, [](ZipLayout& z) { put_le32(z.bytes, z.central_offsets[0] + kCentralCrc, 1); },
       "CRC-32 mismatch"},
      {"unsupported method", 1,
       [](ZipLayout& z) {
         put_le16(z.bytes, z.central_offsets[1] + kCentralMethod, 12);
         put_le16(z.bytes, z.local_offsets[1] + kLocalMethod, 12);
       },
       "compression method 12 is not supported"},
      {"local and central methods differ", 1, [](ZipLayout& z) { put_le16(z.bytes, z.local_offsets[1] + kLocalMethod, 0); },
       "the local header says method 0"},
      {"local header names another member", 1, [](ZipLayout& z) { z.bytes[z.local_offsets[1] + 30] = 'Q'; },
       "names a different member"},
      {"local header signature", 2, [](ZipLayout& z) { z.bytes[z.local_offsets[2]] = 'X'; }, "no local header at offset"},
      {"local extra field passes the end", 3,
       [](ZipLayout& z) { put_le16(z.bytes, z.local_offsets[3] + kLocalExtraLen, 65000); }, "passes the end of the"},
      {"corrupt deflate data", 1,
       [](ZipLayout& z) {
         for (int i = 0; i < 8; ++i) z.bytes[z.data_offsets[1] + i] = '\xff';
       },
       "entry 'pkg/_ext.cpython-312-x86_64-linux-gnu.so': "},
      {"deflate data shorter than declared", 2,
       [](ZipLayout& z) {
         const auto size = get_le32(z.bytes, z.central_offsets[2] + kCentralUncompressed);
         put_le32(z.bytes, z.central_offsets[2] + kCentralUncompressed, size + 10);
       },
       "inflated to"},
      {"stored sizes disagree", 0,
       [](ZipLayout& z) { put_le32(z.bytes, z.central_offsets[0] + kCentralUncompressed, 3); }, "stored, but"},
      {"encrypted", 0, [](ZipLayout& z) { put_le16(z.bytes, z.local_offsets[0] + 6, 1); }, "encrypted"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto lay = build_zip_layout(small_members());
    row.patch(lay);
    auto src = memory_source(lay.bytes, "t.whl");
    auto dir = read_zip_directory(*src);
    REQUIRE(dir);
    auto m = read_zip_member(*src, dir->entries.at(row.member));
    REQUIRE_FALSE(m);
    CHECK(m.error().is(Errc::invalid_input));
    CHECK_THAT(m.error().message, Catch::StartsWith("t.whl: entry '" + small_members()[row.member].name + "'"));
    CHECK_THAT(m.error().message, Catch::Contains(row.message));
  }
}

TEST_CASE("zip: entry count and directory size limits", "[inspect][zip]") {
  std::vector<ZipMember> many;
  many.reserve(10000);
  for (int i = 0; i < 10000; ++i) many.push_back({"pkg/m" + std::to_string(i) + ".py", "x", false});
  const std::string zip = build_zip(many);

  auto ok = dir_of(zip);
  REQUIRE(ok);
  CHECK(ok->entries.size() == 10000);
  CHECK(ok->entries[9999].name == "pkg/m9999.py");

  struct Row {
    ZipLimits limits;
    const char* message;
  };
  const auto row = GENERATE(Row{ZipLimits{9999, 1ull << 30, 1000, 64u << 20}, "declares 10000 entries, above the limit of 9999"},
                            Row{ZipLimits{100000, 1ull << 30, 1000, 4096}, "above the limit of 4096"});
  auto r = dir_of(zip, row.limits);
  REQUIRE_FALSE(r);
  CHECK(r.error().is(Errc::too_large));
  CHECK_THAT(r.error().message, Catch::Contains(row.message));
}

TEST_CASE("zip: bombs are refused before inflating, or stopped at their declared size", "[inspect][zip]") {
  constexpr std::size_t kReal = 16u << 20;  // 16 MiB of zeros deflate to ~16 KiB
  auto lay = build_zip_layout({{"pkg/bomb.bin", zeros(kReal), true}});
  const std::uint32_t csize = get_le32(lay.bytes, lay.central_offsets[0] + kCentralCompressed);
  REQUIRE(csize < kReal / 500);

  struct Row {
    const char* what;
    std::uint64_t declared;  ///< 0: as built
    ZipLimits limits;
    Errc code;
    const char* message;
    std::size_t max_alloc;  ///< the largest single allocation allowed while reading
  };
  const std::uint64_t ratio_10000 = std::uint64_t{csize} * 10000;
  const auto rows = std::vector<Row>{
      {"1:10,000 declared ratio", ratio_10000, ZipLimits{}, Errc::too_large, "the ratio is above the limit of 1000",
       64u << 10},
      {"honest ~1:1000 ratio under a lower limit", 0, ZipLimits{100000, 1ull << 30, 100, 64u << 20}, Errc::too_large,
       "the ratio is above the limit of 100", 64u << 10},
      {"member above max_member", 0, ZipLimits{100000, 1u << 20, 100000, 64u << 20}, Errc::too_large,
       "above the limit of 1048576", 64u << 10},
      {"declared small, inflates past it", 4096, ZipLimits{100000, 1ull << 30, 100000, 64u << 20},
       Errc::invalid_input, "inflates past its declared size of 4096 bytes", 256u << 10},
      {"declared 1 MiB + 1, inflates to 16 MiB", (1u << 20) + 1, ZipLimits{100000, 1ull << 30, 100000, 64u << 20},
       Errc::invalid_input, "inflates past its declared size", (1u << 20) + (256u << 10)},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto z = lay;
    if (row.declared) put_le32(z.bytes, z.central_offsets[0] + kCentralUncompressed, static_cast<std::uint32_t>(row.declared));
    auto src = memory_source(z.bytes, "t.whl");
    auto dir = read_zip_directory(*src, row.limits);
    REQUIRE(dir);
    std::size_t largest = 0;
    {
      AllocProbe probe;
      auto m = read_zip_member(*src, dir->entries[0], row.limits);
      largest = probe.largest();
      REQUIRE_FALSE(m);
      CHECK(m.error().code == make_error_code(row.code));
      CHECK_THAT(m.error().message, Catch::StartsWith("t.whl: entry 'pkg/bomb.bin': "));
      CHECK_THAT(m.error().message, Catch::Contains(row.message));
    }
    CHECK(largest <= row.max_alloc);
  }

  // The honest member reads when the ratio limit allows it (zeros deflate ~1:1030), and the
  // probe does see allocations of its size.
  auto src = memory_source(lay.bytes, "t.whl");
  auto dir = read_zip_directory(*src);
  REQUIRE(dir);
  AllocProbe probe;
  auto m = read_zip_member(*src, dir->entries[0], ZipLimits{100000, 1ull << 30, 10000, 64u << 20});
  const std::size_t largest = probe.largest();
  REQUIRE(m);
  CHECK(m->size() == kReal);
  CHECK(largest >= kReal);
}

TEST_CASE("zip: Zip64 with a lying locator or end record", "[inspect][zip]") {
  const auto lies = std::vector<Lie>{
      {"locator points past the end",
       [](ZipLayout& z) { put_le64(z.bytes, *z.zip64_locator_offset + kZip64LocatorRecordOffset, z.bytes.size() + 1000); },
       "the Zip64 locator points at offset"},
      {"locator points at 2^64 - 1",
       [](ZipLayout& z) { put_le64(z.bytes, *z.zip64_locator_offset + kZip64LocatorRecordOffset, ~std::uint64_t{0}); },
       "past the locator itself"},
      {"locator points at a local header",
       [](ZipLayout& z) { put_le64(z.bytes, *z.zip64_locator_offset + kZip64LocatorRecordOffset, 0); },
       "where there is no Zip64 end of central directory record"},
      {"Zip64 directory offset lies",
       [](ZipLayout& z) { put_le64(z.bytes, *z.zip64_eocd_offset + kZip64EocdCdOffset, std::uint64_t{1} << 40); },
       "passes the end record"},
      {"Zip64 entry count is absurd",
       [](ZipLayout& z) {
         put_le64(z.bytes, *z.zip64_eocd_offset + kZip64EocdEntries, std::uint64_t{1} << 60);
         put_le64(z.bytes, *z.zip64_eocd_offset + kZip64EocdEntries - 8, std::uint64_t{1} << 60);  // on this disk
       },
       "declares 1152921504606846976 entries, above the limit"},
      {"Zip64 directory size lies",
       [](ZipLayout& z) { put_le64(z.bytes, *z.zip64_eocd_offset + kZip64EocdCdSize, ~std::uint64_t{0} - 2); },
       "central directory is"},
      {"Zip64 extra field missing",
       [](ZipLayout& z) { put_le16(z.bytes, z.central_offsets[1] + 46 + get_le16(z.bytes, z.central_offsets[1] + kCentralNameLen), 0x7777); },
       "without a Zip64 extra field"},
      {"Zip64 extra field too short",
       [](ZipLayout& z) {
         const auto at = z.central_offsets[1] + 46 + get_le16(z.bytes, z.central_offsets[1] + kCentralNameLen);
         put_le16(z.bytes, at + 2, 12);  // id 1, 12 bytes: usize only, then a 12-byte unknown field
         put_le16(z.bytes, at + 16, 0x7777);
         put_le16(z.bytes, at + 18, 8);
       },
       "the Zip64 extra field is too short for the compressed size"},
  };
  for (const Lie& lie : lies) {
    CAPTURE(lie.what);
    const Error e = refused(lie, ZipBuildOptions{true, ""});
    CHECK((e.is(Errc::invalid_input) || e.is(Errc::too_large)));
  }
}

TEST_CASE("zip: a file that is not a zip, and an empty archive", "[inspect][zip]") {
  auto r = dir_of(std::string(100000, 'a'));
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("no end of central directory record in the last 65557 bytes"));

  auto empty = dir_of(build_zip({}));
  REQUIRE(empty);
  CHECK(empty->entries.empty());
}
