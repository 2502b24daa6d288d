#pragma once
// What the machines of a fleet share of their judging (PreparedCandidates::memo). A verdict on a
// package depends on a machine only through a few facts: its Python, its platform, the combo,
// what the driver says of the combo's line, and which of its device targets each arch list of
// the index leaves uncovered (its GPU class). Machines equal on those facts are judged once: a
// tier's package outcome (with every candidate's verdict, shared, not copied) and the advice's
// cover of a package under a combo are memoised by them. Packages with variant wheels (judged
// on the machine's variant support) and resolves with an inspect hook are never memoised.
//
// Thread safety: every call may come from several threads at once (a mutex for the classes and
// groups, one per shard of the memoised values; a value, once stored, is never changed or moved,
// so the references handed out stay valid and unlocked).
#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "candidates.hpp"

namespace wheelfit::resolve::detail {

/// A machine's device targets as a package's arch lists see them: kUnknownGpus (no targets
/// known), kNoGpu (none), or the class of the targets each list leaves uncovered (machines whose
/// GPUs every list of the package covers alike are judged alike on it).
using GpuClass = int;
inline constexpr GpuClass kUnknownGpus = -1, kNoGpu = -2;

/// A machine's GPU class for each package.
struct GpuClasses {
  GpuClass all = kUnknownGpus;  ///< when `by_package` is nullptr: every package's
  const std::map<std::string, GpuClass, std::less<>>* by_package = nullptr;
  [[nodiscard]] GpuClass of(const std::string& package) const {
    if (!by_package) return all;
    auto it = by_package->find(package);
    return it == by_package->end() ? 0 : it->second;
  }
};

/// What a tier's verdict on one package depends on besides the package and the policy.
struct TierKey {
  std::string package;
  Combo combo;
  model::PythonTarget python;
  model::PlatformTarget platform;
  GpuClass gpus = kUnknownGpus;
  DriverVerdict driver;  ///< for the combo's line
  [[nodiscard]] auto tie() const {
    return std::tie(package, combo.line, combo.torch, python.version, python.free_threaded, platform.os, platform.cpu_arch,
                    platform.glibc, gpus, driver.checked, driver_wheel(), driver_machine());
  }
  bool operator<(const TierKey& o) const { return tie() < o.tie(); }

 private:
  [[nodiscard]] const std::string& driver_wheel() const { return driver.failure ? driver.failure->wheel : none(); }
  [[nodiscard]] const std::string& driver_machine() const { return driver.failure ? driver.failure->machine : none(); }
  static const std::string& none() {
    static const std::string empty;
    return empty;
  }
};

/// A key with its hash (stored once, compared first: a lookup seldom compares whole keys), and a
/// borrowed one to look up with (no key copied until one is stored).
struct HashedKey {
  std::size_t hash;
  TierKey key;
};
struct HashedRef {
  std::size_t hash;
  const TierKey* key;
};
struct HashedKeyHash {
  using is_transparent = void;
  std::size_t operator()(const HashedKey& k) const noexcept { return k.hash; }
  std::size_t operator()(const HashedRef& k) const noexcept { return k.hash; }
};
struct HashedKeyEqual {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return a.hash == b.hash && key_of(a).tie() == key_of(b).tie();
  }
  static const TierKey& key_of(const HashedKey& k) { return k.key; }
  static const TierKey& key_of(const HashedRef& k) { return *k.key; }
};
std::size_t hash_of(const TierKey& k) noexcept;

/// The advice's verdict on one package under one combo and Python (the driver is not judged).
struct Cover {
  enum class Kind { covered, no_wheel, fails } kind = Kind::no_wheel;
  std::string failed;       ///< Kind::fails: the demands its wheels fail, "cuda, gpu_arch"
  bool prerelease = false;  ///< Kind::covered: the best wheel is a pre-release
};

