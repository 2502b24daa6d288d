// Clang offload bundles: hand-written bundles (good, truncated, corrupt, back to back) and, when
// clang is installed, the `.hip_fatbin` section of a HIP object it builds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/backends/rocm_offload.hpp"

namespace rocm = wheelfit::backends::rocm;
using Bytes = std::vector<unsigned char>;
using Strings = std::vector<std::string>;

namespace {

constexpr std::string_view kMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::string_view kHost = "host-x86_64-unknown-linux";

void put_u64(Bytes& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

void set_u64(Bytes& out, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.at(at + i) = static_cast<unsigned char>(v >> (8 * i));
}

void pad_to(Bytes& out, std::size_t align) {
  while (out.size() % align != 0) out.push_back(0);
}

struct Entry {
  std::string id;
  Bytes code;
};

// One bundle as clang's BinaryFileHandler writes it: the header, then each code object at the
// next multiple of `align` (counted from the bundle's start), zero-padded.
Bytes write_bundle(const std::vector<Entry>& entries, std::size_t align = 1) {
  std::size_t header = kMagic.size() + 8;
  for (const auto& e : entries) header += 24 + e.id.size();
  Bytes out(kMagic.begin(), kMagic.end());
  put_u64(out, entries.size());
  std::size_t offset = header;
  for (const auto& e : entries) {
    offset = (offset + align - 1) / align * align;
    put_u64(out, offset);
    put_u64(out, e.code.size());
    put_u64(out, e.id.size());
    out.insert(out.end(), e.id.begin(), e.id.end());
    offset += e.code.size();
  }
  for (const auto& e : entries) {
    pad_to(out, align);
    out.insert(out.end(), e.code.begin(), e.code.end());
  }
  return out;
}

Bytes code(std::size_t n, unsigned char fill = 0x7f) { return Bytes(n, fill); }

// The byte offset of entry `i`'s offset field in a bundle written by write_bundle.
std::size_t entry_field(const std::vector<Entry>& entries, std::size_t i) {
  std::size_t at = kMagic.size() + 8;
  for (std::size_t k = 0; k < i; ++k) at += 24 + entries[k].id.size();
  return at;
}

// Scans an exact-size heap copy, so a sanitizer sees any read past the end.
rocm::OffloadScan scan(const Bytes& b, std::size_t size) {
  const auto copy = std::make_unique<unsigned char[]>(size);
  std::copy_n(b.begin(), size, copy.get());
  return rocm::scan_offload_bundles(copy.get(), size);
}
rocm::OffloadScan scan(const Bytes& b) { return scan(b, b.size()); }

const std::vector<Entry> kTwoGpus = {
    {std::string(kHost), {}},
    {"hipv4-amdgcn-amd-amdhsa--gfx1030", code(300)},
    {"hipv4-amdgcn-amd-amdhsa--gfx90a", code(200)},
};

}  // namespace

TEST_CASE("scan_offload_bundles reads the targets and ids of one bundle", "[rocm][offload]") {
  SECTION("unaligned") {
    const auto r = scan(write_bundle(kTwoGpus));
    REQUIRE(r.ok);
    CHECK(r.error.empty());
    CHECK(r.targets == Strings{"gfx1030", "gfx90a"});
    CHECK(r.ids == Strings{std::string(kHost), "hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a"});
  }
  SECTION("code objects aligned to 4096 as HIP writes them") {
    const auto b = write_bundle(kTwoGpus, 4096);
    REQUIRE(b.size() == 2 * 4096 + 200);
    const auto r = scan(b);
    REQUIRE(r.ok);
    CHECK(r.targets == Strings{"gfx1030", "gfx90a"});
  }
  SECTION("zero padding after the bundle is skipped") {
    auto b = write_bundle(kTwoGpus, 4096);
    pad_to(b, 3 * 4096);
    const auto r = scan(b);
    REQUIRE(r.ok);
    CHECK(r.targets == Strings{"gfx1030", "gfx90a"});
  }
}

TEST_CASE("scan_offload_bundles classifies entry ids", "[rocm][offload]") {
  struct Row {
    const char* id;
    const char* target;  // "" = not a HIP amdgcn target
  };
  const Row table[] = {
      {"hipv4-amdgcn-amd-amdhsa--gfx90a", "gfx90a"},
      {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-"},
      {"hipv4-amdgcn-amd-amdhsa--gfx942:xnack+", "gfx942:xnack+"},
      {"hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack-", "gfx9-4-generic:xnack-"},
      {"hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", "gfx10-3-generic"},
      {"hipv4-amdgcn-amd-amdhsa-unknown-gfx1100", "gfx1100"},
      {"hip-amdgcn-amd-amdhsa--gfx908", "gfx908"},
      {"hip-amdgcn-amd-amdhsa-gfx906", "gfx906"},  // clang before 12: no environment
      {"host-x86_64-unknown-linux", ""},
      {"host-x86_64-unknown-linux-gnu", ""},
      {"openmp-amdgcn-amd-amdhsa--gfx90a", ""},
      {"hipv4-spirv64-amd-amdhsa--amdgcnspirv", ""},
      {"hipv4-nvptx64-nvidia-cuda--sm_80", ""},
      {"hipv4", ""},
  };
  for (const auto& row : table) {
    CAPTURE(row.id);
    const auto r = scan(write_bundle({{row.id, code(8)}}));
    REQUIRE(r.ok);
    CHECK(r.ids == Strings{row.id});
    CHECK(r.targets == (*row.target ? Strings{row.target} : Strings{}));
  }
}

TEST_CASE("scan_offload_bundles reads several bundles back to back", "[rocm][offload]") {
  // A linked .hip_fatbin: one bundle per translation unit, each at a 4096 boundary.
  const std::vector<Entry> second = {
      {std::string(kHost), {}},
      {"hipv4-amdgcn-amd-amdhsa--gfx90a", code(100)},
      {"hipv4-amdgcn-amd-amdhsa--gfx942:xnack-", code(50)},
  };
  Bytes section = write_bundle(kTwoGpus, 4096);
  const std::size_t end1 = section.size();
  pad_to(section, 4096);
  const std::size_t start2 = section.size();
  const auto b2 = write_bundle(second, 4096);
  section.insert(section.end(), b2.begin(), b2.end());
  const std::size_t end2 = section.size();
  pad_to(section, 4096);
  const auto b3 = write_bundle({{"hipv4-amdgcn-amd-amdhsa--gfx1100", code(10)}});  // unaligned entries
  section.insert(section.end(), b3.begin(), b3.end());

  SECTION("targets in order of first appearance, ids all kept") {
    const auto r = scan(section);
    REQUIRE(r.ok);
    CHECK(r.targets == Strings{"gfx1030", "gfx90a", "gfx942:xnack-", "gfx1100"});
    CHECK(r.ids.size() == 7);
    CHECK(r.ids[3] == std::string(kHost));
    CHECK(r.ids[6] == "hipv4-amdgcn-amd-amdhsa--gfx1100");
  }
  SECTION("truncated at every byte: fails, unless the cut leaves only whole bundles and padding") {
    for (std::size_t cut = 0; cut < section.size(); ++cut) {
      CAPTURE(cut);
      const auto r = scan(section, cut);
      if (cut >= end1 && cut <= start2) {
        REQUIRE(r.ok);
        CHECK(r.targets == Strings{"gfx1030", "gfx90a"});
      } else if (cut >= end2 && cut <= end2 + (4096 - end2 % 4096) % 4096) {
        REQUIRE(r.ok);
        CHECK(r.targets.size() == 3);
      } else {
        REQUIRE_FALSE(r.ok);
        CHECK_FALSE(r.error.empty());
        CHECK(r.targets.empty());
        CHECK(r.ids.empty());
      }
    }
  }
  SECTION("bytes that are not a bundle after one are named") {
    Bytes b = write_bundle(kTwoGpus);
    const std::size_t end = b.size();
    b.push_back(0);
    b.push_back('x');
    const auto r = scan(b);
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.error, Catch::StartsWith("byte " + std::to_string(end + 1) + ": not an offload bundle"));
  }
}

TEST_CASE("scan_offload_bundles rejects truncated bundles at every byte", "[rocm][offload]") {
  for (std::size_t align : {std::size_t{1}, std::size_t{64}}) {
    const auto b = write_bundle(kTwoGpus, align);
    for (std::size_t cut = 0; cut < b.size(); ++cut) {
      CAPTURE(align, cut);
      const auto r = scan(b, cut);
      REQUIRE_FALSE(r.ok);
      CHECK_THAT(r.error, Catch::StartsWith("byte ") || Catch::StartsWith("the section is empty"));
    }
    CHECK(scan(b).ok);
  }
}

TEST_CASE("scan_offload_bundles rejects what is not an uncompressed bundle", "[rocm][offload]") {
  SECTION("empty") {
    CHECK_THAT(rocm::scan_offload_bundles(nullptr, 0).error, Catch::Contains("the section is empty"));
    CHECK_THAT(rocm::scan_offload_bundles(nullptr, 10).error, Catch::Contains("the section is empty"));
    const unsigned char one = 0;
    CHECK_FALSE(rocm::scan_offload_bundles(&one, 0).ok);
  }
  SECTION("bad magic") {
    for (std::size_t i = 0; i < kMagic.size(); ++i) {
      CAPTURE(i);
      auto b = write_bundle(kTwoGpus);
      b[i] ^= 0x20;
      const auto r = scan(b);
      REQUIRE_FALSE(r.ok);
      CHECK_THAT(r.error, Catch::StartsWith("byte 0: not an offload bundle"));
    }
  }
  SECTION("zero bytes only") {
    const auto r = scan(Bytes(64, 0));
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.error, Catch::StartsWith("byte 0: not an offload bundle"));
  }
  SECTION("a compressed bundle is reported as unsupported") {
    Bytes b = {'C', 'C', 'O', 'B', 3, 0, 1, 0};
    b.resize(64, 0xab);
    auto r = scan(b);
    REQUIRE_FALSE(r.ok);
    CHECK(r.error == "byte 0: a compressed offload bundle (\"CCOB\" version 3) is not supported");
    r = scan(b, 5);
    CHECK(r.error == "byte 0: a compressed offload bundle (\"CCOB\") is not supported");

    Bytes after = write_bundle(kTwoGpus, 4096);
    pad_to(after, 4096);
    const std::size_t at = after.size();
    after.insert(after.end(), b.begin(), b.end());
    r = scan(after);
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.error, Catch::StartsWith("byte " + std::to_string(at) + ": a compressed offload bundle"));
  }
}

