#pragma once
// The GitHub Releases source moved to the core's index component (index/releases.hpp, decision
// 0039): its names stay here for existing callers.

#include "wheelfit/index/releases.hpp"

namespace wheelfit::transports {
using index::link_next;
using index::list_release_wheels;
using index::parse_releases_page;
using index::read_index_with_failover;
using index::ReleasesSource;
using index::repo_of_pages_url;
}  // namespace wheelfit::transports
