// The CUDA backend's streaming device-code reader (plugin_abi.h read_device_code_at, through
// DeviceRules::read_code_at): it agrees with the whole-section reader on every fatbin input the
// tests have, reads only container and entry headers, and stops at the first read that fails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "inspect/binary_writer.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/backends/cuda_fatbin.hpp"
#include "wheelfit/inspect/binary.hpp"

using namespace wheelfit;
namespace bin = wheelfit::test::bin;

namespace {

// A read of `bytes` as the core gives it to the backend, counting what it reads.
struct CountingRead {
  std::string_view bytes;
  std::vector<std::pair<std::uint64_t, std::size_t>> reads = {};
  [[nodiscard]] semantics::DeviceRules::SectionRead fn() {
    return [this](std::uint64_t offset, std::size_t length, unsigned char* out) -> Expected<void> {
      reads.emplace_back(offset, length);
      if (offset > bytes.size() || length > bytes.size() - offset) return unexpected(Errc::invalid_input, "past the end");
      std::memcpy(out, bytes.data() + offset, length);
      return {};
    };
  }
  [[nodiscard]] std::uint64_t total() const {
    std::uint64_t n = 0;
    for (const auto& r : reads) n += r.second;
    return n;
  }
};

std::string with_byte(std::string s, std::size_t at, unsigned width, std::uint64_t value) {
  bin::put(s, at, width, value);
  return s;
}

// Every fatbin section the tests have: hand-written containers (good and lying), and nvcc's
// sections when nvcc was found at configure time.
std::vector<std::pair<std::string, std::string>> fatbin_inputs() {
  const std::string typical = bin::fatbin_container({{2, 80, 0x11, 64, std::string(13, 'e')},
                                                     {1, 90, 0x8011, 80, std::string(251, 'p')},
                                                     {2, 90, 0x100011, 64, std::string(40, 'e')},
                                                     {2, 100, 0x1200011, 112, "cubin"},
                                                     {1, 120, 0x8011, 80, "ptx"},
                                                     {0x40, 75, 0x11, 64, "unknown kind: skipped"}});
  std::vector<std::pair<std::string, std::string>> out{
      {"typical", typical},
      {"two containers with padding", bin::fatbin_container({{2, 75}}) + std::string(8, '\0') + typical + std::string(24, '\0')},
      {"an empty container", bin::fatbin_container({})},
      {"padding only", std::string(5000, '\0')},
      {"empty", ""},
      {"bad magic", with_byte(typical, 0, 1, 'X')},
      {"garbage after a container", typical + "garbage!garbage!garbage!"},
      {"a fat size past the end", with_byte(typical, 8, 8, typical.size())},
      {"a fat size that overflows", with_byte(typical, 8, 8, ~std::uint64_t{0})},
      {"a header size below 16", with_byte(typical, 6, 2, 4)},
      {"an entry header size 0", with_byte(typical, 16 + 4, 4, 0)},
      {"an entry header size past the end", with_byte(typical, 16 + 4, 4, 0xffffffffu)},
      {"a payload past the end", with_byte(typical, 16 + 8, 8, 1u << 20)},
      {"arch 0", with_byte(typical, 16 + 28, 4, 0)},
      {"truncated in the second entry", typical.substr(0, 100)},
      {"truncated in the container header", typical.substr(0, 9)},
  };
#if defined(WHEELFIT_FIXTURE_NVCC)
  const auto dir = std::filesystem::path(WHEELFIT_INSPECT_FIXTURES);
  for (const char* file : {"cuda_kernels.so", "cuda_rdc.o"}) {
    auto info = inspect::parse_binary(test::read_file(dir / file), file, test::cuda_policy().code_sections());
    REQUIRE(info.has_value());
    for (const auto& s : info->device_code) out.emplace_back(std::string(file) + " " + s.name, s.bytes);
  }
#endif
  return out;
}

}  // namespace

