// The mirror's PEP 503 pages (wheelfit/mirror/mirror.hpp): the root page and one page per
// project, with PEP 658 / 714 metadata attributes.
#include <algorithm>
#include <set>
#include <string>

#include <boost/json.hpp>

#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/model/url.hpp"

namespace wheelfit::mirror {

std::string percent_encode(std::string_view text) { return model::url::percent_encode(text, model::url::Component::segment); }

std::string file_href(const std::string& filename, const std::optional<std::string>& base_url, int up) {
  const std::string path = "files/" + percent_encode(filename);
  if (base_url) {
    std::string base = *base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/" + path;
  }
  std::string rel;
  for (int i = 0; i < up; ++i) rel += "../";
  return rel + path;
}

std::string file_href(const std::string& filename, const std::optional<std::string>& base_url, bool from_project_page) {
  return file_href(filename, base_url, from_project_page ? 1 : 0);
}

namespace {

std::string page_head(const std::string& title) {
  return "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.0\">\n<title>" +
         html_escape(title) + "</title>\n</head>\n<body>\n<h1>" + html_escape(title) + "</h1>\n";
}

constexpr std::string_view kPageTail = "</body>\n</html>\n";

}  // namespace

namespace {

/// The rows of a project's page: one per (anchor text, file), sorted by text, so that the HTML
/// and the JSON list the same names in the same order (the farm lists a torch-free wheel under
/// several anchor names).
struct PageRow {
  std::string text;
  std::size_t file;
};
std::vector<PageRow> page_rows(const std::vector<const File*>& files) {
  std::vector<PageRow> rows;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (const auto& a : files[i]->anchors) rows.push_back({a, i});
    if (files[i]->anchors.empty()) rows.push_back({files[i]->filename, i});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const PageRow& a, const PageRow& b) { return a.text < b.text; });
  return rows;
}

/// A wheel name's version field ("flash_attn-2.8.3+cu128torch2.8-cp312-..." -> "2.8.3+cu128torch2.8").
std::string version_of(std::string_view filename) {
  const auto first = filename.find('-');
  if (first == std::string_view::npos) return {};
  const auto second = filename.find('-', first + 1);
  return std::string(filename.substr(first + 1, second == std::string_view::npos ? std::string_view::npos : second - first - 1));
}

constexpr std::string_view kJsonApiVersion = "1.1";

}  // namespace

std::string project_json(const std::string& project, const std::vector<const File*>& files,
                         const std::vector<std::string>& metadata_sha256, const std::vector<std::string>& upload_time,
                         const std::optional<std::string>& base_url, int up) {
  namespace json = boost::json;
  json::array list;
  std::set<std::string> versions;
  for (const auto& row : page_rows(files)) {
    const File& f = *files[row.file];
    // The project page's URL is <root>/<project>/ (no index.json in the path): hrefs are the HTML's.
    json::object o{{"filename", row.text}, {"url", file_href(f.filename, base_url, up)}, {"hashes", json::object{{"sha256", f.sha256}}}};
    if (f.requires_python) o["requires-python"] = *f.requires_python;
    // PEP 714's name only: pip before 23.1 (Debian 12's 23.0.1) crashes on the older
    // "dist-info-metadata" key holding a hash table, the very bug PEP 714 renamed it for.
    if (row.file < metadata_sha256.size() && !metadata_sha256[row.file].empty()) {
      o["core-metadata"] = json::object{{"sha256", metadata_sha256[row.file]}};
    } else {
      o["core-metadata"] = false;
    }
    o["size"] = f.size;
    if (row.file < upload_time.size() && !upload_time[row.file].empty()) o["upload-time"] = upload_time[row.file];
    if (f.yanked) o["yanked"] = f.yank_reason.empty() ? json::value(true) : json::value(f.yank_reason);  // PEP 691
    list.emplace_back(std::move(o));
    if (auto v = version_of(row.text); !v.empty()) versions.insert(v);
  }
  json::array vs;
  for (const auto& v : versions) vs.emplace_back(v);
  return json::serialize(json::object{{"meta", json::object{{"api-version", kJsonApiVersion}}},
                                      {"name", project},
                                      {"files", std::move(list)},
                                      {"versions", std::move(vs)}}) +
         "\n";
}

std::string root_json(const std::vector<std::string>& projects) {
  namespace json = boost::json;
  json::array list;
  for (const auto& p : projects) list.emplace_back(json::object{{"name", p}});
  return json::serialize(json::object{{"meta", json::object{{"api-version", kJsonApiVersion}}}, {"projects", std::move(list)}}) + "\n";
}

std::string view_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.front() == '.') return "starts with '.'";
  if (name.size() > 128) return "is longer than 128 characters";
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                    c == '_' || c == '+';
    if (!ok) return "holds a character other than letters, digits, '.', '-', '_' and '+'";
  }
  return {};
}

std::string project_page(const std::string& project, const std::vector<const File*>& files,
                         const std::vector<std::string>& metadata_sha256, const std::optional<std::string>& base_url,
                         int up) {
  // One anchor per (anchor text, file), sorted by text: the same bytes for the same files.
  std::string out = page_head("Links for " + project);
  for (const auto& row : page_rows(files)) {
    const File& f = *files[row.file];
    out += "<a href=\"" + html_escape(file_href(f.filename, base_url, up)) + "#sha256=" + f.sha256 + "\"";
    if (f.requires_python) out += " data-requires-python=\"" + html_escape(*f.requires_python) + "\"";
    if (row.file < metadata_sha256.size() && !metadata_sha256[row.file].empty()) {
      const std::string value = "sha256=" + metadata_sha256[row.file];
      out += " data-dist-info-metadata=\"" + value + "\" data-core-metadata=\"" + value + "\"";
    }
    if (f.yanked) out += " data-yanked=\"" + html_escape(f.yank_reason) + "\"";  // PEP 592
    out += ">" + html_escape(row.text) + "</a><br>\n";
  }
  out += kPageTail;
  return out;
}

std::string root_page(const std::vector<std::string>& projects) {
  std::string out = page_head("Simple index");
  for (const auto& p : projects) out += "<a href=\"" + html_escape(percent_encode(p)) + "/\">" + html_escape(p) + "</a><br>\n";
  out += kPageTail;
  return out;
}

}  // namespace wheelfit::mirror
