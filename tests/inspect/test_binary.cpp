// parse_binary on ELF (crafted in every class and byte order, and real g++ output checked against
// readelf) and PE, extension_suffix, and the negative cases: every truncation point, offsets
// past the end, lying counts, string offsets out of range, version-need chains that would loop.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "binary_writer.hpp"
#include "support/test_support.hpp"
#include "wheelfit/inspect/binary.hpp"
#include "wheelfit/util/subprocess.hpp"

using namespace wheelfit;
using namespace wheelfit::inspect;
namespace bin = wheelfit::test::bin;

namespace {

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(WHEELFIT_INSPECT_FIXTURES) / name;
}

// The error must be invalid_input, name the source and mention `field`.
void require_invalid(const Expected<BinaryInfo>& r, const std::string& field) {
  REQUIRE_FALSE(r.has_value());
  INFO(r.error().message);
  CHECK(r.error().is(Errc::invalid_input));
  CHECK(r.error().message.rfind("x.so: ", 0) == 0);
  CHECK(r.error().message.find(field) != std::string::npos);
}

struct ReadelfFacts {
  std::vector<std::string> needed;
  std::string soname;
  std::set<std::string> glibc;
};

// Asks readelf (the oracle) for the facts parse_binary reports.
ReadelfFacts readelf(const std::filesystem::path& file) {
  auto r = util::run_process({WHEELFIT_READELF, "-W", "-d", "-V", file.string()}, std::chrono::seconds(30));
  REQUIRE(r.has_value());
  REQUIRE(r->exited_ok());
  ReadelfFacts f;
  std::istringstream in(r->out);
  std::string line;
  const std::regex needed(R"(\(NEEDED\)\s+Shared library: \[(.*)\])");
  const std::regex soname(R"(\(SONAME\)\s+Library soname: \[(.*)\])");
  const std::regex version(R"(Name: (GLIBC_[0-9.]+)\s)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, needed)) f.needed.push_back(m[1]);
    if (std::regex_search(line, m, soname)) f.soname = m[1];
    if (std::regex_search(line, m, version)) f.glibc.insert(m[1].str().substr(6));
  }
  return f;
}

}  // namespace

TEST_CASE("a crafted shared library in every ELF class and byte order", "[inspect][elf]") {
  struct Case {
    bool is64, le;
    std::uint16_t machine;
    const char* name;
  };
  const Case cases[] = {{true, true, 62, "x86_64"},  {true, false, 21, "ppc64"}, {false, true, 3, "i386"},
                        {false, false, 40, "arm"},   {true, true, 183, "aarch64"}, {true, true, 21, "ppc64le"},
                        {true, true, 0x1234, "unknown (0x1234)"}};
  for (const Case& c : cases) {
    bin::LibrarySpec spec;
    spec.is64 = c.is64;
    spec.le = c.le;
    spec.machine = c.machine;
    const auto img = bin::write_library(spec);
    INFO("class " << (c.is64 ? 64 : 32) << (c.le ? " LSB" : " MSB") << " machine " << c.name);
    auto r = parse_binary(img.bytes, "x.so");
    REQUIRE(r.has_value());
    CHECK(r->format == BinaryInfo::Format::elf);
    CHECK(r->os == "linux");
    CHECK(r->machine == c.name);
    CHECK(r->bits == (c.is64 ? 64u : 32u));
    CHECK(r->little_endian == c.le);
    CHECK(r->needed == std::vector<std::string>{"libm.so.6", "libc10.so", "libcudart.so.12"});
    CHECK(r->soname == std::optional<std::string>("libfoo.so.1"));
    // Numeric order (2.9 < 2.10 < 2.34); GLIBC_PRIVATE, GLIBCXX_*, CXXABI_* are not glibc versions.
    CHECK(r->glibc_versions == std::vector<std::string>{"2.2.5", "2.9", "2.10", "2.29", "2.34"});
    CHECK(r->max_glibc == std::optional<std::string>("2.34"));
    CHECK(r->py_init == std::vector<std::string>{"PyInit_foo"});  // PyInit_local is STB_LOCAL
    CHECK(r->undefined_py == std::vector<std::string>{"PyLong_FromLong", "_Py_Dealloc"});
    CHECK(r->device_code.empty());
  }
}

