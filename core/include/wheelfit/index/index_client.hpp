#pragma once
// Reads the pages a resolve needs from one index, each once, through a Transport:
// <base>packages.json and <base><name>/ for every requested package, in one batch
// (Transport::get_many, which network transports run concurrently).
//
// A page that is cleanly absent (Errc::not_found) means "not published on this index"; any
// other failure is a read failure and says so: the two are never confused.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/index/links.hpp"
#include "wheelfit/model/variant.hpp"
#include "wheelfit/model/version.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::index {

/// A package version's {name}-{version}-variants.json (PEP 825), linked from its project page and
/// read with it: once per version that has variant wheels on the page.
struct VariantsDoc {
  std::string url;                    ///< the link's URL
  std::string filename;               ///< "torch-2.9.0-variants.json"
  model::Version version;             ///< from the file name
  std::optional<std::string> sha256;  ///< the page's digest for it, when given
  std::string body;                   ///< as served, when read (a mirror publishes it again)
  std::shared_ptr<const model::VariantsFile> file;  ///< when read, its digest matched and understood
  std::string problem;                ///< otherwise why not, naming the file
};

struct ProjectPage {
  enum class Status { ok, not_published, failed };
  std::string name;      ///< PEP 503 normalised
  std::string url;       ///< the page URL requested
  Status status = Status::failed;
  Page page;             ///< when ok
  std::string error;     ///< when not ok: why
  std::string source = "index";  ///< who answered: "index" (the page / packages.json) or "releases-api"
  std::string final_url = {};///< the URL that answered (after redirects; http(s) pages): relative hrefs resolve against it
  std::vector<VariantsDoc> variants = {};  ///< the variants files of the versions with variant wheels
  /// The variants file of `version`, or nullptr when the page links none.
  [[nodiscard]] const VariantsDoc* variants_for(const model::Version& version) const;
};

struct IndexSnapshot {
  std::string base_url;                        ///< ends with '/'
  std::optional<PackagesJson> packages_json;   ///< when the index has one and it parsed
  std::string packages_json_note;              ///< why packages.json is absent or was not used
  std::map<std::string, ProjectPage> projects; ///< by normalised name
  std::string failover_note;                   ///< when the Releases API was asked: why, and what it answered
  /// Pages that were read but look wrong: an HTML page without a single anchor (a proxy's
  /// "blocked" page answering 200 in the index's place), named by URL (docs/network-faults.md H02);
  /// links skipped by contain_links; each page's own Page::warnings (PEP 629).
  std::vector<std::string> warnings;
};

/// Ensures the path ends with '/' (a blank base is an error for the caller to report). An http(s)
/// base's query stays after it ("https://host/simple?token=X" -> "https://host/simple/?token=X":
/// some private indexes authenticate with a token in the query) and its fragment goes.
std::string normalize_base(std::string base);

/// The URL of `relative` ("packages.json", "<name>/") under the normalised `base`: the base's path,
/// `relative`, then the base's query ("https://host/simple/?token=X", "torch/" ->
/// "https://host/simple/torch/?token=X"), so that every page of such an index carries the token.
/// Links inside a page resolve by RFC 3986 (as pip does): a relative href does not inherit the
/// page's query, so a server that wants the token on its files writes it into their hrefs.
std::string index_url_for(std::string_view base, std::string_view relative);

/// Keeps only the links a page that answered from `page_url` may hand out (docs/network-faults.md
/// H05): an https page links https only; an http page http or https; a local page (file:// or a
/// path) those, file:// and paths. Every other link (file:// from a remote page, http from an
/// https page, another scheme) moves to page.skipped with the reason. Returns how many moved.
std::size_t contain_links(Page& page, std::string_view page_url);

/// How read_index reads what it fetched.
struct ReadIndexOptions {
  /// packages.json whole, every project's record checked (parse_packages_json(body, source)),
  /// instead of the requested projects' records only (the default; decision 0020).
  bool whole_packages_json = false;
  /// Each answer parsed as soon as it is in (from the transport's answer hook, while the rest are
  /// on the wire), instead of all of them after the batch.
  bool parse_as_answers_arrive = true;
};

/// Reads packages.json and the page of each name (PEP 503 normalised, deduplicated) from `base`.
/// A page whose Content-Type is neither HTML nor JSON (nor absent, nor text/plain: file mirrors)
/// is not parsed: it fails with "not an index page (Content-Type ...)". A page's relative hrefs
/// resolve against the URL that answered it (an http(s) page's Response::url: after redirects), and its links are
/// contained (contain_links; a warning in `warnings` names the page and what was skipped).
/// For each version with variant wheels (PEP 825 labels) on a page, the page's
/// {name}-{version}-variants.json link is read too (a second batch, same transport), its digest
/// checked when the page gives one, and parsed (ProjectPage::variants; a problem is kept there
/// and warned about, never fatal: the version's null and non-variant wheels stay usable).
/// packages.json keeps the requested projects' records only, and a record of another project is
/// not checked inside (parse_packages_json(body, source, only); decision 0020), unless
/// `options.whole_packages_json`. Each answer is parsed in the transport's answer hook, on the
/// thread that called read_index, as it comes (`options.parse_as_answers_arrive`).
/// Never fails as a whole: each page carries its own status. Thread safety: none needed
/// (one call, one transport).
IndexSnapshot read_index(net::Transport& transport, const std::string& base,
                         const std::vector<std::string>& names, const ReadIndexOptions& options = {});

}  // namespace wheelfit::index
