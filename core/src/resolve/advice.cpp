// The advice search: when no tier covers every package, which combos would (resolver.hpp,
// Advice). Every combo the index publishes for the requested packages is judged on the
// machine's fixed facts; the torch (and so the combo) is what the user would change, the driver
// is reported when it would need an upgrade, and PyTorch must ship the combo for the Python and
// platform. The candidates are grouped by combo once, so each combo judges only its own wheels:
// the whole search costs about one more pass over the index's candidates per Python tried.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "memo.hpp"
#include "torch_advice.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::resolve::detail {

using model::NumericVersion;
using util::join;

std::vector<Pin> pins_for(const semantics::Policy& policy, const Combo& combo, std::vector<std::string>& warnings) {
  std::vector<Pin> pins;
  const auto index = policy.torch_index_url(combo.line);
  const auto& t = combo.torch;
  pins.push_back({"torch", "==" + t.str() + ".*", index});
  if (auto fam = policy.torch_family(t)) {
    pins.push_back({"torchvision", "==" + fam->torchvision.str() + ".*", index});
    pins.push_back({"torchaudio", "==" + fam->torchaudio.str() + ".*", index});
  } else {
    warnings.push_back("torch " + t.str() + " is not in the torch family table: torchvision and torchaudio are not pinned");
  }
  return pins;
}

namespace {

// A combo as a map key, compared without building text (line, torch).
std::tuple<const NumericVersion&, const NumericVersion&> key_of(const Combo& c) { return std::tie(c.line, c.torch); }

// One (combo, Pythons) judged: what it covers and what it leaves out.
using Verdict = AdviceVerdict;

// Whether every listing of `a` is the prepared one and they are all of them: the memo's advice
// groups are then this resolve's.
bool all_prepared(const AdviceInputs& a) {
  if (!a.memo || a.listing.size() != a.in.prepared->listings.size()) return false;
  return std::all_of(a.listing.begin(), a.listing.end(), [&](const auto& l) {
    auto it = a.in.prepared->listings.find(l.first);
    return it != a.in.prepared->listings.end() && &it->second == l.second;
  });
}

class Search {
 public:
  explicit Search(const AdviceInputs& a) : a_(a), policy_(a.in.policy), m_(a.in.machine) {
    // The driver is not a fact the combo must fit: it is reported per suggestion.
    fixed_ = m_;
    fixed_.driver_line.reset();
    fixed_.driver_version.reset();
    platform_target_ = model::PlatformTarget{*m_.os, *m_.cpu_arch, m_.glibc};
    platform_ = model::farm_platform(*m_.os, *m_.cpu_arch);
    // Every combo a requested package publishes, and each package's candidates by combo (those
    // without a combo label serve any combo), dropping wheels whose platform never fits here:
    // once per platform for a fleet's machines.
    if (all_prepared(a)) {
      groups_ = &a.memo->groups(a.in.prepared->listings, platform_target_);
    } else {
      own_ = advice_groups(a.listing, platform_target_);
      groups_ = &own_;
    }
    memo_covers_ = groups_ != &own_ && a.gpus;
    memoised_ = memo_covers_ && std::none_of(a.envs.begin(), a.envs.end(), [&](const EnvTarget& e) {
      return std::any_of(e.env->packages.begin(), e.env->packages.end(), [&](const auto& p) { return a.memo->has_variants(p.name); });
    });
    if (memoised_) {
      // GPU classes: the same targets share one map in the memo, so its address names them.
      platform_key_ = std::string(model::to_string(platform_target_.os)) + ' ' + platform_target_.cpu_arch + ' ' +
                      (platform_target_.glibc ? platform_target_.glibc->str() : "-") + ' ' + std::to_string(a.gpus->all) + ' ' +
                      std::to_string(reinterpret_cast<std::uintptr_t>(a.gpus->by_package));
    }
  }

  [[nodiscard]] const std::vector<Combo>& combos() const { return groups_->combos; }

