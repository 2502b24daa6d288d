// The torch family files of `mirror --with-torch` (torch_family.hpp): each torch index read
// once, each page's links parsed once, each choice made once per (index, pin, Python, platform).
#include "torch_family.hpp"

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/model/specifier.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/policy/policy.hpp"
#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/resolve/digests.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::api::detail {
namespace {

/// A machine whose torch family is mirrored: resolved, on a combo.
bool takes_torch(const ResolveResult& r) { return r.resolution && r.resolution->ok() && r.resolution->combo; }

/// The torch index `pin` of `r` is read from, normalised (credentials as given).
std::string torch_base(const MirrorRequest& req, const ResolveResult& r, const resolve::Pin& pin) {
  return index::normalize_base(req.torch_index ? policy::expand_torch_index(*req.torch_index, r.resolution->combo->line) : pin.index);
}

/// A wheel link of a torch page with its parsed name.
struct ParsedLink {
  const index::Link* link;
  model::WheelName name;
};

/// The newest of `links` named `name` within `spec` that fits Python `py` and `m`'s platform (on
/// a tie, the better Python tag, then the better platform tag); nullptr when none does.
const ParsedLink* newest_fitting(const std::vector<ParsedLink>& links, const std::string& name, const model::SpecifierSet& spec,
                                 const model::PythonTarget& py, const machine::Machine& m) {
  const ParsedLink* best = nullptr;
  std::pair<int, int> best_rank{0, 0};
  for (const auto& p : links) {
    if (p.name.name != name || !spec.contains(p.name.version)) continue;
    const auto py_rank = model::python_rank(p.name, py);
    const auto fit = resolve::platform_fit(p.name, m);
    if (!py_rank || !fit || !fit->ok()) continue;
    const std::pair<int, int> rank{*py_rank, fit->rank};
    if (!best || p.name.version > best->name.version || (p.name.version == best->name.version && rank < best_rank)) {
      best = &p;
      best_rank = rank;
    }
  }
  return best;
}

/// One torch index as read: its snapshot, the digests it lists, its pages' wheel links parsed
/// (by project, on first use).
struct TorchIndex {
  index::IndexSnapshot snap;
  std::unique_ptr<resolve::DigestBook> digests;
  std::map<std::string, std::vector<ParsedLink>> parsed;
};

/// What a choice depends on: the index, the pin's name and version, the machine's Python (version,
/// free-threaded) and its platform facts (OS, CPU arch, glibc).
using ChoiceKey = std::tuple<std::string, std::string, std::string, model::NumericVersion, bool, std::optional<model::Os>,
                             std::optional<std::string>, std::optional<model::NumericVersion>>;

/// The file chosen for a pin: its link and its parsed version.
struct Choice {
  const index::Link* link;
  model::Version version;
};

class TorchChooser {
 public:
  TorchChooser(transport::Transport& transport, const std::map<std::string, std::string>& clean)
      : transport_(transport), clean_(clean) {}

  /// The file of `pin` for machine `r` (named `machine` in errors) from the index at `raw`.
  Expected<const Choice*> choose(const std::string& raw, const ResolveResult& r, const resolve::Pin& pin,
                                 const std::string& machine) {
    const auto c = clean_.find(raw);
    const std::string& base = c == clean_.end() ? raw : c->second;
    const auto& m = r.machine;
    const model::PythonTarget py{m.python ? m.python->truncated(2) : model::NumericVersion{}, m.python_free_threaded};
    ChoiceKey key{base, pin.name, pin.version, py.version, py.free_threaded, m.os, m.cpu_arch, m.glibc};
    if (auto hit = chosen_.find(key); hit != chosen_.end()) return &hit->second;
    ++made_;
    TorchIndex& idx = index_at(base, r.resolution->pins);
    const std::string where = util::redact(base) + " (" + pin.name + pin.version + ", machine " + machine + ")";
    const auto page = idx.snap.projects.find(pin.name);
    if (page == idx.snap.projects.end() || page->second.status != index::ProjectPage::Status::ok) {
      return Error(Errc::io_error, "--with-torch: the torch index " + where + ": " +
                                       (page == idx.snap.projects.end() ? std::string("no page") : page->second.error));
    }
    auto spec = model::SpecifierSet::parse(pin.version);
    if (!spec) return Error(Errc::invalid_input, "--with-torch: " + where + ": " + spec.error().message);
    const ParsedLink* best = newest_fitting(links_of(idx, page->second), pin.name, *spec, py, m);
    if (!best) {
      return Error(Errc::invalid_input, "--with-torch: the torch index " + where + " lists no wheel for " + py.tag() +
                                            " on this machine's platform");
    }
    if (auto conflict = digest_conflict(idx, page->second, *best->link); !conflict.empty()) {
      return Error(Errc::invalid_input, "--with-torch: the torch index " + where + ": " + best->link->filename + ": " +
                                            conflict + "; nothing is fetched or published");
    }
    return &chosen_.emplace(std::move(key), Choice{best->link, best->name.version}).first->second;
  }

