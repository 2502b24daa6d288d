#include "wheelfit/index/index_client.hpp"

#include <algorithm>
#include <set>

namespace wheelfit::index {

std::string normalize_base(std::string base) {
  if (!base.empty() && base.back() != '/') base += '/';
  return base;
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
}  // namespace

IndexSnapshot read_index(transport::Transport& transport, const std::string& base, const std::vector<std::string>& names) {
  IndexSnapshot snap;
  snap.base_url = normalize_base(base);

  std::set<std::string> unique(names.begin(), names.end());
  std::vector<transport::Request> requests;
  requests.push_back({.url = snap.base_url + "packages.json", .max_body = 256u << 20, .headers = {}, .compressed = true});
  for (const auto& n : unique) requests.push_back({.url = snap.base_url + n + "/", .max_body = 64u << 20, .headers = {}, .compressed = true});

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
      auto parsed = looks_like_json(*r) ? parse_simple_json(r->body, page.url) : parse_simple_html(r->body, page.url);
      if (parsed) {
        page.status = ProjectPage::Status::ok;
        page.page = std::move(*parsed);
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
  return snap;
}

}  // namespace wheelfit::index
