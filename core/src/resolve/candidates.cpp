// The candidates of one package and the judging of one candidate (candidates.hpp).
#include "memo.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "wheelfit/model/name.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::resolve::detail {

using model::NumericVersion;
using util::join;

// ---------------------------------------------------------------------------------------------
// Candidates: what an index offers for one package, parsed once, judged per combo and Python.

namespace {

Candidate make_candidate(const std::string& package, std::string text, std::string url, std::string filename,
                         std::optional<std::string> fragment_sha, std::string_view page, const index::IndexSnapshot& snap,
                         const semantics::Policy& policy, const DigestBook& digests, std::set<std::string, std::less<>>& warned,
                         std::vector<std::string>& warnings) {
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

  // One file name, two digests anywhere in the snapshot: neither is trusted (warned once per file).
  const std::string& key = filename.empty() ? c.text : filename;
  if (auto conflict = digests.conflict(key); !conflict.empty()) {
    c.note = std::move(conflict);
    if (warned.insert(key).second) warnings.push_back(package + ": " + key + ": " + c.note + "; not picked");
    return c;
  }
  std::optional<std::string> listed;
  if (snap.packages_json) listed = snap.packages_json->sha256_for(c.url, filename);
  if (auto conflict = fragment_conflict(snap, page, fragment_sha, listed); !conflict.empty()) {
    c.note = std::move(conflict);
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

// A link's (anchor text, href): listed twice, it is one candidate.
struct TextUrl {
  std::string_view text, url;
  bool operator==(const TextUrl&) const = default;
};
struct TextUrlHash {
  std::size_t operator()(const TextUrl& k) const noexcept {
    const std::hash<std::string_view> h;
    return h(k.text) * 31 + h(k.url);
  }
};

}  // namespace

std::vector<Candidate> candidates_for(const std::string& package, const index::IndexSnapshot& snap,
                                      const semantics::Policy& policy, const DigestBook& digests,
                                      PackageOutcome::Status& status, std::string& reason,
                                      std::vector<std::string>& warnings) {
  std::vector<Candidate> out;
  std::set<std::string, std::less<>> warned;  // file names whose conflict was warned about
  std::unordered_map<TextUrl, std::size_t, TextUrlHash> seen;  // index in `out`
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
      if (auto [it, fresh] = seen.try_emplace(TextUrl{link.text, link.url}, out.size()); !fresh) {
        // Listed again (a digest it disagrees on is already this candidate's conflict note): a
        // yank on either listing holds.
        Candidate& first = out[it->second];
        if (link.yanked && !first.yanked) {
          first.yanked = true;
          if (first.note.empty()) first.note = "yanked" + (link.yank_reason.empty() ? std::string() : ": " + link.yank_reason);
        }
        continue;
      }
      auto c = make_candidate(package, link.text, link.url, link.filename, link.sha256, page->url, snap, policy, digests,
                              warned, warnings);
      c.yanked = link.yanked;
      if (link.requires_python) {
        auto spec = model::SpecifierSet::parse(*link.requires_python);
        if (spec) c.requires_python = std::move(*spec);
        else warnings.push_back(package + ": " + link.text + ": requires-python ignored: " + spec.error().message);
      }
      if (link.yanked) c.note = "yanked" + (link.yank_reason.empty() ? std::string() : ": " + link.yank_reason);
      if (c.wheel && c.wheel->variant_label) {
        if (const auto* doc = page->variants_for(c.wheel->version)) {
          c.variants = doc->file;
          c.variants_problem = doc->problem;
          c.variants_sha256 = doc->sha256;
        } else {
          c.variants_problem = page->url + " links no " + c.wheel->distribution + "-" + c.wheel->version.str() + "-variants.json";
        }
      }
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
      if (!seen.try_emplace(TextUrl{w.filename, w.url}, out.size()).second) continue;
      out.push_back(make_candidate(package, w.filename, w.url, w.filename, std::nullopt, {}, snap, policy, digests,
                                   warned, warnings));
      out.back().variants_problem = "the project page was not read, so its variants file was not either";
    }
    status = PackageOutcome::Status::unresolved;
    return out;
  }
  if (page && page->status == index::ProjectPage::Status::failed) {
    status = PackageOutcome::Status::read_failed;
    reason = "the index page could not be read: " + page->error;
  } else {
    status = PackageOutcome::Status::not_published;
    reason = "not published on this index (" + (page ? page->url : index::index_url_for(snap.base_url, package + "/")) + " does not exist)";
  }
  return out;
}