  // Whether PyTorch ships the combo for every env's Python (as `pythons` gives them) here.
  [[nodiscard]] bool installable(const Combo& combo, const std::vector<model::PythonTarget>& pythons) const {
    if (!platform_) return false;
    return std::all_of(pythons.begin(), pythons.end(), [&](const model::PythonTarget& py) {
      return policy_.pytorch_shipped(combo, py.version, *platform_);
    });
  }

  /// `first_miss`: stop at the first package it misses (the caller wants a full cover only).
  /// The verdict is the fleet's (memo.hpp) when every cover in it is: machines alike on what it
  /// depends on (the combo, the platform, the GPU classes, each env's Python and packages) share it.
  const Verdict& judge_combo(const Combo& combo, const std::vector<model::PythonTarget>& pythons, bool first_miss = false) {
    auto judged = [&] { return judge_combo_now(combo, pythons, first_miss); };
    if (!memoised_) return own_verdicts_.emplace_back(judged());
    std::string key = platform_key_;
    key += first_miss ? "|first|" : "|all|";
    key += combo.line.str();
    key += '|';
    key += combo.torch.str();
    for (std::size_t i = 0; i < a_.envs.size(); ++i) {
      key += '|';
      key += pythons[i].version.str();
      key += pythons[i].free_threaded ? "t" : "";
      for (const auto& pkg : a_.envs[i].env->packages) {
        key += ' ';
        key += pkg.name;
      }
    }
    return a_.memo->verdict(key, judged);
  }

  Verdict judge_combo_now(const Combo& combo, const std::vector<model::PythonTarget>& pythons, bool first_miss) {
    Verdict v;
    const std::string combo_text = semantics::combo_str(policy_.notation(), combo);
    TierKey key{{}, combo, {}, platform_target_, kUnknownGpus, {}};
    for (std::size_t i = 0; i < a_.envs.size(); ++i) {
      const auto& py = pythons[i];
      key.python = py;
      for (const auto& pkg : a_.envs[i].env->packages) {
        if (first_miss && !v.missing.empty()) return v;
        const std::string who = pkg.name + " (" + py.tag() + ")";
        const Listing& listing = *a_.listing.at(pkg.name);
        if (listing.status != PackageOutcome::Status::unresolved) {
          v.missing.push_back(who + ": " + listing.reason);
          continue;
        }
        auto judged = [&] { return cover_of(pkg.name, combo, py); };
        Cover c;
        if (memo_covers_ && !a_.memo->has_variants(pkg.name)) {
          key.package = pkg.name;
          key.gpus = a_.gpus->of(pkg.name);
          c = a_.memo->cover(key, judged);
        } else {
          c = judged();
        }
        switch (c.kind) {
          case Cover::Kind::no_wheel: v.missing.push_back(who + ": no " + combo_text + " wheel for " + py.tag() + " on " + where()); break;
          case Cover::Kind::fails: v.missing.push_back(who + ": its " + combo_text + " wheels fail " + c.failed); break;
          case Cover::Kind::covered:
            v.covers.push_back(who);
            if (c.prerelease) ++v.prereleases;
            break;
        }
      }
    }
    return v;
  }

  // How the package's wheels of `combo` (and those bound to none) fare for Python `py` here.
  Cover cover_of(const std::string& package, const Combo& combo, const model::PythonTarget& py) {
    static const std::vector<const Candidate*> kNone;
    const auto& groups = groups_->labeled.at(package);
    const auto g = groups.find(key_of(combo));
    const auto& labeled = g == groups.end() ? kNone : g->second;
    const auto f = groups_->unlabeled.find(package);
    const auto& free = f == groups_->unlabeled.end() ? kNone : f->second;
    if (labeled.empty() && free.empty()) return {};
    ArchCache& archs = arch_cache(package);
    Context ctx{fixed_, a_.targets, policy_, combo, py, platform_target_, package, archs, false, nullptr};
    ctx.variants = &variants_for(combo);
    ctx.variant_orders = &orders_;
    const Candidate* best = nullptr;
    Judged best_judged;
    std::set<std::string> failed;  // of the wheels built for this Python
    bool for_python = false;
    for (std::size_t k = 0; k < labeled.size() + free.size(); ++k) {
      const Candidate* c = k < labeled.size() ? labeled[k] : free[k - labeled.size()];
      if (!model::python_rank(*c->wheel, py)) continue;  // built for another Python: judge would skip it below
      Judged j = judge(*c, ctx);
      if (!j.verdict.fits()) {
        const auto& fl = j.verdict.failed;
        if (std::any_of(fl.begin(), fl.end(), [](const Failure& x) { return x.demand == Demand::python; })) continue;
        for_python = true;
        for (const auto& x : fl) failed.insert(demand_name(x.demand, policy_.notation()));
        continue;
      }
      for_python = true;
      if (!best || better(*c, j, *best, best_judged)) {
        best = c;
        best_judged = std::move(j);
      }
    }
    if (!best && !for_python) return {};
    if (!best) return {Cover::Kind::fails, join({failed.begin(), failed.end()}, ", "), false};
    return {Cover::Kind::covered, {}, best->wheel->version.is_prerelease()};
  }

