#pragma once
// What the Releases API tests share (test_releases*.cpp): an in-memory transport, the API's URLs,
// and its releases and assets as GitHub writes them (docs/network-faults.md G01, G04).

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/memory_transport.hpp"
#include "wheelfit/index/releases.hpp"

namespace wheelfit::test::github_api {

namespace json = boost::json;
using net::Headers;
using net::Request;
using net::Response;
using index::ReleasesSource;

// The in-memory transport: answers by exact URL (anything else is a 404), records every request.
using FakeTransport = test::MemoryTransport;

/// Serves an API page (JSON) for `url`.
inline void api_page(FakeTransport& t, const std::string& url, std::string body, Headers headers = {}) {
  t.origin().serve(url, std::move(body), "application/json; charset=utf-8", std::move(headers));
}
/// Serves an HTML page for `url`.
inline void html_page(FakeTransport& t, const std::string& url, std::string body) {
  t.origin().serve(url, std::move(body), "text/html");
}

inline std::string header(const Request& r, std::string_view name) {
  auto v = net::find_header(r.headers, name);
  return v ? std::string(*v) : std::string("<absent>");
}

inline const std::string kApi = "https://api.github.com";
inline const std::string kRepoReleases = "Comfy-Forge/cuda-wheels";
inline const std::string kFirst = kApi + "/repos/" + kRepoReleases + "/releases?per_page=100";
inline std::string page_url(int n) {
  return kApi + "/repositories/912345678/releases?per_page=100&page=" + std::to_string(n);
}
inline const std::string kDownload = "https://github.com/Comfy-Forge/cuda-wheels/releases/download/";
inline const std::string kHexA = "2f70d7bf803353f47d13d535934b50f6df7ec7fe38144015eb80a4d36e1b3ded";
inline const std::string kHexB = "6a3605b804da5ca56d0826a2e77b413f7e7050aab859a946ea435ab651687b29";

/// One asset as the API returns it; `digest` absent when nullopt.
inline json::object asset_with(const std::string& tag, const std::string& name, std::optional<json::value> digest) {
  std::string encoded;
  for (char c : name) encoded += c == '+' ? std::string("%2B") : std::string(1, c);
  static int id = 280000000;
  json::object a{
      {"url", "https://api.github.com/repos/Comfy-Forge/cuda-wheels/releases/assets/" + std::to_string(++id)},
      {"id", id},
      {"name", name},
      {"label", ""},
      {"content_type", name.ends_with(".whl") ? "application/zip" : "application/gzip"},
      {"state", "uploaded"},
      {"size", 123456},
      {"download_count", 7},
      {"created_at", "2026-08-22T10:00:00Z"},
      {"updated_at", "2026-08-22T10:00:00Z"},
      {"browser_download_url", kDownload + tag + "/" + encoded},
  };
  if (digest) a["digest"] = std::move(*digest);
  return a;
}
inline json::object asset(const std::string& tag, const std::string& name) { return asset_with(tag, name, std::nullopt); }
inline json::object asset(const std::string& tag, const std::string& name, const std::string& digest) {
  return asset_with(tag, name, json::value(digest));
}
inline json::object asset(const std::string& tag, const std::string& name, std::nullptr_t) {
  return asset_with(tag, name, json::value(nullptr));
}

inline json::object release(const std::string& tag, json::array assets) {
  static int id = 230000000;
  return json::object{
      {"url", "https://api.github.com/repos/Comfy-Forge/cuda-wheels/releases/" + std::to_string(++id)},
      {"html_url", "https://github.com/Comfy-Forge/cuda-wheels/releases/tag/" + tag},
      {"id", id},
      {"tag_name", tag},
      {"target_commitish", "main"},
      {"name", tag},
      {"draft", false},
      {"prerelease", false},
      {"created_at", "2026-08-22T09:00:00Z"},
      {"published_at", "2026-08-22T09:30:00Z"},
      {"assets", std::move(assets)},
      {"tarball_url", "https://api.github.com/repos/Comfy-Forge/cuda-wheels/tarball/" + tag},
      {"body", "Built by CI"},
  };
}

inline std::string wheel(const std::string& project, const std::string& version) {
  return project + "-" + version + "+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
}

/// Releases i in [from, to): flash_attn 2.<i>.0 wheels and a source tarball per release.
inline std::string releases_json(int from, int to) {
  json::array rs;
  for (int i = from; i < to; ++i) {
    const std::string tag = "flash_attn-2." + std::to_string(i) + ".0";
    rs.push_back(release(tag, json::array{asset(tag, wheel("flash_attn", "2." + std::to_string(i) + ".0"),
                                                "sha256:" + kHexA),
                                          asset(tag, "flash_attn-2." + std::to_string(i) + ".0.tar.gz")}));
  }
  return json::serialize(rs);
}

inline Headers link(std::string value) { return {{"link", std::move(value)}}; }

/// The three pages of G01, linked the way GitHub does it.
inline void serve_three_pages(FakeTransport& t) {
  api_page(t, kFirst, releases_json(0, 100),
         link("<" + page_url(2) + ">; rel=\"next\", <" + page_url(3) + ">; rel=\"last\""));
  api_page(t, page_url(2), releases_json(100, 200),
         link("<" + page_url(1) + ">; rel=\"prev\", <" + page_url(3) + ">; rel=\"next\", <" + page_url(3) +
              ">; rel=\"last\", <" + page_url(1) + ">; rel=\"first\""));
  api_page(t, page_url(3), releases_json(200, 250),
         link("<" + page_url(2) + ">; rel=\"prev\", <" + page_url(1) + ">; rel=\"first\""));
}

inline ReleasesSource source(std::optional<std::string> token = std::nullopt) {
  ReleasesSource s;
  s.repo = kRepoReleases;
  s.token = std::move(token);
  return s;
}

}  // namespace wheelfit::test::github_api
