#pragma once
// The resolver: pure data in, a Resolution out. It never reads files or the network: the
// caller reads the index first (index::read_index) and hands the snapshot in.
//
// Everything accelerator-specific comes from the backend's policy (semantics::Policy: its
// notation, label grammar, driver rule, arch lists and device rules); the resolver knows none.
//
// One combo (accelerator line, torch minor) must cover every package of every env (each env
// with its own Python). Tier 1 ("bootstrap") is the machine's own combo: the line its torch's
// local label names by the backend's torch-label grammar (or, for a PyPI torch without a label,
// the line PyPI ships for that version per the policy data; never guessed from the driver) and
// the torch minor. Tier 2 ("fallback") is the backend's fallback combo for the CPU arch,
// skipped with the reason when PyTorch never shipped it for this Python and platform, the
// driver cannot run it, or the policy's arch list does not cover every GPU.
//
// Torch itself is judged first (torch_gate.hpp, decision 0026): a tier whose combo's torch has no
// code for one of the GPUs (tier 1's installed torch, tier 2, a fresh environment's choice,
// --combo) is set aside, its reason naming the torch, its arch list and its source and each GPU
// it does not cover; a torch whose arch list is unknown sets nothing aside (one warning).
//
// Every candidate wheel is judged on seven demands: python, os, cpu_arch, glibc, torch, line
// (the combo's accelerator line and the driver's ability to run it; named by the backend, e.g.
// "cuda") and gpu_arch (every visible GPU covered by the wheel's target list from the policy,
// by the backend's coverage rule). A demand whose machine fact is unknown is
// reported as unchecked, never passed silently. Among fitting wheels: final releases before
// pre-releases, then the highest version, then the best tags (pip's order), then the file name
// and URL, so the answer is deterministic. Yanked files are never picked, nor a file name the
// snapshot lists with two different sha256 (on its pages or in packages.json): a warning names both.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/config/workspace.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/model/combo.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/resolve/torch_gate.hpp"

namespace wheelfit::resolve {

struct CandidateVerdict {
  std::string filename;               ///< the anchor text (what was matched)
  std::string url;                    ///< the href (what would be installed)
  std::vector<Failure> failed;        ///< empty when the wheel fits
  std::vector<Demand> unchecked;      ///< demands whose machine fact is unknown
  std::string note;                   ///< "yanked: reason", "hash conflict: ...", "not a wheel"
  [[nodiscard]] bool fits() const noexcept { return failed.empty() && note.empty(); }
};

/// Every candidate's verdict of one unresolved package: read-only, shared by the machines of a
/// fleet whose judging of that package is the same (an unresolved fleet holds hundreds of
/// thousands of verdicts, most of them equal from machine to machine). Reads like a vector.
class CandidateVerdicts {
 public:
  using const_iterator = std::vector<CandidateVerdict>::const_iterator;
  CandidateVerdicts() = default;
  explicit CandidateVerdicts(std::vector<CandidateVerdict> all)
      : all_(all.empty() ? nullptr : std::make_shared<const std::vector<CandidateVerdict>>(std::move(all))) {}
  [[nodiscard]] const std::vector<CandidateVerdict>& list() const noexcept { return all_ ? *all_ : none(); }
  [[nodiscard]] const_iterator begin() const noexcept { return list().begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return list().end(); }
  [[nodiscard]] std::size_t size() const noexcept { return list().size(); }
  [[nodiscard]] bool empty() const noexcept { return list().empty(); }
  [[nodiscard]] const CandidateVerdict& front() const { return list().front(); }
  [[nodiscard]] const CandidateVerdict& operator[](std::size_t i) const { return list()[i]; }
  [[nodiscard]] const CandidateVerdict& at(std::size_t i) const { return list().at(i); }

