// read_library / read_library_archs / find_torch_library / explain_library (inspect/library.hpp):
// torch's own library read by its headers, never whole. Generated ELF and PE libraries with known
// fatbin entries, libraries that lie, files that are no library, and a sparse library above the
// 512 MiB that doctor used to skip.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "inspect/binary_writer.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/inspect/doctor.hpp"
#include "wheelfit/inspect/library.hpp"

using namespace wheelfit;
namespace bin = wheelfit::test::bin;
namespace fs = std::filesystem;
using test::write_file;

namespace {

// torch's kernels as PyTorch builds them, plus an arch-specific and a family entry: SASS for
// sm_50..sm_90, compute_90 PTX, sm_90a, sm_100f; payloads of `payload` bytes each.
std::vector<bin::FatEntry> torch_kernels(std::size_t payload = 64) {
  std::vector<bin::FatEntry> out;
  for (std::uint32_t arch : {50u, 60u, 70u, 75u, 80u, 86u, 90u}) out.push_back({2, arch, 0x11, 64, std::string(payload, 's')});
  out.push_back({1, 90, 0x8011, 80, std::string(payload, 'p')});
  out.push_back({2, 90, 0x100011, 64, std::string(payload, 'a')});
  out.push_back({2, 100, 0x1200011, 112, std::string(payload, 'f')});
  return out;
}

// Two containers, as a linker leaves them, with zero padding between.
std::string torch_fatbin(std::size_t payload = 64) {
  const auto k = torch_kernels(payload);
  return bin::fatbin_container({k.begin(), k.begin() + 4}) + std::string(16, '\0') + bin::fatbin_container({k.begin() + 4, k.end()});
}

bin::ElfImage torch_elf(std::string fatbin = torch_fatbin()) {
  bin::LibrarySpec spec;
  spec.soname = "libtorch_cuda.so";
  spec.extra.push_back(bin::Section{".nv_fatbin", 1, std::move(fatbin)});
  return bin::write_library(spec);
}

bin::PeImage torch_pe(std::string fatbin = torch_fatbin()) {
  return bin::write_pe_library(0x8664, {{".text", 1, std::string(100, '\xc3')}, {".nv_fatbin", 1, std::move(fatbin)},
                                        {".rdata", 1, "data"}});
}

machine::Machine lib_machine(const std::string& gpus) {
  machine::Machine m;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"os", "linux"}, {"cpu_arch", "x86_64"}, {"python", "3.12"}, {"torch", "2.8.0+cu128"}, {"gpus", gpus}}) {
    REQUIRE(machine::set_fact(m, k, v, "test"));
  }
  return m;
}

