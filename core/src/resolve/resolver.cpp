#include "wheelfit/resolve/resolver.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "memo.hpp"
#include "torch_tiers.hpp"
#include "torch_advice.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::resolve {

using model::Combo;
using model::NumericVersion;
using util::join;

const std::vector<PackageOutcome>* Resolution::unresolved_tier() const {
  if (ok()) return nullptr;
  for (auto it = tiers.rbegin(); it != tiers.rend(); ++it) {
    if (it->status == TierOutcome::Status::failed) return &it->packages;
  }
  return nullptr;
}

namespace {

using namespace detail;

// Why a fallback combo cannot serve this machine, or "" when it may be tried.
std::string fallback_skip_reason(const Combo& combo, const std::vector<EnvTarget>& envs, const machine::Machine& m,
                                 const std::optional<std::vector<std::string>>& targets,
                                 const semantics::Policy& policy, const std::optional<std::string>& platform) {
  const std::string& line_name = policy.notation().name;
  if (!platform) {
    return "the farm builds nothing for " + std::string(model::to_string(*m.os)) + " " + *m.cpu_arch;
  }
  for (const auto& e : envs) {
    if (!policy.pytorch_shipped(combo, e.python.version, *platform)) {
      return "PyTorch never shipped torch " + combo.torch.str() + " for " + line_name + " " + combo.line.str() + ", " +
             e.python.tag() + " on " + *platform;
    }
  }
  if (auto driver = judge_driver(combo.line, m, policy); driver.failure) {
    return "the " + driver.failure->machine + "; the fallback needs " + driver.failure->wheel;
  }
  if (targets) {
    if (targets->empty()) return "the machine has no GPU";
    if (auto archs = policy.platform_arch_list(combo, *platform)) {
      const auto uncovered = cover(policy, archs->list, *targets).uncovered;
      if (!uncovered.empty()) {
        return "the farm's arch list for it (" + archs->list + ") does not cover " + targets_text(policy.device_prefix(), uncovered);
      }
    }
  }
  return "";
}

}  // namespace

ComboOrReason machine_combo(const machine::Machine& m, const semantics::Policy& policy) {
  if (!m.torch) return {std::nullopt, "no torch installed (the machine has no torch)"};
  const auto& torch = *m.torch;
  const std::string shown = torch.str();
  if (torch.release().size() < 2) return {std::nullopt, "torch " + shown + " has no minor version"};
  NumericVersion minor({static_cast<std::uint32_t>(torch.release()[0]), static_cast<std::uint32_t>(torch.release()[1])});
  const std::string& name = policy.notation().name;
  if (!torch.local().empty()) {
    auto line = policy.parse_torch_label(torch.local());
    if (!line) {
      return {std::nullopt, "torch " + shown + ": the label '+" + torch.local() + "' names no " + name +
                                " line (it is not a " + name + " build)"};
    }
    return {Combo{*line, minor}, ""};
  }
  std::optional<std::string> platform;
  if (m.os && m.cpu_arch) platform = model::farm_platform(*m.os, *m.cpu_arch);
  if (platform) {
    if (auto line = policy.pypi_line(minor, *platform)) return {Combo{*line, minor}, ""};
  }
  if (m.os == model::Os::windows) {
    return {std::nullopt,
            "torch " + shown + " has no local label: on Windows PyPI's torch is CPU-only (PyTorch ships its " + name +
                " builds for Windows only from its own index, with a local label such as +cu128), so it runs nothing on "
                "the GPUs",
            true};
  }
  return {std::nullopt, "torch " + shown + " has no local label (a PyPI build) and the policy data does not say which " + name +
                            " line PyPI ships for torch " + minor.str() + (platform ? " on " + *platform : std::string()) +
                            "; wheelfit does not guess it from the driver"};
}

