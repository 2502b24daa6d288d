// Tests of wheelfit::index page parsing on the real cuda-wheels snapshot (docs/network-faults.md
// H01, index corpus): every expectation is derived from the snapshot's files independently.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "index/links_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/links.hpp"

using namespace wheelfit;
using namespace wheelfit::index;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::parse_ok;

namespace {
namespace fs = std::filesystem;
constexpr std::string_view kFarm = "https://comfy-forge.github.io/cuda-wheels/";
constexpr std::string_view kReleases = "https://github.com/Comfy-Forge/cuda-wheels/releases/download/";

std::size_t count_occurrences(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
  return s;
}

// The anchors of a farm page as written: (href, text), found with plain string searches.
std::vector<std::pair<std::string, std::string>> raw_anchors(const std::string& html) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t p = html.find("<a href=\""); p != std::string::npos; p = html.find("<a href=\"", p + 1)) {
    const std::size_t h = p + 9;
    const std::size_t h_end = html.find('"', h);
    const std::size_t t = html.find('>', h_end) + 1;
    const std::size_t t_end = html.find("</a>", t);
    out.emplace_back(html.substr(h, h_end - h), html.substr(t, t_end - t));
  }
  return out;
}

std::set<std::string> packages_json_filenames(const std::string& json_text) {
  std::set<std::string> out;
  const std::string key = "\"filename\": \"";
  for (std::size_t p = json_text.find(key); p != std::string::npos; p = json_text.find(key, p + 1)) {
    const std::size_t s = p + key.size();
    out.insert(json_text.substr(s, json_text.find('"', s) - s));
  }
  return out;
}
}  // namespace

TEST_CASE("every package page of the cuda-wheels snapshot parses to its anchors", "[index][html][fixtures]") {
  const fs::path dir = wheelfit::test::farm_index_dir();
  const std::string pj_text = wheelfit::test::read_file(dir / "packages.json");
  auto pj = parse_packages_json(pj_text, "packages.json");
  REQUIRE(pj);
  const std::set<std::string> json_files = packages_json_filenames(pj_text);
  REQUIRE(json_files.size() == 110);

  std::set<std::string> page_dirs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && fs::exists(entry.path() / "index.html") && name != "matrix" && name != "archs") {
      page_dirs.insert(name);
    }
  }
  std::set<std::string> json_names;
  for (const auto& [name, e] : pj->packages) json_names.insert(name);
  CHECK(page_dirs == json_names);  // one page per package

  std::size_t anchors = 0;
  std::set<std::string> page_files;
  for (const std::string& name : json_names) {
    CAPTURE(name);
    const std::string html = wheelfit::test::read_file(dir / name / "index.html");
    const auto raw = raw_anchors(html);
    REQUIRE(raw.size() == count_occurrences(html, "<a "));
    const Page page = parse_ok(html, std::string(kFarm) + name + "/");
    REQUIRE(page.links.size() == raw.size());
    CHECK(page.skipped.empty());
    anchors += page.links.size();
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const Link& link = page.links[i];
      CAPTURE(link.url);
      CHECK_THAT(link.url, StartsWith(std::string(kReleases)));
      CHECK(link.url == raw[i].first);  // absolute already: kept byte for byte
      CHECK(link.text == raw[i].second);
      CHECK(link.filename == replace_all(raw[i].first.substr(raw[i].first.rfind('/') + 1), "%2B", "+"));
      CHECK(link.filename.find('%') == std::string::npos);
      CHECK_FALSE(link.sha256);  // the farm's anchors carry no #sha256=
      CHECK_FALSE(link.yanked);
      CHECK(pj->sha256_for(link.url, link.filename).has_value());
      page_files.insert(link.filename);
    }
  }
  CHECK(page_files == json_files);
  // 110 files, 122 anchors: cumm (torch-free) lists its 3 files under each of 5 torch minors.
  CHECK(anchors == 122);
}

TEST_CASE("the snapshot's cumm page lists aliases whose text differs from the href", "[index][html][fixtures]") {
  const std::string html = wheelfit::test::read_file(wheelfit::test::farm_index_dir() / "cumm" / "index.html");
  const Page page = parse_ok(html, std::string(kFarm) + "cumm/");
  REQUIRE(page.links.size() == 15);
  std::set<std::string> urls, texts, files;
  std::size_t differing = 0;
  for (const Link& l : page.links) {
    urls.insert(l.url);
    texts.insert(l.text);
    files.insert(l.filename);
    if (l.text != l.filename) ++differing;
  }
  CHECK(urls.size() == 3);
  CHECK(files.size() == 3);
  CHECK(texts.size() == 15);
  CHECK(differing == 12);  // only the torch2.11 aliases match their file
  CHECK(texts.count("cumm-0.8.2+cu128torch2.8-cp312-cp312-win_amd64.whl") == 1);
  CHECK(files.count("cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl") == 1);
}