/// A package's candidates by combo (labelled) and those bound to none, leaving out those whose
/// platform never fits the machine: what the advice search judges.
struct AdviceGroups {
  using ComboKey = std::tuple<model::NumericVersion, model::NumericVersion>;  // line, torch
  std::vector<Combo> combos;  ///< every combo a package publishes here, in the order first seen
  std::map<std::string, std::map<ComboKey, std::vector<const Candidate*>, std::less<>>> labeled;
  std::map<std::string, std::vector<const Candidate*>> unlabeled;
};
/// Builds the groups of `listings` for `platform`.
AdviceGroups advice_groups(const std::map<std::string, const Listing*>& listings, const model::PlatformTarget& platform);

/// One combo judged by the advice for a machine's envs (advice.cpp): who it covers, what it
/// leaves out ("pkg (cp312): ..."), and how many of its picks are pre-releases.
struct AdviceVerdict {
  std::vector<std::string> covers, missing;
  std::size_t prereleases = 0;
};

class JudgingMemo {
 public:
  /// The GPU classes of `targets` under `policy` against `listings` (the prepared ones).
  GpuClasses gpu_classes(const std::map<std::string, Listing>& listings, const semantics::Policy& policy,
                     const std::optional<std::vector<std::string>>& targets);
  /// Whether `package` has variant wheels (never memoised); valid after gpu_classes().
  [[nodiscard]] bool has_variants(const std::string& package) const;
  /// The tier outcome under `key`, made by `make` on first use.
  const PackageOutcome& outcome(const TierKey& key, const std::function<PackageOutcome()>& make);
  /// The advice's cover under (package, combo, Python, platform, GPU class), made on first use.
  const Cover& cover(const TierKey& key, const std::function<Cover()>& make);
  /// The advice's verdict on a combo under `key` (the caller spells out all it depends on: the
  /// combo, the platform, the GPU classes, each env's Python and packages), made on first use.
  const AdviceVerdict& verdict(const std::string& key, const std::function<AdviceVerdict()>& make);
  /// The arch-list cache of `package` for machines with device targets `targets`, shared by them
  /// (its lookups lock; the coverage rule is asked once per list and target set, not per machine).
  ArchCache& arch_cache(const std::string& package, const std::vector<std::string>& targets);
  /// The advice groups of the prepared listings for `platform`, made on first use.
  const AdviceGroups& groups(const std::map<std::string, Listing>& listings, const model::PlatformTarget& platform);

 private:
  using PlatformKey = std::tuple<model::Os, std::string, std::optional<model::NumericVersion>>;
  std::mutex mu_;
  bool classes_ready_ = false;
  std::map<std::string, std::vector<std::string>> lists_;  ///< by package: every arch list its candidates can be judged on
  std::set<std::string, std::less<>> variant_packages_;
  std::map<std::vector<std::string>, std::map<std::string, GpuClass, std::less<>>> by_targets_;
  std::map<std::pair<std::string, std::vector<std::vector<std::string>>>, GpuClass> classes_;  ///< (package, uncovered per list)
  /// Memoised values, spread over shards by the key's hash, each with its own lock: the fleet's
  /// threads look up thousands of covers per machine and seldom meet on one shard. Nodes never
  /// move (a rehash relinks them), so a reference handed out stays valid.
  template <typename Value>
  struct Shard {
    std::mutex mu;
    std::unordered_map<HashedKey, Value, HashedKeyHash, HashedKeyEqual> map;
  };
  static constexpr std::size_t kShards = 16;
  std::array<Shard<PackageOutcome>, kShards> outcomes_;
  std::array<Shard<Cover>, kShards> covers_;
  std::map<PlatformKey, AdviceGroups> groups_;
  struct SharedArchCache {
    std::mutex mu;
    ArchCache cache{&mu};
  };
  std::mutex archs_mu_;
  std::map<std::pair<std::string, std::vector<std::string>>, SharedArchCache, std::less<>> archs_;
  std::mutex verdicts_mu_;
  std::unordered_map<std::string, AdviceVerdict> verdicts_;
};

}  // namespace wheelfit::resolve::detail

namespace wheelfit::resolve {

struct PreparedCandidates {
  std::map<std::string, detail::Listing> listings;  ///< by normalised package name
  mutable detail::JudgingMemo memo;                 ///< what the fleet's machines share of their judging
};

}  // namespace wheelfit::resolve
