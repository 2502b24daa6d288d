#pragma once
// The machines the fake NVML and libcuda answer like, chosen at call time by
// WHEELFIT_FAKE_NVML_MODE / WHEELFIT_FAKE_CUDA_MODE (each falling back to WHEELFIT_FAKE_MODE):
//   one         one H100 (9.0), driver 580.65.06, CUDA 13.0
//   several     H100 (9.0) + RTX 3090 (8.6), driver 580.65.06, CUDA 13.0
//   old_driver  V100 (7.0), driver 470.256.02, CUDA 11.4
//   mig         one H100 with two MIG instances (NVML lists their UUIDs)
//   nocc        one H100 whose compute capability NVML cannot read (libcuda: as "one")
//   no_gpu      driver loaded, no GPU (NVML count 0; cuInit -> CUDA_ERROR_NO_DEVICE)
//   error       NVML: nvmlInit_v2 -> NVML_ERROR_DRIVER_NOT_LOADED; libcuda: cuInit -> 999
//   hang        the init call never returns
//   crash       the init call raises SIGSEGV (Windows: an access violation, 0xC0000005)
// Test-only code: never linked into wheelfit. On Windows the same sources build nvml.dll and
// nvcuda.dll (tests/windows.cmake).

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#ifdef _WIN32
#include <windows.h>
#define FAKE_EXPORT extern "C" __declspec(dllexport)
#else
#include <unistd.h>
#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))
#endif

namespace fake {

struct Gpu {
  const char* name;
  int major, minor;
  const char* uuid;
};

struct Machine {
  const char* driver;
  int cuda;  // 13000
  int count;
  Gpu gpus[2];
};

inline constexpr Gpu kH100{"NVIDIA H100 80GB HBM3", 9, 0, "GPU-11111111-2222-3333-4444-555555555555"};
inline constexpr Gpu kRtx3090{"NVIDIA GeForce RTX 3090", 8, 6, "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"};
inline constexpr Gpu kV100{"Tesla V100-SXM2-16GB", 7, 0, "GPU-77777777-8888-9999-0000-123456789abc"};

inline std::string_view mode(const char* specific) {
  if (const char* m = std::getenv(specific); m && *m) return m;
  if (const char* m = std::getenv("WHEELFIT_FAKE_MODE"); m && *m) return m;
  return "one";
}

inline Machine machine(std::string_view m) {
  if (m == "several") return {"580.65.06", 13000, 2, {kH100, kRtx3090}};
  if (m == "old_driver") return {"470.256.02", 11040, 1, {kV100, {}}};
  if (m == "no_gpu") return {"580.65.06", 13000, 0, {}};
  return {"580.65.06", 13000, 1, {kH100, {}}};
}

// The misbehaviours shared by both libraries' init calls.
inline void misbehave(std::string_view m) {
#ifdef _WIN32
  if (m == "hang") {
    for (;;) ::Sleep(INFINITE);
  }
  if (m == "crash") *static_cast<volatile int*>(nullptr) = 1;  // what a faulting driver does
#else
  if (m == "hang") {
    for (;;) ::pause();
  }
  if (m == "crash") std::raise(SIGSEGV);
#endif
}

inline void copy(char* out, unsigned size, const char* text) {
  if (size == 0) return;
  std::strncpy(out, text, size - 1);
  out[size - 1] = '\0';
}

}  // namespace fake
