// Probes 1 and 2: NVML and libcuda, each loaded only inside a forked child (see
// child_process.hpp; on Windows inside wheelfit-probe.exe: nvml.dll and nvcuda.dll from System32,
// nvml.dll also from the NVSMI folder). The child answers with one JSON object on its result pipe
// (Windows: its stdout):
//   {"driver_version": "...", "cuda_driver": "...", "devices": [{"index", "name", "cc", "uuid",
//    "mig": [...]}], "notes": [...]}            or            {"error": "..."}
// The types and prototypes below are the few NVML / CUDA driver API declarations we need (no
// vendor headers are required to build).

#ifdef _WIN32
#include <windows.h>

#include <cstdlib>

#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/util/windows_text.hpp"
#else
#include <dlfcn.h>
#include <unistd.h>
#endif

#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "child_process.hpp"
#include "wheelfit/backends/cuda_detect.hpp"

namespace wheelfit::backends::cuda {
namespace {

namespace json = boost::json;

// ---- NVML (nvml.h) ----
using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr unsigned kNvmlBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, ..._UUID_V2_...

// ---- CUDA driver API (cuda.h) ----
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// Loads `library` (a name the system's loader searches, or a path); nullptr and `why` on failure.
void* open_library(const std::string& library, std::string& why) {
#ifdef _WIN32
  // A bare name only from System32 (where the driver installs nvml.dll and nvcuda.dll), never
  // from the current or the executable's folder; nvml.dll of older drivers from NVSMI.
  const bool bare = library.find_first_of("/\\:") == std::string::npos;
  HMODULE lib = ::LoadLibraryExW(util::win::widen(library).c_str(), nullptr,
                                 bare ? LOAD_LIBRARY_SEARCH_SYSTEM32 : LOAD_WITH_ALTERED_SEARCH_PATH);
  DWORD error = lib ? 0 : ::GetLastError();
  if (!lib && bare && library == "nvml.dll") {
    if (auto pf = util::env_utf8("ProgramW6432"); pf && !pf->empty()) {
      const std::string nvsmi = *pf + "\\NVIDIA Corporation\\NVSMI\\nvml.dll";
      lib = ::LoadLibraryExW(util::win::widen(nvsmi).c_str(), nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
      if (!lib) why = "not in System32 (" + util::win::error_text(error) + ") nor " + nvsmi + " (" +
                      util::win::error_text(::GetLastError()) + ")";
      return lib;
    }
  }
  if (!lib) why = util::win::error_text(error);
  return lib;
#else
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* error = ::dlerror();
    why = error ? error : "unknown dlopen error";
  }
  return lib;
#endif
}

// Looks up `name` in `lib` as a function pointer of type F.
template <class F>
F sym(void* lib, const char* name) {
#ifdef _WIN32
  return reinterpret_cast<F>(reinterpret_cast<void (*)()>(::GetProcAddress(static_cast<HMODULE>(lib), name)));
#else
  return reinterpret_cast<F>(::dlsym(lib, name));
#endif
}

struct Missing {
  std::string name;
};

template <class F>
F need(void* lib, const char* name) {
  F f = sym<F>(lib, name);
  if (!f) throw Missing{name};
  return f;
}

std::string from_buffer(const char* buf, std::size_t size) {
  std::size_t n = 0;
  while (n < size && buf[n] != '\0') ++n;
  return std::string(buf, n);
}

#ifndef _WIN32
int write_result(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) return 1;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}
#endif

json::object error_result(std::string message) {
  json::object o;
  o["error"] = message;
  return o;
}

// The per-device entry points of NVML nvml_child reads (mig_count and mig_handle may be null).
struct NvmlDeviceApi {
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*capability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*mig_count)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*mig_handle)(nvmlDevice_t, unsigned, nvmlDevice_t*) = nullptr;
};