namespace {

// torch listed as a package, judged first against a variant index: the wheel picked (its version
// is then the machine's torch), or the outcome of a torch no wheel of which runs here.
struct ListedTorch {
  const Pick* pick = nullptr;
  const PackageOutcome* unresolved = nullptr;
};

// The environments to resolve for, each with its Python (its config's, else the machine's); a
// usage error when one has none, or when no config lists a package.
Expected<std::vector<EnvTarget>> env_targets(const Inputs& in) {
  const auto& m = in.machine;
  std::vector<EnvTarget> envs;
  std::size_t package_count = 0;
  for (const auto& env : in.workspace.envs) {
    model::PythonTarget py;
    if (env.python) {
      py.version = env.python->truncated(2);
    } else if (m.python) {
      py.version = m.python->truncated(2);
      py.free_threaded = m.python_free_threaded;
    } else {
      return unexpected(Errc::usage, env.file + ": no Python version: set python = \"3.12\" in it, or python in the machine "
                                                "profile (--machine) or WHEELFIT_OVERRIDE_PYTHON");
    }
    envs.push_back({&env, py});
    package_count += env.packages.size();
  }
  if (package_count == 0) return unexpected(Errc::usage, "no packages to resolve: no packages in any config");
  return envs;
}

// Each package's candidates, listed once: taken from the prepared snapshot, else listed here.
struct Listings {
  std::map<std::string, Listing> owned;  ///< those listed here (not prepared)
  std::map<std::string, const Listing*> by_name;
};

// The candidates of every package of `envs`; their warnings join `warnings`, in package order.
Listings list_candidates(const Inputs& in, const std::vector<EnvTarget>& envs, std::vector<std::string>& warnings) {
  Listings out;
  std::optional<DigestBook> digests;  // built on the first package not prepared
  for (const auto& e : envs) {
    for (const auto& pkg : e.env->packages) {
      if (out.by_name.count(pkg.name)) continue;
      const Listing* l = nullptr;
      if (in.prepared) {
        if (auto it = in.prepared->listings.find(pkg.name); it != in.prepared->listings.end()) l = &it->second;
      }
      if (!l) {
        if (!digests) digests.emplace(in.index);
        l = &out.owned.emplace(pkg.name, listing_for(pkg.name, in.index, in.policy, *digests)).first->second;
      }
      warnings.insert(warnings.end(), l->warnings.begin(), l->warnings.end());
      out.by_name.emplace(pkg.name, l);
    }
  }
  return out;
}

void set_aside(TierOutcome& t, std::string why) {
  t.status = TierOutcome::Status::set_aside;
  t.reason = std::move(why);
}

// The resolve itself, once its inputs were checked and the listed torch (if any) was judged: the
// tiers judged against each package's candidates, the first that covers every package chosen,
// then the advice and what could not be checked. Its members are the phases, in order. Not
// thread-safe, not copyable (one per resolve: the advice and the torch gate refer to its members).
class TierResolver {
 public:
  TierResolver(const Inputs& in, ListedTorch listed, std::vector<EnvTarget> envs,
               std::optional<std::vector<std::string>> targets);
  TierResolver(const TierResolver&) = delete;
  TierResolver& operator=(const TierResolver&) = delete;

  Resolution resolve();

 private:
  const model::VariantSupport& support_for(const std::string& torch_version);
  PackageOutcome judge(const TierOutcome& tier, const EnvTarget& e, const config::Package& pkg,
                       const model::VariantSupport& variants, TierKey& key);
  void run_tier(TierOutcome& tier);
  void requested_tier();
  TierOutcome bootstrap_tier();
  void fresh_environment(TierOutcome& t1);
  std::vector<Suggestion> passed_over(const Suggestion* first);
  TierOutcome fallback_tier(bool t1_ok, const std::optional<Combo>& t1_combo);
  void choose();
  void say_unchecked();