TEST_CASE("scan_offload_bundles checks counts, lengths and offsets", "[rocm][offload]") {
  const auto good = write_bundle(kTwoGpus);
  const std::size_t count_at = kMagic.size();
  const std::size_t e1 = entry_field(kTwoGpus, 1);  // gfx1030: offset, size, id length
  const std::size_t e2 = entry_field(kTwoGpus, 2);
  const std::size_t header = e2 + 24 + kTwoGpus[2].id.size();
  constexpr std::uint64_t kMax = ~std::uint64_t{0};

  struct Row {
    const char* what;
    std::size_t at;
    std::uint64_t value;
    std::string says;
  };
  const Row table[] = {
      {"no entries", count_at, 0, "byte 24: the bundle has no entries"},
      {"count over the limit", count_at, 4097, "byte 24: entry count 4097 is over the limit of 4096"},
      {"count at the maximum", count_at, kMax, "is over the limit"},
      {"count past the section", count_at, 40, "byte 24: truncated bundle: 40 entries need 960 header bytes"},
      {"id length zero", e1 + 16, 0, "byte " + std::to_string(e1 + 16) + ": entry 2 has an empty id"},
      {"id length over the limit", e1 + 16, 1025, "entry 2: id length 1025 is over the limit of 1024"},
      {"id length at the maximum", e1 + 16, kMax, "is over the limit of 1024"},
      {"id length past the section", e2 + 16, 1000, "truncated bundle: entry 3's id needs 1000 bytes"},
      {"offset zero", e1, 0, "byte " + std::to_string(e1) + ": entry 2 (hipv4-amdgcn-amd-amdhsa--gfx1030)"},
      {"offset inside the header", e1, header - 1, "is not between the end of the header"},
      {"offset past the section", e1, good.size() + 1, "code object at offset " + std::to_string(good.size() + 1)},
      {"offset at the maximum", e2, kMax, "is not between the end of the header"},
      {"size past the section", e2 + 8, 201, "size 201 is not between"},
      {"size at the maximum", e2 + 8, kMax, "is not between"},
      {"offset near the maximum", e2, kMax - 100, "is not between"},
  };
  SECTION("each bad field is named with its byte offset") {
    for (const auto& row : table) {
      CAPTURE(row.what);
      auto b = good;
      set_u64(b, row.at, row.value);
      const auto r = scan(b);
      REQUIRE_FALSE(r.ok);
      CHECK_THAT(r.error, Catch::Contains(row.says));
      CHECK(r.targets.empty());
      CHECK(r.ids.empty());
    }
  }
  SECTION("an empty code object may sit at the end of the section") {
    auto b = good;
    set_u64(b, e1 + 8, 0);
    set_u64(b, e1, good.size());
    const auto r = scan(b);
    REQUIRE(r.ok);
    CHECK(r.targets == Strings{"gfx1030", "gfx90a"});
  }
}