// GPU `i` as NVML lists it: its name, UUID, compute capability and MIG instances, read through
// `buf` (the child's one buffer); what failed goes to `notes` (`what` words a failed call).
template <class What>
json::object nvml_device(const NvmlDeviceApi& api, unsigned i, char (&buf)[kNvmlBufferSize], const What& what,
                         json::array& notes) {
  json::object d;
  d["index"] = i;
  nvmlDevice_t h = nullptr;
  if (auto r = api.handle(i, &h); r != NVML_SUCCESS) {
    notes.emplace_back("GPU " + std::to_string(i) + ": " + what("nvmlDeviceGetHandleByIndex_v2", r));
    return d;
  }
  if (api.name(h, buf, sizeof buf) == NVML_SUCCESS) d["name"] = from_buffer(buf, sizeof buf);
  if (api.uuid(h, buf, sizeof buf) == NVML_SUCCESS) d["uuid"] = from_buffer(buf, sizeof buf);
  int major = 0, minor = 0;
  if (auto r = api.capability(h, &major, &minor); r == NVML_SUCCESS && major > 0 && minor >= 0) {
    d["cc"] = std::to_string(major) + "." + std::to_string(minor);
  } else {
    notes.emplace_back("GPU " + std::to_string(i) + ": " +
                       (r == NVML_SUCCESS ? std::string("nvmlDeviceGetCudaComputeCapability returned ") +
                                                std::to_string(major) + "." + std::to_string(minor)
                                          : what("nvmlDeviceGetCudaComputeCapability", r)));
  }
  unsigned max_mig = 0;
  if (api.mig_count && api.mig_handle && api.mig_count(h, &max_mig) == NVML_SUCCESS) {
    json::array migs;
    for (unsigned m = 0; m < max_mig && m < 64; ++m) {
      nvmlDevice_t mh = nullptr;
      if (api.mig_handle(h, m, &mh) != NVML_SUCCESS || !mh) continue;
      if (api.uuid(mh, buf, sizeof buf) == NVML_SUCCESS) migs.emplace_back(from_buffer(buf, sizeof buf));
    }
    if (!migs.empty()) d["mig"] = std::move(migs);
  }
  return d;
}

