#pragma once
// The machine a resolve targets, as plain data: identical whether it came from a profile file,
// env overrides, the host, or (later) the backends' probes. The resolver cannot tell which.
//
// Profile keys (TOML or JSON, flat): os, cpu_arch, glibc, python, torch, backend,
// driver_version, driver_line, gpus. An absent key is an unknown fact: demands that need it are
// reported as not checked, never guessed. `gpus = []` is a known fact: no GPU. The keys of
// earlier profiles are still read: cuda_driver is driver_line, gpu_targets is gpus (naming
// both spellings of one fact in one profile is an error).
// Values (text forms, surrounding whitespace ignored):
//   os              linux | windows | macos (also win32, darwin; any case)
//   cpu_arch        x86_64 | amd64 | aarch64 | arm64 (stored canonical: x86_64, aarch64); other
//                   uname -m names ([a-z0-9_]+, such as ppc64le) are kept as facts
//   glibc, driver_version, driver_line   dotted numbers ("2.35", "580.65.06", "13.0")
//   python          "X.Y", or "X.Yt" for a free-threaded build; "3" and "3.12.1" are refused
//   torch           a PEP 440 version ("2.8.0+cu128")
//   backend         a backend name (1-64 of [a-z0-9_-], stored lower case: "cuda", "rocm"), or "cpu";
//                   whether a plugin supplies it is checked where it is used
//   driver_line     the highest accelerator line the driver runs (CUDA: "13.0")
//   gpus            the device target of every visible GPU, as the backend writes them: "9.0"
//                   or "sm_90" (CUDA), "gfx90a" or "gfx90a:xnack-" (ROCm). Stored lower case,
//                   [a-z0-9_.:+-]; the backend's grammar checks and canonicalises them where they
//                   are judged (resolve::device_targets). Profiles: an array of strings. Text
//                   form (set_fact, env): comma-separated, spaces allowed ("9.0, 8.6"); "none"
//                   as the whole value is the known empty list (and refused as one target).
// In a profile an empty string is refused (leave the key out instead) and numbers are refused
// with advice to quote them; in set_fact / env overrides an empty value makes the fact absent.
// Env overrides: WHEELFIT_OVERRIDE_<KEY> (upper case; GPUS comma-separated; an empty value
// makes the fact absent; the old WHEELFIT_OVERRIDE_CUDA_DRIVER / _GPU_TARGETS are read too),
// CONDA_OVERRIDE_CUDA -> driver_line, CONDA_OVERRIDE_GLIBC -> glibc
// (an empty CONDA value also makes the fact absent, as conda does).
// WHEELFIT_OVERRIDE_* win over CONDA_OVERRIDE_*, which win over the file.
// Provenance strings: "profile <path>", "env WHEELFIT_OVERRIDE_GLIBC", "env CONDA_OVERRIDE_GLIBC",
// "host uname", "host gnu_get_libc_version()".
// Thread safety: everything here is reentrant, except that process_env() and fill_from_host()
// read process state (the environment, uname) that other threads must not change meanwhile.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/model/platform.hpp"
#include "wheelfit/model/variant.hpp"
#include "wheelfit/model/version.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::machine {

struct Machine {
  std::optional<model::Os> os;
  std::optional<std::string> cpu_arch;            ///< canonical: "x86_64", "aarch64"
  std::optional<model::NumericVersion> glibc;     ///< "2.35"
  std::optional<model::NumericVersion> python;    ///< major.minor "3.12"
  bool python_free_threaded = false;              ///< python = "3.13t"
  std::optional<model::Version> torch;            ///< "2.8.0+cu128"; nullopt = not installed / unknown
  std::optional<std::string> backend;             ///< "cuda", "rocm", "cpu"
  std::optional<model::NumericVersion> driver_version;  ///< "580.65.06"
  std::optional<model::NumericVersion> driver_line;     ///< the highest line the driver runs, "13.0"
  std::optional<std::vector<std::string>> gpus;         ///< device targets, one per visible GPU
  /// PEP 825 variant properties this machine supports, replacing what the native providers
  /// compute for the namespaces it names (a profile resolving for another machine).
  std::optional<model::VariantProperties> variant_properties;
  /// Which source answered each fact: key -> "profile m.toml", "env WHEELFIT_OVERRIDE_GLIBC",
  /// "host gnu_get_libc_version()".
  std::map<std::string, std::string> provenance;

