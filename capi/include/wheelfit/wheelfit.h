/* The stable C API of wheelfit: JSON in, JSON out, in libwheelfit.so (SONAME libwheelfit.so.0;
 * wheelfit.dll with its import library libwheelfit.dll.a on Windows).
 * Only wheelfit_* symbols are exported; no C++ exception crosses it.
 *
 * Every call that takes a request returns the exit code the CLI would exit with for the same work
 * (0 resolved, 1 nothing fits, 2 bad request, 3 a backend with no index, 4 the index could not
 * be read, 70 a bug) and sets *result_json to one JSON object owned by the caller (free it with
 * wheelfit_free): the object `wheelfit resolve --json` prints, or {"error": {"exit_code",
 * "message"}}. *result_json is NULL only when memory ran out.
 *
 * A resolve request is one JSON object with these keys (any other key is an error naming it):
 *   "configs":  ["path/comfy-env.toml", ...]            comfy-env.toml files
 *   "envs":     [{"name": "a", "python": "3.12", "packages": ["flash_attn"]}, ...]
 *   "machine":  {"os": "linux", "gpus": ["9.0"], ...}    the profile keys; absent: detect this machine
 *   "machines": [{"name": "a", "machine": {...}}, ...]   a fleet (not with "machine"): one index
 *               read, one resolve per machine; the result is {"machines": [{"name": name,
 *               <the single object's keys>}, ...], "summary": [{"machine", "combo", "tier",
 *               "status"}]} and the exit code the worst machine's (`wheelfit resolve` with
 *               several --machine / --machines DIR, --json)
 *   "index", "backend", "policy", "cache_dir", "releases_repo", "user_agent":   strings
 *   "offline", "no_cache", "inspect":                    booleans
 *   "retries" (0-20), "timeout" (seconds, 1-3600), "jobs" (1-64):   integers
 *   "speed_limit" (bytes/s, 0-2^30; 0: off), "speed_time" (seconds, 1-3600): the low-speed rule
 *               (`--speed-limit` / `--speed-time`); "max_time" (seconds, 1-86400): the whole call's
 *               bound from its start (`--max-time`; exit 4 when the index read runs out of it)
 *   "proxy_auth": "auto", "basic", "negotiate" or "none" (`--proxy-auth`): how to authenticate to
 *               the proxy; Negotiate uses the Kerberos ticket of KRB5CCNAME (README "Network")
 * The backend plugins are loaded from WHEELFIT_PLUGIN_PATH's folders, then the folder beside the
 * library (<prefix>/lib/wheelfit/plugins installed; <build>/plugins in a build tree; on Windows
 * plugins\ beside wheelfit.dll, WHEELFIT_PLUGIN_PATH separated by ';').
 * Thread safety: calls may run concurrently. */
#ifndef WHEELFIT_WHEELFIT_H
#define WHEELFIT_WHEELFIT_H

/* Windows: wheelfit.dll exports the wheelfit_* functions (dllexport while it is built:
 * WHEELFIT_CAPI_BUILD) and a program imports them through the import library libwheelfit.dll.a
 * (dllimport). Elsewhere: default visibility in a -fvisibility=hidden library. */
#if defined(_WIN32)
#if defined(WHEELFIT_CAPI_BUILD)
#define WHEELFIT_API __declspec(dllexport)
#else
#define WHEELFIT_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define WHEELFIT_API __attribute__((visibility("default")))
#else
#define WHEELFIT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (a static string; WHEELFIT_VERSION_STRING of <wheelfit/version.hpp>). */
WHEELFIT_API const char* wheelfit_version(void);
/* Resolves a request (above). */
WHEELFIT_API int wheelfit_resolve_json(const char* request_json, char** result_json);
/* Explains one wheel: {"wheel": ".whl path, URL or file name", "machine": {...}, "python",
 * "policy", "retries", "timeout", "speed_limit", "speed_time", "max_time", "user_agent", "proxy_auth"}; the result is what `wheelfit explain --json`
 * prints (0 it fits, 1 a demand fails). */
WHEELFIT_API int wheelfit_explain_json(const char* request_json, char** result_json);
/* Detects this machine: {"python": "path", "backend": "name"} (both optional); the result is what
 * `wheelfit detect --json` prints, a valid "machine" for the other calls. */
WHEELFIT_API int wheelfit_detect_json(const char* request_json, char** result_json);
/* Judges the installed distributions: {"python": "path", "site": "folder", "machine": {...},
 * "policy": "file"} (all optional; without "site", the interpreter's site folders; without
 * "machine", this machine detected); the result is what `wheelfit doctor --json` prints (0 all
 * fit, 1 something will not run here). */
WHEELFIT_API int wheelfit_doctor_json(const char* request_json, char** result_json);
/* Frees a result. NULL is fine. */
WHEELFIT_API void wheelfit_free(char* p);

#ifdef __cplusplus
}
#endif

#endif /* WHEELFIT_WHEELFIT_H */
