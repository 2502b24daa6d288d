// The two-digest rule (resolve/digests.hpp): every sha256 a snapshot gives each file name.
#include "wheelfit/resolve/digests.hpp"

#include <algorithm>

namespace wheelfit::resolve {

DigestBook::DigestBook(const index::IndexSnapshot& snap) {
  std::size_t n = 0;
  for (const auto& [name, page] : snap.projects) n += page.page.links.size();
  if (snap.packages_json)
    for (const auto& [name, entry] : snap.packages_json->packages) n += entry.wheels.size();
  first_.reserve(n);
  for (const auto& [name, page] : snap.projects) {
    if (page.status != index::ProjectPage::Status::ok) continue;
    std::string_view where = page.url;
    if (page.source == "releases-api") where = owned_.emplace_back(page.url + " (answered by the GitHub Releases API)");
    for (const auto& link : page.page.links) {
      if (link.sha256) add(link.filename.empty() ? link.text : link.filename, *link.sha256, where);
    }
  }
  if (snap.packages_json) {
    const std::string_view where = owned_.emplace_back(index::index_url_for(snap.base_url, "packages.json"));
    for (const auto& [name, entry] : snap.packages_json->packages) {
      for (const auto& w : entry.wheels) {
        if (w.sha256) add(w.filename, *w.sha256, where);
      }
    }
  }
}

void DigestBook::add(std::string_view filename, std::string_view sha256, std::string_view where) {
  auto [it, inserted] = first_.try_emplace(filename, Seen{sha256, where});
  if (inserted) return;
  auto c = conflicts_.find(filename);
  if (c == conflicts_.end()) {
    if (it->second.sha256 == sha256) return;  // the same file listed again: fine
    c = conflicts_.emplace(filename, std::vector<Seen>{it->second}).first;
  }
  auto& seen = c->second;
  const bool known = std::any_of(seen.begin(), seen.end(), [&](const Seen& s) { return s.sha256 == sha256 && s.where == where; });
  if (!known) seen.push_back({sha256, where});
}

std::string DigestBook::conflict(std::string_view filename) const {
  auto c = conflicts_.find(filename);
  if (c == conflicts_.end()) return {};
  const auto& seen = c->second;
  const bool one_place = std::all_of(seen.begin(), seen.end(), [&](const Seen& s) { return s.where == seen.front().where; });
  // The digests in the order first seen, each with the places that gave it.
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> digests;
  for (const auto& s : seen) {
    auto d = std::find_if(digests.begin(), digests.end(), [&](const auto& e) { return e.first == s.sha256; });
    if (d == digests.end()) d = digests.insert(digests.end(), {s.sha256, {}});
    d->second.push_back(s.where);
  }
  std::string out = "hash conflict: ";
  if (one_place) out += std::string(seen.front().where) + " lists it with ";
  for (std::size_t i = 0; i < digests.size(); ++i) {
    out += i == 0 ? "" : i + 1 == digests.size() ? " and " : ", ";
    out += "sha256 " + std::string(digests[i].first);
    if (one_place) continue;
    out += " (";
    for (std::size_t k = 0; k < digests[i].second.size(); ++k) out += (k ? ", " : "") + std::string(digests[i].second[k]);
    out += ")";
  }
  return out;
}

std::string fragment_conflict(const index::IndexSnapshot& snap, std::string_view page,
                              const std::optional<std::string>& fragment, const std::optional<std::string>& listed) {
  if (!fragment || !listed || *fragment == *listed) return {};
  return "hash conflict: the href on " + std::string(page) + " says sha256 " + *fragment + ", " +
         index::index_url_for(snap.base_url, "packages.json") + " says sha256 " + *listed;
}

}  // namespace wheelfit::resolve