TEST_CASE("scan_offload_bundles rejects bad entry ids", "[rocm][offload]") {
  struct Row {
    std::string id;
    std::string says;
  };
  const Row table[] = {
      {std::string("hipv4-amdgcn\0amd", 16), "entry 2's id is not printable text"},
      {"hipv4 amdgcn-amd-amdhsa--gfx90a", "entry 2's id is not printable text"},
      {"hipv4-amdgcn-amd-amdhsa--gfx90a\x80", "entry 2's id is not printable text"},
      {"hipv4-amdgcn-amd-amdhsa--sm_80", "entry id \"hipv4-amdgcn-amd-amdhsa--sm_80\": \"sm_80\": not a gfx target"},
      {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack", "needs \"+\" or \"-\""},
      {"hip-amdgcn-amd-amdhsa--gfx906+xnack", "\"gfx906+xnack\" is not a gfx processor"},
      {"hipv4-amdgcn-amd-amdhsa-", "no gfx target given"},
      {"hipv4-amdgcn-amd-amdhsa--", "no gfx target given"},
  };
  for (const auto& row : table) {
    CAPTURE(row.id);
    const auto r = scan(write_bundle({{std::string(kHost), {}}, {row.id, code(4)}}));
    REQUIRE_FALSE(r.ok);
    CHECK_THAT(r.error, Catch::StartsWith("byte " + std::to_string(kMagic.size() + 8 + 24 + kHost.size() + 24) + ": "));
    CHECK_THAT(r.error, Catch::Contains(row.says));
  }
}

