#pragma once
// The seven demands and their evaluators: how one fact of a wheel is judged against the same
// fact of a machine, and how each side is written. The resolver (which wheel fits) and explain
// (why this one does or does not) judge through these functions, so a verdict and its wording
// cannot differ between the two.
//
// Device targets are always written one way: the backend's prefix, then the canonical targets
// ("sm 8.6, 9.0", "gfx90a"), "no GPU" for none and "unknown" when the GPUs are not known.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/machine/machine.hpp"
#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/model/variant.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::resolve {

enum class Demand { gpu_arch, torch, line, python, cpu_arch, os, glibc, variant };
/// The demand's name; Demand::line is named by the backend ("cuda"), "line" without a notation.
std::string_view to_string(Demand d) noexcept;
std::string demand_name(Demand d, const semantics::LineNotation& notation);
/// All eight, in report order (variant: PEP 825 variant properties, judged only for variant wheels).
const std::vector<Demand>& all_demands();

/// One failed demand: what the wheel asks, what the machine has.
struct Failure {
  Demand demand;
  std::string wheel;
  std::string machine;
};

// ---- python, os, cpu_arch, glibc: the wheel's side, as its tags say it

/// "cp312-cp312, cp312-abi3": every python-abi pair of the name.
std::string python_tags_text(const model::WheelName& w);
/// "manylinux_2_24_x86_64.manylinux_2_28_x86_64": the platform tags as the name writes them.
std::string platform_tags_text(const model::WheelName& w);
/// "aarch64, x86_64": the CPU archs of the tags, sorted ("any" for a pure tag).
std::string cpu_archs_text(const model::WheelName& w);
/// "linux, windows": the OSes of the tags, sorted ("any" for a pure tag).
std::string oses_text(const model::WheelName& w);
/// "glibc >= 2.28" or "musl 1.2"; nullopt for a tag that names no libc.
std::optional<std::string> libc_floor_text(const model::PlatformTag& t);
/// The best-fitting platform tag of the name for the machine; nullopt when the machine's OS or
/// CPU arch is unknown.
std::optional<model::PlatformFit> platform_fit(const model::WheelName& w, const machine::Machine& m);

// ---- gpu_arch: device targets and their coverage, by the backend's rule

/// The machine's GPUs as canonical device targets of the policy's backend; nullopt when the GPUs
/// are unknown. Errc::invalid_input naming the target and where it came from when the backend's
/// grammar refuses one.
Expected<std::optional<std::vector<std::string>>> device_targets(const machine::Machine& m, const semantics::Policy& policy);

/// "sm 8.6, 9.0": targets as verdicts, reports and explain write them.
std::string targets_text(std::string_view device_prefix, const std::vector<std::string>& targets);
/// targets_text, or "no GPU" for none, "unknown" for nullopt.
std::string gpus_text(std::string_view device_prefix, const std::optional<std::vector<std::string>>& gpus);

/// How a device list (an arch list or a binary's device code) serves each target by the
/// backend's rule: the targets it runs on with the entry that serves them, and the ones it does
/// not (a list the rule cannot read runs nowhere).
struct Coverage {
  std::vector<std::pair<std::string, semantics::DeviceRules::Match>> served;
  std::vector<std::string> uncovered;
};
Coverage cover(const semantics::Policy& policy, const std::string& list, const std::vector<std::string>& targets);
/// "sm 8.6 runs sm_86 (sass)[, JIT-compiled by the driver (slow first launch)]".
std::string runs_text(const semantics::Policy& policy, const std::string& target, const semantics::DeviceRules::Match& m);

// ---- line: the driver half

/// Can this machine's driver run `line`? By the policy's driver rule: with driver_line known,
/// same_major (its major must reach the line's: minor-version compatibility within a major) or
/// at_least; else by driver_version against the policy's floor for the line's major on the
/// machine's OS. `checked` is false when neither fact (or no floor) is known, or the rule is
/// unknown; `failure` (demand line, what the wheel asks, what the machine has) when it cannot.
struct DriverVerdict {
  bool checked = false;
  std::optional<Failure> failure;
};
DriverVerdict judge_driver(const model::NumericVersion& line, const machine::Machine& m, const semantics::Policy& policy);

// ---- variant: PEP 825 variant properties

/// What the machine supports: the backend's native provider (from the machine's driver and
/// device targets), the core's `abi_dependency :: torch` (from `torch`, a version such as "2.9.0"
/// or a combo's minor "2.9"; empty: none), then the machine's own variant_properties replacing the
/// namespaces it names. What could not be computed is said in the result's notes.
model::VariantSupport variant_support(const machine::Machine& m, const semantics::Policy& policy,
                                      const std::optional<std::vector<std::string>>& targets, const std::string& torch);

/// The torch version `abi_dependency :: torch` is judged against under `combo`: the machine's own
/// torch (its public version) when its combo is `combo`, else the combo's torch minor.
std::string variant_torch(const machine::Machine& m, const semantics::Policy& policy, const model::Combo& combo);

/// How a variant wheel's label fares (PEP 825): compatible with its ordering key, or the
/// properties that fail. `file` is the package version's variants file (nullptr: `problem` says
/// why there is none); a non-variant wheel is not judged here.
model::VariantOrder::Verdict judge_variant(const std::string& label, const model::VariantsFile* file, const std::string& problem,
                                           const model::VariantSupport& support);

}  // namespace wheelfit::resolve
