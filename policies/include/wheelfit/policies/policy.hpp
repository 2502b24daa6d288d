#pragma once
// The policy data the resolver judges against, kept as data (policies/data/*.json) with this
// loader. The built-in copy is compiled into the library; a newer file can replace it at run
// time (`--policy FILE` / WHEELFIT_POLICY) without a rebuild.
//
// What it holds:
//   - GPU arch lists per CUDA line and farm platform ("linux", "windows", "linux_aarch64"),
//     the (cuda, torch-minor) exceptions (x86_64 and Windows only), and per-package overrides;
//   - the PyTorch matrix of shipped cells: which (CUDA line, torch minor, Python) PyTorch
//     publishes per platform;
//   - the torch family table (torch minor -> torchvision, torchaudio minors);
//   - the CUDA line PyTorch ships to PyPI per torch minor and platform;
//   - the minimum driver per CUDA major (Linux, Windows);
//   - the backends' fallback combos per CPU arch and the torch index URL pattern.
// Thread safety: a loaded Policy is immutable and may be shared between threads.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/model/platform.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::policies {

/// One target of an arch list: "8.6" (SASS sm_86) or "9.0+PTX" (SASS sm_90 plus PTX compute_90).
/// Arch-specific ("9.0a") and family-specific ("10.0f") targets carry their letter in `variant`.
struct ArchTarget {
  model::NumericVersion cc;  ///< compute capability, major.minor
  bool ptx = false;
  char variant = '\0';      ///< '\0' (plain), 'a' (runs on exactly cc) or 'f' (cc's major, minor >= cc's)
};

/// How an arch list serves one GPU: the target whose code runs there, and whether that is the
/// driver JIT-compiling the target's PTX (slow first launch) rather than a cubin (SASS).
struct ArchMatch {
  ArchTarget target;
  bool jit = false;
};

class ArchList {
 public:
  ArchList() = default;
  explicit ArchList(std::vector<ArchTarget> targets) : targets_(std::move(targets)) {}
  /// Parses TORCH_CUDA_ARCH_LIST syntax: targets separated by ';' and/or whitespace, each
  /// "X.Y" with an optional "+PTX" (case-insensitive). Empty lists and bad entries are
  /// Errc::invalid_input quoting the text.
  static Expected<ArchList> parse(std::string_view text);

  /// The BRIEF section 2 rule: SASS for X.Y runs on X.Z with Z >= Y (same major only); PTX for
  /// X.Y is JIT-compiled for any later arch (any cc >= X.Y). Arch-specific targets ("9.0a") run
  /// on exactly X.Y, family-specific ones ("10.0f") on X.Z with Z >= Y, PTX included (no JIT
  /// forward). Only the GPU's major.minor is looked at ("8.6.1" is 8.6).
  [[nodiscard]] bool covers(const model::NumericVersion& gpu_cc) const { return match(gpu_cc).has_value(); }
  /// The target that serves `gpu_cc`: the highest matching SASS target, else the highest PTX
  /// target at or below it (jit = true); nullopt when nothing runs there.
  [[nodiscard]] std::optional<ArchMatch> match(const model::NumericVersion& gpu_cc) const;
  [[nodiscard]] const std::vector<ArchTarget>& targets() const noexcept { return targets_; }
  /// "7.5;8.0;8.6;9.0+PTX" (canonical: ';'-separated, "+PTX" upper-case, in the list's order).
  [[nodiscard]] std::string str() const;

 private:
  std::vector<ArchTarget> targets_;
};

/// An arch list with where it came from ("farm policy 12.8 (linux)", "exception 12.8/2.8",
/// "package sageattention, cuda 12.8").
struct ArchSource {
  ArchList archs;
  std::string provenance;
};

struct FamilyPins {
  model::NumericVersion torchvision;  ///< minor, e.g. 0.23
  model::NumericVersion torchaudio;   ///< minor, e.g. 2.8
};

struct MinDriver {
  model::NumericVersion linux_;
  model::NumericVersion windows;
};

class Policy {
 public:
  /// The arch list the farm built `package` (PEP 503 name) with for `combo` on `platform`
  /// (farm key). Order: the package's override for that CUDA line and platform family, the
  /// package's override for all lines, the (cuda/torch-minor) exception (not on aarch64), the
  /// platform's policy row. nullopt when the policy has no row (not built there).
  [[nodiscard]] std::optional<ArchSource> arch_list(std::string_view package, const model::Combo& combo,
                                                    std::string_view platform) const;
  /// The farm's default list for the combo, without package overrides (used to judge a fallback
  /// combo): the (cuda/torch-minor) exception (not on aarch64), else the platform's policy row.
  [[nodiscard]] std::optional<ArchSource> platform_arch_list(const model::Combo& combo,
                                                             std::string_view platform) const;

