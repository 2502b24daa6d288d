// What the machines of a fleet share of their judging (memo.hpp).
#include "memo.hpp"

#include <algorithm>

#include "wheelfit/model/platform.hpp"

namespace wheelfit::resolve::detail {

AdviceGroups advice_groups(const std::map<std::string, const Listing*>& listings, const model::PlatformTarget& platform) {
  AdviceGroups out;
  std::set<AdviceGroups::ComboKey, std::less<>> seen;
  for (const auto& [name, listing] : listings) {
    auto& groups = out.labeled[name];
    for (const auto& c : listing->candidates) {
      if (!c.wheel || !c.note.empty()) continue;
      const auto fit = model::best_platform_fit(*c.wheel, platform);
      if (!fit.os_ok || !fit.cpu_ok || !fit.glibc_ok) continue;
      if (!c.combo) {
        out.unlabeled[name].push_back(&c);
        continue;
      }
      auto key = std::tie(c.combo->line, c.combo->torch);
      auto g = groups.find(key);
      if (g == groups.end()) g = groups.emplace(AdviceGroups::ComboKey{c.combo->line, c.combo->torch}, std::vector<const Candidate*>{}).first;
      g->second.push_back(&c);
      if (seen.find(key) == seen.end()) {
        seen.emplace(c.combo->line, c.combo->torch);
        out.combos.push_back(*c.combo);
      }
    }
  }
  return out;
}

GpuClasses JudgingMemo::gpu_classes(const std::map<std::string, Listing>& listings, const semantics::Policy& policy,
                                    const std::optional<std::vector<std::string>>& targets) {
  const std::lock_guard lock(mu_);
  if (!classes_ready_) {
    // Every arch list a candidate can be judged on: its package, its combo and the farm platform
    // of any of its tags (judge() looks up the list of the machine's best-fitting tag).
    for (const auto& [name, listing] : listings) {
      std::set<std::tuple<model::NumericVersion, model::NumericVersion, std::string>> asked;
      std::set<std::string, std::less<>> lists;
      for (const auto& c : listing.candidates) {
        if (!c.wheel) continue;
        if (c.wheel->variant_label) variant_packages_.insert(name);
        if (!c.combo) continue;
        for (const auto& tag : c.wheel->platforms) {
          if (!tag.os) continue;
          auto platform = model::farm_platform(*tag.os, tag.cpu_arch);
          if (!platform || !asked.emplace(c.combo->line, c.combo->torch, *platform).second) continue;
          if (auto list = policy.arch_list(name, *c.combo, *platform)) lists.insert(list->list);
        }
      }
      lists_.emplace(name, std::vector<std::string>(lists.begin(), lists.end()));
    }
    classes_ready_ = true;
  }
  if (!targets) return {kUnknownGpus, nullptr};
  if (targets->empty()) return {kNoGpu, nullptr};
  auto [known, fresh] = by_targets_.try_emplace(*targets);
  if (fresh) {
    // Targets two machines have, each list of a package covering them alike, are one class.
    std::map<std::string, std::vector<std::vector<std::string>>> uncovered;
    for (const auto& [name, lists] : lists_) {
      std::vector<std::vector<std::string>> each;
      each.reserve(lists.size());
      for (const auto& list : lists) each.push_back(resolve::cover(policy, list, *targets).uncovered);
      auto key = std::make_pair(name, std::move(each));
      const auto id = static_cast<GpuClass>(classes_.size());
      known->second.emplace(name, classes_.emplace(std::move(key), id).first->second);
    }
  }
  return {0, &known->second};
}

std::size_t hash_of(const TierKey& k) noexcept {
  std::size_t h = std::hash<std::string>{}(k.package);
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  auto version = [&mix](const model::NumericVersion& v) {
    for (auto part : v.parts()) mix(part);
    mix(0xffff);
  };
  version(k.combo.line);
  version(k.combo.torch);
  version(k.python.version);
  mix(k.python.free_threaded);
  mix(static_cast<std::size_t>(k.platform.os));
  mix(std::hash<std::string>{}(k.platform.cpu_arch));
  if (k.platform.glibc) version(*k.platform.glibc);
  mix(static_cast<std::size_t>(k.gpus + 3));
  mix(k.driver.checked);
  if (k.driver.failure) mix(std::hash<std::string>{}(k.driver.failure->machine));
  return h;
}

bool JudgingMemo::has_variants(const std::string& package) const { return variant_packages_.count(package) > 0; }

namespace {

// The value `lookup` finds in `map`, else made by `make` (outside the lock) and stored under
// `stored()`; a value made twice by two threads at once is kept once (both are equal: judging
// is deterministic).
template <typename Map, typename Lookup, typename Stored, typename Value>
const Value& find_or_make(std::mutex& mu, Map& map, const Lookup& lookup, const Stored& stored,
                          const std::function<Value()>& make) {
  {
    const std::lock_guard lock(mu);
    if (auto it = map.find(lookup); it != map.end()) return it->second;
  }
  Value made = make();
  const std::lock_guard lock(mu);
  if (auto it = map.find(lookup); it != map.end()) return it->second;
  return map.emplace(stored(), std::move(made)).first->second;
}

// The value under `key` in its shard (find_or_make).
template <typename Shards, typename Value>
const Value& memoised(Shards& shards, const TierKey& key, const std::function<Value()>& make) {
  const HashedRef ref{hash_of(key), &key};
  auto& shard = shards[(ref.hash >> 32) % shards.size()];
  return find_or_make(shard.mu, shard.map, ref, [&] { return HashedKey{ref.hash, key}; }, make);
}

}  // namespace

const PackageOutcome& JudgingMemo::outcome(const TierKey& key, const std::function<PackageOutcome()>& make) {
  return memoised(outcomes_, key, make);
}

const Cover& JudgingMemo::cover(const TierKey& key, const std::function<Cover()>& make) {
  return memoised(covers_, key, make);
}

ArchCache& JudgingMemo::arch_cache(const std::string& package, const std::vector<std::string>& targets) {
  const std::lock_guard lock(archs_mu_);
  return archs_.try_emplace(std::make_pair(package, targets)).first->second.cache;
}

const AdviceVerdict& JudgingMemo::verdict(const std::string& key, const std::function<AdviceVerdict()>& make) {
  return find_or_make(verdicts_mu_, verdicts_, key, [&] { return key; }, make);
}

const AdviceGroups& JudgingMemo::groups(const std::map<std::string, Listing>& listings, const model::PlatformTarget& platform) {
  const std::lock_guard lock(mu_);
  auto it = groups_.find(PlatformKey{platform.os, platform.cpu_arch, platform.glibc});
  if (it != groups_.end()) return it->second;
  std::map<std::string, const Listing*> all;
  for (const auto& [name, listing] : listings) all.emplace(name, &listing);
  return groups_.emplace(PlatformKey{platform.os, platform.cpu_arch, platform.glibc}, advice_groups(all, platform)).first->second;
}

}  // namespace wheelfit::resolve::detail