TEST_CASE("read_code_at (headers only) agrees with read_code (the section whole) on every fatbin input", "[cuda][fatbin]") {
  const auto* rules = test::cuda_policy().rules();
  REQUIRE(rules != nullptr);
  for (const auto& [name, bytes] : fatbin_inputs()) {
    CAPTURE(name);
    CountingRead read{bytes};
    auto whole = rules->read_code(".nv_fatbin", bytes);
    auto streamed = rules->read_code_at(".nv_fatbin", bytes.size(), read.fn());
    REQUIRE(whole.has_value() == streamed.has_value());
    if (whole) {
      CHECK(streamed->list == whole->list);
      CHECK(streamed->entries == whole->entries);
    } else {
      CHECK(streamed.error().message == whole.error().message);
      CHECK(streamed.error().code == whole.error().code);
    }
    // Never a read past the section, and (beyond padding) never more than the headers.
    for (const auto& [offset, length] : read.reads) CHECK(offset + length <= bytes.size());
    auto walked = backends::cuda::walk_fatbin(bytes.size(), [&](std::uint64_t o, std::size_t n, unsigned char* out) {
      if (o > bytes.size() || n > bytes.size() - o) return false;
      std::memcpy(out, bytes.data() + o, n);
      return true;
    }, ".nv_fatbin");
    auto parsed = backends::cuda::parse_fatbin(bytes, ".nv_fatbin");
    REQUIRE(walked.has_value() == parsed.has_value());
    if (parsed) CHECK(walked->size() == parsed->size());
  }
}

TEST_CASE("read_code_at reads the container and entry headers, never a payload", "[cuda][fatbin]") {
  // 10 entries with 1 MiB payloads each.
  std::vector<bin::FatEntry> entries;
  for (std::uint32_t arch : {50u, 60u, 70u, 75u, 80u, 86u, 89u, 90u, 100u, 120u}) entries.push_back({2, arch, 0x11, 64, std::string(1 << 20, 'x')});
  const std::string section = bin::fatbin_container(entries);
  CountingRead read{section};
  auto code = test::cuda_policy().rules()->read_code_at(".nv_fatbin", section.size(), read.fn());
  REQUIRE(code.has_value());
  CHECK(code->list == "5.0;6.0;7.0;7.5;8.0;8.6;8.9;9.0;10.0;12.0");
  CAPTURE(read.total());
  CHECK(read.total() == 1 + 16 + 10 * 48);  // one byte for padding, the container header, each entry's 48
  for (const auto& [offset, length] : read.reads) {
    const std::uint64_t in_entry = (offset - 16) % (64 + (1 << 20));
    CHECK((offset < 16 || in_entry < 64));  // inside a header, never inside a payload
  }
}

TEST_CASE("read_code_at stops at the first read that fails, with the core's reason", "[cuda][fatbin]") {
  const std::string section = bin::fatbin_container({{2, 80}, {2, 90}});
  int calls = 0;
  const semantics::DeviceRules::SectionRead failing = [&](std::uint64_t offset, std::size_t, unsigned char*) -> Expected<void> {
    ++calls;
    return unexpected(Errc::io_error, "lib.so: read at offset " + std::to_string(4096 + offset) + " failed: Input/output error");
  };
  auto code = test::cuda_policy().rules()->read_code_at(".nv_fatbin", section.size(), failing);
  REQUIRE_FALSE(code.has_value());
  CHECK(code.error().is(Errc::io_error));
  CHECK(code.error().message == "lib.so: read at offset 4096 failed: Input/output error");
  CHECK(calls == 1);
}

TEST_CASE("a section of many containers repeating the same entries lists each entry once", "[cuda][fatbin]") {
  // As torch's libtorch_cuda.so: one container per translation unit, each with the same archs.
  const std::string one = bin::fatbin_container({{2, 80}, {2, 90}, {1, 90, 0x8011, 80}});
  std::string section;
  for (int i = 0; i < 2000; ++i) section += one;
  auto entries = backends::cuda::parse_fatbin(section, ".nv_fatbin");
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 3);
  CHECK((*entries)[2].str() == "compute_90");
  CountingRead read{section};
  auto code = test::cuda_policy().rules()->read_code_at(".nv_fatbin", section.size(), read.fn());
  REQUIRE(code.has_value());
  CHECK(code->list == "8.0;9.0+PTX");
  CHECK(read.total() == 2000 * (1 + 16 + 3 * 48));  // every header, and nothing else
}
