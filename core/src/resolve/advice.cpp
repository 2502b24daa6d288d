// The advice search: when no tier covers every package, which combos would (resolver.hpp,
// Advice). Every combo the index publishes for the requested packages is judged on the
// machine's fixed facts; the torch (and so the combo) is what the user would change, the driver
// is reported when it would need an upgrade, and PyTorch must ship the combo for the Python and
// platform. The candidates are grouped by combo once, so each combo judges only its own wheels:
// the whole search costs about one more pass over the index's candidates per Python tried.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "candidates.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::resolve::detail {

using model::NumericVersion;
using util::join;

std::vector<Pin> pins_for(const policy::Policy& policy, const Combo& combo, std::vector<std::string>& warnings) {
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

// Line distance in minor steps across majors (12.8 to 13.0 is further than 12.8 to 12.6).
long distance(const NumericVersion& a, const NumericVersion& b) {
  auto at = [](const NumericVersion& v, std::size_t i) {
    return i < v.parts().size() ? static_cast<long>(v.parts()[i]) : 0L;
  };
  const long da = at(a, 0) * 1000 + at(a, 1), db = at(b, 0) * 1000 + at(b, 1);
  return da > db ? da - db : db - da;
}

// A combo as a map key, compared without building text (line, torch).
using ComboKey = std::tuple<NumericVersion, NumericVersion>;
std::tuple<const NumericVersion&, const NumericVersion&> key_of(const Combo& c) { return std::tie(c.line, c.torch); }

// One (combo, Pythons) judged: what it covers and what it leaves out.
struct Verdict {
  std::vector<std::string> covers, missing;
  std::size_t prereleases = 0;
};

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
    // without a combo label serve any combo), dropping wheels whose platform never fits here.
    std::set<ComboKey, std::less<>> seen;
    for (const auto& [name, listing] : a.listing) {
      auto& groups = groups_[name];
      for (const auto& c : listing->candidates) {
        if (!c.wheel || !c.note.empty()) continue;
        const auto fit = model::best_platform_fit(*c.wheel, platform_target_);
        if (!fit.os_ok || !fit.cpu_ok || !fit.glibc_ok) continue;
        if (!c.combo) {
          unlabeled_[name].push_back(&c);
          continue;
        }
        auto g = groups.find(key_of(*c.combo));
        if (g == groups.end()) g = groups.emplace(ComboKey{c.combo->line, c.combo->torch}, std::vector<const Candidate*>{}).first;
        g->second.push_back(&c);
        if (seen.find(key_of(*c.combo)) == seen.end()) {
          seen.emplace(c.combo->line, c.combo->torch);
          combos_.push_back(*c.combo);
        }
      }
    }
  }

  [[nodiscard]] const std::vector<Combo>& combos() const { return combos_; }

  // Whether PyTorch ships the combo for every env's Python (as `pythons` gives them) here.
  [[nodiscard]] bool installable(const Combo& combo, const std::vector<model::PythonTarget>& pythons) const {
    if (!platform_) return false;
    return std::all_of(pythons.begin(), pythons.end(), [&](const model::PythonTarget& py) {
      return policy_.pytorch_shipped(combo, py.version, *platform_);
    });
  }

  /// `first_miss`: stop at the first package it misses (the caller wants a full cover only).
  Verdict judge_combo(const Combo& combo, const std::vector<model::PythonTarget>& pythons, bool first_miss = false) {
    Verdict v;
    const std::string combo_text = policy::combo_str(policy_.notation(), combo);
    const auto key = key_of(combo);
    static const std::vector<const Candidate*> kNone;
    // Variants are judged on the machine as it is (its driver included): a provider's CUDA bounds
    // are what the driver runs. Asked once per torch: combos share their torch minors.
    const std::string torch = variant_torch(m_, policy_, combo);
    auto known = variants_.find(torch);
    if (known == variants_.end()) known = variants_.emplace(torch, variant_support(m_, policy_, a_.targets, torch)).first;
    const model::VariantSupport& variants = known->second;
    for (std::size_t i = 0; i < a_.envs.size(); ++i) {
      const auto& py = pythons[i];
      for (const auto& pkg : a_.envs[i].env->packages) {
        if (first_miss && !v.missing.empty()) return v;
        const std::string who = pkg.name + " (" + py.tag() + ")";
        const Listing& listing = *a_.listing.at(pkg.name);
        if (listing.status != PackageOutcome::Status::unresolved) {
          v.missing.push_back(who + ": " + listing.reason);
          continue;
        }
        // The package's wheels of this combo, then those bound to no combo.
        const auto& groups = groups_[pkg.name];
        const auto g = groups.find(key);
        const auto& labeled = g == groups.end() ? kNone : g->second;
        const auto& free = unlabeled_[pkg.name];
        if (labeled.empty() && free.empty()) {
          v.missing.push_back(who + ": no " + combo_text + " wheel for " + py.tag() + " on " + where());
          continue;
        }
        Context ctx{fixed_, a_.targets, policy_, combo, py, platform_target_, pkg.name, archs_[pkg.name], false, nullptr};
        ctx.variants = &variants;
        const Candidate* best = nullptr;
        Judged best_judged;
        std::set<std::string> failed;  // of the wheels built for this Python
        bool for_python = false;
        for (std::size_t k = 0; k < labeled.size() + free.size(); ++k) {
          const Candidate* c = k < labeled.size() ? labeled[k] : free[k - labeled.size()];
          if (!model::python_rank(*c->wheel, py)) continue;  // built for another Python: judge would skip it below
          Judged j = judge(*c, ctx);
          if (!j.verdict.fits()) {
            const auto& f = j.verdict.failed;
            if (std::any_of(f.begin(), f.end(), [](const Failure& x) { return x.demand == Demand::python; })) continue;
            for_python = true;
            for (const auto& x : f) failed.insert(demand_name(x.demand, policy_.notation()));
            continue;
          }
          for_python = true;
          if (!best || better(*c, j, *best, best_judged)) {
            best = c;
            best_judged = std::move(j);
          }
        }
        if (!best && !for_python) {
          v.missing.push_back(who + ": no " + combo_text + " wheel for " + py.tag() + " on " + where());
          continue;
        }
        if (!best) {
          v.missing.push_back(who + ": its " + combo_text + " wheels fail " + join({failed.begin(), failed.end()}, ", "));
          continue;
        }
        v.covers.push_back(who);
        if (best->wheel->version.is_prerelease()) ++v.prereleases;
      }
    }
    return v;
  }

  Suggestion suggestion(const Combo& combo, Verdict v, std::optional<NumericVersion> python) {
    Suggestion s;
    s.kind = python ? Suggestion::Kind::python : Suggestion::Kind::combo;
    s.combo = combo;
    s.python = std::move(python);
    s.covers = std::move(v.covers);
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
  const policy::Policy& policy_;
  const machine::Machine& m_;
  machine::Machine fixed_;
  std::map<std::string, model::VariantSupport> variants_;  // what the machine supports, by the torch judged against
  model::PlatformTarget platform_target_;
  std::optional<std::string> platform_;
  std::vector<Combo> combos_;
  std::map<std::string, std::map<ComboKey, std::vector<const Candidate*>, std::less<>>> groups_;
  std::map<std::string, std::vector<const Candidate*>> unlabeled_;
  std::map<std::string, ArchCache> archs_;
};