Listing listing_for(const std::string& package, const index::IndexSnapshot& snap, const semantics::Policy& policy,
                    const DigestBook& digests) {
  Listing l;
  l.candidates = candidates_for(package, snap, policy, digests, l.status, l.reason, l.warnings);
  return l;
}

// ---------------------------------------------------------------------------------------------
// Judging one candidate against one combo and one Python.

std::string arch_text(const semantics::ArchSource& a) { return a.list + " (" + a.provenance + ")"; }

namespace {

// The libc floor that binds a wheel whose best tag failed on it: the wheel runs where any of its
// tags runs, so among the tags of that one's kind, OS and CPU arch the lowest floor is what the
// machine would need (manylinux_2_24.manylinux_2_28 needs glibc >= 2.24, not 2.28).
const model::PlatformTag& binding_floor_tag(const model::WheelName& w, const model::PlatformTag& failed) {
  const model::PlatformTag* low = &failed;
  for (const auto& t : w.platforms) {
    if (t.kind != failed.kind || t.os != failed.os || t.cpu_arch != failed.cpu_arch || !t.libc) continue;
    if (!low->libc || *t.libc < *low->libc) low = &t;
  }
  return *low;
}

}  // namespace

namespace {
// The wheel's side of a candidate's failure texts, made on first use.
const WheelTexts& texts_of(const Candidate& c, const semantics::Policy& policy) {
  return c.texts.get([&] {
    const auto& w = *c.wheel;
    WheelTexts t{python_tags_text(w), platform_tags_text(w), cpu_archs_text(w), {}, {}};
    if (c.combo) {
      t.torch = "torch " + c.combo->torch.str();
      t.line = policy.notation().prefix + c.combo->line.str();
    }
    return t;
  });
}

const Context::MachineTexts& machine_texts(const Context& ctx) {
  if (!ctx.machine_texts) {
    ctx.machine_texts.emplace(Context::MachineTexts{ctx.python.tag(), "combo torch " + ctx.combo.torch.str(),
                                                    "combo " + ctx.policy.notation().prefix + ctx.combo.line.str()});
  }
  return *ctx.machine_texts;
}

// gpu_arch, for a candidate with a combo: every visible GPU must be covered by the arch list the
// wheel was built with (for the platform of its best-fitting tag `tag`); `fail` records a failure.
template <class Fail>
void judge_gpu_archs(const Candidate& c, const Context& ctx, const model::PlatformTag* tag, Judged& j, const Fail& fail) {
  std::optional<std::string> platform;
  if (tag && tag->os) platform = model::farm_platform(*tag->os, tag->cpu_arch);
  const std::optional<JudgedList>* archs = nullptr;
  if (platform && ctx.targets) {
    auto& last = ctx.last_archs;
    if (last.judged && *last.combo == *c.combo && last.platform == *platform) {
      archs = last.judged;
    } else {
      archs = &ctx.archs.get(ctx.policy, ctx.package, *c.combo, *platform, *ctx.targets);
      last = {&*c.combo, *platform, archs};
    }
  }
  if (!ctx.targets || !archs || !*archs) {
    j.verdict.unchecked.push_back(Demand::gpu_arch);
  } else {
    const JudgedList& judged = **archs;
    j.archs = &judged.source;
    if (ctx.targets->empty()) {
      fail(Demand::gpu_arch, [&] { return judged.text; }, [&] { return gpus_text(ctx.policy.device_prefix(), *ctx.targets); });
    } else if (!judged.uncovered.empty()) {
      fail(Demand::gpu_arch, [&] { return judged.text; }, [&] { return judged.uncovered_text; });
    }
  }
}
}  // namespace

