#pragma once
// The resolver's inner parts, shared by the tiers (resolver.cpp) and the advice search
// (advice.cpp): the candidates an index offers for one package, parsed once, and the judging of
// one candidate against one combo and one Python (through the evaluators of demands.hpp).
#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "wheelfit/model/specifier.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/resolve/digests.hpp"
#include "wheelfit/resolve/resolver.hpp"

namespace wheelfit::resolve::detail {

using model::Combo;
using resolve::DigestBook;  // the two-digest rule (wheelfit/resolve/digests.hpp)

// What a wheel's failures say of the wheel: its tags, CPU archs, torch and line.
struct WheelTexts {
  std::string python_tags, platform_tags, cpu_archs, torch, line;
};

// A candidate's WheelTexts, made by the first judge that needs them (a fleet's threads may race
// to it: one value is kept, the others dropped; equal anyway) and kept for every later one. A
// copy copies what is made; a move takes it.
class LazyTexts {
 public:
  LazyTexts() = default;
  LazyTexts(const LazyTexts& o) : made_(o.copy()) {}
  LazyTexts& operator=(const LazyTexts& o) {
    if (this != &o) delete made_.exchange(o.copy());
    return *this;
  }
  LazyTexts(LazyTexts&& o) noexcept : made_(o.made_.exchange(nullptr)) {}
  LazyTexts& operator=(LazyTexts&& o) noexcept {
    if (this != &o) delete made_.exchange(o.made_.exchange(nullptr));
    return *this;
  }
  ~LazyTexts() { delete made_.load(); }
  template <typename Make>
  const WheelTexts& get(Make make) const {
    if (const WheelTexts* t = made_.load(std::memory_order_acquire)) return *t;
    auto made = std::make_unique<const WheelTexts>(make());
    const WheelTexts* expected = nullptr;
    if (made_.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) return *made.release();
    return *expected;
  }

 private:
  const WheelTexts* copy() const {
    const WheelTexts* t = made_.load(std::memory_order_acquire);
    return t ? new WheelTexts(*t) : nullptr;
  }
  mutable std::atomic<const WheelTexts*> made_{nullptr};
};

// One wheel an index lists for a package.
struct Candidate {
  std::string text;   // anchor text: matched
  std::string url;    // href: installed
  std::optional<model::WheelName> wheel;
  std::optional<Combo> combo;  // from the local label; nullopt = not bound to a combo
  std::optional<std::string> sha256;
  std::string sha256_source;
  bool yanked = false;
  std::optional<model::SpecifierSet> requires_python;  // data-requires-python / requires-python
  std::string note;   // a reason this candidate can never be picked
  // A variant wheel's package-version variants file (PEP 825), or why there is none.
  std::shared_ptr<const model::VariantsFile> variants;
  std::string variants_problem;
  std::optional<std::string> variants_sha256;  // the page's digest for the variants file
  // The wheel's side of the report's texts (see texts_of), built the first time a report needs
  // them and then copied into each failure, instead of built per machine and combo.
  LazyTexts texts;
};
static_assert(std::is_nothrow_move_constructible_v<Candidate>, "a listing's vector moves its candidates, never copies them");

// The arch lists a package's candidates are judged against, looked up once per (combo,
// platform), each with the machine's targets it does not cover (the backend's rule, asked once).
struct JudgedList {
  semantics::ArchSource source;
  std::vector<std::string> uncovered;
  std::string text, uncovered_text;  ///< arch_text(source), targets_text of `uncovered`: the report's words
};
/// "<list> (<provenance>)": an arch list as the verdicts write it.
std::string arch_text(const semantics::ArchSource& a);

// One per package and target set: a resolve's own, or (`mu` given) one a fleet's machines with
// the same targets share, each lookup under `mu` (an entry, once made, never moves).
class ArchCache {
 public:
  ArchCache() = default;
  explicit ArchCache(std::mutex* mu) : mu_(mu) {}
  const std::optional<JudgedList>& get(const semantics::Policy& policy, const std::string& package, const Combo& combo,
                                       const std::string& platform, const std::vector<std::string>& targets) {
    std::unique_lock<std::mutex> lock;
    if (mu_) lock = std::unique_lock(*mu_);
    // Found without building a key: the lookup compares references to the combo and platform.
    auto it = cache_.find(std::tie(combo.line, combo.torch, platform));
    if (it == cache_.end()) {
      std::optional<JudgedList> judged;
      if (auto list = policy.arch_list(package, combo, platform)) {
        auto uncovered = cover(policy, list->list, targets).uncovered;
        std::string text = arch_text(*list), uncovered_text = targets_text(policy.device_prefix(), uncovered);
        judged = JudgedList{std::move(*list), std::move(uncovered), std::move(text), std::move(uncovered_text)};
      }
      it = cache_.emplace(Key{combo.line, combo.torch, platform}, std::move(judged)).first;
    }
    return it->second;
  }

 private:
  using Key = std::tuple<model::NumericVersion, model::NumericVersion, std::string>;  // line, torch, platform
  std::map<Key, std::optional<JudgedList>, std::less<>> cache_;
  std::mutex* mu_ = nullptr;
};

// The variant orders of one resolve: one per (variants file, support), built the first time a
// wheel of that file is judged under that support and then shared by its other wheels, the
// tiers, the report and the advice (PEP 825's steps 1-3 are the file's and the machine's, not a
// wheel's). The files and supports must outlive it. Not thread-safe: one per resolve.
class VariantOrders {
 public:
  /// How `label` of `c` fares under `support` (c.variants' order, else c.variants_problem).
  [[nodiscard]] model::VariantOrder::Verdict judge(const Candidate& c, const std::string& label, const model::VariantSupport& support);

