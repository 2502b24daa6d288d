#include "wheelfit/index/index_client.hpp"

#include <algorithm>
#include <set>

#include "links_detail.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::index {

namespace {
// Where an http(s) base's query starts ('?' or '#'), else its end: a local path may hold either
// character in a folder name.
std::size_t query_start(std::string_view base) {
  return util::is_http_url(base) ? std::min(base.find_first_of("?#"), base.size()) : base.size();
}
}  // namespace

std::string normalize_base(std::string base) {
  const std::size_t q = query_start(base);
  std::string query = base.substr(q);
  base.erase(q);
  if (const auto hash = query.find('#'); hash != std::string::npos) query.erase(hash);  // never sent
  if (query == "?") query.clear();
  if (!base.empty() && base.back() != '/') base += '/';
  return base + query;
}

std::string index_url_for(std::string_view base, std::string_view relative) {
  const std::size_t q = query_start(base);
  std::string out(base.substr(0, q));
  out.append(relative);
  out.append(base.substr(q));
  return out;
}

namespace {
// The media type, lower-cased, without parameters ("text/html; charset=utf-8" -> "text/html").
std::string media_type(std::string_view content_type) {
  std::string out;
  for (char c : content_type.substr(0, content_type.find(';'))) {
    if (c != ' ' && c != '\t') out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  return out;
}

// Index pages come as HTML or JSON; file mirrors and some servers say nothing or text/plain.
bool index_media_type(const std::string& type) {
  return type.empty() || type == "text/html" || type == "application/xhtml+xml" || type == "text/plain" ||
         type.find("json") != std::string::npos;
}

bool looks_like_json(const transport::Response& r) {
  if (r.content_type.find("json") != std::string::npos) return true;
  auto first = r.body.find_first_not_of(" \t\r\n");
  return first != std::string::npos && r.body[first] == '{';
}

enum class Where { https, http, local, other };

Where where_of(std::string_view url) {
  if (util::starts_with_ci(url, "https://")) return Where::https;
  if (util::starts_with_ci(url, "http://")) return Where::http;
  if (util::starts_with_ci(url, "file:") || !detail::split_uri(url).has_scheme) return Where::local;
  return Where::other;
}

/// Why a page at `page` may not link `link_url` (of kind `link`); "" when it may. A page of
/// another scheme (a transport an embedder registered, mem://) is held to https's rules: its
/// links may be https only.
std::string refusal(Where page, Where link, std::string_view link_url) {
  if (link == Where::other) return "scheme '" + std::string(link_url.substr(0, std::min<std::size_t>(link_url.find(':'), 20))) + "' is not followed";
  if (link == Where::local && page != Where::local) return "a local file link on a remote page";
  if (link == Where::http && page == Where::https) return "an http:// link on an https page (a downgrade)";
  if (link == Where::http && page == Where::other) return "an http:// link on a page that is not http (a downgrade)";
  return "";
}

/// "URL" or "URL (answered by FINAL)" when a redirect moved it.
std::string page_name(const ProjectPage& page) {
  return page.final_url.empty() || page.final_url == page.url ? page.url : page.url + " (answered by " + page.final_url + ")";
}
}  // namespace

std::size_t contain_links(Page& page, std::string_view page_url) {
  const Where here = where_of(page_url);
  const std::size_t before = page.links.size();
  std::erase_if(page.links, [&](const Link& link) {
    const std::string why = refusal(here, where_of(link.url), link.url);
    if (why.empty()) return false;
    page.skipped.push_back("href " + detail::quote_for_message(link.url) + ": " + why);
    return true;
  });
  return before - page.links.size();
}

namespace {

constexpr std::string_view kVariantsSuffix = "-variants.json";

// "{name}-{version}-variants.json" -> (normalised name, version); nullopt for another shape.
std::optional<std::pair<std::string, model::Version>> variants_file_name(std::string_view filename) {
  if (!filename.ends_with(kVariantsSuffix)) return std::nullopt;
  const std::string_view stem = filename.substr(0, filename.size() - kVariantsSuffix.size());
  const auto dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  auto version = model::Version::parse(stem.substr(dash + 1));
  if (!version) return std::nullopt;
  return std::pair{model::normalize_name(stem.substr(0, dash)), std::move(*version)};
}

// The variants files the pages link for the versions that have variant wheels on them: listed
// on each page (ProjectPage::variants), read in one batch, checked and parsed.
void read_variants_files(transport::Transport& transport, IndexSnapshot& snap) {
  std::vector<transport::Request> requests;
  std::vector<VariantsDoc*> docs;
  for (auto& [name, page] : snap.projects) {
    if (page.status != ProjectPage::Status::ok) continue;
    auto& links = page.page.links;
    // Most pages (a label-based farm's) link no variants file: not a wheel name is parsed then.
    if (std::none_of(links.begin(), links.end(), [](const Link& l) { return l.filename.ends_with(kVariantsSuffix); })) continue;
    std::vector<model::Version> labelled;  // versions with variant wheels
    for (const auto& l : links) {
      auto w = model::WheelName::parse(l.filename.empty() ? l.text : l.filename);
      if (w && w->name == name && w->variant_label &&
          std::find(labelled.begin(), labelled.end(), w->version) == labelled.end()) {
        labelled.push_back(w->version);
      }
    }
    for (const auto& l : links) {
      auto named = variants_file_name(l.filename);
      if (!named || named->first != name) continue;
      if (std::find(labelled.begin(), labelled.end(), named->second) == labelled.end()) continue;
      if (page.variants_for(named->second)) continue;  // one file per version: the first link
      page.variants.push_back({l.url, l.filename, named->second, l.sha256, {}, nullptr, {}});
    }
    for (auto& d : page.variants) {
      requests.push_back({.url = d.url, .max_body = 16u << 20, .headers = {}, .compressed = true});
      docs.push_back(&d);
    }
  }
  if (requests.empty()) return;
  auto responses = transport.get_many(requests);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    VariantsDoc& d = *docs[i];
    auto& r = responses[i];
    if (!r) {
      d.problem = d.filename + " could not be read: " + r.error().message;
    } else if (d.sha256 && [&] {
                 deliver::Sha256 h;
                 h.update(r->body);
                 return h.hex() != *d.sha256;
               }()) {
      d.problem = d.url + " does not match its page's sha256 " + *d.sha256;
    } else if (auto parsed = model::parse_variants_json(r->body, d.url)) {
      d.body = std::move(r->body);
      d.file = std::make_shared<const model::VariantsFile>(std::move(*parsed));
    } else {
      d.problem = parsed.error().message;
    }
    if (!d.problem.empty()) {
      snap.warnings.push_back(d.problem + "; the variant wheels of " + d.filename.substr(0, d.filename.size() - kVariantsSuffix.size()) +
                              " are not compatible (its null and non-variant wheels still are)");
    }
  }
}

}  // namespace