  /// The choices made so far: each a scan of a page's links.
  [[nodiscard]] std::size_t choices() const { return made_; }

 private:
  /// The index at `base`, read on first use with the pins' pages (and its packages.json).
  TorchIndex& index_at(const std::string& base, const std::vector<resolve::Pin>& pins) {
    auto [it, fresh] = indexes_.try_emplace(base);
    if (fresh) {
      std::vector<std::string> names;
      for (const auto& p : pins) names.push_back(p.name);
      it->second.snap = index::read_index(transport_, base, names);
      it->second.digests = std::make_unique<resolve::DigestBook>(it->second.snap);
    }
    return it->second;
  }

  /// The page's wheel links with their parsed names, parsed on first use.
  static const std::vector<ParsedLink>& links_of(TorchIndex& idx, const index::ProjectPage& page) {
    auto [it, fresh] = idx.parsed.try_emplace(page.name);
    if (fresh) {
      for (const auto& link : page.page.links) {
        if (auto w = model::WheelName::parse(link.filename)) it->second.push_back({&link, std::move(*w)});
      }
    }
    return it->second;
  }

  /// The two-digest rule on the chosen link: its file name listed with another sha256 anywhere in
  /// the index, or its #sha256= against packages.json. Empty when neither.
  static std::string digest_conflict(const TorchIndex& idx, const index::ProjectPage& page, const index::Link& link) {
    const std::string& name = link.filename.empty() ? link.text : link.filename;
    if (auto conflict = idx.digests->conflict(name); !conflict.empty()) return conflict;
    std::optional<std::string> listed;
    if (idx.snap.packages_json) listed = idx.snap.packages_json->sha256_for(link.url, link.filename);
    return resolve::fragment_conflict(idx.snap, page.url, link.sha256, listed);
  }

  transport::Transport& transport_;
  const std::map<std::string, std::string>& clean_;
  std::map<std::string, TorchIndex> indexes_;  ///< by URL (credentials taken out)
  std::map<ChoiceKey, Choice> chosen_;
  std::size_t made_ = 0;
};

}  // namespace

std::map<std::string, std::string> torch_index_urls(const MirrorRequest& req, const FleetResult& fleet) {
  std::map<std::string, std::string> out;
  for (const auto& r : fleet.machines) {
    if (!takes_torch(r)) continue;
    for (const auto& pin : r.resolution->pins) {
      std::string base = torch_base(req, r, pin);
      out.try_emplace(base, base);
    }
  }
  return out;
}

Expected<TorchFamily> torch_family(const MirrorRequest& req, const FleetResult& fleet, transport::Transport& transport,
                                   const std::map<std::string, std::string>& clean) {
  TorchFamily family;
  auto& out = family.files;
  std::map<std::string, std::size_t> by_url;
  TorchChooser chooser(transport, clean);
  for (std::size_t m = 0; m < fleet.machines.size(); ++m) {
    const ResolveResult& r = fleet.machines[m];
    if (!takes_torch(r)) continue;
    const std::string& machine = fleet.fleet[m].name;
    for (const auto& pin : r.resolution->pins) {
      auto choice = chooser.choose(torch_base(req, r, pin), r, pin, machine);
      if (!choice) return choice.error();
      const index::Link& link = *(*choice)->link;
      auto [at, added] = by_url.try_emplace(link.url, out.size());
      if (added) {
        out.push_back({link.url, link.filename, pin.name, (*choice)->version.str(), link.sha256, link.requires_python, {}});
      }
      auto& machines = out[at->second].machines;
      if (std::find(machines.begin(), machines.end(), machine) == machines.end()) machines.push_back(machine);
    }
  }
  family.choices = chooser.choices();
  return family;
}

}  // namespace wheelfit::api::detail
