#include "wheelfit/resolve/resolver.hpp"

#include <algorithm>
#include <map>

#include "memo.hpp"
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
                                 const policy::Policy& policy, const std::optional<std::string>& platform) {
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

ComboOrReason machine_combo(const machine::Machine& m, const policy::Policy& policy) {
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
  return {std::nullopt, "torch " + shown + " has no local label (a PyPI build) and the policy data does not say which " + name +
                            " line PyPI ships for torch " + minor.str() + (platform ? " on " + *platform : std::string()) +
                            "; wheelfit does not guess it from the driver"};
}

namespace {

// The resolve itself; `torch`: the torch wheel a variant index resolved first (its version is
// then the machine's torch), or nullptr.
Expected<Resolution> resolve_on(const Inputs& in, const Pick* torch) {
  const auto& m = in.machine;
  if (!m.os) return unexpected(Errc::usage, "the machine's OS is unknown: set os in the machine profile or WHEELFIT_OVERRIDE_OS");
  if (!m.cpu_arch) return unexpected(Errc::usage, "the machine's CPU arch is unknown: set cpu_arch in the machine profile or WHEELFIT_OVERRIDE_CPU_ARCH");

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
  auto targets = device_targets(m, in.policy);
  if (!targets) return targets.error();

  Resolution res;
  res.notation = in.policy.notation();
  res.device_prefix = in.policy.device_prefix();
  res.targets = *targets;
  const model::PlatformTarget platform_target{*m.os, *m.cpu_arch, m.glibc};
  const auto platform = model::farm_platform(*m.os, *m.cpu_arch);

  // Candidates, once per package (or once per snapshot, prepared).
  std::map<std::string, Listing> owned;
  std::map<std::string, const Listing*> listing;
  std::optional<DigestBook> digests;  // built on the first package not prepared
  for (const auto& e : envs) {
    for (const auto& pkg : e.env->packages) {
      if (listing.count(pkg.name)) continue;
      const Listing* l = nullptr;
      if (in.prepared) {
        if (auto it = in.prepared->listings.find(pkg.name); it != in.prepared->listings.end()) l = &it->second;
      }
      if (!l) {
        if (!digests) digests.emplace(in.index);
        l = &owned.emplace(pkg.name, listing_for(pkg.name, in.index, in.policy, *digests)).first->second;
      }
      res.warnings.insert(res.warnings.end(), l->warnings.begin(), l->warnings.end());
      listing.emplace(pkg.name, l);
    }
  }

  std::map<std::string, ArchCache> arch_caches;  // per package, shared by the tiers
  // What the machine supports for variants depends on the torch judged against only: the
  // provider is asked once per torch (the tiers and the report share it), its notes warned once.
  std::map<std::string, model::VariantSupport> supports;
  auto support_for = [&](const std::string& torch_version) -> const model::VariantSupport& {
    auto [it, fresh] = supports.try_emplace(torch_version);
    if (fresh) {
      it->second = variant_support(m, in.policy, *targets, torch_version);
      for (const auto& note : it->second.notes) {
        if (std::find(res.warnings.begin(), res.warnings.end(), note) == res.warnings.end()) res.warnings.push_back(note);
      }
    }
    return it->second;
  };
  VariantOrders orders;  // one per (variants file, support), shared by the tiers
  // A fleet's machines share their judging (memo.hpp): only of prepared listings, never with an
  // inspect hook (it judges the machine's own binaries).
  JudgingMemo* memo = in.prepared && !in.inspect ? &in.prepared->memo : nullptr;
  const GpuClasses gpus = memo ? memo->gpu_classes(in.prepared->listings, in.policy, *targets) : GpuClasses{};
  auto run_tier = [&](TierOutcome& tier) {
    bool all = true;
    const model::VariantSupport& variants = support_for(variant_torch(m, in.policy, *tier.combo));
    TierKey key{{}, *tier.combo, {}, platform_target, kUnknownGpus, judge_driver(tier.combo->line, m, in.policy)};
    for (const auto& e : envs) {
      key.python = e.python;
      for (const auto& pkg : e.env->packages) {
        const Listing& l = *listing.at(pkg.name);
        // A fleet's machines with the same targets share their arch lists' coverage.
        ArchCache& archs = memo && *targets ? memo->arch_cache(pkg.name, **targets) : arch_caches[pkg.name];
        Context ctx{m, *targets, in.policy, *tier.combo, e.python, platform_target, pkg.name, archs, false, &in.inspect};
        ctx.variants = &variants;
        ctx.variant_orders = &orders;
        auto judged = [&] { return resolve_package(e.env->name, pkg, l.candidates, l.status, l.reason, ctx); };
        PackageOutcome outcome;
        if (memo && !owned.count(pkg.name) && !memo->has_variants(pkg.name)) {
          key.package = pkg.name;
          key.gpus = gpus.of(pkg.name);
          outcome = memo->outcome(key, judged);
          outcome.env = e.env->name;  // the package's env and spelling: this one's
          outcome.requested = pkg.requested;
          if (outcome.pick) {
            outcome.pick->env = e.env->name;
            outcome.pick->requested = pkg.requested;
          }
        } else {
          outcome = judged();
        }
        all = all && outcome.status == PackageOutcome::Status::resolved;
        tier.packages.push_back(std::move(outcome));
      }
    }
    std::vector<std::string> missing;
    for (const auto& p : tier.packages)
      if (p.status != PackageOutcome::Status::resolved) missing.push_back(p.name + " (" + p.python + ")");
    tier.status = all ? TierOutcome::Status::resolved : TierOutcome::Status::failed;
    if (!all) tier.reason = "not covered: " + join(missing, ", ");
  };

  auto mc = machine_combo(m, in.policy);
  std::optional<NumericVersion> reference = mc.combo ? std::optional<NumericVersion>(mc.combo->line) : m.driver_line;
  // The torch of each combo judged on the GPUs (issue 32): the advice sets aside what cannot run.
  TorchJudge torch_judge(in, mc.combo, *targets, platform);
  const AdviceInputs advice_inputs{in, envs, listing, *targets, reference, memo, &gpus, &torch_judge};
  const std::string combo_name = in.policy.notation().name;

  if (in.combo) {
    // --combo: exactly that combo, the only tier, judged like any other.
    TierOutcome t{"requested", in.combo, TierOutcome::Status::skipped, "", {}};
    t.chosen = "--combo " + res.combo_str(*in.combo);
    run_tier(t);
    if (auto driver = judge_driver(in.combo->line, m, in.policy); driver.failure && t.status != TierOutcome::Status::resolved) {
      t.reason = "the " + driver.failure->machine + "; " + res.combo_str(*in.combo) + " needs " + driver.failure->wheel;
    }
    res.tiers.push_back(std::move(t));
  } else {
    // Tier 1: the machine's own combo; in a fresh environment (no torch), the newest combo the
    // index and PyTorch's matrix offer that this machine runs and that covers every package.
    TierOutcome t1{"bootstrap", std::nullopt, TierOutcome::Status::skipped, "", {}};
    if (mc.combo) {
      t1.combo = mc.combo;
      run_tier(t1);
    } else if (!m.torch) {
      res.advice = advise(advice_inputs);
      const auto& all = res.advice->suggestions;
      auto first = std::find_if(all.begin(), all.end(), [](const Suggestion& s) {
        return s.kind == Suggestion::Kind::combo && !s.driver_upgrade;
      });
      if (first != all.end()) {
        t1.combo = first->combo;
        t1.chosen = "no torch installed: the newest combo the index and PyTorch's matrix offer that this machine runs "
                    "and that covers every package (of " + std::to_string(res.advice->combos_searched) + " searched)";
        run_tier(t1);
      } else {
        t1.reason = mc.reason + "; no combo the index publishes covers every package on this machine";
      }
    } else {
      t1.reason = mc.reason;
    }
    const bool t1_ok = t1.status == TierOutcome::Status::resolved;
    res.tiers.push_back(std::move(t1));

    // Tier 2: the backend's fallback combo for this CPU arch.
    TierOutcome t2{"fallback", in.policy.fallback_combo(*m.cpu_arch), TierOutcome::Status::skipped, "", {}};
    if (!t2.combo) {
      t2.reason = "the " + (in.backend.empty() ? combo_name : in.backend) + " backend has no fallback combo for " + *m.cpu_arch;
    } else if (t1_ok) {
      t2.reason = "not needed: tier 1 covered every package";
    } else if (torch) {
      t2.reason = "torch is resolved from the index (" + torch->filename + "): its version fixes the combo";
    } else if (!in.fallback) {
      t2.reason = "--no-fallback";
    } else if (res.tiers[0].combo && *res.tiers[0].combo == *t2.combo) {
      t2.reason = "same combo as tier 1";
    } else if (auto why = fallback_skip_reason(*t2.combo, envs, m, *targets, in.policy, platform); !why.empty()) {
      t2.reason = why;
    } else {
      run_tier(t2);
    }
    res.tiers.push_back(std::move(t2));
  }

  for (const auto& t : res.tiers) {
    if (t.status != TierOutcome::Status::resolved) continue;
    res.combo = t.combo;
    res.tier = t.tier;
    for (const auto& p : t.packages) res.picks.push_back(*p.pick);
    break;
  }

  // Torch family pins for the chosen combo; without one, the combos that would cover everything.
  if (res.combo) res.pins = pins_for(in.policy, *res.combo, res.warnings);
  if (torch) {
    // torch is a pick (an exact, hash-pinned wheel), not a version-range pin.
    std::erase_if(res.pins, [](const Pin& p) { return p.name == "torch"; });
  }
  if (!res.combo && in.advise && !res.advice) res.advice = advise(advice_inputs);
  // The machine's own torch cannot run on its GPUs: the advice names the torch that does, resolved
  // or not (the combos that cover every package with it come from the search).
  if (const auto& own = torch_judge.machine(); in.advise && own && own->cannot_run()) {
    if (!res.advice) res.advice = advise(advice_inputs);
    res.advice->torch = torch_advice(in, torch_judge, envs, platform, *res.advice);
  }
  if (res.combo && !(res.advice && res.advice->torch)) res.advice.reset();  // else advice is for an unresolved workspace only
  if (res.combo) res.combo_torch = torch_judge.combo(*res.combo);

  res.variants = support_for(res.combo ? variant_torch(m, in.policy, *res.combo)
                                       : m.torch ? m.torch->public_version().str() : std::string());

  // Say what could not be checked.
  const std::string& name = in.policy.notation().name;
  if (!m.gpus) res.warnings.push_back("gpu_arch not checked: the machine's GPUs are unknown (set gpus in the profile or WHEELFIT_OVERRIDE_GPUS)");
  else if (!in.policy.rules()) res.warnings.push_back("gpu_arch not checked: the policy was read without the backend's device rules");
  if (in.policy.driver_rule() == policy::DriverRule::unknown) {
    res.warnings.push_back("the driver's " + name + " support not checked: " +
                           (in.policy.driver_why().empty() ? "the backend has no driver rule" : in.policy.driver_why()));
  } else if (!m.driver_line && !m.driver_version) {
    res.warnings.push_back("the driver's " + name + " support not checked: driver_line and driver_version are unknown");
  }
  if (!m.glibc && *m.os == model::Os::linux_) res.warnings.push_back("glibc floor not checked: the machine's glibc is unknown");
  if (res.combo && in.policy.driver_rule() == policy::DriverRule::same_major && m.driver_line &&
      m.driver_line->major() == res.combo->line.major() && *m.driver_line < res.combo->line) {
    res.warnings.push_back("the driver supports " + name + " " + m.driver_line->str() + ", older than " + res.combo->line.str() +
                           ": this relies on " + name + " minor-version compatibility; upgrade the driver if kernels fail");
  }
  return res;
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
  if (!pkg) return resolve_on(in, nullptr);
  const auto& m = in.machine;
  if (!m.os || !m.cpu_arch || (!env->python && !m.python)) return resolve_on(in, nullptr);  // its usage error
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
  if (outcome.status != PackageOutcome::Status::resolved) return resolve_on(in, nullptr);  // reported with the tiers
  const Pick& pick = *outcome.pick;
  machine::Machine with = m;
  const auto version = model::Version::parse(pick.version);
  const bool labelled = pick.variant_label && *pick.variant_label != "null";
  auto torch = labelled ? model::Version::parse(version->public_version().str() + "+" + *pick.variant_label) : version;
  with.torch = torch ? *torch : *version;
  with.provenance["torch"] = "the torch wheel resolved from the index (" + pick.filename + ")";
  const Inputs again{in.workspace, with, in.policy, in.index, in.backend, in.inspect, in.combo, in.fallback, in.advise, in.prepared};
  return resolve_on(again, &pick);
}

}  // namespace wheelfit::resolve