IndexSnapshot read_index(transport::Transport& transport, const std::string& base, const std::vector<std::string>& names) {
  IndexSnapshot snap;
  snap.base_url = normalize_base(base);

  std::set<std::string> unique(names.begin(), names.end());
  std::vector<transport::Request> requests;
  requests.push_back({.url = index_url_for(snap.base_url, "packages.json"), .max_body = 256u << 20, .headers = {}, .compressed = true});
  for (const auto& n : unique) {
    requests.push_back({.url = index_url_for(snap.base_url, n + "/"), .max_body = 64u << 20, .headers = {}, .compressed = true});
  }

  auto responses = transport.get_many(requests);

  // packages.json: optional. Absent is normal; malformed is reported, never trusted.
  if (responses[0]) {
    auto parsed = parse_packages_json(responses[0]->body, requests[0].url);
    if (parsed) snap.packages_json = std::move(*parsed);
    else snap.packages_json_note = "packages.json ignored: " + parsed.error().message;
  } else if (responses[0].error().is(Errc::not_found)) {
    snap.packages_json_note = "the index has no packages.json (hashes only from #sha256= fragments)";
  } else {
    snap.packages_json_note = "packages.json could not be read: " + responses[0].error().message;
  }

  std::size_t i = 1;
  for (const auto& n : unique) {
    ProjectPage page;
    page.name = n;
    page.url = requests[i].url;
    auto& r = responses[i];
    ++i;
    if (!r) {
      page.status = r.error().is(Errc::not_found) ? ProjectPage::Status::not_published : ProjectPage::Status::failed;
      page.error = r.error().message;
    } else if (const std::string type = media_type(r->content_type); !index_media_type(type)) {
      page.status = ProjectPage::Status::failed;
      page.error = page.url + ": not an index page (Content-Type " + type + ")";
    } else {
      // A remote page may have been redirected; a local one is read where it was asked for.
      page.final_url = util::is_http_url(page.url) && !r->url.empty() ? r->url : page.url;
      auto parsed = looks_like_json(*r) ? parse_simple_json(r->body, page.final_url) : parse_simple_html(r->body, page.final_url);
      if (parsed) {
        page.status = ProjectPage::Status::ok;
        page.page = std::move(*parsed);
        snap.warnings.insert(snap.warnings.end(), page.page.warnings.begin(), page.page.warnings.end());
        const std::size_t first_skip = page.page.skipped.size();
        if (const std::size_t moved = contain_links(page.page, page.final_url)) {
          snap.warnings.push_back(page_name(page) + ": " + std::to_string(moved) + " link" + (moved == 1 ? "" : "s") +
                                  " skipped: " + page.page.skipped[first_skip] +
                                  (moved > 1 ? " (and " + std::to_string(moved - 1) + " more)" : ""));
        }
        if (page.page.links.empty() && page.page.skipped.empty() && !looks_like_json(*r)) {
          snap.warnings.push_back(page.url + ": the page has no links at all; if the index should list " + n +
                                  ", something else (a proxy's block page?) answered in its place");
        }
      } else {
        page.status = ProjectPage::Status::failed;
        page.error = parsed.error().message;
      }
    }
    snap.projects.emplace(n, std::move(page));
  }
  read_variants_files(transport, snap);
  return snap;
}

const VariantsDoc* ProjectPage::variants_for(const model::Version& version) const {
  for (const auto& v : variants)
    if (v.version == version) return &v;
  return nullptr;
}

}  // namespace wheelfit::index