// ---- the child side of probe 1 ----
json::object nvml_child(const std::string& library) {
  std::string why;
  void* lib = open_library(library, why);
  if (!lib) return error_result("cannot load " + library + ": " + why);
  using ErrorString = const char* (*)(nvmlReturn_t);
  auto error_string = sym<ErrorString>(lib, "nvmlErrorString");
  auto what = [&](const char* call, nvmlReturn_t r) {
    std::string s = std::string(call) + " failed: ";
    const char* text = error_string ? error_string(r) : nullptr;
    s += text ? text : "error";
    s += " (" + std::to_string(r) + ")";
    return s;
  };
  try {
    auto init = need<nvmlReturn_t (*)()>(lib, "nvmlInit_v2");
    auto shutdown = need<nvmlReturn_t (*)()>(lib, "nvmlShutdown");
    auto driver_version = need<nvmlReturn_t (*)(char*, unsigned)>(lib, "nvmlSystemGetDriverVersion");
    auto cuda_version = sym<nvmlReturn_t (*)(int*)>(lib, "nvmlSystemGetCudaDriverVersion_v2");
    if (!cuda_version) cuda_version = sym<nvmlReturn_t (*)(int*)>(lib, "nvmlSystemGetCudaDriverVersion");
    auto count = need<nvmlReturn_t (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
    NvmlDeviceApi api;
    api.handle = need<decltype(api.handle)>(lib, "nvmlDeviceGetHandleByIndex_v2");
    api.capability = need<decltype(api.capability)>(lib, "nvmlDeviceGetCudaComputeCapability");
    api.name = need<decltype(api.name)>(lib, "nvmlDeviceGetName");
    api.uuid = need<decltype(api.uuid)>(lib, "nvmlDeviceGetUUID");
    api.mig_count = sym<decltype(api.mig_count)>(lib, "nvmlDeviceGetMaxMigDeviceCount");
    api.mig_handle = sym<decltype(api.mig_handle)>(lib, "nvmlDeviceGetMigDeviceHandleByIndex");

    if (auto r = init(); r != NVML_SUCCESS) return error_result(what("nvmlInit_v2", r));
    json::object out;
    json::array notes;
    char buf[kNvmlBufferSize] = {};
    if (auto r = driver_version(buf, sizeof buf); r == NVML_SUCCESS) {
      out["driver_version"] = from_buffer(buf, sizeof buf);
    } else {
      notes.emplace_back(what("nvmlSystemGetDriverVersion", r));
    }
    if (!cuda_version) {
      notes.emplace_back("no nvmlSystemGetCudaDriverVersion_v2 in " + library);
    } else if (int v = 0; auto r = cuda_version(&v)) {
      notes.emplace_back(what("nvmlSystemGetCudaDriverVersion_v2", r));
    } else if (auto text = cuda_version_text(v)) {
      out["cuda_driver"] = *text;
    } else {
      notes.emplace_back("nvmlSystemGetCudaDriverVersion_v2 returned " + std::to_string(v));
    }
    unsigned n = 0;
    if (auto rc = count(&n); rc != NVML_SUCCESS) {
      notes.emplace_back(what("nvmlDeviceGetCount_v2", rc));
    } else {
      json::array devices;
      for (unsigned i = 0; i < n; ++i) devices.emplace_back(nvml_device(api, i, buf, what, notes));
      out["devices"] = std::move(devices);
    }
    shutdown();
    if (!notes.empty()) out["notes"] = std::move(notes);
    return out;
  } catch (const Missing& m) {
    return error_result(library + " has no " + m.name);
  }
}

// The per-device entry points of libcuda libcuda_child reads (uuid may be null).
struct CudaDeviceApi {
  CUresult (*get)(CUdevice*, int) = nullptr;
  CUresult (*attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*name)(char*, int, CUdevice) = nullptr;
  CUresult (*uuid)(CUuuid*, CUdevice) = nullptr;
};

// GPU `i` as the driver API lists it: its name, compute capability and UUID; what failed goes to
// `notes` (`what` words a failed call).
template <class What>
json::object cuda_device(const CudaDeviceApi& api, int i, const What& what, json::array& notes) {
  json::object d;
  d["index"] = i;
  CUdevice dev = 0;
  if (auto r = api.get(&dev, i); r != CUDA_SUCCESS) {
    notes.emplace_back("GPU " + std::to_string(i) + ": " + what("cuDeviceGet", r));
    return d;
  }
  char buf[256] = {};
  if (api.name(buf, static_cast<int>(sizeof buf), dev) == CUDA_SUCCESS) d["name"] = from_buffer(buf, sizeof buf);
  int major = 0, minor = 0;
  auto rmaj = api.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  auto rmin = api.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (rmaj == CUDA_SUCCESS && rmin == CUDA_SUCCESS && major > 0 && minor >= 0) {
    d["cc"] = std::to_string(major) + "." + std::to_string(minor);
  } else {
    notes.emplace_back("GPU " + std::to_string(i) + ": " + what("cuDeviceGetAttribute", rmaj != CUDA_SUCCESS ? rmaj : rmin));
  }
  CUuuid u{};
  if (api.uuid && api.uuid(&u, dev) == CUDA_SUCCESS) {
    char text[64];
    const unsigned char* b = u.bytes;
    std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                  b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    d["uuid"] = text;
  }
  return d;
}

// ---- the child side of probe 2 ----
json::object libcuda_child(const std::string& library) {
  // Enumerate every GPU in PCI bus order (NVML's order); CUDA_VISIBLE_DEVICES is applied by
  // the parent to the full list, the same way for every probe.
#ifdef _WIN32
  ::_putenv_s("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  ::_putenv_s("CUDA_VISIBLE_DEVICES", "");  // "" removes it
#else
  ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
#endif
  std::string why;
  void* lib = open_library(library, why);
  if (!lib) return error_result("cannot load " + library + ": " + why);
  using ErrorString = CUresult (*)(CUresult, const char**);
  auto error_string = sym<ErrorString>(lib, "cuGetErrorString");
  auto what = [&](const char* call, CUresult r) {
    std::string s = std::string(call) + " failed: ";
    const char* text = nullptr;
    if (!error_string || error_string(r, &text) != CUDA_SUCCESS || !text) text = "error";
    s += text;
    s += " (" + std::to_string(r) + ")";
    return s;
  };
  try {
    auto init = need<CUresult (*)(unsigned)>(lib, "cuInit");
    auto driver_version = need<CUresult (*)(int*)>(lib, "cuDriverGetVersion");
    auto count = need<CUresult (*)(int*)>(lib, "cuDeviceGetCount");
    CudaDeviceApi api;
    api.get = need<decltype(api.get)>(lib, "cuDeviceGet");
    api.attribute = need<decltype(api.attribute)>(lib, "cuDeviceGetAttribute");
    api.name = need<decltype(api.name)>(lib, "cuDeviceGetName");
    api.uuid = sym<decltype(api.uuid)>(lib, "cuDeviceGetUuid");

    json::object out;
    json::array notes;
    int v = 0;
    if (auto r = driver_version(&v); r != CUDA_SUCCESS) return error_result(what("cuDriverGetVersion", r));
    auto cuda = cuda_version_text(v);
    if (!cuda) return error_result("cuDriverGetVersion returned " + std::to_string(v));
    if (auto r = init(0); r == CUDA_ERROR_NO_DEVICE) {
      out["cuda_driver"] = *cuda;
      out["devices"] = json::array();
      notes.emplace_back(what("cuInit", r));
      out["notes"] = std::move(notes);
      return out;
    } else if (r != CUDA_SUCCESS) {
      // The library may not match the kernel driver: do not trust its version either.
      return error_result(what("cuInit", r));
    }
    out["cuda_driver"] = *cuda;
    int n = 0;
    if (auto rc = count(&n); rc != CUDA_SUCCESS) {
      notes.emplace_back(what("cuDeviceGetCount", rc));
    } else {
      json::array devices;
      for (int i = 0; i < n; ++i) devices.emplace_back(cuda_device(api, i, what, notes));
      out["devices"] = std::move(devices);
    }
    if (!notes.empty()) out["notes"] = std::move(notes);
    return out;
  } catch (const Missing& m) {
    return error_result(library + " has no " + m.name);
  }
}

// ---- the parent side ----
std::optional<std::string> string_at(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_string()) return std::string(v->as_string());
  return std::nullopt;
}

ProbeResult read_child_answer(std::string_view probe, const detail::ChildOutcome& outcome,
                              std::chrono::milliseconds timeout) {
  using Kind = detail::ChildOutcome::Kind;
  if (outcome.kind != Kind::exited || (outcome.status != 0 && outcome.out.empty())) {
    return Error(Errc::io_error, std::string(probe) + " probe " + detail::describe(outcome, timeout));
  }
  boost::system::error_code ec;
  json::value v = json::parse(outcome.out, ec);
  if (ec || !v.is_object()) {
    return Error(Errc::invalid_input, std::string(probe) + " probe gave no readable answer (" +
                                          (outcome.out.empty() ? std::string("nothing") : "'" + outcome.out.substr(0, 80) + "'") +
                                          ", " + detail::describe(outcome, timeout) + ")");
  }
  const auto& o = v.as_object();
  if (auto err = string_at(o, "error")) return Error(Errc::not_found, std::string(probe) + ": " + *err);
  ProbeFacts facts;
  facts.driver_version = string_at(o, "driver_version");
  if (facts.driver_version && !is_driver_version(*facts.driver_version)) {
    facts.notes.push_back(std::string(probe) + ": unexpected driver version '" + *facts.driver_version + "'");
    facts.driver_version.reset();
  }
  facts.cuda_driver = string_at(o, "cuda_driver");
  if (auto* devs = o.if_contains("devices"); devs && devs->is_array()) {
    std::vector<Device> list;
    for (const auto& dv : devs->as_array()) {
      if (!dv.is_object()) continue;
      const auto& d = dv.as_object();
      Device dev;
      if (auto* i = d.if_contains("index"); i && i->is_int64()) dev.index = static_cast<int>(i->get_int64());
      else if (i && i->is_uint64()) dev.index = static_cast<int>(i->get_uint64());
      dev.name = string_at(d, "name").value_or("");
      dev.uuid = string_at(d, "uuid").value_or("");
      dev.compute_capability = string_at(d, "cc");
      if (auto* m = d.if_contains("mig"); m && m->is_array()) {
        for (const auto& u : m->as_array()) {
          if (u.is_string()) dev.mig_uuids.emplace_back(u.as_string());
        }
      }
      list.push_back(std::move(dev));
    }
    facts.devices = std::move(list);
  }
  if (auto* notes = o.if_contains("notes"); notes && notes->is_array()) {
    for (const auto& n : notes->as_array()) {
      if (n.is_string()) facts.notes.push_back(std::string(probe) + ": " + std::string(n.as_string()));
    }
  }
  if (!facts.driver_version && !facts.cuda_driver && !facts.devices) {
    std::string why = facts.notes.empty() ? std::string(probe) + ": answered nothing" : facts.notes.front();
    return Error(Errc::not_found, why);
  }
  return facts;
}

#ifdef _WIN32
// Whether LoadLibraryEx could find a bare DLL name where open_library looks: System32, and for
// nvml.dll the NVSMI folder. A "no" lets a machine without the driver skip the probe program.
bool loader_may_find(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  wchar_t system[MAX_PATH];
  const UINT n = ::GetSystemDirectoryW(system, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return true;  // cannot tell: let the loader decide
  if (fs::exists(fs::path(std::wstring(system, n)) / util::win::widen(name), ec)) return true;
  if (auto pf = util::env_utf8("ProgramW6432"); name == "nvml.dll" && pf && !pf->empty()) {
    return fs::exists(fs::path(util::win::widen(*pf)) / L"NVIDIA Corporation" / L"NVSMI" / L"nvml.dll", ec);
  }
  return false;
}
constexpr std::string_view kNotFoundWhere = "not in System32 (nor, for nvml.dll, the NVSMI folder)";
#else
// Whether the dynamic loader could find a soname, answered without loading it: LD_LIBRARY_PATH,
// the loader's cache (/etc/ld.so.cache names every library ldconfig indexed) and the default
// folders. A "no" lets a machine without the driver skip the child process (~5 ms each).
bool loader_may_find(const std::string& soname) {
  std::error_code ec;
  auto in = [&](const std::string& dir) { return !dir.empty() && std::filesystem::exists(dir + "/" + soname, ec); };
  if (const char* lp = std::getenv("LD_LIBRARY_PATH")) {
    std::string_view rest(lp);
    while (true) {
      const auto colon = rest.find(':');
      if (in(std::string(rest.substr(0, colon)))) return true;
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                          "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}) {
    if (in(dir)) return true;
  }
  std::ifstream cache("/etc/ld.so.cache", std::ios::binary);
  if (!cache) return true;  // no cache to consult: let the loader decide
  const std::string bytes((std::istreambuf_iterator<char>(cache)), std::istreambuf_iterator<char>());
  return bytes.find(soname) != std::string::npos;
}

constexpr std::string_view kNotFoundWhere = "not in LD_LIBRARY_PATH, /etc/ld.so.cache or the default library folders";
#endif

// The child's answer for `library`, as JSON text (an error answer when it throws).
std::string child_answer(json::object (*child)(const std::string&), const std::string& library) {
  json::object result;
  try {
    result = child(library);
  } catch (const std::exception& e) {
    result = error_result(std::string("failed: ") + e.what());
  }
  return json::serialize(result);
}

ProbeResult run_library_probe(std::string_view probe, json::object (*child)(const std::string&),
                              const std::string& library, std::chrono::milliseconds timeout) {
  // A path that does not exist, or a name the loader cannot find, needs no child process.
  std::error_code ec;
#ifdef _WIN32
  const bool is_path = library.find_first_of("/\\:") != std::string::npos;
  const auto as_path = std::filesystem::path(util::win::widen(library));
#else
  const bool is_path = library.find('/') != std::string::npos;
  const auto as_path = std::filesystem::path(library);
#endif
  if (is_path && !std::filesystem::exists(as_path, ec)) {
    return Error(Errc::not_found, std::string(probe) + ": cannot load " + library + ": no such file");
  }
  if (!is_path && !loader_may_find(library)) {
    return Error(Errc::not_found, std::string(probe) + ": cannot load " + library + ": " + std::string(kNotFoundWhere));
  }
#ifdef _WIN32
  (void)child;
  auto outcome = detail::run_probe_program(probe == "NVML" ? "nvml" : "cuda", library, timeout);
#else
  auto outcome = detail::run_in_child([&](int fd) { return write_result(fd, child_answer(child, library)); }, timeout);
#endif
  return read_child_answer(probe, outcome, timeout);
}

}  // namespace

#ifdef _WIN32
int detail::probe_program_main(std::string_view probe, const std::string& library, std::string& answer) {
  if (probe == "nvml") answer = child_answer(&nvml_child, library);
  else if (probe == "cuda") answer = child_answer(&libcuda_child, library);
  else {
    answer = json::serialize(error_result("unknown probe '" + std::string(probe) + "' (nvml or cuda)"));
    return 2;
  }
  return 0;
}
#endif

ProbeResult probe_nvml(const std::string& library, std::chrono::milliseconds timeout) {
  return run_library_probe("NVML", &nvml_child, library, timeout);
}

ProbeResult probe_libcuda(const std::string& library, std::chrono::milliseconds timeout) {
  return run_library_probe("libcuda", &libcuda_child, library, timeout);
}

}  // namespace wheelfit::backends::cuda