TEST_CASE("scan_offload_bundles survives random corruption", "[rocm][offload]") {
  Bytes section = write_bundle(kTwoGpus, 64);
  pad_to(section, 256);
  const auto b2 = write_bundle({{"hipv4-amdgcn-amd-amdhsa--gfx942", code(16)}});
  section.insert(section.end(), b2.begin(), b2.end());

  std::mt19937_64 rng(20240611);
  std::size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    Bytes b = section;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<unsigned char>(rng());
    const auto r = scan(b, b.size() - rng() % 8);
    if (r.ok) {
      ++accepted;
      CHECK(r.error.empty());
    } else {
      CHECK_FALSE(r.error.empty());
    }
  }
  CHECK(accepted > 0);  // flips inside code objects leave the bundles readable
}

namespace {

// A HIP source that builds without HIP headers: clang's host codegen of a kernel's launch stub
// needs only these runtime declarations.
constexpr std::string_view kFixture = R"(#define __global__ __attribute__((global))
typedef struct hipStream* hipStream_t;
struct dim3 { unsigned x, y, z; };
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, hipStream_t);
extern "C" int __hipPushCallConfiguration(dim3, dim3, unsigned long, hipStream_t);
extern "C" int __hipPopCallConfiguration(dim3*, dim3*, unsigned long*, hipStream_t*);
__global__ void wheelfit_fixture_kernel(int* out) { *out = 42; }
)";

