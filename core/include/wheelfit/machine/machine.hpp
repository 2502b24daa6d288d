#pragma once
// The machine a resolve targets, as plain data: identical whether it came from a profile file,
// env overrides, the host, or (later) the backends' probes. The resolver cannot tell which.
//
// Profile keys (TOML or JSON, flat): os, cpu_arch, glibc, python, torch, backend,
// driver_version, cuda_driver, gpus. An absent key is an unknown fact: demands that need it are
// reported as not checked, never guessed. `gpus = []` is a known fact: no GPU.
// Env overrides: WHEELFIT_OVERRIDE_<KEY> (upper case; GPUS comma-separated; an empty value
// makes the fact absent), CONDA_OVERRIDE_CUDA -> cuda_driver, CONDA_OVERRIDE_GLIBC -> glibc.
// WHEELFIT_OVERRIDE_* win over CONDA_OVERRIDE_*, which win over the file.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/model/platform.hpp"
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
  std::optional<model::NumericVersion> cuda_driver;     ///< max CUDA the driver supports, "13.0"
  std::optional<std::vector<model::NumericVersion>> gpus;  ///< compute capabilities "9.0"
  /// Which source answered each fact: key -> "profile m.toml", "env WHEELFIT_OVERRIDE_GLIBC",
  /// "host gnu_get_libc_version()".
  std::map<std::string, std::string> provenance;
};

/// The flat keys, in their canonical order.
const std::vector<std::string_view>& profile_keys();

/// Sets one fact from its text form (as in a profile or an override). `origin` is recorded as
/// its provenance. An empty value clears the fact. Bad values are Errc::invalid_input naming
/// `origin`, the key and the value; unknown keys are Errc::invalid_input too.
Expected<void> set_fact(Machine& m, std::string_view key, std::string_view value, const std::string& origin);

/// Parses a profile: JSON when the text starts with '{', else TOML. `source` names it in errors.
/// Values must be strings (gpus: an array of strings); a number such as glibc = 2.35 is refused
/// with a message saying to quote it. Unknown keys are errors except "provenance" (what
/// `detect --json` writes), which is ignored.
Expected<Machine> parse_machine_profile(std::string_view text, const std::string& source);
Expected<Machine> load_machine_profile(const std::string& path);

/// Applies WHEELFIT_OVERRIDE_* and CONDA_OVERRIDE_* from `getenv` (nullopt = unset).
using Getenv = std::function<std::optional<std::string>(std::string_view)>;
Expected<void> apply_env_overrides(Machine& m, const Getenv& getenv);
/// The process environment as a Getenv.
Getenv process_env();

/// Fills the facts still unknown from the running host: os, cpu_arch (uname), glibc
/// (gnu_get_libc_version). Never overwrites a known fact.
void fill_from_host(Machine& m);

/// The profile as one JSON object (the keys above plus "provenance"); readable by
/// parse_machine_profile.
std::string to_json(const Machine& m);

}  // namespace wheelfit::machine