TEST_CASE("GLIBC versions compare by number, not as text", "[inspect][elf]") {
  bin::LibrarySpec spec;
  spec.needs = {{"libc.so.6", {"GLIBC_2.10", "GLIBC_2.9", "GLIBC_2.3.4", "GLIBC_2.3", "GLIBC_2.10"}},
                {"libpthread.so.0", {"GLIBC_2.12"}}};
  auto r = parse_binary(bin::write_library(spec).bytes, "x.so");
  REQUIRE(r.has_value());
  CHECK(r->glibc_versions == std::vector<std::string>{"2.3", "2.3.4", "2.9", "2.10", "2.12"});
  CHECK(r->max_glibc == std::optional<std::string>("2.12"));

  spec.needs = {{"libstdc++.so.6", {"GLIBCXX_3.4.32", "GLIBC_", "GLIBC_2.x", "GLIBC_2..3"}}};
  r = parse_binary(bin::write_library(spec).bytes, "x.so");
  REQUIRE(r.has_value());
  CHECK(r->glibc_versions.empty());
  CHECK_FALSE(r->max_glibc.has_value());
}

TEST_CASE("a library without version needs or symbols", "[inspect][elf]") {
  bin::LibrarySpec spec;
  spec.needs.clear();
  spec.symbols.clear();
  spec.needed.clear();
  auto r = parse_binary(bin::write_library(spec).bytes, "x.so");
  REQUIRE(r.has_value());
  CHECK(r->needed.empty());
  CHECK(r->glibc_versions.empty());
  CHECK(r->py_init.empty());
  // No section headers at all: still an ELF, nothing to report beyond the header.
  auto img = bin::write_library(spec);
  img.set(img.e_shoff(), img.addr(), 0);
  r = parse_binary(img.bytes, "x.so");
  REQUIRE(r.has_value());
  CHECK(r->machine == "x86_64");
  CHECK(r->needed.empty());
}

TEST_CASE("a truncated ELF is invalid input at every length", "[inspect][elf]") {
  for (const bool is64 : {true, false}) {
    for (const bool le : {true, false}) {
      bin::LibrarySpec spec;
      spec.is64 = is64;
      spec.le = le;
      spec.extra.push_back({".nv_fatbin", 1, bin::fatbin_container({{2, 80}, {1, 90, 0x8011, 80}})});
      const std::string full = bin::write_library(spec).bytes;
      REQUIRE(parse_binary(full, "x.so").has_value());
      for (std::size_t n = 0; n < full.size(); ++n) {
        INFO("class " << (is64 ? 64 : 32) << (le ? " LSB" : " MSB") << ", truncated to " << n << " of " << full.size());
        auto r = parse_binary(std::string_view(full).substr(0, n), "x.so");
        REQUIRE_FALSE(r.has_value());
        if (n < 4) {
          CHECK(r.error().is(Errc::unsupported));
        } else {
          CHECK(r.error().is(Errc::invalid_input));
          CHECK(r.error().message.rfind("x.so: ELF ", 0) == 0);
        }
      }
    }
  }
}

TEST_CASE("a truncated g++ shared object is invalid input at every length", "[inspect][elf]") {
  const std::string full = test::read_file(fixture("_C.cpython-312-x86_64-linux-gnu.so"));
  REQUIRE(parse_binary(full, "x.so").has_value());
  for (std::size_t n = 4; n < full.size(); ++n) {
    auto r = parse_binary(std::string_view(full).substr(0, n), "x.so");
    if (r.has_value() || !r.error().is(Errc::invalid_input)) FAIL("truncated to " << n << " bytes: not invalid_input");
  }
}