// A fresh folder under the system temp folder, removed with everything in it.
struct RocmOffloadTempDir {
  std::filesystem::path path;
  RocmOffloadTempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("wheelfit-offload-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~RocmOffloadTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  RocmOffloadTempDir(const RocmOffloadTempDir&) = delete;
  RocmOffloadTempDir& operator=(const RocmOffloadTempDir&) = delete;
};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The contents of section `name` of an ELF64 little-endian file; nullopt when the file is not
// one, the section is absent, or a header points outside the file.
std::optional<Bytes> elf_section(const Bytes& f, std::string_view name) {
  const auto has = [&f](std::uint64_t at, std::uint64_t n) { return at <= f.size() && n <= f.size() - at; };
  const auto le = [&f](std::uint64_t at, std::size_t width) {
    std::uint64_t v = 0;
    for (std::size_t i = width; i-- > 0;) v = (v << 8) | f[at + i];
    return v;
  };
  // e_ident: "\x7f" "ELF", ELFCLASS64 (2), ELFDATA2LSB (1).
  if (!has(0, 64) || std::memcmp(f.data(), "\x7f" "ELF", 4) != 0 || f[4] != 2 || f[5] != 1) return std::nullopt;
  const std::uint64_t shoff = le(0x28, 8), shentsize = le(0x3a, 2), shnum = le(0x3c, 2), shstrndx = le(0x3e, 2);
  if (shentsize < 64 || shstrndx >= shnum || shoff > f.size() || shnum > (f.size() - shoff) / shentsize)
    return std::nullopt;
  // Section header fields: sh_name (u32 at 0), sh_offset (u64 at 0x18), sh_size (u64 at 0x20).
  const auto header = [&](std::uint64_t i) { return shoff + i * shentsize; };
  const std::uint64_t strtab = le(header(shstrndx) + 0x18, 8), strtab_size = le(header(shstrndx) + 0x20, 8);
  if (!has(strtab, strtab_size)) return std::nullopt;
  const std::string_view names(reinterpret_cast<const char*>(f.data() + strtab), strtab_size);
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t at = le(header(i), 4);
    if (at >= names.size()) continue;
    const auto rest = names.substr(at);
    if (rest.substr(0, rest.find('\0')) != name) continue;
    const std::uint64_t off = le(header(i) + 0x18, 8), size = le(header(i) + 0x20, 8);
    if (!has(off, size)) return std::nullopt;
    return Bytes(f.begin() + static_cast<std::ptrdiff_t>(off), f.begin() + static_cast<std::ptrdiff_t>(off + size));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("scan_offload_bundles reads the .hip_fatbin of an object clang builds", "[rocm][offload][clang]") {
  if (std::system("clang --version > /dev/null 2>&1") != 0) {
    WARN("skipped: clang is not on PATH (scripts/test.sh installs it)");
    SUCCEED();
    return;
  }
  RocmOffloadTempDir dir;
  const auto source = dir.path / "fixture.hip";
  const auto object = dir.path / "fixture.o";
  const auto log = dir.path / "clang.log";
  std::ofstream(source) << kFixture;
  const std::string command = "clang -x hip --offload-arch=gfx90a --offload-arch=gfx1030 -nogpulib -nogpuinc -c '" +
                              source.string() + "' -o '" + object.string() + "' > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  INFO(command);
  INFO(read_text(log));
  REQUIRE(status == 0);

  const std::string file = read_text(object);
  const auto fatbin = elf_section(Bytes(file.begin(), file.end()), ".hip_fatbin");
  REQUIRE(fatbin);
  const auto r = rocm::scan_offload_bundles(fatbin->data(), fatbin->size());
  INFO(r.error);
  REQUIRE(r.ok);
  auto targets = r.targets;
  std::sort(targets.begin(), targets.end());
  CHECK(targets == Strings{"gfx1030", "gfx90a"});
  CHECK(std::count_if(r.ids.begin(), r.ids.end(), [](const std::string& id) { return id.starts_with("host-"); }) == 1);
  CHECK(r.ids.size() == 3);
}
