// bench_torch_archs: reading torch's own arch list from its library (issue 32 item 5), next to
// reading its fatbin section whole, in the same run.
//
// Writes a sparse libtorch_cuda.so of --size-mb (default 1536: 1.5 GiB) to a temp dir: a real
// ELF header and section header table, and a .nv_fatbin of --fatbin-mb (default 1024) holding one
// container with --entries (default 40) entries, each a real fatbin entry header whose payload is
// left as a hole (ftruncate; the file takes a few kilobytes of disk). Then:
//   headers   inspect::read_library_archs: the ELF headers, the container and entry headers
//             only (DeviceRules::read_code_at); bytes read counted by the file source
//   baseline  the .nv_fatbin section read whole (pread) and handed to DeviceRules::read_code,
//             what explain and doctor did with a library held in memory
// Each time is the best of --reps runs. Holes read as zeros from the page cache, so the
// baseline's time is a copy of the section, not a disk read: on a real 1 GiB libtorch_cuda.so
// from disk it is slower still. Plain std::chrono.
//
//   bench_torch_archs [--size-mb N] [--fatbin-mb N] [--entries N] [--reps N]

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_args.hpp"
#include "inspect/binary_writer.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/inspect/library.hpp"

using namespace wheelfit;
namespace bin = wheelfit::test::bin;

namespace {

// The baseline: the section read whole with pread, then the backend's in-memory reader.
std::size_t read_whole(const std::string& path, std::uint64_t offset, std::uint64_t size) {
  std::string bytes(size, '\0');
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::uint64_t done = 0;
  while (fd >= 0 && done < size) {
    const ssize_t got = ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(offset + done));
    if (got <= 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  if (fd >= 0) ::close(fd);
  auto code = test::cuda_policy().rules()->read_code(".nv_fatbin", bytes);
  if (!code || done != size) {
    std::fprintf(stderr, "bench_torch_archs: the whole-section read failed\n");
    std::exit(1);
  }
  return code->entries.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t size_mb = 1536, fatbin_mb = 1024;
  unsigned entries = 40;
  int reps = 3;
  bench::parse_args("bench_torch_archs", argc, argv,
                    {{"--size-mb", [&](const std::string& v) { size_mb = std::strtoull(v.c_str(), nullptr, 10); }},
                     {"--fatbin-mb", [&](const std::string& v) { fatbin_mb = std::strtoull(v.c_str(), nullptr, 10); }},
                     {"--entries", [&](const std::string& v) { entries = static_cast<unsigned>(std::max(1, std::atoi(v.c_str()))); }},
                     {"--reps", [&](const std::string& v) { reps = bench::at_least_one(v); }}},
                    "--size-mb N --fatbin-mb N --entries N --reps N");
  // torch's build list, round-robin: SASS sm_50..sm_90 and PTX compute_90.
  const std::vector<bin::FatEntry> kinds{{2, 50}, {2, 60}, {2, 70}, {2, 75}, {2, 80}, {2, 86}, {2, 90}, {1, 90, 0x8011, 80}};
  std::vector<bin::FatEntry> list;
  for (unsigned i = 0; i < entries; ++i) list.push_back(kinds[i % kinds.size()]);
  const std::uint64_t payload = ((fatbin_mb << 20) / entries) / 8 * 8;

  test::TempDir dir;
  const std::string path = (dir / "libtorch_cuda.so").string();
  const auto lib = bin::write_sparse_library(path, size_mb << 20, list, payload);
  if (lib.file_size == 0) {
    std::fprintf(stderr, "bench_torch_archs: could not write the sparse library %s (--size-mb too small for --fatbin-mb?)\n",
                 path.c_str());
    return 1;
  }
  std::printf("bench_torch_archs: a sparse %.2f GiB libtorch_cuda.so, .nv_fatbin of %.2f GiB: %u entries of %.1f MiB "
              "(%llu header bytes written)\n",
              static_cast<double>(lib.file_size) / (1 << 30), static_cast<double>(lib.fatbin_size) / (1 << 30), entries,
              static_cast<double>(payload) / (1 << 20), static_cast<unsigned long long>(lib.header_bytes));

  auto code = inspect::read_library(path, test::cuda_policy());  // what one reading reads
  if (!code) {
    std::fprintf(stderr, "bench_torch_archs: %s\n", code.error().message.c_str());
    return 1;
  }
  const std::uint64_t bytes_read = code->bytes_read;
  std::string arch_list, source;
  const double one_s = bench::best_of(reps, [&] {
    auto archs = inspect::read_library_archs(path, test::cuda_policy());
    if (!archs) {
      std::fprintf(stderr, "bench_torch_archs: %s\n", archs.error().message.c_str());
      std::exit(1);
    }
    arch_list = archs->list;
    source = archs->source;
  });
  const double whole_s = bench::best_of(reps, [&] { read_whole(path, lib.fatbin_offset, lib.fatbin_size); });
  const double fraction = 100.0 * static_cast<double>(bytes_read) / static_cast<double>(lib.file_size);
  std::printf("  headers   %llu bytes read (%.5f%% of the file; target <= 1%%), %.3f ms: %s\n    (%s)\n",
              static_cast<unsigned long long>(bytes_read), fraction, one_s * 1e3, arch_list.c_str(), source.c_str());
  std::printf("  baseline  %llu bytes read (the section whole), %.1f ms\n", static_cast<unsigned long long>(lib.fatbin_size),
              whole_s * 1e3);
  std::printf("  headers / baseline: %.6f of the bytes, %.1fx faster\n",
              static_cast<double>(bytes_read) / static_cast<double>(lib.fatbin_size), whole_s / one_s);
  return fraction <= 1.0 ? 0 : 1;
}