 private:
  std::map<std::pair<const model::VariantsFile*, const model::VariantSupport*>, model::VariantOrder> orders_;
};

struct Context {
  const machine::Machine& machine;
  const std::optional<std::vector<std::string>>& targets;  ///< canonical device targets
  const semantics::Policy& policy;
  const Combo& combo;
  const model::PythonTarget& python;
  const model::PlatformTarget& platform;
  const std::string& package;
  ArchCache& archs;
  /// False: only which demands fail (fast, for finding the pick). True: also what the wheel
  /// asks and what the machine has, as text (for the report of an unresolved package).
  bool detailed = false;
  const InspectHook* inspect = nullptr;  ///< resolve --inspect: may reject a would-be pick
  /// What the machine supports for variants under this combo; nullptr: variant wheels are unchecked.
  const model::VariantSupport* variants = nullptr;
  /// Where the variant orders are kept (set with `variants`); nullptr: each wheel builds its own.
  VariantOrders* variant_orders = nullptr;
  /// The arch list judge() looked up last: a package's candidates come combo by combo, so most
  /// lookups ask again for the same combo and platform (and skip the cache's lock and search).
  struct LastArchs {
    const Combo* combo = nullptr;  ///< the candidate's (the candidates outlive the context)
    std::string platform;
    const std::optional<JudgedList>* judged = nullptr;
  };
  mutable LastArchs last_archs{};
  /// The machine's side of the report's texts under this context, built on first use.
  struct MachineTexts {
    std::string python, torch, line;  ///< "cp312", "combo torch 2.8", "combo cu12.8"
  };
  mutable std::optional<MachineTexts> machine_texts{};
};

struct Judged {
  CandidateVerdict verdict;
  int python_rank = 0;
  int platform_rank = 0;
  bool any_platform = false;  ///< it fits only through the `any` platform tag
  const semantics::ArchSource* archs = nullptr;  // the list gpu_arch was judged on (cached)
  model::VariantOrder::Verdict variant;          // a variant wheel's verdict (its ordering key)
};

/// What the index offers for one package: its candidates, or why there are none.
struct Listing {
  std::vector<Candidate> candidates;
  PackageOutcome::Status status = PackageOutcome::Status::unresolved;
  std::string reason;
  std::vector<std::string> warnings;  ///< what reading them found (each resolve reports them)
};

/// A package's listing from the index, its candidates parsed.
Listing listing_for(const std::string& package, const index::IndexSnapshot& snap, const semantics::Policy& policy,
                    const DigestBook& digests);

/// One env as the resolver judges it: its packages and its Python.
struct EnvTarget {
  const config::Env* env;
  model::PythonTarget python;
};

/// The torch family pins of a combo and their index (a warning when the family table lacks it).
std::vector<Pin> pins_for(const semantics::Policy& policy, const Combo& combo, std::vector<std::string>& warnings);

class JudgingMemo;
struct GpuClasses;
class TorchJudge;

/// What advice() needs: the resolve's inputs and what resolve() already read.
struct AdviceInputs {
  const Inputs& in;
  const std::vector<EnvTarget>& envs;
  const std::map<std::string, const Listing*>& listing;
  const std::optional<std::vector<std::string>>& targets;
  std::optional<model::NumericVersion> reference_line;  ///< the machine's line: its torch's, else its driver's
  JudgingMemo* memo = nullptr;                           ///< the fleet's (memo.hpp); nullptr: none
  const GpuClasses* gpus = nullptr;                      ///< the machine's GPU classes in it
  TorchJudge* torch = nullptr;  ///< sets aside the combos whose torch cannot run here; nullptr: none
};

/// The advice search (resolver.hpp, Advice).
Advice advise(const AdviceInputs& a);

/// A ranking of suggestions: those the driver runs before those needing a driver upgrade, then
/// the newest torch, then the line closest to `reference`, then the fewest pre-releases (then the
/// higher line, for a total order).
bool better_suggestion(const Suggestion& a, const Suggestion& b, const std::optional<model::NumericVersion>& reference);

/// Every candidate the index offers for `package` (its page, else its packages.json entry; a link
/// listed twice with the same text and href is one candidate); `status` and `reason` say why there
/// are none (not published, the page could not be read). A file whose name `digests` finds in
/// conflict is a candidate with a note and no sha256, and one warning names its digests.
std::vector<Candidate> candidates_for(const std::string& package, const index::IndexSnapshot& snap,
                                      const semantics::Policy& policy, const DigestBook& digests,
                                      PackageOutcome::Status& status, std::string& reason,
                                      std::vector<std::string>& warnings);

/// One candidate judged on the seven demands against ctx's combo, Python and machine.
Judged judge(const Candidate& c, const Context& ctx);

/// pip's preference between two fitting candidates: final releases first, then the highest
/// version, then the best tag in packaging's sys_tags() order (a wheel fitting only through
/// `any` after every wheel for the platform; then python_rank, then platform_rank), then the
/// higher PEP 427 build tag, then the text and URL (deterministic).
bool better(const Candidate& a, const Judged& ja, const Candidate& b, const Judged& jb);

/// The pick for one package under ctx (the inspect hook consulted), or every candidate's verdict.
PackageOutcome resolve_package(const std::string& env, const config::Package& pkg, const std::vector<Candidate>& cands,
                               PackageOutcome::Status listing_status, const std::string& listing_reason,
                               const Context& ctx);

}  // namespace wheelfit::resolve::detail
