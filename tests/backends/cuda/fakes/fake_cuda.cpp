// A fake libcuda.so.1 for the CUDA detection tests (see fake_gpus.hpp for the modes). Like the
// real one it numbers devices fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and hides
// devices when CUDA_VISIBLE_DEVICES is set (here: all of them), so the tests prove the probe
// sets the first and unsets the second.
#include <cstdio>

#include "fake_gpus.hpp"

namespace {
std::string_view mode() { return fake::mode("WHEELFIT_FAKE_CUDA_MODE"); }
bool g_initialised = false;

bool pci_order() {
  const char* o = std::getenv("CUDA_DEVICE_ORDER");
  return o && std::string_view(o) == "PCI_BUS_ID";
}
int count() {
  if (std::getenv("CUDA_VISIBLE_DEVICES")) return 0;
  return fake::machine(mode()).count;
}
const fake::Gpu& gpu(int ordinal) {
  static fake::Machine m;
  m = fake::machine(mode());
  // Fastest-first order: here simply the reverse of the PCI bus order.
  int i = pci_order() ? ordinal : m.count - 1 - ordinal;
  return m.gpus[i];
}
}  // namespace

FAKE_EXPORT int cuInit(unsigned flags) {
  if (flags != 0) return 1;  // CUDA_ERROR_INVALID_VALUE
  auto m = mode();
  fake::misbehave(m);
  if (m == "error") return 999;  // CUDA_ERROR_UNKNOWN
  if (m == "no_gpu" || count() == 0) return 100;  // CUDA_ERROR_NO_DEVICE
  g_initialised = true;
  return 0;
}
FAKE_EXPORT int cuGetErrorString(int r, const char** text) {
  switch (r) {
    case 0: *text = "no error"; return 0;
    case 3: *text = "initialization error"; return 0;
    case 100: *text = "no CUDA-capable device is detected"; return 0;
    case 999: *text = "unknown error"; return 0;
    default: return 1;
  }
}
FAKE_EXPORT int cuDriverGetVersion(int* v) {
  *v = fake::machine(mode()).cuda;
  return 0;
}
FAKE_EXPORT int cuDeviceGetCount(int* n) {
  if (!g_initialised) return 3;  // CUDA_ERROR_NOT_INITIALIZED
  *n = count();
  return 0;
}
FAKE_EXPORT int cuDeviceGet(int* dev, int ordinal) {
  if (!g_initialised) return 3;
  if (ordinal < 0 || ordinal >= count()) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *dev = ordinal;
  return 0;
}
FAKE_EXPORT int cuDeviceGetAttribute(int* value, int attribute, int dev) {
  if (!g_initialised) return 3;
  if (attribute == 75) *value = gpu(dev).major;
  else if (attribute == 76) *value = gpu(dev).minor;
  else return 1;
  return 0;
}
FAKE_EXPORT int cuDeviceGetName(char* out, int size, int dev) {
  if (!g_initialised) return 3;
  fake::copy(out, static_cast<unsigned>(size), gpu(dev).name);
  return 0;
}
FAKE_EXPORT int cuDeviceGetUuid(unsigned char* bytes, int dev) {
  if (!g_initialised) return 3;
  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" back to 16 bytes.
  const char* u = gpu(dev).uuid + 4;
  int k = 0;
  for (int i = 0; u[i] && k < 16; ++i) {
    if (u[i] == '-') continue;
    unsigned v = 0;
    std::sscanf(u + i, "%2x", &v);
    bytes[k++] = static_cast<unsigned char>(v);
    ++i;
  }
  return 0;
}
