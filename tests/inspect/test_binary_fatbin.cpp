// The CUDA backend's device code: parse_fatbin (backends/cuda/semantics/fatbin.cpp) on
// containers the test writes (every machine) and on nvcc's output (when nvcc was found at
// configure time), and the .nv_fatbin / __nv_relfatbin sections parse_binary copies out for the
// backend, read through its read_device_code as the explain engine reads them.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "binary_writer.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/backends/cuda_fatbin.hpp"
#include "wheelfit/inspect/binary.hpp"

using namespace wheelfit;
using namespace wheelfit::inspect;
using wheelfit::backends::cuda::FatbinEntry;
using wheelfit::backends::cuda::parse_fatbin;
namespace bin = wheelfit::test::bin;

namespace {

// parse_binary with the CUDA backend's code sections.
Expected<BinaryInfo> parse_cuda_binary(std::string_view bytes, std::string_view source) {
  return parse_binary(bytes, source, test::cuda_policy().code_sections());
}

// Every device-code entry of a parsed binary, as the backend reads its sections (SASS, then PTX).
std::vector<std::string> device_names(const BinaryInfo& info) {
  std::vector<std::string> out;
  for (const auto& section : info.device_code) {
    auto code = test::cuda_policy().rules()->read_code(section.name, section.bytes);
    REQUIRE(code.has_value());
    for (const auto& [kind, items] : code->entries) out.insert(out.end(), items.begin(), items.end());
  }
  return out;
}

std::vector<std::string> names(const std::vector<FatbinEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.str());
  return out;
}

void require_invalid(const Expected<std::vector<FatbinEntry>>& r, const std::string& field) {
  REQUIRE_FALSE(r.has_value());
  INFO(r.error().message);
  CHECK(r.error().is(Errc::invalid_input));
  CHECK(r.error().message.rfind("k.fatbin: fatbinary at offset ", 0) == 0);
  CHECK(r.error().message.find(field) != std::string::npos);
}

// The layout nvcc 13 writes: ELF entries with 64-byte headers (112 from sm_100), PTX with 80.
const std::vector<bin::FatEntry> kTypical = {
    {2, 80, 0x11, 64, std::string(13, 'e')},        // sm_80
    {1, 90, 0x8011, 80, std::string(251, 'p')},     // compute_90 (a compressed PTX)
    {2, 90, 0x100011, 64, std::string(40, 'e')},    // sm_90a
    {2, 100, 0x1200011, 112, "cubin"},              // sm_100f
    {1, 120, 0x8011, 80, "ptx"},                    // compute_120
    {0x40, 75, 0x11, 64, "unknown kind: skipped"},  // neither PTX nor ELF
};

}  // namespace

TEST_CASE("FatbinEntry::str", "[inspect][fatbin]") {
  CHECK(FatbinEntry{FatbinEntry::Kind::sass, 90, ""}.str() == "sm_90");
  CHECK(FatbinEntry{FatbinEntry::Kind::ptx, 90, ""}.str() == "compute_90");
  CHECK(FatbinEntry{FatbinEntry::Kind::sass, 90, "a"}.str() == "sm_90a");
  CHECK(FatbinEntry{FatbinEntry::Kind::ptx, 100, "f"}.str() == "compute_100f");
}

TEST_CASE("a hand-written fatbinary container", "[inspect][fatbin]") {
  const std::string one = bin::fatbin_container(kTypical);
  auto r = parse_fatbin(one, "k.fatbin");
  REQUIRE(r.has_value());
  CHECK(names(*r) == std::vector<std::string>{"sm_80", "compute_90", "sm_90a", "sm_100f", "compute_120"});
  CHECK((*r)[1].kind == FatbinEntry::Kind::ptx);
  CHECK((*r)[2].arch == 90);
  CHECK((*r)[2].suffix == "a");

  SECTION("several containers, with zero padding between and after them") {
    const std::string two = bin::fatbin_container({{2, 75}}) + std::string(8, '\0') + one + std::string(24, '\0');
    r = parse_fatbin(two, "k.fatbin");
    REQUIRE(r.has_value());
    CHECK(names(*r) == std::vector<std::string>{"sm_75", "sm_80", "compute_90", "sm_90a", "sm_100f", "compute_120"});
  }
  SECTION("an empty container") {
    r = parse_fatbin(bin::fatbin_container({}), "k.fatbin");
    REQUIRE(r.has_value());
    CHECK(r->empty());
  }
}

