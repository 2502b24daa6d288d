#pragma once
// The two-digest rule: one file name an index snapshot lists with two different sha256 (twice on
// one page, on two pages, a page's #sha256= against packages.json, packages.json against itself)
// is never taken, since which of the two files a download gets is anyone's guess. The resolver
// (every pick) and `mirror --with-torch` (every torch family file) ask the same questions here.
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wheelfit/index/index_client.hpp"

namespace wheelfit::resolve {

/// Every sha256 a snapshot gives each file name (a link's decoded href segment, a packages.json
/// wheel's filename), on any of its pages and in packages.json, and where each was listed: third-
/// party indexes have listed one file twice with different digests for months.
/// Holds views into `snap`, which must outlive it. Built once per resolve, prepared snapshot or
/// torch index: one hash-map entry per file name; only conflicting names keep a list.
/// Thread safety: const calls may run concurrently.
class DigestBook {
 public:
  explicit DigestBook(const index::IndexSnapshot& snap);
  /// Empty when `filename` has at most one digest; else "hash conflict: ..." naming every digest
  /// and the page(s) (or packages.json) that listed it.
  [[nodiscard]] std::string conflict(std::string_view filename) const;

 private:
  struct Seen {
    std::string_view sha256, where;
  };
  void add(std::string_view filename, std::string_view sha256, std::string_view where);
  std::unordered_map<std::string_view, Seen> first_;                 ///< by file name: its first digest
  std::map<std::string_view, std::vector<Seen>, std::less<>> conflicts_;  ///< every (digest, where), distinct
  std::list<std::string> owned_;  ///< the "where" texts that are not a page's own URL
};

/// A link's #sha256= (`fragment`, on the page `page`) against what `snap`'s packages.json says of
/// the same file (`listed`: PackagesJson::sha256_for its URL or name): empty when either is
/// absent or they agree; else "hash conflict: the href on <page> says sha256 A, <packages.json's
/// URL> says sha256 B".
[[nodiscard]] std::string fragment_conflict(const index::IndexSnapshot& snap, std::string_view page,
                                            const std::optional<std::string>& fragment,
                                            const std::optional<std::string>& listed);

}  // namespace wheelfit::resolve
