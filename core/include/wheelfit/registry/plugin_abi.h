/* The backend plugin ABI: the only thing that crosses from a backend shared library into the
 * core. Plain C: no exceptions, no C++ types, no std::function, no ownership transfer.
 *
 * A plugin is a shared library (a CMake MODULE: lib<name>.so on Linux, <name>.dll on Windows)
 * exporting exactly one entry point (WHEELFIT_PLUGIN_EXPORT, below):
 *
 *     extern "C" const wheelfit_backend_v2* wheelfit_backend_entry(void);
 *
 * returning a pointer to a static descriptor that lives as long as the library (plugins are
 * never unloaded). The core reads `abi_version` first and refuses the plugin, naming the file
 * and both versions, unless it equals WHEELFIT_BACKEND_ABI_VERSION; only then does it read
 * anything else. `size` lets a later revision append fields: the core reads an appended field
 * only when `size` covers it (wheelfit_backend_has).
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

#define WHEELFIT_BACKEND_ABI_VERSION 2u

/* How a plugin exports its entry point: the one symbol a plugin exports. A Windows DLL exports
 * what is marked __declspec(dllexport) (GNU ld ignores a version script on PE); an ELF plugin is
 * built with -fvisibility=hidden, so the entry gets default visibility. Mark the entry's
 * definition with it (WHEELFIT_BACKEND_PLUGIN_ENTRY of plugin_support.hpp does):
 *     WHEELFIT_PLUGIN_EXPORT const wheelfit_backend_v2* wheelfit_backend_entry(void) { ... } */
#if defined(_WIN32)
#define WHEELFIT_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define WHEELFIT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define WHEELFIT_PLUGIN_EXPORT
#endif

/* Reads `length` bytes at `offset` of one section (0 is the section's first byte) into `buffer`
 * (read_device_code_at). Returns 0 when all `length` bytes were read, anything else when they
 * could not be (a range past the section's end, an I/O error): the core knows why and reports
 * it, so a plugin answers {"error": ...} and stops. Called only during that call, on its thread. */
typedef int (*wheelfit_section_read_fn)(void* ctx, uint64_t offset, size_t length, unsigned char* buffer);
#define WHEELFIT_BACKEND_ENTRY "wheelfit_backend_entry"

/* ABI 2 (docs/decisions/0010-backend-semantics.md): a backend supplies its semantics. What a
 * table can hold is data in policy_json (format 2: the line's notation, the local-label grammar,
 * the torch index pattern, the device code sections, the driver rule, arch lists, the PyTorch
 * matrix, family pins, fallback combos); the rules a table cannot hold are the functions below.
 *
 * Functions returning `const char*` return text owned by the plugin, valid until the next call
 * of any function of this plugin on the same thread (a thread_local buffer); they must never
 * throw or abort, and may be called from several threads at once. */
