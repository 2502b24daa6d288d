#include "wheelfit/resolve/resolver.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "wheelfit/model/name.hpp"
#include "wheelfit/model/specifier.hpp"
#include "wheelfit/model/wheel.hpp"
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

// ---------------------------------------------------------------------------------------------
// Candidates: what an index offers for one package, parsed once, judged per combo and Python.

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
};

Candidate make_candidate(const std::string& package, std::string text, std::string url, std::string filename,
                         std::optional<std::string> fragment_sha, const index::IndexSnapshot& snap,
                         const policies::Policy& policy, std::vector<std::string>& warnings) {
  Candidate c;
  c.text = std::move(text);
  c.url = std::move(url);
  auto parsed = model::WheelName::parse(c.text);
  if (!parsed && !filename.empty() && filename != c.text) parsed = model::WheelName::parse(filename);
  if (!parsed) {
    c.note = "not a valid wheel name: " + parsed.error().message;
    return c;
  }
  if (parsed->name != package) {
    c.note = "the wheel belongs to '" + parsed->name + "', not '" + package + "'";
    return c;
  }
  c.combo = policy.parse_combo_label(parsed->version.local());
  c.wheel = std::move(*parsed);

  std::optional<std::string> listed;
  if (snap.packages_json) listed = snap.packages_json->sha256_for(c.url, filename);
  if (fragment_sha && listed && *fragment_sha != *listed) {
    c.note = "hash conflict: the href says sha256 " + *fragment_sha + ", packages.json says " + *listed;
    warnings.push_back(package + ": " + c.text + ": " + c.note + "; not picked");
    return c;
  }
  if (fragment_sha) {
    c.sha256 = fragment_sha;
    c.sha256_source = "#sha256= fragment";
  } else if (listed) {
    c.sha256 = listed;
    c.sha256_source = "packages.json";
  }
  return c;
}

bool is_wheel_name(std::string_view s) { return s.size() > 4 && s.substr(s.size() - 4) == ".whl"; }

