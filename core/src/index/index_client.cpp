#include "wheelfit/index/index_client.hpp"

#include <algorithm>
#include <set>

#include "page_text.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::index {

namespace {
// Where an http(s) base's query starts ('?' or '#'), else its end: a local path may hold either
// character in a folder name.
std::size_t query_start(std::string_view base) {
  return model::url::is_http(base) ? std::min(base.find_first_of("?#"), base.size()) : base.size();
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

bool looks_like_json(const net::Response& r) {
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

constexpr std::string_view kVariantsSuffix = model::kVariantsFileSuffix;

// The variants files the pages link for the versions that have variant wheels on them: listed
// on each page (ProjectPage::variants), read in one batch, checked and parsed.
void read_variants_files(net::Transport& transport, IndexSnapshot& snap) {
  std::vector<net::Request> requests;
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
      auto named = model::variants_file_name(l.filename);
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

namespace {

/// What one answer of the batch becomes: packages.json's result, or a project's page with the
/// warnings it raises (kept apart, and added to the snapshot in the pages' order).
struct Outcome {
  bool done = false;
  std::optional<PackagesJson> packages_json;
  std::string note;  ///< packages.json: why absent or not used
  ProjectPage page;
  std::vector<std::string> warnings;
};

void take_packages_json(Outcome& out, const Expected<net::Response>& r, const std::string& url,
                        const std::vector<std::string>& names, const ReadIndexOptions& options) {
  // packages.json: optional. Absent is normal; malformed is reported, never trusted.
  if (r) {
    // Only the requested projects' records, unless asked for all (decision 0020).
    auto parsed = options.whole_packages_json ? parse_packages_json(r->body, url) : parse_packages_json(r->body, url, names);
    if (parsed) out.packages_json = std::move(*parsed);
    else out.note = "packages.json ignored: " + parsed.error().message;
  } else if (r.error().is(Errc::not_found)) {
    out.note = "the index has no packages.json (hashes only from #sha256= fragments)";
  } else {
    out.note = "packages.json could not be read: " + r.error().message;
  }
}

void take_page(Outcome& out, const Expected<net::Response>& r, const std::string& name, const std::string& url) {
  ProjectPage& page = out.page;
  page.name = name;
  page.url = url;
  if (!r) {
    page.status = r.error().is(Errc::not_found) ? ProjectPage::Status::not_published : ProjectPage::Status::failed;
    page.error = r.error().message;
    return;
  }
  if (const std::string type = media_type(r->content_type); !index_media_type(type)) {
    page.status = ProjectPage::Status::failed;
    page.error = page.url + ": not an index page (Content-Type " + type + ")";
    return;
  }
  // A remote page may have been redirected; a local one is read where it was asked for.
  page.final_url = model::url::is_http(page.url) && !r->url.empty() ? r->url : page.url;
  auto parsed = looks_like_json(*r) ? parse_simple_json(r->body, page.final_url) : parse_simple_html(r->body, page.final_url);
  if (!parsed) {
    page.status = ProjectPage::Status::failed;
    page.error = parsed.error().message;
    return;
  }
  page.status = ProjectPage::Status::ok;
  page.page = std::move(*parsed);
  out.warnings = page.page.warnings;
  const std::size_t first_skip = page.page.skipped.size();
  if (const std::size_t moved = contain_links(page.page, page.final_url)) {
    out.warnings.push_back(page_name(page) + ": " + std::to_string(moved) + " link" + (moved == 1 ? "" : "s") +
                           " skipped: " + page.page.skipped[first_skip] +
                           (moved > 1 ? " (and " + std::to_string(moved - 1) + " more)" : ""));
  }
  if (page.page.links.empty() && page.page.skipped.empty() && !looks_like_json(*r)) {
    out.warnings.push_back(page.url + ": the page has no links at all; if the index should list " + name +
                           ", something else (a proxy's block page?) answered in its place");
  }
}

}  // namespace

IndexSnapshot read_index(net::Transport& transport, const std::string& base, const std::vector<std::string>& names,
                         const ReadIndexOptions& options) {
  IndexSnapshot snap;
  snap.base_url = normalize_base(base);

  const std::set<std::string> unique_set(names.begin(), names.end());
  const std::vector<std::string> unique(unique_set.begin(), unique_set.end());
  std::vector<net::Request> requests;
  requests.push_back({.url = index_url_for(snap.base_url, "packages.json"), .max_body = 256u << 20, .headers = {}, .compressed = true});
  for (const auto& n : unique) {
    requests.push_back({.url = index_url_for(snap.base_url, n + "/"), .max_body = 64u << 20, .headers = {}, .compressed = true});
  }

  // Each answer is parsed the moment it is in, while the others are still on the wire (decision
  // 0020); one the hook did not finish (it threw) is parsed after the batch.
  std::vector<Outcome> outcomes(requests.size());
  auto take = [&](std::size_t i, const Expected<net::Response>& r) {
    Outcome& out = outcomes[i];
    if (out.done) return;
    if (i == 0) take_packages_json(out, r, requests[0].url, unique, options);
    else take_page(out, r, unique[i - 1], requests[i].url);
    out.done = true;
  };
  std::vector<Expected<net::Response>> responses;
  if (options.parse_as_answers_arrive) {
    responses = transport.get_many(requests, [&](std::size_t i, const Expected<net::Response>& r) {
      if (i < outcomes.size()) take(i, r);
    });
  } else {
    responses = transport.get_many(requests);
  }
  for (std::size_t i = 0; i < outcomes.size() && i < responses.size(); ++i) {
    if (!outcomes[i].done) outcomes[i] = {};  // a hook that threw halfway leaves nothing behind
    take(i, responses[i]);
  }
  responses.clear();  // the bodies are parsed: free them before the variants batch

  snap.packages_json = std::move(outcomes[0].packages_json);
  snap.packages_json_note = std::move(outcomes[0].note);
  for (std::size_t i = 1; i < outcomes.size(); ++i) {
    snap.warnings.insert(snap.warnings.end(), outcomes[i].warnings.begin(), outcomes[i].warnings.end());
    snap.projects.emplace(unique[i - 1], std::move(outcomes[i].page));
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