  /// Facts and provenance equal. Use same_facts() to ignore provenance.
  friend bool operator==(const Machine&, const Machine&) = default;
};

/// True when every fact (not the provenance) is equal: what a to_json -> parse round trip keeps.
bool same_facts(const Machine& a, const Machine& b);

/// The flat keys, in their canonical order.
const std::vector<std::string_view>& profile_keys();
/// Keys a profile may carry that are not facts and are ignored when it is read: what
/// `wheelfit detect --json` adds ("provenance", "notes", "interpreter", "devices").
const std::vector<std::string_view>& informational_keys();

/// Sets one fact from its text form (as in an override). `origin` is recorded as its provenance.
/// An empty (or all-space) value clears the fact and its provenance. Bad values are
/// Errc::invalid_input naming `origin`, the key and the value, and leave `m` unchanged; unknown
/// keys are Errc::invalid_input too.
Expected<void> set_fact(Machine& m, std::string_view key, std::string_view value, const std::string& origin);

/// Parses a profile: JSON when the first non-space character is '{', else TOML. `source` names it
/// in errors (with line:column where known) and in the provenance ("profile <source>").
/// Values must be strings (gpus: an array of strings); a number such as glibc = 2.35
/// is refused with a message saying to quote it. Unknown keys are errors except the
/// informational_keys() that `detect --json` writes (provenance, notes, ...), which are ignored. Syntax errors (including JSON with trailing
/// garbage) are Errc::invalid_input; text over 1 MiB is Errc::too_large. A JSON key given twice
/// keeps its last value (Boost.JSON 1.81 cannot report it); TOML refuses it as a syntax error.
Expected<Machine> parse_machine_profile(std::string_view text, const std::string& source);
/// Reads and parses a profile file (Errc::not_found / io_error / too_large name the path).
Expected<Machine> load_machine_profile(const std::string& path);

/// Applies WHEELFIT_OVERRIDE_* and CONDA_OVERRIDE_* from `getenv` (nullopt = unset). All or
/// nothing: on an error (naming the variable) `m` is unchanged.
using Getenv = std::function<std::optional<std::string>(std::string_view)>;
Expected<void> apply_env_overrides(Machine& m, const Getenv& getenv);
/// The other variables that override `key` after WHEELFIT_OVERRIDE_<KEY>, in the order they are
/// read: an earlier version's name, then conda's (driver_line: WHEELFIT_OVERRIDE_CUDA_DRIVER,
/// CONDA_OVERRIDE_CUDA; gpus: WHEELFIT_OVERRIDE_GPU_TARGETS; glibc: CONDA_OVERRIDE_GLIBC).
std::vector<std::string> override_aliases(std::string_view key);
/// The process environment as a Getenv.
Getenv process_env();

/// Fills the facts still unknown from the running host: os, cpu_arch (uname), glibc
/// (gnu_get_libc_version, only when the machine's os is then linux). Never overwrites a known
/// fact; a probe that fails leaves its fact unknown.
void fill_from_host(Machine& m);

/// The profile as one compact JSON object: the known facts as strings (gpus as an array of
/// strings) in profile_keys() order, then "provenance": {key: source} for those facts in the
/// same order. Absent facts are omitted. parse_machine_profile reads it back to a Machine with
/// the same facts (same_facts), its provenance then being "profile <source>".
std::string to_json(const Machine& m);

}  // namespace wheelfit::machine