  const Inputs& in_;
  const machine::Machine& m_;
  const ListedTorch listed_;
  const std::vector<EnvTarget> envs_;
  const std::optional<std::vector<std::string>> targets_;
  const model::PlatformTarget platform_target_;
  const std::optional<std::string> platform_;
  Resolution res_;
  const Listings listings_;
  std::map<std::string, ArchCache> arch_caches_;  // per package, shared by the tiers
  // What the machine supports for variants depends on the torch judged against only: the
  // provider is asked once per torch (the tiers and the report share it), its notes warned once.
  std::map<std::string, model::VariantSupport> supports_;
  VariantOrders orders_;  // one per (variants file, support), shared by the tiers
  // A fleet's machines share their judging (memo.hpp): only of prepared listings, never with an
  // inspect hook (it judges the machine's own binaries).
  JudgingMemo* const memo_;
  const GpuClasses gpus_;
  const ComboOrReason mc_;
  // The torch of each combo judged on the GPUs once (issue 32): the tiers set aside, and the
  // advice sets aside, what cannot run.
  TorchJudge torch_judge_;
  // The installed torch judged first: when it cannot run on every GPU, that is the root cause.
  TorchGate gate_;
  std::string own_torch_;  // why the installed torch cannot run ("" when it can or is unknown)
  const std::optional<NumericVersion> reference_;
  const AdviceInputs advice_inputs_;
};

TierResolver::TierResolver(const Inputs& in, ListedTorch listed, std::vector<EnvTarget> envs,
                           std::optional<std::vector<std::string>> targets)
    : in_(in),
      m_(in.machine),
      listed_(listed),
      envs_(std::move(envs)),
      targets_(std::move(targets)),
      platform_target_{*m_.os, *m_.cpu_arch, m_.glibc},
      platform_(model::farm_platform(*m_.os, *m_.cpu_arch)),
      listings_(list_candidates(in, envs_, res_.warnings)),
      memo_(in.prepared && !in.inspect ? &in.prepared->memo : nullptr),
      gpus_(memo_ ? memo_->gpu_classes(in.prepared->listings, in.policy, targets_) : GpuClasses{}),
      mc_(machine_combo(m_, in.policy)),
      torch_judge_(in, mc_.combo, targets_, platform_),
      gate_(in, torch_judge_, targets_, platform_),
      reference_(mc_.combo ? std::optional<NumericVersion>(mc_.combo->line) : m_.driver_line),
      advice_inputs_{in, envs_, listings_.by_name, targets_, reference_, memo_, &gpus_, &torch_judge_} {
  res_.notation = in.policy.notation();
  res_.device_prefix = in.policy.device_prefix();
  res_.targets = targets_;
  // (A torch resolved from a variant index was chosen by its own variant properties on these GPUs.)
  if (mc_.combo && !listed_.pick) res_.machine_torch = gate_.machine(*m_.torch, own_torch_);
  else if (mc_.cpu_only && targets_ && !targets_->empty()) own_torch_ = mc_.reason;
  res_.torch_root_cause = own_torch_;
}

Resolution TierResolver::resolve() {
  if (in_.combo) {
    requested_tier();
  } else {
    TierOutcome t1 = bootstrap_tier();
    const bool t1_ok = t1.status == TierOutcome::Status::resolved;
    const auto t1_combo = t1.combo;
    res_.tiers.push_back(std::move(t1));
    res_.tiers.push_back(fallback_tier(t1_ok, t1_combo));
  }
  choose();
  say_unchecked();
  return std::move(res_);
}

const model::VariantSupport& TierResolver::support_for(const std::string& torch_version) {
  auto [it, fresh] = supports_.try_emplace(torch_version);
  if (fresh) {
    it->second = variant_support(m_, in_.policy, targets_, torch_version);
    for (const auto& note : it->second.notes) {
      if (std::find(res_.warnings.begin(), res_.warnings.end(), note) == res_.warnings.end()) res_.warnings.push_back(note);
    }
  }
  return it->second;
}

// One package of one env under a tier's combo, judged here or shared through the fleet's memo.
PackageOutcome TierResolver::judge(const TierOutcome& tier, const EnvTarget& e, const config::Package& pkg,
                                   const model::VariantSupport& variants, TierKey& key) {
  const Listing& l = *listings_.by_name.at(pkg.name);
  // A fleet's machines with the same targets share their arch lists' coverage.
  ArchCache& archs = memo_ && targets_ ? memo_->arch_cache(pkg.name, *targets_) : arch_caches_[pkg.name];
  Context ctx{m_, targets_, in_.policy, *tier.combo, e.python, platform_target_, pkg.name, archs, false, &in_.inspect};
  ctx.variants = &variants;
  ctx.variant_orders = &orders_;
  auto judged = [&] { return resolve_package(e.env->name, pkg, l.candidates, l.status, l.reason, ctx); };
  if (!memo_ || listings_.owned.count(pkg.name) || memo_->has_variants(pkg.name)) return judged();
  key.package = pkg.name;
  key.gpus = gpus_.of(pkg.name);
  PackageOutcome outcome = memo_->outcome(key, judged);
  outcome.env = e.env->name;  // the package's env and spelling: this one's
  outcome.requested = pkg.requested;
  if (outcome.pick) {
    outcome.pick->env = e.env->name;
    outcome.pick->requested = pkg.requested;
  }
  return outcome;
}

void TierResolver::run_tier(TierOutcome& tier) {
  bool all = true;
  const model::VariantSupport& variants = support_for(variant_torch(m_, in_.policy, *tier.combo));
  TierKey key{{}, *tier.combo, {}, platform_target_, kUnknownGpus, judge_driver(tier.combo->line, m_, in_.policy)};
  for (const auto& e : envs_) {
    key.python = e.python;
    for (const auto& pkg : e.env->packages) {
      PackageOutcome outcome = judge(tier, e, pkg, variants, key);
      all = all && outcome.status == PackageOutcome::Status::resolved;
      tier.packages.push_back(std::move(outcome));
    }
  }
  std::vector<std::string> missing;
  for (const auto& p : tier.packages)
    if (p.status != PackageOutcome::Status::resolved) missing.push_back(p.name + " (" + p.python + ")");
  tier.status = all ? TierOutcome::Status::resolved : TierOutcome::Status::failed;
  if (!all) tier.reason = "not covered: " + join(missing, ", ");
}

// --combo: exactly that combo, the only tier, judged like any other.
void TierResolver::requested_tier() {
  TierOutcome t{"requested", in_.combo, TierOutcome::Status::skipped, "", {}};
  t.chosen = "--combo " + res_.combo_str(*in_.combo);
  if (auto why = gate_.set_aside(*in_.combo); !why.empty()) set_aside(t, std::move(why));
  else run_tier(t);
  if (auto driver = judge_driver(in_.combo->line, m_, in_.policy); driver.failure && t.status == TierOutcome::Status::failed) {
    t.reason = "the " + driver.failure->machine + "; " + res_.combo_str(*in_.combo) + " needs " + driver.failure->wheel;
  }
  res_.tiers.push_back(std::move(t));
}

// Tier 1: the machine's own combo; in a fresh environment (no torch), the newest combo the
// index and PyTorch's matrix offer that this machine runs and that covers every package.
TierOutcome TierResolver::bootstrap_tier() {
  TierOutcome t1{"bootstrap", std::nullopt, TierOutcome::Status::skipped, "", {}};
  if (mc_.combo) {
    t1.combo = mc_.combo;
    if (res_.machine_torch && res_.machine_torch->cannot_run()) set_aside(t1, own_torch_);
    else run_tier(t1);
  } else if (listed_.unresolved) {
    // No torch wheel of the index runs here, and only a torch fixes the combo: that torch's
    // verdicts are the answer, as any package's.
    t1.status = TierOutcome::Status::failed;
    t1.reason = "torch is listed, and no torch wheel the index serves runs on this machine (its version would fix the combo)";
    t1.packages.push_back(*listed_.unresolved);
  } else if (!m_.torch) {
    fresh_environment(t1);
  } else {
    t1.reason = mc_.reason;
  }
  return t1;
}

// Tier 1 in a fresh environment: the advice's best combo; each set aside before it is a tier.
void TierResolver::fresh_environment(TierOutcome& t1) {
  res_.advice = advise(advice_inputs_);
  const auto& all = res_.advice->suggestions;
  // The newest the driver runs whose torch runs too (the advice has set aside, in
  // Advice::set_aside, each combo whose torch cannot run); each newer one set aside is named.
  auto first = std::find_if(all.begin(), all.end(), [&](const Suggestion& s) {
    return s.kind == Suggestion::Kind::combo && !s.driver_upgrade && gate_.set_aside(s.combo).empty();
  });
  for (const auto& s : passed_over(first != all.end() ? &*first : nullptr)) {
    res_.tiers.push_back(TierOutcome{"bootstrap", s.combo, TierOutcome::Status::set_aside, gate_.set_aside(s.combo), {}});
  }
  if (first != all.end()) {
    t1.combo = first->combo;
    t1.chosen = "no torch installed: the newest combo the index and PyTorch's matrix offer that this machine runs "
                "and that covers every package (of " + std::to_string(res_.advice->combos_searched) + " searched)";
    run_tier(t1);
  } else {
    t1.reason = mc_.reason + "; no combo the index publishes covers every package on this machine" +
                (res_.tiers.empty() ? "" : " with a torch that runs on its GPUs (those set aside above)");
  }
}

// Each set-aside combo that would otherwise have been chosen before `first` (nullptr: none was),
// as a suggestion would rank (installable for every env's Python, run by this driver, covering
// every package), best first.
std::vector<Suggestion> TierResolver::passed_over(const Suggestion* first) {
  std::vector<Suggestion> passed;
  for (const auto& a : res_.advice->set_aside) {
    Suggestion s;
    s.combo = a.combo;
    if (first && !better_suggestion(s, *first, reference_)) continue;
    if (judge_driver(a.combo.line, m_, in_.policy).failure) continue;
    if (!std::all_of(envs_.begin(), envs_.end(), [&](const EnvTarget& e) {
          return platform_ && in_.policy.pytorch_shipped(a.combo, e.python.version, *platform_);
        })) continue;
    TierOutcome probe{"bootstrap", a.combo, TierOutcome::Status::skipped, "", {}};
    run_tier(probe);
    if (probe.status == TierOutcome::Status::resolved) passed.push_back(std::move(s));
  }
  std::sort(passed.begin(), passed.end(),
            [&](const Suggestion& x, const Suggestion& y) { return better_suggestion(x, y, reference_); });
  return passed;
}

// Tier 2: the backend's fallback combo for this CPU arch.
TierOutcome TierResolver::fallback_tier(bool t1_ok, const std::optional<Combo>& t1_combo) {
  TierOutcome t2{"fallback", in_.policy.fallback_combo(*m_.cpu_arch), TierOutcome::Status::skipped, "", {}};
  if (!t2.combo) {
    const std::string combo_name = in_.policy.notation().name;
    t2.reason = "the " + (in_.backend.empty() ? combo_name : in_.backend) + " backend has no fallback combo for " + *m_.cpu_arch;
  } else if (t1_ok) {
    t2.reason = "not needed: tier 1 covered every package";
  } else if (listed_.pick) {
    t2.reason = "torch is resolved from the index (" + listed_.pick->filename + "): its version fixes the combo";
  } else if (!in_.fallback) {
    t2.reason = "--no-fallback";
  } else if (t1_combo && *t1_combo == *t2.combo) {
    t2.reason = "same combo as tier 1";
  } else if (auto why = fallback_skip_reason(*t2.combo, envs_, m_, targets_, in_.policy, platform_); !why.empty()) {
    t2.reason = why;
  } else if (auto aside = gate_.set_aside(*t2.combo); !aside.empty()) {
    set_aside(t2, std::move(aside));
  } else {
    run_tier(t2);
  }
  return t2;
}

// The first tier that resolved is the answer: its picks, the torch family pins for its combo;
// without one, the advice (the combos that would cover everything).
void TierResolver::choose() {
  for (const auto& t : res_.tiers) {
    if (t.status != TierOutcome::Status::resolved) continue;
    res_.combo = t.combo;
    res_.tier = t.tier;
    for (const auto& p : t.packages) res_.picks.push_back(*p.pick);
    break;
  }
  if (res_.combo) res_.pins = pins_for(in_.policy, *res_.combo, res_.warnings);
  if (listed_.pick) {
    // torch is a pick (an exact, hash-pinned wheel), not a version-range pin.
    std::erase_if(res_.pins, [](const Pin& p) { return p.name == "torch"; });
  }
  if (!res_.combo && in_.advise && !res_.advice) res_.advice = advise(advice_inputs_);
  // The machine's own torch cannot run on its GPUs: the advice names the torch that does, resolved
  // or not (the combos that cover every package with it come from the search).
  if (const auto& own = torch_judge_.machine(); in_.advise && own && own->cannot_run()) {
    if (!res_.advice) res_.advice = advise(advice_inputs_);
    res_.advice->torch = torch_advice(in_, torch_judge_, envs_, platform_, *res_.advice);
  }
  if (res_.combo && !(res_.advice && res_.advice->torch)) res_.advice.reset();  // else advice is for an unresolved workspace only
  if (res_.combo) res_.combo_torch = torch_judge_.combo(*res_.combo);

  res_.variants = support_for(res_.combo ? variant_torch(m_, in_.policy, *res_.combo)
                                         : m_.torch ? m_.torch->public_version().str() : std::string());
}

// Say what could not be checked.
void TierResolver::say_unchecked() {
  auto& warnings = res_.warnings;
  if (auto unknown = gate_.unknown_warning(); !unknown.empty()) warnings.push_back(std::move(unknown));
  const std::string& name = in_.policy.notation().name;
  if (!m_.gpus) warnings.push_back("gpu_arch not checked: the machine's GPUs are unknown (set gpus in the profile or WHEELFIT_OVERRIDE_GPUS)");
  else if (!in_.policy.rules()) warnings.push_back("gpu_arch not checked: the policy was read without the backend's device rules");
  if (in_.policy.driver_rule() == semantics::DriverRule::unknown) {
    warnings.push_back("the driver's " + name + " support not checked: " +
                       (in_.policy.driver_why().empty() ? "the backend has no driver rule" : in_.policy.driver_why()));
  } else if (!m_.driver_line && !m_.driver_version) {
    warnings.push_back("the driver's " + name + " support not checked: driver_line and driver_version are unknown");
  }
  if (!m_.glibc && *m_.os == model::Os::linux_) warnings.push_back("glibc floor not checked: the machine's glibc is unknown");
  if (res_.combo && in_.policy.driver_rule() == semantics::DriverRule::same_major && m_.driver_line &&
      m_.driver_line->major() == res_.combo->line.major() && *m_.driver_line < res_.combo->line) {
    warnings.push_back("the driver supports " + name + " " + m_.driver_line->str() + ", older than " + res_.combo->line.str() +
                       ": this relies on " + name + " minor-version compatibility; upgrade the driver if kernels fail");
  }
}

// The resolve of inputs whose listed torch (if any) was judged.
Expected<Resolution> resolve_on(const Inputs& in, ListedTorch listed = {}) {
  const auto& m = in.machine;
  if (!m.os) return unexpected(Errc::usage, "the machine's OS is unknown: set os in the machine profile or WHEELFIT_OVERRIDE_OS");
  if (!m.cpu_arch) return unexpected(Errc::usage, "the machine's CPU arch is unknown: set cpu_arch in the machine profile or WHEELFIT_OVERRIDE_CPU_ARCH");
  auto envs = env_targets(in);
  if (!envs) return envs.error();
  auto targets = device_targets(m, in.policy);
  if (!targets) return targets.error();
  return TierResolver(in, listed, std::move(*envs), std::move(*targets)).resolve();
}

// A torch wheel whose variant has no properties (PEP 825's null, or an older index's label for
// it such as 00000000) needs nothing of the machine: it is the CPU-only build.
bool cpu_only(const Pick& torch) { return torch.variant_label && torch.variant_properties.empty(); }

// The machine's torch once `pick` is installed. Its variant label is its local label only for a
// build with properties (PyTorch's cuda12.8, read by the backend's torch-label grammar); a
// CPU-only build names no line: its version alone, as a torch without a local label.
model::Version listed_torch_version(const Pick& pick) {
  const auto version = model::Version::parse(pick.version);
  if (!pick.variant_label || cpu_only(pick)) return *version;
  auto labelled = model::Version::parse(version->public_version().str() + "+" + *pick.variant_label);
  return labelled ? *labelled : *version;
}

// A CPU-only torch from the index, said where the resolution describes it: its pick's variant,
// tier 1's choice; the family pins of a CUDA line are builds for a CUDA torch: not pinned.
void say_cpu_only(Resolution& res, const Pick& torch, const std::string& line_name) {
  const std::string what = "the CPU-only build of torch " + torch.version + " (variant " + *torch.variant_label +
                           ": no properties, so no " + line_name + " line)";
  for (auto& p : res.picks) {
    if (p.name == torch.name && p.filename == torch.filename) p.variant_note = "a CPU-only build: no properties, so no " + line_name + " line";
  }
  for (auto& t : res.tiers) {
    if (t.tier == "bootstrap" && t.combo && t.chosen.empty()) {
      t.chosen = "torch from the index is " + what + ": the combo is its minor on the line PyPI ships it with, as for a torch without a local label";
    }
  }
  std::vector<std::string> dropped;
  std::erase_if(res.pins, [&](const Pin& p) {
    dropped.push_back(p.name + " " + p.version + " from " + p.index);
    return true;
  });
  if (!dropped.empty()) {
    res.warnings.push_back("not pinned: " + join(dropped, ", ") + ": builds for a " + line_name + " torch, and torch is " + what +
                           "; install CPU builds of them");
  }
}

}  // namespace