  /// Whether PyTorch published torch `combo.torch` (any patch release) for CUDA `combo.cuda`,
  /// CPython `python` (major.minor) and farm platform `platform`.
  [[nodiscard]] bool pytorch_shipped(const model::Combo& combo, const model::NumericVersion& python,
                                     std::string_view platform) const;
  /// Every cell PyTorch shipped, as (combo, python, platform), sorted by CUDA line, torch minor,
  /// Python, then platform. For tools (the farm generator).
  struct Cell {
    model::Combo combo;
    model::NumericVersion python;
    std::string platform;
  };
  [[nodiscard]] const std::vector<Cell>& shipped_cells() const noexcept { return cells_; }

  /// torchvision / torchaudio minors for a torch minor; nullopt when the table lacks it.
  [[nodiscard]] std::optional<FamilyPins> torch_family(const model::NumericVersion& torch_minor) const;
  /// The CUDA line of the torch build PyPI serves for `torch_minor` on `platform`; nullopt when
  /// unknown or when PyPI's build there is CPU-only.
  [[nodiscard]] std::optional<model::NumericVersion> pypi_cuda_line(const model::NumericVersion& torch_minor,
                                                                    std::string_view platform) const;
  /// Minimum driver for a CUDA major; nullopt when unknown.
  [[nodiscard]] std::optional<MinDriver> min_driver(std::uint32_t cuda_major) const;
  /// The fallback combo of `backend` for a CPU arch ("x86_64", "aarch64"); nullopt when none.
  [[nodiscard]] std::optional<model::Combo> fallback_combo(std::string_view backend, std::string_view cpu_arch) const;
  /// Every fallback combo of `backend`, keyed by normalised CPU arch ("aarch64", "x86_64");
  /// empty when the policy has none for it. For listings (`wheelfit plugins`).
  [[nodiscard]] std::map<std::string, model::Combo> fallback_combos(std::string_view backend) const;
  /// The PyTorch index for a CUDA line: "https://download.pytorch.org/whl/cu128".
  [[nodiscard]] std::string torch_index_url(const model::NumericVersion& cuda) const;

  /// Where this policy came from ("built-in", or the file path) and its "version" field.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] const std::string& version() const noexcept { return version_; }

 private:
  friend Expected<Policy> parse_policy_json(std::string_view text, std::string_view source);
  struct PackageOverride {
    std::optional<ArchList> all;                        ///< arch_list (x86_64 + Windows)
    std::optional<ArchList> all_aarch64;                ///< arch_list_aarch64
    std::map<std::string, ArchList> by_cuda;            ///< arch_list_by_cuda (x86_64 + Windows)
    std::map<std::string, ArchList> by_cuda_aarch64;    ///< arch_list_by_cuda_aarch64
  };
  std::string source_, version_;
  std::map<std::string, std::map<std::string, ArchList>> arch_policy_;  ///< platform -> cuda -> list
  std::map<std::string, ArchList> arch_exceptions_;                      ///< "12.8/2.8" -> list
  std::map<std::string, PackageOverride> packages_;
  std::vector<Cell> cells_;
  std::map<std::string, FamilyPins> family_;                             ///< "2.8" -> pins
  std::map<std::string, std::map<std::string, model::NumericVersion>> pypi_cuda_;  ///< platform -> torch -> cuda
  std::map<std::uint32_t, MinDriver> min_driver_;
  std::map<std::string, std::map<std::string, model::Combo>> fallback_;  ///< backend -> arch -> combo
  std::string torch_index_pattern_;                                      ///< "https://download.pytorch.org/whl/cu{cuda_nodot}"
};

/// Parses a policy file (the JSON format of policies/data/policy.json, documented in
/// policies/README.md). Errors (Errc::invalid_input) name `source` and the JSON path.
Expected<Policy> parse_policy_json(std::string_view text, std::string_view source);
/// Reads and parses a policy file.
Expected<Policy> load_policy_file(const std::string& path);
/// The policy compiled into the library (policies/data/policy.json at build time).
const Policy& builtin_policy();

}  // namespace wheelfit::policies
