#pragma once
// Reading PEP 503 (HTML) and PEP 691 (JSON) simple-index project pages into links, and the
// farm's packages.json (schema 1).
//
// A Link keeps the anchor text and the href apart: the farm lists torch-free wheels under
// every torch minor with a synthetic anchor text whose file name differs from the href's.
// Match the text, install the href.

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::index {

struct Link {
  std::string text;          ///< anchor text, entities decoded, whitespace trimmed (PEP 691: the filename)
  std::string url;           ///< absolute URL, resolved against <base href> / the page URL, fragment removed
  std::string filename;      ///< percent-decoded last path segment of url ("a-1.0+cu128torch2.8-...whl")
  std::optional<std::string> sha256;  ///< lower-case hex from "#sha256=" (or PEP 691 hashes.sha256)
  std::optional<std::string> requires_python;  ///< data-requires-python, entities decoded
  bool yanked = false;       ///< data-yanked present (PEP 592)
  std::string yank_reason;
  /// The file's size in bytes (PEP 700's "size" of a PEP 691 page); nullopt when the page gave
  /// none (a PEP 503 HTML page never does). At most INT64_MAX: what a TOML integer holds.
  std::optional<std::uint64_t> size = {};
};

/// What a page held: its links, and the anchors skipped (in-page "#..." links, empty hrefs,
/// directory links ending in '/', a malformed hash fragment; also anchors without href and
/// links whose decoded file name holds '/', '\\' or a control character) with the reason for each.
struct Page {
  std::vector<Link> links;
  std::vector<std::string> skipped;  ///< "href '#cu132': in-page link", ...
  /// What a reader should be told about the page as a whole, each naming it (PEP 629: a newer
  /// minor repository version than this reader's, or one that is no version).
  std::vector<std::string> warnings = {};
};

/// The PEP 629 repository version (<meta name="pypi:repository-version">) this reader follows.
inline constexpr int kRepositoryVersionMajor = 1;
inline constexpr int kRepositoryVersionMinor = 0;

/// Parses a PEP 503 HTML page. `page_url` is the page's own URL (absolute, ending in '/' for a
/// directory page) used to resolve relative hrefs. Tolerant like a browser (upper-case tags,
/// unquoted or single-quoted attributes, comments, <base href>), strict about what it returns.
/// Fails (Errc::invalid_input naming page_url) when the body is not HTML at all (binary data, a
/// NUL byte), and (Errc::unsupported naming page_url) when the page's first
/// <meta name="pypi:repository-version" content="X.Y"> (PEP 629) has a major version newer than
/// kRepositoryVersionMajor. A newer minor version, or a content that is not <major>.<minor>, is
/// read as this reader's version with a warning in Page::warnings.
Expected<Page> parse_simple_html(std::string_view body, std::string_view page_url);

/// Parses a PEP 691 JSON project page ("files": [{filename, url, hashes, requires-python, yanked,
/// size}]). Malformed JSON or a wrong shape is Errc::invalid_input naming page_url and the
/// offending field (a "size" that is not an integer from 0 to INT64_MAX among them);
/// a meta.api-version other than 1.x is Errc::unsupported.
Expected<Page> parse_simple_json(std::string_view body, std::string_view page_url);

/// Resolves `href` against `base` (RFC 3986 section 5.2), keeping percent-escapes as they are
/// ("%2B" stays "%2B": never decoded twice). Returns the absolute URL. (model::url::resolve)
std::string resolve_url(std::string_view base, std::string_view href);

/// Decodes %XX escapes once. Invalid escapes are kept literally. (model::url::percent_decode)
std::string percent_decode(std::string_view text);

/// One wheel in packages.json.
struct PackagesJsonWheel {
  std::string filename;
  std::string url;
  std::optional<std::string> sha256;  ///< lower-case hex, validated (64 hex digits)
  /// Its other string fields as given ("version", "cuda", "torch", "python", "abi", "platform"),
  /// in order: a mirror writes them back unchanged.
  std::vector<std::pair<std::string, std::string>> fields = {};
};
struct PackagesJsonEntry {
  bool torch_free = false;
  std::vector<PackagesJsonWheel> wheels;
};
/// packages.json, schema 1: {"schema": 1, "repo": "...", "packages": {name: {torch_free, wheels}}}.
struct PackagesJson {
  std::string repo;
  std::map<std::string, PackagesJsonEntry> packages;  ///< keyed by PEP 503 normalised name

  /// sha256 by wheel URL or, failing that, by file name (`filename` empty: the URL's decoded last
  /// segment); nullopt when unknown, or when wheels of that file name disagree on the hash.
  /// Constant time after build_lookup() (parse_packages_json calls it); a linear scan before.
  [[nodiscard]] std::optional<std::string> sha256_for(std::string_view url, std::string_view filename) const;
  /// Indexes the wheels by URL and file name for sha256_for. Call again after changing `packages`.
  void build_lookup();

  PackagesJson() = default;
  PackagesJson(PackagesJson&&) noexcept = default;  // the index's views stay valid: nodes do not move
  PackagesJson& operator=(PackagesJson&&) noexcept = default;
  PackagesJson(const PackagesJson& other);           // re-indexes the copy
  PackagesJson& operator=(const PackagesJson& other);
  ~PackagesJson() = default;

 private:
  /// Views into `packages`' strings.
  std::unordered_map<std::string_view, const std::string*> by_url_;
  /// nullptr marks a file name whose wheels disagree on the hash.
  std::unordered_map<std::string_view, const std::string*> by_filename_;
  bool indexed_ = false;
};
/// Errors (Errc::invalid_input / Errc::unsupported for another schema) name `source` and the
/// JSON path of the offending value ("packages.cumm.wheels[2].sha256: not 64 hex digits"). A
/// relative wheel url is resolved against `source` (the URL packages.json was read from).
Expected<PackagesJson> parse_packages_json(std::string_view body, std::string_view source);
/// parse_packages_json keeping only the records of the projects in `only` (names PEP 503
/// normalised here; the rest are left out of `packages`): what a resolve reads. The whole body is
/// still parsed, so malformed or truncated JSON anywhere, nesting past the parser's depth limit, a
/// record that is not an object and a key that is empty or another key's project fail as the whole
/// read fails, with the same message; so does every error of the top level (schema, repo,
/// packages). The inside of a record not asked for is not checked (decision 0020): its errors do
/// not fail the read, and its wheels' digests are not in the result. Same result as
/// parse_packages_json restricted to `only` for every document that one accepts.
Expected<PackagesJson> parse_packages_json(std::string_view body, std::string_view source,
                                           const std::vector<std::string>& only);

}  // namespace wheelfit::index