typedef struct wheelfit_backend_v2 {
  uint32_t abi_version;            /* WHEELFIT_BACKEND_ABI_VERSION; always the first field */
  uint32_t size;                   /* sizeof(wheelfit_backend_v2) as the plugin was built */
  const char* name;                /* "cuda", "rocm": the registry key, [a-z0-9_-]+ */
  const char* description;         /* one line for `wheelfit plugins` */
  const char* index_url;           /* default wheel index; "" when none is published */
  const char* index_env;           /* env var overriding the index, e.g. "COMFY_ENV_CUDA_WHEELS_INDEX" */
  const char* releases_repo;       /* GitHub Releases fallback "owner/name"; "" when none */
  /* The backend's policy data (policies/README.md, format 2). Required: it names the line and
   * the label grammar without which nothing can be resolved. */
  const char* policy_json;
  /* Detects the backend's hardware and driver. Returns a JSON object:
   *   {"present": bool,                      hardware of this backend was found
   *    "facts": {"driver_version": "...", "driver_line": "...", "gpus": ["9.0", ...]},
   *    "provenance": {"driver_version": "NVML nvmlSystemGetDriverVersion", ...},
   *    "devices": [{"index": 0, "name": "...", "target": "9.0" | "gfx90a", "uuid": "..."}],
   *    "notes": ["NVML: libnvidia-ml.so.1 not found", ...],   why earlier probes did not answer
   *    "error": "..."}                        only when detection itself failed
   * NULL means the backend has no detection. */
  const char* (*detect)(void);
  /* The device-target grammar: one target as a user or a detection writes it ("sm_90", " 9.0",
   * "gfx90a:xnack-"). Sets *ok to 1 and returns the canonical text, or sets *ok to 0 and
   * returns why it is not a target (without repeating the input). Required. */
  const char* (*parse_target)(const char* text, int* ok);
  /* The same for a target list ("7.5;8.0;9.0+PTX", "gfx90a;gfx1100"), as policy data and
   * device code write them. Required. */
  const char* (*parse_target_list)(const char* text, int* ok);
  /* The coverage rule: how the code of a target list runs on one canonical device target.
   * Returns 1 (natively), 2 (by JIT: a slow first launch), 0 (it does not run there), or -1
   * (the list or the target is malformed). *via is set to the list entry that serves the
   * device, as the backend's tools name it ("sm_90 SASS", "compute_90 PTX", "gfx90a") (1, 2),
   * "" (0), or the reason (-1). Required. */
  int (*match_targets)(const char* list, const char* target, const char** via);
  /* Reads the device code in one section named by the policy's backend.device.code_sections
   * (its raw bytes). Returns a JSON object {"list": "<a target list for match_targets>",
   * "entries": {"<kind>": ["<target>", ...]}} (the kinds are the backend's: "sass" and "ptx"
   * for CUDA, "code_objects" for ROCm) or {"error": "..."}. NULL: the backend reads no device
   * code (explain then reports the demand as not checked). */
  const char* (*read_device_code)(const char* section, const unsigned char* bytes, size_t size);

  /* ---- appended in ABI 2 revision 1 (docs/decisions/0016-wheel-variants.md). The core reads a
   * field below only when `size` reaches past it (wheelfit_backend_has), so a plugin built
   * against the first revision still loads, without it. */

  /* The backend's native PEP 825 variant provider: the variant properties this machine supports,
   * computed from its facts (never by running a provider's Python plugin). `facts_json` is a
   * JSON object with the machine's known facts, as detection names them ("driver_version",
   * "driver_line", "gpus": [canonical targets]); an unknown fact is absent. Returns a JSON object:
   *   {"properties": {"<namespace>": {"<feature>": ["<value>", ...]}},
   *                      the supported values of each feature, best first, features in priority order
   *    "devices": {"<namespace> :: <feature>": {"<target>": ["<value>", ...]}},
   *                      optional: per device target, the values that serve that one device (the
   *                      core then also demands that every GPU is served by one of a variant's values)
   *    "notes": ["..."]}  how a list was computed where a reader should know (optional)
   * or {"error": "..."}. NULL: the backend provides no variant namespace. */
  const char* (*variant_properties)(const char* facts_json);

  /* ---- appended in ABI 2 revision 2 (issue 32: torch judged against the GPUs). */

  /* A target list described by kind, as read_device_code describes a section: returns the same
   * JSON object {"list": "<canonical list>", "entries": {"<kind>": ["<target>", ...]}} (CUDA:
   * "7.5;9.0+PTX" -> {"sass": ["sm_75", "sm_90"], "ptx": ["compute_90"]}), or {"error": "..."}
   * for a malformed list. NULL: the core reports the list as written, without kinds. */
  const char* (*describe_target_list)(const char* list);

  /* ---- appended in ABI 2 revision 3 (issue 32: torch's own library, gigabytes, read by its headers). */

  /* read_device_code for a section of `size` bytes that the core does not hold: the plugin asks
   * for the bytes it needs through `read(ctx, offset, length, buffer)` (headers, never payloads
   * it can skip) and answers as read_device_code does. A size or an offset in the bytes that
   * passes `size`, or a walk that would not advance, is {"error": "..."} naming the offset; a
   * failed `read` too. NULL: the core reads the section whole and calls read_device_code. */
  const char* (*read_device_code_at)(const char* section, uint64_t size, wheelfit_section_read_fn read, void* ctx);
} wheelfit_backend_v2;

/* The size of the first revision of ABI 2 (up to read_device_code): the smallest descriptor
 * the core accepts. */
#define WHEELFIT_BACKEND_V2_MIN_SIZE (offsetof(wheelfit_backend_v2, read_device_code) + sizeof(void*))
/* Whether descriptor `d` (of `d->size` bytes) carries `field`. */
#define wheelfit_backend_has(d, field) \
  ((d)->size >= offsetof(wheelfit_backend_v2, field) + sizeof((d)->field))

/* The entry point's type (the symbol is WHEELFIT_BACKEND_ENTRY). */
typedef const wheelfit_backend_v2* (*wheelfit_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* WHEELFIT_REGISTRY_PLUGIN_ABI_H */