  // The package's arch-list cache: the fleet's for the machine's targets (asked of the memo once
  // per package), else this resolve's own.
  ArchCache& arch_cache(const std::string& package) {
    if (!a_.memo || !a_.targets) return archs_[package];
    auto [it, fresh] = shared_archs_.try_emplace(package, nullptr);
    if (fresh) it->second = &a_.memo->arch_cache(package, *a_.targets);
    return *it->second;
  }

  // What the machine supports for variants under `combo`. Variants are judged on the machine as
  // it is (its driver included): a provider's CUDA bounds are what the driver runs. Asked once
  // per torch: combos share their torch minors.
  const model::VariantSupport& variants_for(const Combo& combo) {
    const std::string torch = variant_torch(m_, policy_, combo);
    auto known = variants_.find(torch);
    if (known == variants_.end()) known = variants_.emplace(torch, variant_support(m_, policy_, a_.targets, torch)).first;
    return known->second;
  }

  Suggestion suggestion(const Combo& combo, const Verdict& v, std::optional<NumericVersion> python) {
    Suggestion s;
    s.kind = python ? Suggestion::Kind::python : Suggestion::Kind::combo;
    s.combo = combo;
    s.python = std::move(python);
    s.covers = v.covers;
    s.prereleases = v.prereleases;
    std::vector<std::string> ignored;  // the tiers already warn about a missing family entry
    s.pins = pins_for(policy_, combo, ignored);
    if (auto driver = judge_driver(combo.line, m_, policy_); driver.failure) s.driver_upgrade = std::move(driver.failure);
    return s;
  }

 private:
  // "linux" (the farm's platform key), else the OS and CPU arch.
  [[nodiscard]] std::string where() const {
    return platform_ ? *platform_ : std::string(model::to_string(*m_.os)) + " " + *m_.cpu_arch;
  }

  const AdviceInputs& a_;
  const semantics::Policy& policy_;
  const machine::Machine& m_;
  machine::Machine fixed_;
  std::map<std::string, model::VariantSupport> variants_;  // what the machine supports, by the torch judged against
  VariantOrders orders_;  // by (variants file, support)
  model::PlatformTarget platform_target_;
  std::optional<std::string> platform_;
  AdviceGroups own_;                   // this resolve's groups, when the memo's are not
  const AdviceGroups* groups_ = nullptr;
  bool memo_covers_ = false;           // covers memoised (the groups are the memo's)
  bool memoised_ = false;              // whole verdicts memoised: every requested package's covers are
  std::string platform_key_;           // what the verdicts' keys begin with: platform and GPU classes
  std::deque<Verdict> own_verdicts_;   // the verdicts of this resolve, when not memoised
  std::map<std::string, ArchCache> archs_;
  std::map<std::string, ArchCache*> shared_archs_;  // the memo's, by package
};

// The Pythons PyTorch ships for this platform, newest first, besides the envs' own.
std::vector<NumericVersion> other_pythons(const semantics::Policy& policy, const std::optional<std::string>& platform,
                                          const std::vector<model::PythonTarget>& own) {
  std::set<NumericVersion> all;
  if (!platform) return {};
  for (const auto& cell : policy.shipped_cells())
    if (cell.platform == *platform) all.insert(cell.python);
  std::vector<NumericVersion> out;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const bool mine = std::any_of(own.begin(), own.end(), [&](const model::PythonTarget& p) { return p.version == *it; });
    if (!mine) out.push_back(*it);
  }
  return out;
}

}  // namespace