std::vector<Candidate> candidates_for(const std::string& package, const index::IndexSnapshot& snap,
                                      const policies::Policy& policy, PackageOutcome::Status& status,
                                      std::string& reason, std::vector<std::string>& warnings) {
  std::vector<Candidate> out;
  const index::PackagesJsonEntry* listed = nullptr;
  if (snap.packages_json) {
    auto it = snap.packages_json->packages.find(package);
    if (it != snap.packages_json->packages.end()) listed = &it->second;
  }
  auto page_it = snap.projects.find(package);
  const index::ProjectPage* page = page_it == snap.projects.end() ? nullptr : &page_it->second;

  if (page && page->status == index::ProjectPage::Status::ok) {
    for (const auto& link : page->page.links) {
      if (!is_wheel_name(link.text) && !is_wheel_name(link.filename)) continue;  // sdists and other files
      auto c = make_candidate(package, link.text, link.url, link.filename, link.sha256, snap, policy, warnings);
      c.yanked = link.yanked;
      if (link.requires_python) {
        auto spec = model::SpecifierSet::parse(*link.requires_python);
        if (spec) c.requires_python = std::move(*spec);
        else warnings.push_back(package + ": " + link.text + ": requires-python ignored: " + spec.error().message);
      }
      if (link.yanked) c.note = "yanked" + (link.yank_reason.empty() ? std::string() : ": " + link.yank_reason);
      out.push_back(std::move(c));
    }
    status = PackageOutcome::Status::unresolved;
    return out;
  }
  if (listed) {
    // The page is missing or unreadable but packages.json lists the package: use its entries.
    if (page && page->status == index::ProjectPage::Status::failed) {
      warnings.push_back(package + ": the page could not be read (" + page->error + "); used packages.json instead");
    }
    for (const auto& w : listed->wheels) {
      out.push_back(make_candidate(package, w.filename, w.url, w.filename, std::nullopt, snap, policy, warnings));
    }
    status = PackageOutcome::Status::unresolved;
    return out;
  }
  if (page && page->status == index::ProjectPage::Status::failed) {
    status = PackageOutcome::Status::read_failed;
    reason = "the index page could not be read: " + page->error;
  } else {
    status = PackageOutcome::Status::not_published;
    reason = "not published on this index (" + (page ? page->url : snap.base_url + package + "/") + " does not exist)";
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Judging one candidate against one combo and one Python.

// The arch lists a package's candidates are judged against, looked up once per (combo,
// platform), each with the machine's targets it does not cover (the backend's rule, asked once).
struct JudgedList {
  policies::ArchSource source;
  std::vector<std::string> uncovered;
};

class ArchCache {
 public:
  const std::optional<JudgedList>& get(const policies::Policy& policy, const std::string& package, const Combo& combo,
                                       const std::string& platform, const std::vector<std::string>& targets) {
    std::string key = combo.line.str() + "/" + combo.torch.str() + "|" + platform;
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      std::optional<JudgedList> judged;
      if (auto list = policy.arch_list(package, combo, platform)) {
        auto uncovered = cover(policy, list->list, targets).uncovered;
        judged = JudgedList{std::move(*list), std::move(uncovered)};
      }
      it = cache_.emplace(std::move(key), std::move(judged)).first;
    }
    return it->second;
  }

 private:
  std::map<std::string, std::optional<JudgedList>> cache_;
};

struct Context {
  const machine::Machine& machine;
  const std::optional<std::vector<std::string>>& targets;  ///< canonical device targets
  const policies::Policy& policy;
  const Combo& combo;
  const model::PythonTarget& python;
  const model::PlatformTarget& platform;
  const std::string& package;
  ArchCache& archs;
  /// False: only which demands fail (fast, for finding the pick). True: also what the wheel
  /// asks and what the machine has, as text (for the report of an unresolved package).
  bool detailed = false;
  const InspectHook* inspect = nullptr;  ///< resolve --inspect: may reject a would-be pick
};

std::string arch_text(const policies::ArchSource& a) { return a.list + " (" + a.provenance + ")"; }

struct Judged {
  CandidateVerdict verdict;
  int python_rank = 0;
  int platform_rank = 0;
  const policies::ArchSource* archs = nullptr;  // the list gpu_arch was judged on (cached)
};

Judged judge(const Candidate& c, const Context& ctx) {
  Judged j;
  if (ctx.detailed) {
    j.verdict.filename = c.text;
    j.verdict.url = c.url;
    j.verdict.note = c.note;
  } else if (!c.note.empty()) {
    j.verdict.note = c.note;
  }
  if (!c.wheel) return j;
  const auto& w = *c.wheel;
  // The texts are built only in detailed mode.
  auto fail = [&](Demand d, auto wheel, auto machine) {
    if (ctx.detailed) j.verdict.failed.push_back({d, wheel(), machine()});
    else j.verdict.failed.push_back({d, {}, {}});
  };

  // python
  if (auto rank = model::python_rank(w, ctx.python)) j.python_rank = *rank;
  else fail(Demand::python, [&] { return python_tags_text(w); }, [&] { return ctx.python.tag(); });
  // requires-python is judged against X.Y.0: the env names its Python line, not a patch release.
  if (c.requires_python && !c.requires_python->contains(*model::Version::parse(ctx.python.version.str()))) {
    fail(Demand::python, [&] { return "requires-python " + c.requires_python->str(); },
         [&] { return "python " + ctx.python.version.str(); });
  }

  // os, cpu_arch, glibc: judged on the best-fitting platform tag
  const auto fit = model::best_platform_fit(w, ctx.platform);
  j.platform_rank = fit.rank;
  const model::PlatformTag* tag = fit.tag;
  if (!fit.os_ok) fail(Demand::os, [&] { return platform_tags_text(w); }, [&] { return std::string(model::to_string(ctx.platform.os)); });
  if (!fit.cpu_ok) fail(Demand::cpu_arch, [&] { return cpu_archs_text(w); }, [&] { return ctx.platform.cpu_arch; });
  if (!fit.glibc_ok) {
    fail(
        Demand::glibc,
        [&] {
          auto floor = tag ? libc_floor_text(*tag) : std::nullopt;
          return floor.value_or(platform_tags_text(w)) + " (" + platform_tags_text(w) + ")";
        },
        [&] { return ctx.platform.glibc ? "glibc " + ctx.platform.glibc->str() : std::string("glibc unknown"); });
  } else if (!fit.glibc_checked && tag && tag->libc && fit.os_ok && ctx.platform.os == model::Os::linux_) {
    j.verdict.unchecked.push_back(Demand::glibc);
  }

  // torch and line: the combo in the local label (a wheel without one is bound to neither)
  if (c.combo) {
    const Combo& wc = *c.combo;
    if (!(wc.torch == ctx.combo.torch)) {
      fail(Demand::torch, [&] { return "torch " + wc.torch.str(); }, [&] { return "combo torch " + ctx.combo.torch.str(); });
    }
    const auto& prefix = ctx.policy.notation().prefix;
    if (!(wc.line == ctx.combo.line)) {
      fail(Demand::line, [&] { return prefix + wc.line.str(); }, [&] { return "combo " + prefix + ctx.combo.line.str(); });
    } else if (auto driver = judge_driver(wc.line, ctx.machine, ctx.policy); !driver.checked) {
      j.verdict.unchecked.push_back(Demand::line);
    } else if (driver.failure) {
      fail(Demand::line, [&] { return driver.failure->wheel; }, [&] { return driver.failure->machine; });
    }
  }

  // gpu_arch: every visible GPU must be covered by the arch list the wheel was built with
  if (c.combo) {
    std::optional<std::string> platform;
    if (tag && tag->os) platform = model::farm_platform(*tag->os, tag->cpu_arch);
    const std::optional<JudgedList>* archs = nullptr;
    if (platform && ctx.targets) archs = &ctx.archs.get(ctx.policy, ctx.package, *c.combo, *platform, *ctx.targets);
    if (!ctx.targets || !archs || !*archs) {
      j.verdict.unchecked.push_back(Demand::gpu_arch);
    } else {
      const JudgedList& judged = **archs;
      j.archs = &judged.source;
      if (ctx.targets->empty()) {
        fail(Demand::gpu_arch, [&] { return arch_text(judged.source); }, [&] { return gpus_text(ctx.policy.device_prefix(), *ctx.targets); });
      } else if (!judged.uncovered.empty()) {
        fail(Demand::gpu_arch, [&] { return arch_text(judged.source); },
             [&] { return targets_text(ctx.policy.device_prefix(), judged.uncovered); });
      }
    }
  }
  return j;
}

// pip's preference: final releases first, then the highest version, then the best tags.
bool better(const Candidate& a, const Judged& ja, const Candidate& b, const Judged& jb) {
  const bool a_pre = a.wheel->version.is_prerelease(), b_pre = b.wheel->version.is_prerelease();
  if (a_pre != b_pre) return !a_pre;
  if (auto c = a.wheel->version <=> b.wheel->version; c != 0) return c > 0;
  if (ja.python_rank != jb.python_rank) return ja.python_rank < jb.python_rank;
  if (ja.platform_rank != jb.platform_rank) return ja.platform_rank < jb.platform_rank;
  return std::tie(a.text, a.url) < std::tie(b.text, b.url);
}

PackageOutcome resolve_package(const std::string& env, const config::Package& pkg, const std::vector<Candidate>& cands,
                               PackageOutcome::Status listing_status, const std::string& listing_reason,
                               const Context& ctx) {
  PackageOutcome out;
  out.env = env;
  out.name = pkg.name;
  out.requested = pkg.requested;
  out.python = ctx.python.tag();
  if (listing_status != PackageOutcome::Status::unresolved) {
    out.status = listing_status;
    out.reason = listing_reason;
    return out;
  }
  // Phase 1: which candidates fit (no report texts built).
  std::vector<Judged> judged;
  judged.reserve(cands.size());
  std::optional<std::size_t> best;
  const bool inspecting = ctx.inspect && *ctx.inspect;
  // With an inspect hook: every candidate worth reading, best first: those that fit, and those
  // whose only failure is gpu_arch by the policy's arch list (their binaries may say otherwise:
  // the real archs replace the policy's guess).
  std::vector<std::size_t> fitting;
  std::vector<bool> policy_gpu_only(cands.size(), false);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    judged.push_back(judge(cands[i], ctx));
    const auto& failed = judged[i].verdict.failed;
    if (!judged[i].verdict.fits()) {
      const bool gpu_only = !failed.empty() && std::all_of(failed.begin(), failed.end(), [](const Failure& f) {
        return f.demand == Demand::gpu_arch;
      });
      if (inspecting && cands[i].wheel && judged[i].verdict.note.empty() && gpu_only) {
        policy_gpu_only[i] = true;
        fitting.push_back(i);
      }
      continue;
    }
    fitting.push_back(i);
    if (!best || better(cands[i], judged[i], cands[*best], judged[*best])) best = i;
  }
  auto pick_of = [&](std::size_t i) {
    const Candidate& c = cands[i];
    return Pick{env, pkg.name, pkg.requested, ctx.python.tag(), c.text, c.url, c.wheel->version.str(), c.sha256,
                c.sha256_source, judged[i].archs ? arch_text(*judged[i].archs) : std::string(), judged[i].verdict.unchecked};
  };
  std::map<std::size_t, Failure> rejected;  // by the inspect hook
  if (inspecting && !fitting.empty()) {
    std::sort(fitting.begin(), fitting.end(),
              [&](std::size_t a, std::size_t b) { return better(cands[a], judged[a], cands[b], judged[b]); });
    best.reset();
    for (std::size_t i : fitting) {
      Pick pick = pick_of(i);
      Inspection seen = (*ctx.inspect)(pick);
      if (seen.reject) {
        rejected.emplace(i, std::move(*seen.reject));
        continue;
      }
      // The policy said gpu_arch fails: only the binaries' own arch list can overrule it.
      if (policy_gpu_only[i] && seen.arch_source.empty()) continue;
      if (!seen.arch_source.empty()) pick.arch_source = std::move(seen.arch_source);
      out.status = PackageOutcome::Status::resolved;
      out.pick = std::move(pick);
      return out;
    }
  }
  if (!best) {
    // Phase 2, only for a package that ends unresolved: every verdict with its texts.
    Context detailed = ctx;
    detailed.detailed = true;
    out.status = PackageOutcome::Status::unresolved;
    out.reason = cands.empty() ? "the index lists no wheels for it"
                 : rejected.empty() ? "no candidate fits"
                                    : "no candidate fits (" + std::to_string(rejected.size()) + " rejected by inspecting their binaries)";
    for (std::size_t i = 0; i < cands.size(); ++i) {
      out.candidates.push_back(judge(cands[i], detailed).verdict);
      if (auto r = rejected.find(i); r != rejected.end()) out.candidates.back().failed.push_back(r->second);
    }
    return out;
  }
  out.status = PackageOutcome::Status::resolved;
  out.pick = pick_of(*best);
  return out;
}