TEST_CASE("ELF header fields that lie", "[inspect][elf]") {
  const bin::LibrarySpec spec;
  const auto good = bin::write_library(spec);
  const std::uint64_t size = good.bytes.size();
  // `good` with the `width` bytes at `offset` set to `value` is invalid input naming `field`.
  const auto lying = [&](std::uint64_t offset, unsigned width, std::uint64_t value, const std::string& field) {
    CAPTURE(offset, width, value);
    auto img = good;
    img.set(offset, width, value);
    require_invalid(parse_binary(img.bytes, "x.so"), field);
  };

  SECTION("EI_CLASS and EI_DATA") {
    lying(4, 1, 3, "EI_CLASS");
    lying(5, 1, 0, "EI_DATA");
  }
  SECTION("e_shoff past the end") {
    lying(good.e_shoff(), 8, size + 100, "e_shoff");
    lying(good.e_shoff(), 8, ~std::uint64_t{0} - 10, "e_shoff");  // offset + size would overflow
  }
  SECTION("e_shnum larger than the file") { lying(good.e_shnum(), 2, 1000, "e_shnum 1000"); }
  SECTION("e_shentsize below a section header") { lying(good.e_shentsize(), 2, 12, "e_shentsize 12"); }
  SECTION("e_shstrndx out of range") { lying(good.e_shstrndx(), 2, 77, "e_shstrndx 77"); }
  SECTION("a section past the end") {
    lying(good.sh_offset(".dynamic"), 8, size - 8, "section 3 '.dynamic' (sh_offset, sh_size)");
    lying(good.sh_size(".dynsym"), 8, ~std::uint64_t{0}, "'.dynsym'");
    lying(good.sh_size(".shstrtab"), 8, size, "section name string table");
  }
  SECTION("sh_link to no section") { lying(good.sh_link(".dynamic"), 4, 999, "sh_link 999"); }
  SECTION("sh_name past the section name table") { lying(good.sh_name(".dynsym"), 4, 5000, "sh_name of section 2"); }
  SECTION("a string table cut short") {
    lying(good.sh_size(".dynstr"), 8, 0, "string offset");
    // One byte short: the last string (a vna_name) loses its NUL.
    bin::LibrarySpec probe;
    bin::StrTab t;  // rebuild .dynstr's size the way write_library does
    for (const auto& n : probe.needed) t.add(n);
    t.add(probe.soname);
    for (const auto& sym : probe.symbols) t.add(sym.name);
    for (const auto& n : probe.needs) {
      t.add(n.file);
      for (const auto& v : n.versions) t.add(v);
    }
    lying(good.sh_size(".dynstr"), 8, t.data.size() - 1, "is not NUL-terminated");
  }
  SECTION("DT_NEEDED names past .dynstr") {
    lying(good.data_offset.at(".dynamic") + 8, 8, 0x7fffffff, "DT_NEEDED 0: string offset 2147483647");
  }
  SECTION("st_name past .dynstr") { lying(good.data_offset.at(".dynsym") + 24, 4, 0xfffffff0u, "symbol 1 st_name"); }
}

