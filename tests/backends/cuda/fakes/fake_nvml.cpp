// A fake libnvidia-ml.so.1 for the CUDA detection tests (see fake_gpus.hpp for the modes).
#include "fake_gpus.hpp"

namespace {
struct Handle {
  int gpu;
  int mig;  // -1 for the GPU itself
};
Handle g_handles[2] = {{0, -1}, {1, -1}};
Handle g_migs[2] = {{0, 0}, {0, 1}};
const char* const kMigUuids[2] = {"MIG-aaaa1111-2222-3333-4444-555555555555", "MIG-bbbb1111-2222-3333-4444-555555555555"};

std::string_view mode() { return fake::mode("WHEELFIT_FAKE_NVML_MODE"); }
}  // namespace

FAKE_EXPORT int nvmlInit_v2() {
  auto m = mode();
  fake::misbehave(m);
  if (m == "error") return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  return 0;
}
FAKE_EXPORT int nvmlShutdown() { return 0; }
FAKE_EXPORT const char* nvmlErrorString(int r) {
  switch (r) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}
FAKE_EXPORT int nvmlSystemGetDriverVersion(char* out, unsigned size) {
  fake::copy(out, size, fake::machine(mode()).driver);
  return 0;
}
FAKE_EXPORT int nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = fake::machine(mode()).cuda;
  return 0;
}
FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = static_cast<unsigned>(fake::machine(mode()).count);
  return 0;
}
FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, Handle** h) {
  if (i >= static_cast<unsigned>(fake::machine(mode()).count)) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *h = &g_handles[i];
  return 0;
}
FAKE_EXPORT int nvmlDeviceGetCudaComputeCapability(Handle* h, int* major, int* minor) {
  if (mode() == "nocc") return 3;  // NVML_ERROR_NOT_SUPPORTED
  const auto& g = fake::machine(mode()).gpus[h->gpu];
  *major = g.major;
  *minor = g.minor;
  return 0;
}
FAKE_EXPORT int nvmlDeviceGetName(Handle* h, char* out, unsigned size) {
  fake::copy(out, size, fake::machine(mode()).gpus[h->gpu].name);
  return 0;
}
FAKE_EXPORT int nvmlDeviceGetUUID(Handle* h, char* out, unsigned size) {
  fake::copy(out, size, h->mig >= 0 ? kMigUuids[h->mig] : fake::machine(mode()).gpus[h->gpu].uuid);
  return 0;
}
FAKE_EXPORT int nvmlDeviceGetMaxMigDeviceCount(Handle* h, unsigned* n) {
  if (h->mig >= 0) return 2;
  *n = mode() == "mig" ? 7 : 0;
  return mode() == "mig" ? 0 : 3;
}
FAKE_EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(Handle* h, unsigned i, Handle** out) {
  if (mode() != "mig" || h->gpu != 0 || i >= 2) return 6;  // NVML_ERROR_NOT_FOUND
  *out = &g_migs[i];
  return 0;
}