// ---------------------------------------------------------------------------------------------

struct EnvTarget {
  const config::Env* env;
  model::PythonTarget python;
};

// Why a fallback combo cannot serve this machine, or "" when it may be tried.
std::string fallback_skip_reason(const Combo& combo, const std::vector<EnvTarget>& envs, const machine::Machine& m,
                                 const std::optional<std::vector<std::string>>& targets,
                                 const policies::Policy& policy, const std::optional<std::string>& platform) {
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

ComboOrReason machine_combo(const machine::Machine& m, const policies::Policy& policy) {
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

Expected<Resolution> resolve(const Inputs& in) {
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

  // Candidates, once per package.
  std::map<std::string, std::tuple<std::vector<Candidate>, PackageOutcome::Status, std::string>> listing;
  for (const auto& e : envs) {
    for (const auto& pkg : e.env->packages) {
      if (listing.count(pkg.name)) continue;
      PackageOutcome::Status status{};
      std::string reason;
      auto cands = candidates_for(pkg.name, in.index, in.policy, status, reason, res.warnings);
      listing.emplace(pkg.name, std::make_tuple(std::move(cands), status, std::move(reason)));
    }
  }

  std::map<std::string, ArchCache> arch_caches;  // per package, shared by the tiers
  auto run_tier = [&](TierOutcome& tier) {
    bool all = true;
    for (const auto& e : envs) {
      for (const auto& pkg : e.env->packages) {
        const auto& [cands, status, reason] = listing.at(pkg.name);
        ArchCache& archs = arch_caches[pkg.name];
        Context ctx{m, *targets, in.policy, *tier.combo, e.python, platform_target, pkg.name, archs, false, &in.inspect};
        auto outcome = resolve_package(e.env->name, pkg, cands, status, reason, ctx);
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

  // Tier 1: the machine's own combo.
  TierOutcome t1{"bootstrap", std::nullopt, TierOutcome::Status::skipped, "", {}};
  auto mc = machine_combo(m, in.policy);
  if (mc.combo) {
    t1.combo = mc.combo;
    run_tier(t1);
  } else {
    t1.reason = mc.reason;
  }
  const bool t1_ok = t1.status == TierOutcome::Status::resolved;
  res.tiers.push_back(std::move(t1));

  // Tier 2: the backend's fallback combo for this CPU arch.
  TierOutcome t2{"fallback", in.policy.fallback_combo(*m.cpu_arch), TierOutcome::Status::skipped, "", {}};
  if (!t2.combo) {
    t2.reason = "the " + (in.backend.empty() ? in.policy.notation().name : in.backend) + " backend has no fallback combo for " +
                *m.cpu_arch;
  } else if (t1_ok) {
    t2.reason = "not needed: tier 1 covered every package";
  } else if (res.tiers[0].combo && *res.tiers[0].combo == *t2.combo) {
    t2.reason = "same combo as tier 1";
  } else if (auto why = fallback_skip_reason(*t2.combo, envs, m, *targets, in.policy, platform); !why.empty()) {
    t2.reason = why;
  } else {
    run_tier(t2);
  }
  res.tiers.push_back(std::move(t2));

  for (const auto& t : res.tiers) {
    if (t.status != TierOutcome::Status::resolved) continue;
    res.combo = t.combo;
    res.tier = t.tier;
    for (const auto& p : t.packages) res.picks.push_back(*p.pick);
    break;
  }

  // Torch family pins for the chosen combo.
  if (res.combo) {
    const auto index = in.policy.torch_index_url(res.combo->line);
    const auto& t = res.combo->torch;
    res.pins.push_back({"torch", "==" + t.str() + ".*", index});
    if (auto fam = in.policy.torch_family(t)) {
      res.pins.push_back({"torchvision", "==" + fam->torchvision.str() + ".*", index});
      res.pins.push_back({"torchaudio", "==" + fam->torchaudio.str() + ".*", index});
    } else {
      res.warnings.push_back("torch " + t.str() + " is not in the torch family table: torchvision and torchaudio are not pinned");
    }
  }

  // Say what could not be checked.
  const std::string& name = in.policy.notation().name;
  if (!m.gpus) res.warnings.push_back("gpu_arch not checked: the machine's GPUs are unknown (set gpus in the profile or WHEELFIT_OVERRIDE_GPUS)");
  else if (!in.policy.rules()) res.warnings.push_back("gpu_arch not checked: the policy was read without the backend's device rules");
  if (in.policy.driver_rule() == policies::DriverRule::unknown) {
    res.warnings.push_back("the driver's " + name + " support not checked: " +
                           (in.policy.driver_why().empty() ? "the backend has no driver rule" : in.policy.driver_why()));
  } else if (!m.driver_line && !m.driver_version) {
    res.warnings.push_back("the driver's " + name + " support not checked: driver_line and driver_version are unknown");
  }
  if (!m.glibc && *m.os == model::Os::linux_) res.warnings.push_back("glibc floor not checked: the machine's glibc is unknown");
  if (res.combo && in.policy.driver_rule() == policies::DriverRule::same_major && m.driver_line &&
      m.driver_line->major() == res.combo->line.major() && *m.driver_line < res.combo->line) {
    res.warnings.push_back("the driver supports " + name + " " + m.driver_line->str() + ", older than " + res.combo->line.str() +
                           ": this relies on " + name + " minor-version compatibility; upgrade the driver if kernels fail");
  }
  return res;
}

}  // namespace wheelfit::resolve