TEST_CASE("version-need chains that lie or would loop terminate as errors", "[inspect][elf]") {
  const bool is64 = GENERATE(true, false);
  {
    bin::LibrarySpec spec;
    spec.is64 = is64;
    spec.le = !is64;
    const auto good = bin::write_library(spec);
    const std::uint64_t vr = good.data_offset.at(".gnu.version_r");
    INFO("class " << (is64 ? 64 : 32));
    SECTION("vn_next pointing back (32-bit wrap-around)") {
      auto img = good;
      img.set(vr + 12, 4, 0xfffffff0u);
      require_invalid(parse_binary(img.bytes, "x.so"), "verneed 1");
    }
    SECTION("vn_next pointing at itself with a huge sh_info") {
      auto img = good;
      img.set(img.sh_info(".gnu.version_r"), 4, 0xffffffffu);
      require_invalid(parse_binary(img.bytes, "x.so"), "implausible");
      img.set(img.sh_info(".gnu.version_r"), 4, 5000);
      // The last verneed's vn_next is 0: the walk stops there, however many sh_info promises.
      CHECK(parse_binary(img.bytes, "x.so").has_value());
    }
    SECTION("vn_aux of 0: the aux record is the verneed itself") {
      auto img = good;
      img.set(vr + 8, 4, 0);
      require_invalid(parse_binary(img.bytes, "x.so"), "loops back");
    }
    SECTION("vna_next past the table, and wrapping back") {
      auto img = good;
      img.set(vr + 16 + 12, 4, 0x1000000);
      require_invalid(parse_binary(img.bytes, "x.so"), "vernaux 1");
      img.set(vr + 16 + 12, 4, 0xfffffff0u);
      require_invalid(parse_binary(img.bytes, "x.so"), "vernaux 1");
    }
    SECTION("vn_cnt larger than the chain") {
      auto img = good;
      img.set(vr + 2, 2, 0xffff);  // vna_next 0 ends the aux chain first
      auto r = parse_binary(img.bytes, "x.so");
      REQUIRE(r.has_value());
      CHECK(r->max_glibc == std::optional<std::string>("2.34"));
    }
    SECTION("vna_name past the string table") {
      auto img = good;
      img.set(vr + 16 + 8, 4, 0x7ffffff0u);
      require_invalid(parse_binary(img.bytes, "x.so"), "vna_name");
    }
  }
}

TEST_CASE("the g++ extension fixture agrees with readelf", "[inspect][elf]") {
  const auto path = fixture("_C.cpython-312-x86_64-linux-gnu.so");
  const std::string bytes = test::read_file(path);
  auto r = parse_binary(bytes, path.filename().string());
  REQUIRE(r.has_value());
  const ReadelfFacts truth = readelf(path);
  CHECK(r->needed == truth.needed);
  CHECK(r->soname == std::optional<std::string>(truth.soname));
  CHECK(r->soname == std::optional<std::string>("_C.so"));
  CHECK(std::set<std::string>(r->glibc_versions.begin(), r->glibc_versions.end()) == truth.glibc);
  CHECK(r->bits == 64);
  CHECK(r->little_endian);
  CHECK(r->os == "linux");
  CHECK(std::find(r->needed.begin(), r->needed.end(), "libc10.so") != r->needed.end());
  CHECK(std::find(r->needed.begin(), r->needed.end(), "libm.so.6") != r->needed.end());
  CHECK(r->py_init == std::vector<std::string>{"PyInit__C"});
  CHECK(r->undefined_py == std::vector<std::string>{"PyLong_FromLong", "_Py_Dealloc"});
  CHECK(r->device_code.empty());
#if defined(__x86_64__)
  CHECK(r->machine == "x86_64");
  // memcpy pinned to GLIBC_2.2.5, exp@GLIBC_2.29; pthread_create@GLIBC_2.34 on glibc >= 2.34.
  CHECK(std::find(r->glibc_versions.begin(), r->glibc_versions.end(), "2.2.5") != r->glibc_versions.end());
  CHECK(std::find(r->glibc_versions.begin(), r->glibc_versions.end(), "2.29") != r->glibc_versions.end());
#endif
  REQUIRE(r->max_glibc.has_value());
  CHECK(*r->max_glibc == r->glibc_versions.back());

  const std::string c10 = test::read_file(fixture("libc10.so"));
  auto lib = parse_binary(c10, "libc10.so");
  REQUIRE(lib.has_value());
  CHECK(lib->soname == std::optional<std::string>("libc10.so"));
  CHECK(lib->py_init.empty());
}

