// The answer: a resolved fleet as plain values (answer/answer.hpp).
#include "wheelfit/answer/answer.hpp"

#include <algorithm>
#include <map>

#include "wheelfit/deliver/download.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::answer {
namespace {

/// The page's facts of a picked file, from its links (a URL may be listed under several anchor
/// texts): data-requires-python, the yank (any listing's holds), the size (PEP 700; unknown when
/// two listings disagree: never a guessed one).
void take_link_facts(File& f, const index::Page& page) {
  bool sizes_disagree = false;
  for (const auto& link : page.links) {
    if (link.url != f.url) continue;
    if (link.requires_python) f.requires_python = link.requires_python;
    if (link.yanked && !f.yanked) {
      f.yanked = true;
      f.yank_reason = link.yank_reason;
    }
    if (link.size && f.size && *f.size != *link.size) sizes_disagree = true;
    if (link.size && !f.size) f.size = link.size;
  }
  if (sizes_disagree) f.size.reset();
}

/// The index's facts of a picked file: its links' (take_link_facts), its packages.json fields.
void take_facts(File& f, const index::IndexSnapshot& snap) {
  if (auto page = snap.projects.find(f.project); page != snap.projects.end()) take_link_facts(f, page->second.page);
  if (!snap.packages_json) return;
  auto entry = snap.packages_json->packages.find(f.project);
  if (entry == snap.packages_json->packages.end()) return;
  for (const auto& listed : entry->second.wheels) {
    if (listed.url == f.url || listed.filename == f.filename) f.fields = listed.fields;
  }
}

/// The answer's files by URL, as they are added.
class Union {
 public:
  explicit Union(Answer& a) : answer_(a) {}
  /// The index of the file of `url` (added, as `project`'s file with `sha256`, when new), with
  /// `machine` among those that picked it; `fresh` set when it was added now.
  std::size_t add(const std::string& url, const std::string& project, const std::optional<std::string>& sha256,
                  const std::string& machine, bool* fresh = nullptr) {
    auto [it, added] = by_url_.try_emplace(url, answer_.files.size());
    if (added) {
      File& f = answer_.files.emplace_back();
      f.url = url;
      f.filename = file_name_of(url);
      f.sha256 = sha256;
      f.project = project;
    }
    File& f = answer_.files[it->second];
    if (std::find(f.machines.begin(), f.machines.end(), machine) == f.machines.end()) f.machines.push_back(machine);
    if (fresh) *fresh = added;
    return it->second;
  }

 private:
  Answer& answer_;
  std::map<std::string, std::size_t> by_url_;
};

/// A variant wheel's package-version variants file (PEP 825), published beside it: expected to be
/// the bytes the resolver judged (the page's digest, else the digest of the body it read).
void add_variants_file(Answer& a, Union& files, const resolve::Pick& pick, const std::string& machine,
                       const index::IndexSnapshot* snap) {
  std::optional<std::string> sha256 = pick.variants_sha256;
  if (const index::VariantsDoc* doc = sha256 ? nullptr : variants_doc(snap, pick)) {
    deliver::Sha256 h;
    h.update(doc->body);
    sha256 = h.hex();
  }
  File& f = a.files[files.add(pick.variants_url, pick.name, sha256, machine)];
  if (f.anchors.empty()) f.anchors.push_back(f.filename);
}

/// A resolved machine's picks into the answer.
void add_picks(Answer& a, Union& files, Machine& m, const MachineInput& in, const BuildOptions& options) {
  for (const auto& pick : in.resolution->picks) {
    bool fresh = false;
    const std::size_t i = files.add(pick.url, pick.name, pick.sha256, in.name, &fresh);
    File& f = a.files[i];
    if (fresh) {
      f.version = pick.version;
      if (in.index) take_facts(f, *in.index);
      if (const index::VariantsDoc* doc = variants_doc(in.index, pick)) {  // inlined by pylock.toml
        f.variant_label = pick.variant_label;
        f.variants_json = doc->body;
      }
    }
    if (std::find(f.anchors.begin(), f.anchors.end(), pick.filename) == f.anchors.end()) f.anchors.push_back(pick.filename);
    m.picks.push_back(i);
    if (options.variants_files && pick.variant_label && !pick.variants_url.empty()) add_variants_file(a, files, pick, in.name, in.index);
  }
}

}  // namespace

std::string file_name_of(std::string_view url) {
  if (const auto q = url.find_first_of("?#"); q != std::string_view::npos) url = url.substr(0, q);
  return index::percent_decode(url.substr(url.rfind('/') + 1));
}

const index::VariantsDoc* variants_doc(const index::IndexSnapshot* snap, const resolve::Pick& pick) {
  if (!snap || !pick.variant_label || pick.variants_url.empty()) return nullptr;
  auto page = snap->projects.find(pick.name);
  if (page == snap->projects.end()) return nullptr;
  for (const auto& doc : page->second.variants) {
    if (doc.url == pick.variants_url && doc.file) return &doc;
  }
  return nullptr;
}

std::vector<std::string> lock_comments(const resolve::Resolution& r, const std::string& index_url, bool pins_locked) {
  std::vector<std::string> out;
  if (!r.ok()) return out;
  out.push_back("Generated by wheelfit: combo " + r.combo_str(*r.combo) + " (" + *r.tier + "); index " +
                util::strip_credentials(index_url) + ".");
  for (const auto& pin : pins_locked ? std::vector<resolve::Pin>{} : r.pins) {
    out.push_back("not locked here (its index publishes no digest wheelfit reads): " + pin.name + pin.version + " from " +
                  util::strip_credentials(pin.index));
  }
  return out;
}

Answer build(const std::vector<MachineInput>& machines, const BuildOptions& options) {
  Answer a;
  Union files(a);
  for (const auto& in : machines) {
    Machine& m = a.machines.emplace_back();
    m.name = in.name;
    m.combo = m.tier = "-";
    if (in.python) m.python = in.python->truncated(2).str();
    const resolve::Resolution* r = in.resolution;
    if (r && r->combo) m.combo = r->combo_str(*r->combo);
    if (r && r->tier) m.tier = *r->tier;
    m.resolved = r && r->ok();
    if (!m.resolved) continue;
    auto comments = lock_comments(*r, in.index_url, false);
    m.generated = comments.front();
    m.unlocked.assign(comments.begin() + 1, comments.end());
    add_picks(a, files, m, in, options);
  }
  return a;
}

void add_torch_family(Answer& answer, std::vector<TorchFile> files) {
  for (auto& t : files) {
    const std::size_t i = answer.files.size();
    File& f = answer.files.emplace_back();
    f.url = std::move(t.url);
    f.filename = t.filename;
    f.project = std::move(t.project);
    f.version = std::move(t.version);
    f.sha256 = std::move(t.sha256);
    f.requires_python = std::move(t.requires_python);
    f.anchors = {std::move(t.filename)};
    f.machines = std::move(t.machines);
    for (auto& m : answer.machines) {
      if (std::find(f.machines.begin(), f.machines.end(), m.name) != f.machines.end()) m.torch.push_back(i);
    }
  }
}

}  // namespace wheelfit::answer