model::VariantOrder::Verdict VariantOrders::judge(const Candidate& c, const std::string& label, const model::VariantSupport& support) {
  // Without a file there is nothing to order (and the problem is the candidate's own).
  if (!c.variants) return judge_variant(label, nullptr, c.variants_problem, support);
  auto it = orders_.find({c.variants.get(), &support});
  if (it == orders_.end()) {
    it = orders_.emplace(std::piecewise_construct, std::forward_as_tuple(c.variants.get(), &support),
                         std::forward_as_tuple(c.variants.get(), support)).first;
  }
  return it->second.judge(label);
}

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
  else fail(Demand::python, [&] { return texts_of(c, ctx.policy).python_tags; }, [&] { return machine_texts(ctx).python; });
  // requires-python is judged against X.Y.0: the env names its Python line, not a patch release.
  if (c.requires_python && !c.requires_python->contains(*model::Version::parse(ctx.python.version.str()))) {
    fail(Demand::python, [&] { return "requires-python " + c.requires_python->str(); },
         [&] { return "python " + ctx.python.version.str(); });
  }

  // os, cpu_arch, glibc: judged on the best-fitting platform tag
  const auto fit = model::best_platform_fit(w, ctx.platform);
  j.platform_rank = fit.rank;
  j.any_platform = fit.tag && fit.tag->kind == model::PlatformTag::Kind::any;
  const model::PlatformTag* tag = fit.tag;
  const auto platform_tags = [&] { return texts_of(c, ctx.policy).platform_tags; };
  if (!fit.os_ok) fail(Demand::os, platform_tags, [&] { return std::string(model::to_string(ctx.platform.os)); });
  if (!fit.cpu_ok) {
    fail(Demand::cpu_arch, [&] { return texts_of(c, ctx.policy).cpu_archs; }, [&] { return ctx.platform.cpu_arch; });
  }
  if (!fit.glibc_ok) {
    fail(
        Demand::glibc,
        [&] {
          auto floor = tag ? libc_floor_text(binding_floor_tag(w, *tag)) : std::nullopt;
          const std::string tags = platform_tags();
          return floor.value_or(tags) + " (" + tags + ")";
        },
        [&] { return ctx.platform.glibc ? "glibc " + ctx.platform.glibc->str() : std::string("glibc unknown"); });
  } else if (!fit.glibc_checked && tag && tag->libc && fit.os_ok && ctx.platform.os == model::Os::linux_) {
    j.verdict.unchecked.push_back(Demand::glibc);
  }

  // variant: a variant wheel's properties (PEP 825), by what the machine supports
  if (w.variant_label) {
    if (!ctx.variants) {
      j.verdict.unchecked.push_back(Demand::variant);
    } else {
      j.variant = ctx.variant_orders ? ctx.variant_orders->judge(c, *w.variant_label, *ctx.variants)
                                     : judge_variant(*w.variant_label, c.variants.get(), c.variants_problem, *ctx.variants);
      for (const auto& f : j.variant.failures) fail(Demand::variant, [&] { return f.wheel; }, [&] { return f.machine; });
    }
  }

  // torch and line: the combo in the local label (a wheel without one is bound to neither)
  if (c.combo) {
    const Combo& wc = *c.combo;
    if (!(wc.torch == ctx.combo.torch)) {
      fail(Demand::torch, [&] { return texts_of(c, ctx.policy).torch; }, [&] { return machine_texts(ctx).torch; });
    }
    if (!(wc.line == ctx.combo.line)) {
      fail(Demand::line, [&] { return texts_of(c, ctx.policy).line; }, [&] { return machine_texts(ctx).line; });
    } else if (auto driver = judge_driver(wc.line, ctx.machine, ctx.policy); !driver.checked) {
      j.verdict.unchecked.push_back(Demand::line);
    } else if (driver.failure) {
      fail(Demand::line, [&] { return driver.failure->wheel; }, [&] { return driver.failure->machine; });
    }
  }

  // gpu_arch: every visible GPU must be covered by the arch list the wheel was built with
  if (c.combo) judge_gpu_archs(c, ctx, tag, j, fail);
  return j;
}