TEST_CASE("a real 32-bit ELF from the toolchain", "[inspect][elf]") {
#if defined(WHEELFIT_FIXTURE_ELF32)
  auto r = parse_binary(test::read_file(fixture("libelf32.so")), "libelf32.so");
  REQUIRE(r.has_value());
  CHECK(r->bits == 32);
  CHECK(r->machine == "i386");
  CHECK(r->little_endian);
  CHECK(r->soname == std::optional<std::string>("libelf32.so"));
  CHECK(r->py_init == std::vector<std::string>{"PyInit_elf32"});
#else
  WARN("SKIPPED: g++ -m32 does not work on this machine; 32-bit ELF is covered by crafted bytes only");
#endif
}

TEST_CASE("not a binary: unsupported", "[inspect][elf][pe]") {
  for (const std::string_view bytes : {std::string_view(""), std::string_view("\x7f" "EL"), std::string_view("hello world"),
                                       std::string_view("PK\x03\x04")}) {
    auto r = parse_binary(bytes, "x.so");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().is(Errc::unsupported));
    CHECK(r.error().message.rfind("x.so: ", 0) == 0);
  }
}

TEST_CASE("PE: machine and OS", "[inspect][pe]") {
  struct Case {
    std::uint16_t machine, magic;
    const char* name;
    unsigned bits;
  };
  for (const Case& c : {Case{0x8664, 0x20b, "x86_64", 64}, Case{0xAA64, 0x20b, "aarch64", 64},
                        Case{0x14c, 0x10b, "i386", 32}, Case{0x1c4, 0x10b, "arm", 32},
                        Case{0x5032, 0x20b, "unknown (0x5032)", 64}}) {
    auto r = parse_binary(bin::write_pe(c.machine, c.magic), "x.pyd");
    REQUIRE(r.has_value());
    CHECK(r->format == BinaryInfo::Format::pe);
    CHECK(r->os == "windows");
    CHECK(r->machine == c.name);
    CHECK(r->bits == c.bits);
    CHECK(r->needed.empty());
    CHECK(r->device_code.empty());
  }
}

TEST_CASE("PE: truncated or lying headers", "[inspect][pe]") {
  const std::string good = bin::write_pe(0x8664, 0x20b);
  for (std::size_t n = 2; n < 0x80 + 24; ++n) {
    auto r = parse_binary(std::string_view(good).substr(0, n), "x.pyd");
    INFO("truncated to " << n);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().is(Errc::invalid_input));
    CHECK(r.error().message.rfind("x.pyd: PE ", 0) == 0);
  }
  std::string lie = good;
  bin::put(lie, 0x3c, 4, 0xfffffff0u);
  auto r = parse_binary(lie, "x.pyd");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("e_lfanew 4294967280") != std::string::npos);
  lie = good;
  lie[0x81] = 'X';
  r = parse_binary(lie, "x.pyd");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("signature") != std::string::npos);
}

TEST_CASE("extension module suffixes", "[inspect]") {
  const auto s = [](std::string_view name) { return extension_suffix(name); };
  struct Row {
    std::string_view name, abi, platform;
  };
  for (const Row& row : {Row{"torch/_C.cpython-312-x86_64-linux-gnu.so", "cpython-312", "x86_64-linux-gnu"},
                         Row{"x.cpython-313t-aarch64-linux-gnu.so", "cpython-313t", "aarch64-linux-gnu"},
                         Row{"pkg/x.abi3.so", "abi3", ""}, Row{"pkg\\x.cp312-win_amd64.pyd", "cp312", "win_amd64"},
                         Row{"x.PYD", "", ""}, Row{"x.so", "", ""},
                         Row{"x.pypy310-pp73-x86_64-linux-gnu.so", "pypy310-pp73", "x86_64-linux-gnu"}}) {
    CAPTURE(row.name);
    const auto r = s(row.name);
    REQUIRE(r);
    CHECK(r->abi == row.abi);
    CHECK(r->platform == row.platform);
  }
  CHECK_FALSE(s("libcudart.so.12"));
  CHECK_FALSE(s("x.py"));
  CHECK_FALSE(s(".so"));
  CHECK_FALSE(s("dir/.abi3.so"));
  CHECK_FALSE(s("x.a.b.so"));
  CHECK_FALSE(s(""));
}
