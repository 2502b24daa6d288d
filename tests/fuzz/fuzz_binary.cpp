// libFuzzer target: ELF / PE parsing (parse_binary, extension_suffix) and the backends' device-code
// readers on the same bytes (the CUDA fatbinary, the clang offload bundles of HIP).
// Any input must give a value or an error, never a crash, a hang or an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wheelfit/backends/cuda_fatbin.hpp"
#include "wheelfit/backends/rocm_offload.hpp"
#include "wheelfit/inspect/binary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto info = wheelfit::inspect::parse_binary(bytes, "fuzz.so", {".nv_fatbin", "__nv_relfatbin", ".hip_fatbin"});
  if (info) {
    for (const auto& s : info->device_code) {
      (void)wheelfit::backends::cuda::device_code_json(s.name, s.bytes);
      (void)wheelfit::backends::rocm::scan_offload_bundles(reinterpret_cast<const unsigned char*>(s.bytes.data()),
                                                           s.bytes.size());
    }
  }
  (void)wheelfit::backends::cuda::device_code_json("fuzz.fatbin", bytes);
  (void)wheelfit::backends::rocm::scan_offload_bundles(data, size);
  (void)wheelfit::inspect::extension_suffix(bytes);
  return 0;
}