// pip's preference: final releases first, then the highest version, then the best tag in the
// order of packaging's sys_tags(), then the higher PEP 427 build tag. sys_tags() lists every
// (python, abi) pair on the machine's platforms before any tag on `any`: a wheel that fits only
// through `any` comes after every wheel built for the platform, whatever its python tag.
bool better(const Candidate& a, const Judged& ja, const Candidate& b, const Judged& jb) {
  const bool a_pre = a.wheel->version.is_prerelease(), b_pre = b.wheel->version.is_prerelease();
  if (a_pre != b_pre) return !a_pre;
  if (auto c = a.wheel->version <=> b.wheel->version; c != 0) return c > 0;
  // PEP 825: within a version, the variant order first (null after every variant, a non-variant
  // wheel after null), then the tags.
  if (int v = model::compare_variants(a.wheel->variant_label, &ja.variant, b.wheel->variant_label, &jb.variant); v != 0) return v < 0;
  if (ja.any_platform != jb.any_platform) return !ja.any_platform;
  if (ja.python_rank != jb.python_rank) return ja.python_rank < jb.python_rank;
  if (ja.platform_rank != jb.platform_rank) return ja.platform_rank < jb.platform_rank;
  if (auto c = model::compare_build_tags(a.wheel->build, b.wheel->build); c != 0) return c > 0;
  return std::tie(a.text, a.url) < std::tie(b.text, b.url);
}

namespace {

// The pick of candidate `c` (judged `j`) for `pkg` in `env`.
Pick make_pick(const std::string& env, const config::Package& pkg, const Candidate& c, const Judged& j, const Context& ctx) {
  Pick p{env, pkg.name, pkg.requested, ctx.python.tag(), c.text, c.url, c.wheel->version.str(), c.sha256,
         c.sha256_source, j.archs ? arch_text(*j.archs) : std::string(), j.verdict.unchecked};
  if (c.wheel->variant_label) {
    p.variant_label = c.wheel->variant_label;
    p.variant_properties = j.variant.properties;
    if (c.variants) p.variants_url = c.variants->source;
    p.variants_sha256 = c.variants_sha256;
    if (ctx.variants) p.variant_torch = ctx.variants->torch;
  }
  return p;
}

// Phase 2, only for a package that ends unresolved: every verdict with its texts (and, for those
// the inspect hook rejected, its reason).
void report_unresolved(PackageOutcome& out, const std::vector<Candidate>& cands, const std::map<std::size_t, Failure>& rejected,
                       const Context& ctx) {
  Context detailed = ctx;
  detailed.detailed = true;
  out.status = PackageOutcome::Status::unresolved;
  out.reason = cands.empty() ? "the index lists no wheels for it"
               : rejected.empty() ? "no candidate fits"
                                  : "no candidate fits (" + std::to_string(rejected.size()) + " rejected by inspecting their binaries)";
  std::vector<CandidateVerdict> verdicts;
  verdicts.reserve(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    verdicts.push_back(judge(cands[i], detailed).verdict);
    if (auto r = rejected.find(i); r != rejected.end()) verdicts.back().failed.push_back(r->second);
  }
  out.candidates = CandidateVerdicts(std::move(verdicts));
}

}  // namespace

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
    // A wheel bound to another combo fails torch or the line whatever else holds: phase 1 does
    // not judge it (phase 2 reports it with the others when the package ends unresolved).
    if (cands[i].combo && !(*cands[i].combo == ctx.combo)) {
      judged.emplace_back().verdict.failed.push_back({Demand::torch, {}, {}});
      continue;
    }
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
  auto pick_of = [&](std::size_t i) { return make_pick(env, pkg, cands[i], judged[i], ctx); };
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
    report_unresolved(out, cands, rejected, ctx);
    return out;
  }
  out.status = PackageOutcome::Status::resolved;
  out.pick = pick_of(*best);
  return out;
}

}  // namespace wheelfit::resolve::detail

namespace wheelfit::resolve {

std::shared_ptr<const PreparedCandidates> prepare_candidates(const index::IndexSnapshot& snap, const semantics::Policy& policy,
                                                             const std::vector<std::string>& packages) {
  auto out = std::make_shared<PreparedCandidates>();
  const detail::DigestBook digests(snap);
  for (const auto& name : packages) {
    if (!out->listings.count(name)) out->listings.emplace(name, detail::listing_for(name, snap, policy, digests));
  }
  return out;
}

}  // namespace wheelfit::resolve