 private:
  static const std::vector<CandidateVerdict>& none() noexcept {
    static const std::vector<CandidateVerdict> empty;
    return empty;
  }
  std::shared_ptr<const std::vector<CandidateVerdict>> all_;
};

struct Pick {
  std::string env;                    ///< the env (feature) it belongs to
  std::string name;                   ///< PEP 503 normalised
  std::string requested;              ///< as written in the config
  std::string python;                 ///< "cp312"
  std::string filename;               ///< the anchor text
  std::string url;                    ///< the href: what to install
  std::string version;                ///< PEP 440, with its local label
  std::optional<std::string> sha256;  ///< lower-case hex, when the index knows it
  std::string sha256_source;          ///< "#sha256= fragment", "packages.json"
  std::string arch_source;            ///< where the arch list came from
  std::vector<Demand> unchecked;
  /// A variant wheel's label (PEP 825) and all of its properties ("ns :: feature :: value");
  /// nullopt for a non-variant wheel.
  std::optional<std::string> variant_label = {};
  std::vector<std::string> variant_properties = {};
  /// The package version's variants file (URL, the page's sha256 when given), for a variant wheel.
  std::string variants_url = {};
  std::optional<std::string> variants_sha256 = {};
  /// The torch its `abi_dependency :: torch` was judged against ("" none), for a variant wheel:
  /// resolve --inspect judges the wheel's own variant.json against the same.
  std::string variant_torch = {};
  /// What the variant means beyond its properties, when the resolver knows ("" none): a torch
  /// listed from a variant index whose variant has no properties is "a CPU-only build: ...".
  std::string variant_note = {};
};

struct PackageOutcome {
  std::string env;
  std::string name;
  std::string requested;
  std::string python;                        ///< "cp312"
  enum class Status { resolved, unresolved, not_published, read_failed } status = Status::unresolved;
  std::string reason;                        ///< for not_published / read_failed
  std::optional<Pick> pick;
  CandidateVerdicts candidates;              ///< every candidate judged (not when resolved)
};

struct TierOutcome {
  std::string tier;                    ///< "bootstrap", "fallback" or "requested" (--combo)
  std::optional<model::Combo> combo;
  /// set_aside: its combo's torch cannot run on every GPU of the machine (torch_gate.hpp), so
  /// its packages were not judged.
  enum class Status { resolved, failed, skipped, set_aside } status = Status::skipped;
  std::string reason;                  ///< why skipped, failed or set aside
  std::vector<PackageOutcome> packages;
  /// How the combo was chosen, when not simply by its tier's rule: "--combo cu12.8/torch2.8", or
  /// "no torch installed: the newest combo ..." (a fresh environment's tier 1).
  std::string chosen = {};
};

struct Pin {
  std::string name;     ///< torch, torchvision, torchaudio
  std::string version;  ///< "==2.8.*"
  std::string index;    ///< "https://download.pytorch.org/whl/cu128"
};

/// A way out when no tier covers every package: a combo (and, for Kind::python, another env
/// Python) under which every package has a fitting wheel on this machine.
struct Suggestion {
  enum class Kind { combo, python } kind = Kind::combo;
  model::Combo combo;
  std::optional<model::NumericVersion> python;  ///< Kind::python: the Python every env would use
  std::vector<std::string> covers;              ///< "flash-attn (cp312)", one per env package
  std::vector<Pin> pins;                        ///< what to install for it: the torch family, its index
  /// Set when the machine's driver cannot run the combo's line: what it needs and what it has.
  std::optional<Failure> driver_upgrade;
  std::size_t prereleases = 0;                  ///< picks that are pre-releases
};

/// A combo that covers all but some packages, and what rules each of those out.
struct NearMiss {
  model::Combo combo;
  std::vector<std::string> missing;  ///< "sageattention (cp312): no wheel for cu12.8/torch2.9"
};

/// A combo the advice search left out: PyTorch's build of its torch cannot run on the
/// machine's GPUs (torch_gate.hpp; an unknown build sets nothing aside).
struct SetAside {
  model::Combo combo;
  std::string reason;  ///< names torch, the GPUs it does not cover ("sm 12.0") and its build's list
  std::vector<std::string> uncovered;  ///< those GPUs, canonical ("12.0")
};

/// The torch that runs (issue 32): when the machine's own torch cannot run on its GPUs, the same
/// version on another line of the torch arch matrix whose build covers every GPU, whose driver
/// rule holds here and which PyTorch ships for each env's Python on this platform (the line
/// closest to the installed one first).
struct TorchAdvice {
  std::string installed;  ///< "2.8.0+cu126"
  std::string reason;     ///< why it cannot run: the GPUs it leaves out, its build's list and source
  /// The torch to install instead ("2.8.0+cu128") and its line; empty / nullopt when no line serves.
  std::string version;
  std::optional<model::NumericVersion> line;
  std::string index;      ///< where it is published: the backend's torch index for the line, or --torch-index
  /// The exact wheel for this machine's Python and platform (mirror --with-torch's tag rules),
  /// filled by the façade from a reachable torch index; `file_note` says why not when empty.
  std::string file, url;
  std::optional<std::string> sha256;
  std::string file_note;
  /// The farm combos that cover every package with it (the advice's suggestions on its combo).
  std::vector<model::Combo> combos;
  /// Each other line of the matrix for this torch, and why it is not the one ("CUDA 12.9: ...").
  std::vector<std::string> lines_set_aside;
  /// A GPU the newest torch's newest build leaves out: the last torch minor (and its line) whose
  /// build still covers it on this platform.
  struct Last {
    std::string gpu;  ///< canonical target ("6.1")
    model::NumericVersion torch, line;
  };
  std::vector<Last> last;
};

/// The advice search (resolve::Inputs::advise): every combo the index publishes for the
/// requested packages, judged on this machine's fixed facts (device targets, CPU, OS, glibc,
/// each env's Python; the driver is reported, not required), PyTorch's matrix permitting, and
/// its torch's build covering every GPU (or unknown).
struct Advice {
  /// Best first: combos keeping the Python, then other Pythons; in each, those the driver runs
  /// before those that need a driver upgrade.
  std::vector<Suggestion> suggestions;
  std::vector<NearMiss> near_misses;    ///< when no combo covers everything: the closest ones
  std::size_t combos_searched = 0;
  /// The combos left out because their torch cannot run on the GPUs, in the order met.
  std::vector<SetAside> set_aside = {};
  /// Set when the machine's own torch cannot run on its GPUs (then also on a resolved workspace).
  std::optional<TorchAdvice> torch = {};
};

struct Resolution {
  semantics::LineNotation notation;     ///< the backend's: names the line demand and combo strings
  std::string device_prefix;           ///< the backend's, before device targets in verdicts ("sm ")
  /// The machine's GPUs as canonical device targets (nullopt: unknown), as they were judged.
  std::optional<std::vector<std::string>> targets;
  std::optional<model::Combo> combo;
  std::optional<std::string> tier;
  std::vector<Pick> picks;             ///< in env order, then package order
  std::vector<Pin> pins;
  std::vector<TierOutcome> tiers;      ///< every tier, tried or skipped, with its reason
  std::vector<std::string> warnings;
  /// When no tier covered every package and Inputs::advise: which combos would; also when the
  /// machine's own torch cannot run on its GPUs (Advice::torch).
  std::optional<Advice> advice;
  /// The machine's own torch (tier 1's combo) judged on its GPUs (torch_gate.hpp): from
  /// Inputs::torch_archs, else the policy's torch arch matrix; nullopt when it has no torch combo.
  std::optional<TorchVerdict> machine_torch = {};
  /// Set when the installed torch cannot run on the machine's GPUs: why (the reports' first
  /// words after the machine, the root cause before any package).
  std::string torch_root_cause = {};
  /// The chosen combo's torch judged on the GPUs, as the advice judges a combo (the installed
  /// torch's own list when it is the machine's combo, else the policy's row); nullopt when
  /// unresolved. What `mirror --with-torch` sets a machine's torch family aside by.
  std::optional<TorchVerdict> combo_torch = {};
  /// What the machine supports for PEP 825 variants under the chosen combo (or its own torch).
  model::VariantSupport variants = {};
  /// The packages left unresolved by the last tier evaluated (empty when resolved).
  [[nodiscard]] const std::vector<PackageOutcome>* unresolved_tier() const;
  [[nodiscard]] bool ok() const noexcept { return combo.has_value(); }
  [[nodiscard]] std::string combo_str(const model::Combo& c) const { return semantics::combo_str(notation, c); }
};

/// What an inspection (`resolve --inspect`: the wheel's own binaries read) says of a would-be
/// pick: `reject` set rejects it (the resolver then tries the next candidate in preference
/// order and reports this failure as that candidate's verdict); otherwise `arch_source`, when
/// not empty, replaces the pick's policy-derived arch_source (the real archs, as evidence).
struct Inspection {
  std::optional<Failure> reject;
  std::string arch_source;
};
/// Called with each package's would-be pick (env, name, python, filename, url, arch_source
/// filled); it may be called again for the same wheel in another tier or env.
using InspectHook = std::function<Inspection(const Pick&)>;

/// The candidates of a snapshot's packages, their wheel names parsed once, shared read-only by
/// the resolves of a fleet against that snapshot and policy (several threads at once).
struct PreparedCandidates;

/// Prepares the candidates of `packages` (normalised names) in `snap` under `policy`; the
/// snapshot must outlive nothing (the result holds its own copies).
std::shared_ptr<const PreparedCandidates> prepare_candidates(const index::IndexSnapshot& snap, const semantics::Policy& policy,
                                                             const std::vector<std::string>& packages);

struct Inputs {
  const config::Workspace& workspace;
  const machine::Machine& machine;
  const semantics::Policy& policy;
  const index::IndexSnapshot& index;
  std::string backend;       ///< the backend's name, for messages
  InspectHook inspect = {};  ///< empty: picks are judged on their names and the policy alone
  /// --combo: exactly this combo is the only tier ("requested"), judged like any other.
  std::optional<model::Combo> combo = {};
  bool fallback = true;      ///< false (--no-fallback): tier 2 is skipped
  bool advise = true;        ///< search for the combos that would cover everything when no tier does
  /// prepare_candidates() of this very snapshot and policy: its packages are not parsed again
  /// (a package it lacks is). nullptr: every package is parsed here.
  const PreparedCandidates* prepared = nullptr;
  /// The installed torch's own targets, read from its library (libtorch_cuda.so / torch_cuda.dll)
  /// by the backend: they override the policy's torch arch matrix row for the machine's torch.
  std::optional<TorchArchs> torch_archs = {};
};

/// Errors only for inputs that make a resolve meaningless (Errc::usage): no OS or CPU arch
/// known, no Python for an env (neither its config nor the machine says), no packages at all,
/// a device target the backend's grammar refuses (Errc::invalid_input naming it and its source).
Expected<Resolution> resolve(const Inputs& in);

/// Tier 1's combo for a machine, or the reason there is none.
struct ComboOrReason {
  std::optional<model::Combo> combo;
  std::string reason;
  bool cpu_only = false;  ///< the torch is a CPU-only build (PyPI's for Windows): it runs nothing on a GPU
};
ComboOrReason machine_combo(const machine::Machine& m, const semantics::Policy& policy);

}  // namespace wheelfit::resolve
