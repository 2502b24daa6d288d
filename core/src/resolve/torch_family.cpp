// The torch family files of `mirror --with-torch` (resolve/torch_family.hpp): each torch index
// read once, each page's links parsed once, each choice made once per (index, pin, Python,
// platform).
#include "wheelfit/resolve/torch_family.hpp"

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/model/specifier.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/resolve/digests.hpp"
#include "wheelfit/resolve/torch_gate.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::resolve {
namespace {

/// A machine resolved on a combo.
bool resolved_on_combo(const TorchMachine& t) { return t.resolution && t.resolution->ok() && t.resolution->combo; }

/// Whether the torch of `t`'s combo cannot run on its GPUs (unknown: it is not set aside).
bool torch_cannot_run(const TorchMachine& t) { return t.resolution->combo_torch && t.resolution->combo_torch->cannot_run(); }

/// A machine whose torch family is mirrored: resolved, on a combo whose torch may run there.
bool takes_torch(const TorchMachine& t) { return resolved_on_combo(t) && !torch_cannot_run(t); }

/// The torch index `pin` of `t` is read from, normalised (credentials as given).
std::string torch_base(const std::optional<std::string>& torch_index, const TorchMachine& t, const Pin& pin) {
  return index::normalize_base(torch_index ? semantics::expand_torch_index(*torch_index, t.resolution->combo->line) : pin.index);
}

/// The names of `pins`: the pages a torch index is read with.
std::vector<std::string> pin_names(const std::vector<Pin>& pins) {
  std::vector<std::string> names;
  for (const auto& p : pins) names.push_back(p.name);
  return names;
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
    const auto fit = platform_fit(p.name, m);
    if (!py_rank || !fit || !fit->ok()) continue;
    const std::pair<int, int> rank{*py_rank, fit->rank};
    if (!best || p.name.version > best->name.version || (p.name.version == best->name.version && rank < best_rank)) {
      best = &p;
      best_rank = rank;
    }
  }
  return best;
}

}  // namespace

/// One torch index as read: its snapshot, the digests it lists, its pages' wheel links parsed
/// (by project, on first use).
struct TorchIndex {
  index::IndexSnapshot snap;
  std::unique_ptr<DigestBook> digests;
  std::map<std::string, std::vector<ParsedLink>> parsed;
};

namespace {

/// The page's wheel links with their parsed names, parsed on first use.
const std::vector<ParsedLink>& links_of(TorchIndex& idx, const index::ProjectPage& page) {
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
std::string digest_conflict(const TorchIndex& idx, const index::ProjectPage& page, const index::Link& link) {
  const std::string& name = link.filename.empty() ? link.text : link.filename;
  if (auto conflict = idx.digests->conflict(name); !conflict.empty()) return conflict;
  std::optional<std::string> listed;
  if (idx.snap.packages_json) listed = idx.snap.packages_json->sha256_for(link.url, link.filename);
  return fragment_conflict(idx.snap, page.url, link.sha256, listed);
}

}  // namespace

TorchChooser::TorchChooser(IndexReader read, const std::map<std::string, std::string>& clean, std::string what)
    : read_(std::move(read)), clean_(clean), prefix_(what.empty() ? what : what + ": ") {}

TorchChooser::~TorchChooser() = default;

Expected<const TorchChoice*> TorchChooser::choose(const std::string& raw, const machine::Machine& m, const Pin& pin,
                                                  const std::vector<std::string>& names, const std::string& machine) {
  const auto c = clean_.find(raw);
  const std::string& base = c == clean_.end() ? raw : c->second;
  const model::PythonTarget py{m.python ? m.python->truncated(2) : model::NumericVersion{}, m.python_free_threaded};
  ChoiceKey key{base, pin.name, pin.version, py.version, py.free_threaded, m.os, m.cpu_arch, m.glibc};
  if (auto hit = chosen_.find(key); hit != chosen_.end()) return &hit->second;
  ++made_;
  TorchIndex& idx = index_at(base, names);
  const std::string where =
      util::redact(base) + " (" + pin.name + pin.version + (machine.empty() ? std::string() : ", machine " + machine) + ")";
  const auto page = idx.snap.projects.find(pin.name);
  if (page == idx.snap.projects.end() || page->second.status != index::ProjectPage::Status::ok) {
    return Error(Errc::io_error, prefix_ + "the torch index " + where + ": " +
                                     (page == idx.snap.projects.end() ? std::string("no page") : page->second.error));
  }
  auto spec = model::SpecifierSet::parse(pin.version);
  if (!spec) return Error(Errc::invalid_input, prefix_ + where + ": " + spec.error().message);
  const ParsedLink* best = newest_fitting(links_of(idx, page->second), pin.name, *spec, py, m);
  if (!best) {
    return Error(Errc::invalid_input, prefix_ + "the torch index " + where + " lists no wheel for " + py.tag() +
                                          " on this machine's platform");
  }
  if (auto conflict = digest_conflict(idx, page->second, *best->link); !conflict.empty()) {
    return Error(Errc::invalid_input, prefix_ + "the torch index " + where + ": " + best->link->filename + ": " + conflict +
                                          "; nothing is fetched or published");
  }
  return &chosen_.emplace(std::move(key), TorchChoice{best->link, best->name.version}).first->second;
}

/// The index at `base`, read on first use with the pages of `names` (and its packages.json).
TorchIndex& TorchChooser::index_at(const std::string& base, const std::vector<std::string>& names) {
  auto [it, fresh] = indexes_.try_emplace(base);
  if (fresh) {
    it->second = std::make_unique<TorchIndex>();
    it->second->snap = read_(base, names);
    it->second->digests = std::make_unique<DigestBook>(it->second->snap);
  }
  return *it->second;
}

std::map<std::string, std::string> torch_index_urls(const std::vector<TorchMachine>& machines,
                                                    const std::optional<std::string>& torch_index) {
  std::map<std::string, std::string> out;
  for (const auto& t : machines) {
    if (!takes_torch(t)) continue;
    for (const auto& pin : t.resolution->pins) {
      std::string base = torch_base(torch_index, t, pin);
      out.try_emplace(base, base);
    }
  }
  return out;
}

Expected<TorchFamily> torch_family(const std::vector<TorchMachine>& machines, const std::optional<std::string>& torch_index,
                                   TorchChooser& chooser) {
  TorchFamily family;
  auto& out = family.files;
  std::map<std::string, std::size_t> by_url;
  for (const auto& t : machines) {
    if (resolved_on_combo(t) && torch_cannot_run(t)) {
      const auto& res = *t.resolution;
      family.set_aside.push_back({t.name, res.combo_str(*res.combo), cannot_run_text(res.device_prefix, *res.combo_torch)});
      continue;
    }
    if (!takes_torch(t)) continue;
    for (const auto& pin : t.resolution->pins) {
      auto choice = chooser.choose(torch_base(torch_index, t, pin), *t.machine, pin, pin_names(t.resolution->pins), t.name);
      if (!choice) return choice.error();
      const index::Link& link = *(*choice)->link;
      auto [at, added] = by_url.try_emplace(link.url, out.size());
      if (added) {
        out.push_back({link.url, link.filename, pin.name, (*choice)->version.str(), link.sha256, link.requires_python, {}});
      }
      auto& names = out[at->second].machines;
      if (std::find(names.begin(), names.end(), t.name) == names.end()) names.push_back(t.name);
    }
  }
  family.choices = chooser.choices();
  return family;
}

}  // namespace wheelfit::resolve