const std::vector<std::pair<std::string, std::vector<std::string>>> kTorchEntries = {
    {"sass", {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_90a", "sm_100f"}}, {"ptx", {"compute_90"}}};

}  // namespace

TEST_CASE("read_library_archs: a generated ELF and PE torch library give their exact list and entries", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto& policy = test::cuda_policy();
  struct Row {
    std::string file;
    std::string bytes;
    inspect::BinaryInfo::Format format;
    std::string section;  // as the file names it
  };
  const std::vector<Row> rows{{"libtorch_cuda.so", torch_elf().bytes, inspect::BinaryInfo::Format::elf, ".nv_fatbin"},
                              {"torch_cuda.dll", torch_pe().bytes, inspect::BinaryInfo::Format::pe, ".nv_fatb"}};
  for (const auto& row : rows) {
    CAPTURE(row.file);
    const auto path = (dir / row.file).string();
    write_file(path, row.bytes);
    auto archs = inspect::read_library_archs(path, policy);
    REQUIRE(archs.has_value());
    CHECK(archs->list == "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX;9.0a;10.0f");
    CHECK(archs->entries == kTorchEntries);
    CHECK(archs->source == "read from " + path + ": 9 SASS, 1 PTX entries");
    auto lib = inspect::read_library(path, policy);
    REQUIRE(lib.has_value());
    CHECK(lib->info.format == row.format);
    CHECK(lib->info.machine == "x86_64");
    CHECK(lib->info.bits == 64);
    CHECK(lib->sections == std::vector<std::string>{row.section});
    CHECK(lib->file_size == row.bytes.size());
  }
}

TEST_CASE("read_library reads the headers, not the payloads", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto path = (dir / "libtorch_cuda.so").string();
  const std::string fatbin = torch_fatbin(1 << 20);  // 10 MiB of payloads
  write_file(path, torch_elf(fatbin).bytes);
  auto lib = inspect::read_library(path, test::cuda_policy());
  REQUIRE(lib.has_value());
  CHECK(lib->device.entries == kTorchEntries);
  CAPTURE(lib->bytes_read, lib->file_size);
  CHECK(lib->bytes_read < 16 * 1024);  // the ELF and fatbin headers; the section is 10 MiB
  CHECK(lib->file_size > fatbin.size());
}

TEST_CASE("read_library: files that are no library and libraries that lie", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto& policy = test::cuda_policy();
  const auto good = torch_elf();
  const std::uint64_t fat = good.data_offset.at(".nv_fatbin");
  const auto pe = torch_pe();
  const auto elf_with = [&](std::uint64_t offset, unsigned width, std::uint64_t value) {
    auto img = good;
    img.set(offset, width, value);
    return img.bytes;
  };
  const auto pe_with = [&](std::uint64_t offset, unsigned width, std::uint64_t value) {
    auto bytes = pe.bytes;
    bin::put(bytes, offset, width, value);
    return bytes;
  };
  bin::LibrarySpec plain;  // a library without device code
  struct Row {
    const char* name;
    std::string bytes;
    Errc code;
    const char* message;  // after "<path>"
  };
  const std::vector<Row> rows{
      {"not a binary", "hello, world: no magic", Errc::unsupported, ": neither an ELF nor a PE file"},
      {"empty", "", Errc::unsupported, ": neither an ELF nor a PE file (0 bytes"},
      {"a truncated ELF header", good.bytes.substr(0, 40), Errc::invalid_input, ": ELF header (offset 0, 64 bytes) passes the end"},
      {"a truncated PE header", pe.bytes.substr(0, 100), Errc::invalid_input, ": PE e_lfanew 128"},
      {"no device code", bin::write_library(plain).bytes, Errc::not_found, ": no device code (no .nv_fatbin or __nv_relfatbin"},
      {"the section's offset past the end of the file", elf_with(good.sh_offset(".nv_fatbin"), 8, good.bytes.size()),
       Errc::invalid_input, ": ELF section 6 '.nv_fatbin' (its offset, size) (offset "},
      {"the PE section's raw data past the end of the file", pe_with(pe.row_offset.at(".nv_fatbin") + 20, 4, 1u << 30),
       Errc::invalid_input, ": PE section 1 '.nv_fatb' (its offset, size) (offset 1073741824"},
      {"a PE section table past the end", pe_with(0x80 + 6, 2, 4000), Errc::invalid_input, ": PE section table (4000 sections)"},
      {"a truncated container header", elf_with(fat + 6, 2, 4), Errc::invalid_input, "fatbinary at offset 0: container header size 4"},
      {"a container whose fat size passes the section", elf_with(fat + 8, 8, 1u << 30), Errc::invalid_input,
       "fatbinary at offset 0: container header size 16 + fat size 1073741824 passes the end"},
      {"an entry whose payload passes the section", elf_with(fat + 16 + 8, 8, 1u << 20), Errc::invalid_input,
       "entry 0 (offset 16): payload size 1048576 passes the container's end"},
      {"an entry of size 0: a walk that would not advance", elf_with(fat + 16 + 4, 4, 0), Errc::invalid_input,
       "entry 0 (offset 16): header size 0 is below 48"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const auto path = (dir / "lib.so").string();
    write_file(path, row.bytes);
    auto r = inspect::read_library_archs(path, policy);
    REQUIRE_FALSE(r.has_value());
    CAPTURE(r.error().message);
    CHECK(r.error().is(row.code));
    CHECK_THAT(r.error().message, Catch::StartsWith(path));
    CHECK_THAT(r.error().message, Catch::Contains(row.message));
  }
}

TEST_CASE("read_library: a missing file, a folder and a FIFO are refused unread", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto& policy = test::cuda_policy();
  const auto fifo = dir / "fifo.so";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // no writer: a read would block forever
  fs::create_directories(dir / "folder.so");
  struct Row {
    fs::path path;
    Errc code;
    std::string message;
  };
  for (const Row& row : {Row{dir / "missing.so", Errc::not_found, ": no such file"},
                         Row{dir / "folder.so", Errc::io_error, ": is a directory, not a regular file"},
                         Row{fifo, Errc::io_error, ": is a FIFO, not a regular file"}}) {
    CAPTURE(row.path);
    auto r = inspect::read_library_archs(row.path.string(), policy);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().is(row.code));
    CHECK(r.error().message == row.path.string() + row.message);
  }
}

TEST_CASE("find_torch_library picks the library holding torch's device code", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto& policy = test::cuda_policy();
  const auto lib = dir / "torch" / "lib";
  bin::LibrarySpec plain;
  write_file(lib / "libtorch_cpu.so", bin::write_library(plain).bytes);
  write_file(lib / "libtorch_cuda.so", torch_elf(torch_fatbin(4096)).bytes);
  write_file(lib / "libtorch_cuda_linalg.so", torch_elf(bin::fatbin_container({{2, 80}})).bytes);
  write_file(lib / "libc10_cuda.so", torch_elf(torch_fatbin(8192)).bytes);  // not a libtorch*: not looked at
  write_file(lib / "libtorch_global_deps.so", "not even an ELF");
  auto found = inspect::find_torch_library(lib.string(), policy);
  REQUIRE(found.has_value());
  CHECK(*found == (lib / "libtorch_cuda.so").string());

  SECTION("Windows: torch_cuda.dll") {
    fs::remove_all(lib);
    write_file(lib / "torch_cpu.dll", bin::write_pe_library(0x8664, {{".text", 1, "code"}}).bytes);
    write_file(lib / "torch_cuda.dll", torch_pe().bytes);
    found = inspect::find_torch_library(lib.string(), policy);
    REQUIRE(found.has_value());
    CHECK(*found == (lib / "torch_cuda.dll").string());
  }
  SECTION("a CPU build, and no folder at all") {
    fs::remove(lib / "libtorch_cuda.so");
    fs::remove(lib / "libtorch_cuda_linalg.so");
    found = inspect::find_torch_library(lib.string(), policy);
    REQUIRE_FALSE(found.has_value());
    CHECK(found.error().is(Errc::not_found));
    CHECK_THAT(found.error().message, Catch::StartsWith(lib.string() + ": no libtorch*.so or torch*.dll with a .nv_fatbin"));
    found = inspect::find_torch_library((dir / "nope").string(), policy);
    REQUIRE_FALSE(found.has_value());
    CHECK(found.error().message == (dir / "nope").string() + ": no such folder (torch's libraries)");
  }
}

TEST_CASE("explain_library judges the library's archs on the machine's GPUs", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto path = (dir / "libtorch_cuda.so").string();
  write_file(path, torch_elf().bytes);
  struct Row {
    std::string gpus;
    resolve::TorchVerdict::Status status;
    std::vector<std::string> uncovered;
    std::string summary;
  };
  const std::vector<Row> rows{
      {"8.6", resolve::TorchVerdict::Status::runs, {}, "it runs here"},
      {"8.9, 12.0", resolve::TorchVerdict::Status::runs, {}, "it runs here"},  // 8.6 SASS; 9.0 PTX JIT
      {"9.0", resolve::TorchVerdict::Status::runs, {}, "it runs here"},
      {"3.7, 8.0", resolve::TorchVerdict::Status::cannot_run, {"3.7"}, "it will not run here: nothing in it runs on sm 3.7"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.gpus);
    auto e = inspect::explain_library(path, lib_machine(row.gpus), test::cuda_policy());
    REQUIRE(e.has_value());
    CHECK(e->verdict.status == row.status);
    CHECK(e->verdict.uncovered == row.uncovered);
    CHECK_THAT(e->summary, Catch::StartsWith(row.summary));
    CHECK(e->verdict.archs->list == "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX;9.0a;10.0f");
  }
}

TEST_CASE("a sparse torch library above 512 MiB: doctor and explain read it by its headers", "[inspect][torch_lib]") {
  test::TempDir dir;
  const auto& policy = test::cuda_policy();
  const auto site = dir / "site-packages";
  const std::string rel = "torch/lib/libtorch_cuda.so";
  const auto path = (site / rel).string();
  fs::create_directories(site / "torch" / "lib");
  const std::uint64_t size = 600ull << 20;
  const auto written = bin::write_sparse_library(path, size, torch_kernels(0), 50ull << 20);  // 10 x 50 MiB holes
  REQUIRE(written.file_size == size);
  const std::string info = "torch-2.8.0+cu128.dist-info/";
  write_file(site / (info + "METADATA"), "Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0+cu128\n\n");
  write_file(site / (info + "WHEEL"), "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n");
  write_file(site / (info + "RECORD"), rel + ",sha256=x,1\n" + info + "RECORD,,\n");

  auto report = inspect::doctor({site.string()}, lib_machine("12.0"), policy);
  REQUIRE(report.has_value());
  REQUIRE(report->dists.size() == 1);
  const auto& files = report->dists[0].explanation.files;
  REQUIRE(files.size() == 1);
  REQUIRE(files[0].info.has_value());
  CHECK(files[0].device.list == "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX;9.0a;10.0f");
  CHECK(test::any_contains(report->notes, "torch: " + rel + ": " + std::to_string(size) + " bytes, above the whole-read limit"));
  // The GPU demand is judged on the library's own archs: 12.0 is served by compute_90 (JIT).
  for (const auto& d : report->dists[0].explanation.demands) {
    if (d.demand == resolve::Demand::gpu_arch) CHECK(d.verdict == inspect::Verdict::ok);
  }

  auto e = inspect::explain_library(path, lib_machine("3.5"), policy);
  REQUIRE(e.has_value());
  CHECK(e->verdict.cannot_run());
  CAPTURE(e->library.bytes_read);
  CHECK(e->library.bytes_read < size / 1000);
}