TEST_CASE("the snapshot's root and combo root pages hold only directory links", "[index][html][fixtures]") {
  const fs::path dir = wheelfit::test::farm_index_dir();
  std::vector<fs::path> roots = {dir / "index.html"};
  for (const auto& entry : fs::directory_iterator(dir / "cu128")) roots.push_back(entry.path() / "index.html");
  REQUIRE(roots.size() == 6);
  for (const fs::path& p : roots) {
    CAPTURE(p.string());
    const std::string html = wheelfit::test::read_file(p);
    const Page page = parse_ok(html, std::string(kFarm));
    CHECK(page.links.empty());
    CHECK(page.skipped.size() == count_occurrences(html, "<a "));
    for (const std::string& why : page.skipped) CHECK_THAT(why, Contains("directory link"));
  }
}

TEST_CASE("every per-combo package page of the snapshot parses to files of packages.json", "[index][html][fixtures]") {
  const fs::path dir = wheelfit::test::farm_index_dir();
  const std::set<std::string> json_files = packages_json_filenames(wheelfit::test::read_file(dir / "packages.json"));
  std::size_t pages = 0;
  for (const auto& combo : fs::directory_iterator(dir / "cu128")) {
    const std::string torch = combo.path().filename().string();  // "torch2.8"
    for (const auto& pkg : fs::directory_iterator(combo.path())) {
      if (!pkg.is_directory()) continue;
      CAPTURE(pkg.path().string());
      const std::string html = wheelfit::test::read_file(pkg.path() / "index.html");
      const Page page = parse_ok(html, std::string(kFarm) + "cu128/" + torch + "/" + pkg.path().filename().string() + "/");
      ++pages;
      REQUIRE(page.links.size() == count_occurrences(html, "<a "));
      CHECK(page.skipped.empty());
      for (const Link& l : page.links) {
        CAPTURE(l.url);
        CHECK_THAT(l.url, StartsWith(std::string(kReleases)));
        CHECK(json_files.count(l.filename) == 1);
        CHECK_THAT(l.text, Contains("+cu128" + torch + "-"));  // the alias names the channel's torch
      }
    }
  }
  CHECK(pages == 77);  // 37 under torch2.8, 37 under torch2.11, cumm alone under 2.7, 2.9, 2.10
}

TEST_CASE("the snapshot's matrix page: in-page and directory links skipped, matrix.json kept", "[index][html][fixtures]") {
  const std::string html = wheelfit::test::read_file(wheelfit::test::farm_index_dir() / "matrix" / "index.html");
  const Page page = parse_ok(html, std::string(kFarm) + "matrix/");
  REQUIRE(page.links.size() == 1);
  CHECK(page.links[0].url == std::string(kFarm) + "matrix/matrix.json");
  CHECK(page.links[0].filename == "matrix.json");
  std::size_t in_page = 0, directory = 0;
  for (const std::string& why : page.skipped) {
    if (why.find(": in-page link") != std::string::npos) ++in_page;
    if (why.find(": directory link") != std::string::npos) ++directory;
  }
  CHECK(in_page == count_occurrences(html, "href=\"#"));
  CHECK(in_page + directory + page.links.size() == count_occurrences(html, "<a "));
  CHECK(std::find(page.skipped.begin(), page.skipped.end(), "href '#cu132': in-page link") != page.skipped.end());
}

TEST_CASE("the snapshot's packages.json parses completely", "[index][packages-json][fixtures]") {
  const std::string text = wheelfit::test::read_file(wheelfit::test::farm_index_dir() / "packages.json");
  auto pj = parse_packages_json(text, "packages.json");
  REQUIRE(pj);
  CHECK(pj->repo == "Comfy-Forge/cuda-wheels");
  CHECK(pj->packages.size() == 38);
  CHECK(pj->packages.size() == count_occurrences(text, "\"torch_free\":"));
  std::size_t wheels = 0;
  std::vector<std::string> torch_free;
  for (const auto& [name, entry] : pj->packages) {
    if (entry.torch_free) torch_free.push_back(name);
    for (const PackagesJsonWheel& w : entry.wheels) {
      ++wheels;
      CAPTURE(w.filename);
      CHECK_THAT(w.url, StartsWith(std::string(kReleases)));
      REQUIRE(w.sha256);
      CHECK(w.sha256->size() == 64);
      CHECK(w.sha256->find_first_not_of("0123456789abcdef") == std::string::npos);
    }
  }
  CHECK(wheels == 110);
  CHECK(wheels == count_occurrences(text, "\"filename\":"));
  CHECK(torch_free == std::vector<std::string>{"cumm"});
  const PackagesJsonEntry& cumm = pj->packages.at("cumm");
  REQUIRE(cumm.wheels.size() == 3);
  CHECK(cumm.wheels[2].filename == "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl");
  CHECK(pj->sha256_for("https://github.com/Comfy-Forge/cuda-wheels/releases/download/cumm-latest/"
                       "cumm-0.8.2%2Bcu128torch2.11-cp312-cp312-win_amd64.whl",
                       "cumm-0.8.2+cu128torch2.11-cp312-cp312-win_amd64.whl") ==
        "b2b79cbc1a428b1dd02665b3169346468397bc71c6f65acf9430d55f6b5d73ef");
}