bool better_suggestion(const Suggestion& a, const Suggestion& b, const std::optional<NumericVersion>& reference) {
  // What runs on the machine as it is comes before what needs a driver upgrade, however new its
  // torch: an upgrade is a change to the machine, like another Python (issue 20, item 20).
  if (a.driver_upgrade.has_value() != b.driver_upgrade.has_value()) return !a.driver_upgrade;
  if (!(a.combo.torch == b.combo.torch)) return b.combo.torch < a.combo.torch;
  if (reference) {
    const long da = line_distance(a.combo.line, *reference), db = line_distance(b.combo.line, *reference);
    if (da != db) return da < db;
  }
  if (a.prereleases != b.prereleases) return a.prereleases < b.prereleases;
  return b.combo.line < a.combo.line;
}

Advice advise(const AdviceInputs& a) {
  Advice out;
  Search search(a);
  std::vector<model::PythonTarget> own;
  for (const auto& e : a.envs) own.push_back(e.python);
  auto ranked = [&](const Suggestion& x, const Suggestion& y) { return better_suggestion(x, y, a.reference_line); };

  // A combo whose torch cannot run on the GPUs is set aside, named with the reason (issue 32).
  auto torch_runs = [&](const Combo& combo) {
    auto aside = a.torch ? a.torch->set_aside(combo) : std::nullopt;
    if (!aside) return true;
    const bool named = std::any_of(out.set_aside.begin(), out.set_aside.end(), [&](const SetAside& s) { return s.combo == combo; });
    if (!named) out.set_aside.push_back(std::move(*aside));
    return false;
  };

  // The combos that keep every env's Python; the near misses when none covers everything.
  std::vector<std::pair<Combo, const Verdict*>> misses;
  for (const auto& combo : search.combos()) {
    if (!search.installable(combo, own) || !torch_runs(combo)) continue;
    ++out.combos_searched;
    const Verdict& v = search.judge_combo(combo, own);
    if (v.missing.empty()) out.suggestions.push_back(search.suggestion(combo, v, std::nullopt));
    else misses.emplace_back(combo, &v);
  }
  std::sort(out.suggestions.begin(), out.suggestions.end(), ranked);
  if (out.suggestions.empty()) {
    std::stable_sort(misses.begin(), misses.end(), [&](const auto& x, const auto& y) {
      if (x.second->missing.size() != y.second->missing.size()) return x.second->missing.size() < y.second->missing.size();
      if (!(x.first.torch == y.first.torch)) return y.first.torch < x.first.torch;
      return y.first.line < x.first.line;
    });
    for (std::size_t i = 0; i < misses.size() && i < 5; ++i) out.near_misses.push_back({misses[i].first, misses[i].second->missing});
  }

  // Another Python for every env: the best combo for each, after the combos that keep it.
  std::vector<Suggestion> by_python;
  for (const auto& python : other_pythons(a.in.policy, model::farm_platform(*a.in.machine.os, *a.in.machine.cpu_arch), own)) {
    std::vector<model::PythonTarget> pythons(own.size());
    for (std::size_t i = 0; i < own.size(); ++i) pythons[i] = model::PythonTarget{python, false};
    std::optional<Suggestion> best;
    for (const auto& combo : search.combos()) {
      if (!search.installable(combo, pythons) || !torch_runs(combo)) continue;
      const Verdict& v = search.judge_combo(combo, pythons, /*first_miss=*/true);
      if (!v.missing.empty()) continue;
      Suggestion s = search.suggestion(combo, v, python);
      if (!best || ranked(s, *best)) best = std::move(s);
    }
    if (best) by_python.push_back(std::move(*best));
  }
  std::stable_sort(by_python.begin(), by_python.end(), ranked);
  out.suggestions.insert(out.suggestions.end(), by_python.begin(), by_python.end());
  return out;
}

}  // namespace wheelfit::resolve::detail