Expected<Resolution> resolve(const Inputs& in) {
  // torch listed as a package: it must come from an index that serves variant wheels of it
  // (PEP 825), and it is resolved first, on the machine as it is; its version then is the
  // machine's torch for everything else (tier 1's combo, labels, abi_dependency, the family pins).
  const config::Env* env = nullptr;
  const config::Package* pkg = nullptr;
  for (const auto& e : in.workspace.envs) {
    for (const auto& p : e.packages) {
      if (p.name == "torch" && !pkg) {
        env = &e;
        pkg = &p;
      }
    }
  }
  if (!pkg) return resolve_on(in);
  const auto& m = in.machine;
  if (!m.os || !m.cpu_arch || (!env->python && !m.python)) return resolve_on(in);  // its usage error
  std::optional<Listing> owned;
  const Listing* listing = nullptr;
  if (in.prepared) {
    if (auto it = in.prepared->listings.find("torch"); it != in.prepared->listings.end()) listing = &it->second;
  }
  if (!listing) listing = &owned.emplace(listing_for("torch", in.index, in.policy, DigestBook(in.index)));
  const bool variants = std::any_of(listing->candidates.begin(), listing->candidates.end(),
                                    [](const Candidate& c) { return c.wheel && c.wheel->variant_label; });
  if (!variants) {
    return unexpected(Errc::usage, env->file + ": torch is listed in its packages, but " +
                                       index::index_url_for(in.index.base_url, "torch/") +
                                       " serves no variant wheels of torch (PEP 825): against a label-based index the "
                                       "torch family is derived from the resolved combo; remove 'torch' from the packages");
  }
  auto targets = device_targets(m, in.policy);
  if (!targets) return targets.error();
  model::PythonTarget py;
  if (env->python) {
    py.version = env->python->truncated(2);
  } else {
    py.version = m.python->truncated(2);
    py.free_threaded = m.python_free_threaded;
  }
  const model::PlatformTarget platform{*m.os, *m.cpu_arch, m.glibc};
  const model::VariantSupport support = variant_support(m, in.policy, *targets, "");
  const Combo unbound{};  // torch's own wheels carry no combo label
  ArchCache archs;
  Context ctx{m, *targets, in.policy, unbound, py, platform, pkg->name, archs, false, &in.inspect};
  VariantOrders orders;
  ctx.variants = &support;
  ctx.variant_orders = &orders;
  auto outcome = resolve_package(env->name, *pkg, listing->candidates, listing->status, listing->reason, ctx);
  if (outcome.status != PackageOutcome::Status::resolved) return resolve_on(in, {nullptr, &outcome});  // reported with the tiers
  const Pick& pick = *outcome.pick;
  machine::Machine with = m;
  with.torch = listed_torch_version(pick);
  with.provenance["torch"] = "the torch wheel resolved from the index (" + pick.filename + ")";
  const Inputs again{in.workspace, with, in.policy, in.index, in.backend, in.inspect, in.combo, in.fallback, in.advise, in.prepared};
  auto res = resolve_on(again, {&pick, nullptr});
  if (res && cpu_only(pick)) say_cpu_only(*res, pick, in.policy.notation().name);
  return res;
}

}  // namespace wheelfit::resolve
