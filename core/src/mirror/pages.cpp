// The mirror's PEP 503 pages (wheelfit/mirror/mirror.hpp): the root page and one page per
// project, with PEP 658 / 714 metadata attributes.
#include <algorithm>
#include <string>

#include "wheelfit/mirror/mirror.hpp"

namespace wheelfit::mirror {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string file_href(const std::string& filename, const std::optional<std::string>& base_url, bool from_project_page) {
  const std::string path = "files/" + percent_encode(filename);
  if (base_url) {
    std::string base = *base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/" + path;
  }
  return from_project_page ? "../" + path : path;
}

namespace {

std::string page_head(const std::string& title) {
  return "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.0\">\n<title>" +
         html_escape(title) + "</title>\n</head>\n<body>\n<h1>" + html_escape(title) + "</h1>\n";
}

constexpr std::string_view kPageTail = "</body>\n</html>\n";

}  // namespace

std::string project_page(const std::string& project, const std::vector<const File*>& files,
                         const std::vector<std::string>& metadata_sha256, const std::optional<std::string>& base_url) {
  // One anchor per (anchor text, file), sorted by text: the same bytes for the same files.
  struct Row {
    std::string text;
    std::size_t file;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (const auto& a : files[i]->anchors) rows.push_back({a, i});
    if (files[i]->anchors.empty()) rows.push_back({files[i]->filename, i});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.text < b.text; });
  std::string out = page_head("Links for " + project);
  for (const auto& row : rows) {
    const File& f = *files[row.file];
    out += "<a href=\"" + html_escape(file_href(f.filename, base_url, true)) + "#sha256=" + f.sha256 + "\"";
    if (f.requires_python) out += " data-requires-python=\"" + html_escape(*f.requires_python) + "\"";
    if (row.file < metadata_sha256.size() && !metadata_sha256[row.file].empty()) {
      const std::string value = "sha256=" + metadata_sha256[row.file];
      out += " data-dist-info-metadata=\"" + value + "\" data-core-metadata=\"" + value + "\"";
    }
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