// The Pythons PyTorch ships for this platform, newest first, besides the envs' own.
std::vector<NumericVersion> other_pythons(const policy::Policy& policy, const std::optional<std::string>& platform,
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
    const long da = distance(a.combo.line, *reference), db = distance(b.combo.line, *reference);
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

  // The combos that keep every env's Python; the near misses when none covers everything.
  std::vector<std::pair<Combo, Verdict>> misses;
  for (const auto& combo : search.combos()) {
    if (!search.installable(combo, own)) continue;
    ++out.combos_searched;
    Verdict v = search.judge_combo(combo, own);
    if (v.missing.empty()) out.suggestions.push_back(search.suggestion(combo, std::move(v), std::nullopt));
    else misses.emplace_back(combo, std::move(v));
  }
  std::sort(out.suggestions.begin(), out.suggestions.end(), ranked);
  if (out.suggestions.empty()) {
    std::stable_sort(misses.begin(), misses.end(), [&](const auto& x, const auto& y) {
      if (x.second.missing.size() != y.second.missing.size()) return x.second.missing.size() < y.second.missing.size();
      if (!(x.first.torch == y.first.torch)) return y.first.torch < x.first.torch;
      return y.first.line < x.first.line;
    });
    for (std::size_t i = 0; i < misses.size() && i < 5; ++i) out.near_misses.push_back({misses[i].first, misses[i].second.missing});
  }

  // Another Python for every env: the best combo for each, after the combos that keep it.
  std::vector<Suggestion> by_python;
  for (const auto& python : other_pythons(a.in.policy, model::farm_platform(*a.in.machine.os, *a.in.machine.cpu_arch), own)) {
    std::vector<model::PythonTarget> pythons(own.size());
    for (std::size_t i = 0; i < own.size(); ++i) pythons[i] = model::PythonTarget{python, false};
    std::optional<Suggestion> best;
    for (const auto& combo : search.combos()) {
      if (!search.installable(combo, pythons)) continue;
      Verdict v = search.judge_combo(combo, pythons, /*first_miss=*/true);
      if (!v.missing.empty()) continue;
      Suggestion s = search.suggestion(combo, std::move(v), python);
      if (!best || ranked(s, *best)) best = std::move(s);
    }
    if (best) by_python.push_back(std::move(*best));
  }
  std::stable_sort(by_python.begin(), by_python.end(), ranked);
  out.suggestions.insert(out.suggestions.end(), by_python.begin(), by_python.end());
  return out;
}

}  // namespace wheelfit::resolve::detail
