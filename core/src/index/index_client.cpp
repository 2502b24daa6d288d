#include "wheelfit/index/index_client.hpp"

#include <algorithm>
#include <set>

namespace wheelfit::index {

std::string normalize_base(std::string base) {
  if (!base.empty() && base.back() != '/') base += '/';
  return base;
}

namespace {
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
  requests.push_back({.url = snap.base_url + "packages.json", .max_body = 256u << 20, .headers = {}});
  for (const auto& n : unique) requests.push_back({.url = snap.base_url + n + "/", .max_body = 64u << 20, .headers = {}});

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
    } else {
      auto parsed = looks_like_json(*r) ? parse_simple_json(r->body, page.url) : parse_simple_html(r->body, page.url);
      if (parsed) {
        page.status = ProjectPage::Status::ok;
        page.page = std::move(*parsed);
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
