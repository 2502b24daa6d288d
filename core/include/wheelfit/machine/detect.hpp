#pragma once
// Detecting the machine wheelfit runs on: every fact of the profile (machine.hpp), each with the
// source that answered it, plus notes saying why earlier sources did not.
//
// Order per fact (the first answer wins):
//   1. --backend (backend only), then WHEELFIT_OVERRIDE_<KEY> / CONDA_OVERRIDE_* (apply_env_overrides;
//      a variable set to "" makes the fact unknown on purpose: no probe is asked for it)
//   2. os, cpu_arch, glibc: the host (uname, gnu_get_libc_version); cpu_arch then yields to the
//      interpreter's own machine when the two differ (an emulated interpreter: wheels are for it)
//   3. python, torch: the target interpreter (interpreter.hpp: one query, dist-info metadata, the
//      cache); skipped when both are overridden
//   4. backend: torch's local label (+cpu -> cpu; the backend whose policy's torch labels match
//      it: +cu128 -> cuda, +rocm6.3 -> rocm), else the first backend (by name) whose detection
//      found hardware, else cpu
//   5. driver_version, driver_line, gpus: the chosen backend's detection payload (plugin_abi.h);
//      for cpu chosen because no backend found hardware, gpus = [] (no GPU)
// Multi-GPU: the payload lists every visible GPU and all of them go into gpus; the
// resolver requires a wheel to cover every one (a wheel that fits only some GPUs fails).
//
// Backend detection is reached through a callable, so this library does not depend on how
// plugins are loaded: the CLI passes one calling Registry::detect for each loaded backend.
// A payload that is not JSON, or says "error", becomes a note, never a failure.
//
// Thread safety: detect_machine reads the environment through options.getenv, runs the
// interpreter and calls the detector on the calling thread.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/machine/interpreter.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::machine {

/// (backend name, its detect JSON) for every loaded backend that has detection. A backend
/// whose detection could not be called at all may be given with an Error text instead: see
/// BackendDetector.
using BackendPayloads = std::vector<std::pair<std::string, std::string>>;
/// Calls every loaded backend's detection once. To report a backend whose detection failed
/// outside the JSON (the registry refused the call), return a payload {"error": "..."} for it.
using BackendDetector = std::function<BackendPayloads()>;

/// One GPU as the chosen backend listed it.
struct DetectedDevice {
  int index = 0;
  std::string name;
  std::string target;  ///< "9.0" (CUDA), "gfx90a" (ROCm); "" when unknown
  friend bool operator==(const DetectedDevice&, const DetectedDevice&) = default;
};

/// One backend's payload, parsed.
struct BackendReport {
  std::string backend;
  bool present = false;
  /// The facts as text forms for set_fact (lists comma-separated, "none" for []), in payload order.
  std::vector<std::pair<std::string, std::string>> facts;
  std::map<std::string, std::string> provenance;
  std::vector<DetectedDevice> devices;
  std::vector<std::string> notes;
  std::optional<std::string> error;  ///< the payload's "error"
};

/// Parses a detect payload (plugin_abi.h). Errc::invalid_input (naming the backend) when it is
/// not a JSON object or a field has the wrong type; unknown fields are ignored.
[[nodiscard]] Expected<BackendReport> parse_backend_payload(std::string_view backend, std::string_view payload);

/// The backend choice of step 4 (for a machine whose backend is not yet known). `reports` are
/// the parsed payloads in any order.
struct BackendChoice {
  std::string backend;     ///< "cuda", "rocm", "cpu", ...
  std::string provenance;  ///< "torch 2.8.0+cu128 (label +cu128)", "cuda detection found hardware"
  std::vector<std::string> notes;
};
/// Which loaded backend a torch build's local label names ("cu128" -> "cuda"), by the backends'
/// own torch-label grammar; nullopt when none does. An empty function reads no label.
using LabelBackend = std::function<std::optional<std::string>(std::string_view local_label)>;
[[nodiscard]] BackendChoice choose_backend(const std::optional<model::Version>& torch,
                                           const std::vector<BackendReport>& reports, const LabelBackend& label_backend);

struct DetectOptions {
  /// --python: a path or a name on PATH. nullopt = "python3" on PATH (Windows: "python", else the
  /// py launcher's "py -3"; find_interpreter), and then an interpreter
  /// that cannot be found or asked is a note (python and torch stay unknown), not an error.
  std::optional<std::string> python;
  std::optional<std::string> backend;  ///< --backend: wins over everything
  LabelBackend label_backend;          ///< step 4: torch's label -> backend
  Getenv getenv = process_env();       ///< overrides, PATH, XDG_CACHE_HOME, HOME
  /// nullopt = default_cache_dir(getenv); an empty path = no cache.
  std::optional<std::filesystem::path> cache_dir;
  std::chrono::milliseconds python_timeout{5000};
  bool host = true;  ///< ask this host for os, cpu_arch, glibc (tests turn it off for determinism)
};

/// What detect_machine found.
struct Detection {
  Machine machine;                 ///< facts + provenance per fact
  std::vector<std::string> notes;  ///< why sources did not answer, in the order they were asked
  std::optional<InterpreterFacts> interpreter;  ///< when the interpreter was asked and answered
  std::vector<DetectedDevice> devices;          ///< the chosen backend's GPUs
};

/// Detects the machine (see the top of this file). Errors: a bad override value or --backend
/// (Errc::invalid_input naming the variable or flag), and, only when options.python was given,
/// an interpreter that cannot be found, started or understood (find_interpreter /
/// query_interpreter's errors). Everything else is a note.
[[nodiscard]] Expected<Detection> detect_machine(const DetectOptions& options, const BackendDetector& detector);

}  // namespace wheelfit::machine