TEST_CASE("fatbinaries that lie", "[inspect][fatbin]") {
  const std::string good = bin::fatbin_container(kTypical);

  SECTION("truncated at every length") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      auto r = parse_fatbin(std::string_view(good).substr(0, n), "k.fatbin");
      INFO("truncated to " << n << " of " << good.size());
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().is(Errc::invalid_input));
    }
  }
  SECTION("bad magic") {
    std::string b = good;
    b[0] = 'X';
    require_invalid(parse_fatbin(b, "k.fatbin"), "bad magic 0xba55ed58");
    require_invalid(parse_fatbin(good + "garbage!garbage!garbage!", "k.fatbin"), "bad magic");
  }
  SECTION("a fat size past the end") {
    std::string b = good;
    bin::put(b, 8, 8, good.size());
    require_invalid(parse_fatbin(b, "k.fatbin"), "passes the end");
    bin::put(b, 8, 8, ~std::uint64_t{0});
    require_invalid(parse_fatbin(b, "k.fatbin"), "fat size 18446744073709551615");
  }
  SECTION("a fat size that ends inside an entry") {
    std::string b = good;
    bin::put(b, 8, 8, 64 + 16 + 40);  // the first entry, then 40 bytes of the second
    require_invalid(parse_fatbin(b, "k.fatbin"), "entry 1");
  }
  SECTION("a container header size below 16") {
    std::string b = good;
    bin::put(b, 6, 2, 4);
    require_invalid(parse_fatbin(b, "k.fatbin"), "header size 4");
  }
  SECTION("an entry header size that lies") {
    std::string b = good;
    bin::put(b, 16 + 4, 4, 8);
    require_invalid(parse_fatbin(b, "k.fatbin"), "entry 0 (offset 16): header size 8");
    bin::put(b, 16 + 4, 4, 0xffffffffu);
    require_invalid(parse_fatbin(b, "k.fatbin"), "header size 4294967295");
  }
  SECTION("a payload size that lies") {
    std::string b = good;
    bin::put(b, 16 + 8, 8, 1u << 20);
    require_invalid(parse_fatbin(b, "k.fatbin"), "entry 0 (offset 16): payload size 1048576");
    bin::put(b, 16 + 8, 8, ~std::uint64_t{0} - 8);
    require_invalid(parse_fatbin(b, "k.fatbin"), "payload size");
  }
  SECTION("arch 0") {
    std::string b = good;
    bin::put(b, 16 + 28, 4, 0);
    require_invalid(parse_fatbin(b, "k.fatbin"), "arch 0");
  }
}

TEST_CASE("parse_binary copies the backend's code sections; the backend reads them", "[inspect][fatbin][elf]") {
  bin::LibrarySpec spec;
  spec.extra.push_back({".nv_fatbin", 1, bin::fatbin_container({{2, 80}, {2, 86}}) + bin::fatbin_container({{1, 86, 0x8011, 80}})});
  spec.extra.push_back({"__nv_relfatbin", 1, bin::fatbin_container({{2, 89, 0x11, 64}})});
  spec.extra.push_back({".rodata", 1, bin::fatbin_container({{2, 70}})});  // not a code section: ignored
  auto img = bin::write_library(spec);
  auto r = parse_cuda_binary(img.bytes, "x.so");
  REQUIRE(r.has_value());
  REQUIRE(r->device_code.size() == 2);
  CHECK(r->device_code[0].name == ".nv_fatbin");
  CHECK(device_names(*r) == std::vector<std::string>{"sm_80", "sm_86", "compute_86", "sm_89"});
  auto first = test::cuda_policy().rules()->read_code(".nv_fatbin", r->device_code[0].bytes);
  REQUIRE(first.has_value());
  CHECK(first->list == "8.0;8.6+PTX");
  // Without the backend's section names nothing is copied.
  CHECK(parse_binary(img.bytes, "x.so")->device_code.empty());

  SECTION("a lying fatbin inside a valid ELF: the ELF parses, the backend refuses the section") {
    bin::put(img.bytes, img.data_offset.at(".nv_fatbin") + 8, 8, 1u << 30);
    r = parse_cuda_binary(img.bytes, "x.so");
    REQUIRE(r.has_value());
    auto code = test::cuda_policy().rules()->read_code(r->device_code[0].name, r->device_code[0].bytes);
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().is(Errc::invalid_input));
    CHECK_THAT(code.error().message, Catch::StartsWith(".nv_fatbin: fatbinary at offset 0: container header size 16 + fat size"));
  }
}

TEST_CASE("nvcc output: SASS and PTX entries as cuobjdump would list them", "[inspect][fatbin][nvcc]") {
#if defined(WHEELFIT_FIXTURE_NVCC)
  const auto dir = std::filesystem::path(WHEELFIT_INSPECT_FIXTURES);
  {
    // -gencode sm_80, sm_90, sm_90a (arch-specific), compute_90 (PTX); -cudart shared.
    auto r = parse_cuda_binary(test::read_file(dir / "cuda_kernels.so"), "cuda_kernels.so");
    REQUIRE(r.has_value());
    const auto all = device_names(*r);
    INFO("entries: " << Catch::Detail::stringify(all));
    CHECK(std::set<std::string>(all.begin(), all.end()) ==
          std::set<std::string>{"sm_80", "sm_90", "sm_90a", "compute_90"});
    CHECK(std::count(all.begin(), all.end(), "compute_90") == 1);  // each entry once
    const bool has_cudart = std::any_of(r->needed.begin(), r->needed.end(),
                                        [](const std::string& n) { return n.rfind("libcudart.so.", 0) == 0; });
    CHECK(has_cudart);
    CHECK(r->machine == "x86_64");
  }
  {
    // -rdc=true -c: a relocatable object whose __nv_relfatbin holds sm_86 and compute_75.
    auto r = parse_cuda_binary(test::read_file(dir / "cuda_rdc.o"), "cuda_rdc.o");
    REQUIRE(r.has_value());
    const auto all = device_names(*r);
    INFO("entries: " << Catch::Detail::stringify(all));
    CHECK(std::set<std::string>(all.begin(), all.end()) == std::set<std::string>{"sm_86", "compute_75"});
  }
  {
    // Every truncation of the nvcc .so fails cleanly (and never crashes).
    const std::string full = test::read_file(dir / "cuda_kernels.so");
    for (std::size_t n = 4; n < full.size(); n += 97) {
      auto r = parse_cuda_binary(std::string_view(full).substr(0, n), "x.so");
      if (r.has_value() || !r.error().is(Errc::invalid_input)) FAIL("truncated to " << n << ": not invalid_input");
    }
  }
#else
  WARN("SKIPPED: nvcc was not found at configure time (find_program nvcc, /usr/local/cuda/bin); "
       "the fatbin layout is covered by the hand-written containers only");
#endif
}
