#pragma once
// The GitHub Releases API as an index source beside the simple index (index_client.hpp): the
// failover when the Pages index cannot be read (read_index_with_failover).
// Lists every release of a repository (per_page=100, following Link: rel="next", loop-safe) and
// maps each release asset that is a wheel onto index::Link (text = file name, url =
// browser_download_url, sha256 from the asset's "digest": "sha256:<hex>", unknown when null).
// Sends `Accept: application/vnd.github+json`, `X-GitHub-Api-Version: 2022-11-28`, and
// `Authorization: Bearer <token>` only to the API host (scheme, host and port), and only over
// https unless `token_over_http` (the API host named with --allow-insecure-host): an http:// API
// gets no token, with a warning. Rate limits are the HTTP transport's
// (Retry-After, x-ratelimit-*); conditional requests are the cache's.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/net/transport.hpp"

namespace wheelfit::index {

struct ReleasesSource {
  std::string api_base = "https://api.github.com";  ///< WHEELFIT_GITHUB_API overrides (no trailing '/')
  std::string repo;                                 ///< "owner/name"
  std::optional<std::string> token;                 ///< GITHUB_TOKEN
  bool token_over_http = false;                     ///< send the token to an http:// API base too
  unsigned max_pages = 100;                         ///< 10,000 releases: more is refused, not looped

  /// api_base from WHEELFIT_GITHUB_API, token from GITHUB_TOKEN (blank = unset), repo as given.
  static ReleasesSource from_env(std::string repo);
};

/// The "owner/name" of a GitHub Pages project site ("https://comfy-forge.github.io/cuda-wheels/"
/// -> "comfy-forge/cuda-wheels"); nullopt for any other URL.
std::optional<std::string> repo_of_pages_url(std::string_view index_url);

/// Every wheel asset of every release, as links grouped by PEP 503 normalised project name (from
/// the wheel file name). Errors: the transport's (naming the API URL), Errc::invalid_input for
/// JSON that is not a list of releases (naming the URL and the JSON path), NetErrc::protocol for
/// a Link header loop or more than max_pages pages.
Expected<std::map<std::string, index::Page>> list_release_wheels(net::Transport& transport,
                                                                 const ReleasesSource& source);

/// Parses one page of GET /repos/{repo}/releases into links (appended to `out` by project name);
/// `source` names the page in errors. Exposed for tests.
Expected<void> parse_releases_page(std::string_view body, std::string_view source,
                                   std::map<std::string, index::Page>& out);

/// The rel="next" URL of a Link header, if any (RFC 8288; several links, quoted or bare rel).
std::optional<std::string> link_next(std::string_view link_header);

}  // namespace wheelfit::index

namespace wheelfit::index {

/// index::read_index, then, when the index could not be read (a page or packages.json failed with
/// a network error or a 5xx after retries: not a clean 404, not a parse error) and `releases` is
/// given, the Releases API for the pages that failed: each such page is replaced by the assets of
/// that project (status ok, source "releases-api", links in the API's order) or marked
/// not_published when the API lists none. snapshot.failover_note says why the API was asked and
/// what it answered (or why it failed too, keeping the pages' own errors).
index::IndexSnapshot read_index_with_failover(net::Transport& transport, const std::string& base,
                                              const std::vector<std::string>& names,
                                              const std::optional<ReleasesSource>& releases);

/// What a resolve gives the failover: the repository ("" derives it from a github.io index URL,
/// repo_of_pages_url; none derived: no failover) and whether the API's host may get GITHUB_TOKEN
/// over plain http (the http rules' HttpRules::insecure_allowed; unset: never).
struct ReleasesRequest {
  std::string repo;
  std::function<bool(std::string_view api_url)> token_over_http = {};
};
/// read_index_with_failover with the source ReleasesSource::from_env makes for `request`.
IndexSnapshot read_index_with_releases(net::Transport& transport, const std::string& base,
                                       const std::vector<std::string>& names, const ReleasesRequest& request);

}  // namespace wheelfit::index
