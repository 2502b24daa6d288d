/* The backend plugin ABI: the only thing that crosses from a backend shared library into the
 * core. Plain C: no exceptions, no C++ types, no std::function, no ownership transfer.
 *
 * A plugin is a shared library (a CMake MODULE) exporting exactly one entry point:
 *
 *     extern "C" const wheelfit_backend_v1* wheelfit_backend_entry(void);
 *
 * returning a pointer to a static descriptor that lives as long as the library (plugins are
 * never unloaded). The core reads `abi_version` first and refuses the plugin, naming the file
 * and both versions, unless it equals WHEELFIT_BACKEND_ABI_VERSION; only then does it read
 * anything else. `size` lets a later minor revision append fields.
 *
 * Strings are NUL-terminated UTF-8, owned by the plugin, valid for the library's lifetime.
 * An empty string means "none" (e.g. no index published).
 */
#ifndef WHEELFIT_REGISTRY_PLUGIN_ABI_H
#define WHEELFIT_REGISTRY_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WHEELFIT_BACKEND_ABI_VERSION 1u
#define WHEELFIT_BACKEND_ENTRY "wheelfit_backend_entry"

typedef struct wheelfit_backend_v1 {
  uint32_t abi_version;            /* WHEELFIT_BACKEND_ABI_VERSION; always the first field */
  uint32_t size;                   /* sizeof(wheelfit_backend_v1) as the plugin was built */
  const char* name;                /* "cuda", "rocm": the registry key, [a-z0-9_-]+ */
  const char* description;         /* one line for `wheelfit plugins` */
  const char* index_url;           /* default wheel index; "" when none is published */
  const char* index_env;           /* env var overriding the index, e.g. "COMFY_ENV_CUDA_WHEELS_INDEX" */
  const char* releases_repo;       /* GitHub Releases fallback "owner/name"; "" when none */
  const char* torch_label;         /* torch's local-label prefix for this backend: "cu", "rocm" */
  const char* torch_index_pattern; /* "https://download.pytorch.org/whl/cu{cuda_nodot}" */
  /* The backend's policy data (the JSON format of policies/README.md): its arch lists and
   * coverage data, fallback combos per CPU arch, the PyTorch matrix it relies on. "" = none. */
  const char* policy_json;
  /* Detects the backend's hardware and driver. Returns a NUL-terminated JSON object owned by
   * the plugin, valid until the next call of detect on this plugin (call from one thread):
   *   {"present": bool,                      hardware of this backend was found
   *    "facts": {"driver_version": "...", "cuda_driver": "...", "gpus": ["9.0", ...]},
   *    "provenance": {"driver_version": "NVML nvmlSystemGetDriverVersion", ...},
   *    "devices": [{"index": 0, "name": "...", "target": "9.0" | "gfx90a", "uuid": "..."}],
   *    "notes": ["NVML: libnvidia-ml.so.1 not found", ...],   why earlier probes did not answer
   *    "error": "..."}                        only when detection itself failed
   * Must never throw or abort: a plugin catches everything and reports it in "error".
   * NULL means the backend has no detection. */
  const char* (*detect)(void);
} wheelfit_backend_v1;

/* The entry point's type (the symbol is WHEELFIT_BACKEND_ENTRY). */
typedef const wheelfit_backend_v1* (*wheelfit_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* WHEELFIT_REGISTRY_PLUGIN_ABI_H */
