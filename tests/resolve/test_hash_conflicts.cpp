// One file name listed with two different sha256 (on one page, across pages, page against
// packages.json, packages.json against itself) is never picked: the resolve goes on without it,
// and one warning names both digests and where each was listed. The mirror takes only picks
// (deliver.cpp, union_of_picks), so a file the resolver never picks is never fetched nor mirrored.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;

namespace {

const std::string hc_tags = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
const std::string hc_best = "pkg-1.1+cu128torch2.8-" + hc_tags;  // the one listed with two digests
const std::string hc_next = "pkg-1.0+cu128torch2.8-" + hc_tags;  // the next-best file
const std::string hc_other = "other-1.0+cu128torch2.8-" + hc_tags;
const std::string hc_a(64, 'a'), hc_b(64, 'b'), hc_c(64, 'c'), hc_d(64, 'd');
const std::string hc_page = "https://example.test/simple/pkg/";
const std::string hc_other_page = "https://example.test/simple/other/";
const std::string hc_packages_json = "https://example.test/simple/packages.json";

// `file` with its '+' escaped, as an index writes it in a href.
std::string hc_escaped(std::string file) {
  for (std::size_t pos; (pos = file.find('+')) != std::string::npos;) file.replace(pos, 1, "%2B");
  return file;
}

// `file` under another host.
std::string hc_href(const std::string& host, const std::string& file) { return "https://" + host + "/f/" + hc_escaped(file); }

// The href test::snapshot gives `file` by default.
std::string hc_listed(const std::string& file) { return "https://example.test/simple/files/" + hc_escaped(file); }

index::PackagesJson hc_packages(const std::vector<index::PackagesJsonWheel>& wheels) {
  index::PackagesJson pj;
  pj.packages["pkg"].wheels = wheels;
  return pj;
}

resolve::Resolution hc_run(const index::IndexSnapshot& snap, const std::string& python = "") {
  const auto ws = test::workspace({"pkg", "other"}, python);
  auto r = resolve::resolve({ws, test::h100(), test::cuda_policy(), snap, "cuda"});
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::vector<std::string> hc_conflict_warnings(const resolve::Resolution& r) {
  std::vector<std::string> out;
  std::copy_if(r.warnings.begin(), r.warnings.end(), std::back_inserter(out),
               [](const std::string& w) { return w.find("hash conflict") != std::string::npos; });
  return out;
}

// Tier 1's verdicts on `filename` for pkg (the package ended unresolved there).
std::vector<resolve::CandidateVerdict> hc_verdicts(const resolve::Resolution& r, const std::string& filename) {
  std::vector<resolve::CandidateVerdict> out;
  REQUIRE_FALSE(r.tiers.empty());
  for (const auto& p : r.tiers[0].packages)
    for (const auto& c : p.candidates)
      if (p.name == "pkg" && c.filename == filename) out.push_back(c);
  return out;
}

}  // namespace

TEST_CASE("resolve never picks a file listed with two digests and says where", "[resolve][hash][conflict]") {
  struct Case {
    const char* name;
    std::function<index::IndexSnapshot()> snap;
    std::string pick;                   ///< pkg's pick; empty: pkg stays unresolved
    std::vector<std::string> warning;   ///< what the one conflict warning names; empty: no warning
  };
  const std::vector<test::Anchor> other = {{hc_other, "", hc_d}};
  const Case cases[] = {
      {"one page, the same href twice",
       [&] { return test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_best, "", hc_b}, {hc_next, "", hc_c}}}, {"other", other}}); },
       hc_next, {hc_page + " lists it with sha256 " + hc_a + " and sha256 " + hc_b}},
      {"one page, two hrefs",
       [&] {
         return test::snapshot({{"pkg", {{hc_best, hc_href("one.test", hc_best), hc_a}, {hc_best, hc_href("two.test", hc_best), hc_b},
                                         {hc_next, "", hc_c}}},
                                {"other", other}});
       },
       hc_next, {hc_page + " lists it with sha256 " + hc_a + " and sha256 " + hc_b}},
      {"across pages",
       [&] {
         return test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_next, "", hc_c}}}, {"other", {{hc_other, "", hc_d}, {hc_best, "", hc_b}}}});
       },
       hc_next, {"sha256 " + hc_a + " (" + hc_page + ")", "sha256 " + hc_b + " (" + hc_other_page + ")"}},
      {"across pages: one answered by the Releases API",
       [&] {
         auto s = test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_next, "", hc_c}}}, {"other", {{hc_other, "", hc_d}, {hc_best, "", hc_b}}}});
         s.projects.at("other").source = "releases-api";
         return s;
       },
       hc_next, {"sha256 " + hc_a + " (" + hc_page + ")",
                 "sha256 " + hc_b + " (" + hc_other_page + " (answered by the GitHub Releases API))"}},
      {"the page against packages.json",
       [&] {
         auto s = test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_next, "", hc_c}}}, {"other", other}});
         s.packages_json = hc_packages({{hc_best, hc_listed(hc_best), hc_b}});
         return s;
       },
       hc_next, {"sha256 " + hc_a + " (" + hc_page + ")", "sha256 " + hc_b + " (" + hc_packages_json + ")"}},
      {"packages.json against itself, the href without a fragment",
       [&] {
         auto s = test::snapshot({{"pkg", {{hc_best, "", ""}, {hc_next, "", hc_c}}}, {"other", other}});
         s.packages_json = hc_packages({{hc_best, hc_listed(hc_best), hc_a}, {hc_best, hc_href("two.test", hc_best), hc_b}});
         return s;
       },
       hc_next, {hc_packages_json + " lists it with sha256 " + hc_a + " and sha256 " + hc_b}},
      {"packages.json against itself, no page",
       [&] {
         auto s = test::snapshot({{"other", other}});
         s.projects.emplace("pkg", index::ProjectPage{"pkg", hc_page, index::ProjectPage::Status::not_published, {}, "404"});
         s.packages_json = hc_packages({{hc_best, hc_href("one.test", hc_best), hc_a},
                                        {hc_best, hc_href("two.test", hc_best), hc_b},
                                        {hc_next, hc_href("one.test", hc_next), hc_c}});
         return s;
       },
       hc_next, {hc_packages_json + " lists it with sha256 " + hc_a + " and sha256 " + hc_b}},
      {"no other file to pick",
       [&] { return test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_best, "", hc_b}}}, {"other", other}}); },
       "", {"sha256 " + hc_a, "sha256 " + hc_b, hc_page}},
      {"the same digest twice on one page: fine",
       [&] { return test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_best, "", hc_a}, {hc_next, "", hc_c}}}, {"other", other}}); },
       hc_best, {}},
      {"the same digest on two pages and in packages.json: fine",
       [&] {
         auto s = test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_next, "", hc_c}}}, {"other", {{hc_other, "", hc_d}, {hc_best, "", hc_a}}}});
         s.packages_json = hc_packages({{hc_best, hc_href("two.test", hc_best), hc_a}});
         return s;
       },
       hc_best, {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto r = hc_run(c.snap());
    const auto warnings = hc_conflict_warnings(r);
    if (c.warning.empty()) {
      CHECK(warnings.empty());
    } else {
      REQUIRE(warnings.size() == 1);  // once per file name, however often it is listed
      CHECK_THAT(warnings[0], Catch::StartsWith("pkg: " + hc_best + ": hash conflict: "));
      CHECK_THAT(warnings[0], Catch::EndsWith("; not picked"));
      for (const auto& part : c.warning) CHECK_THAT(warnings[0], Catch::Contains(part));
    }
    if (c.pick.empty()) {
      REQUIRE_FALSE(r.ok());
      const auto v = hc_verdicts(r, hc_best);
      REQUIRE(v.size() == 1);  // the same text and href twice: one candidate, with the note
      CHECK_FALSE(v[0].fits());
      CHECK(v[0].note == warnings[0].substr(("pkg: " + hc_best + ": ").size(), v[0].note.size()));
      continue;
    }
    REQUIRE(r.ok());
    const auto pick = std::find_if(r.picks.begin(), r.picks.end(), [](const resolve::Pick& p) { return p.name == "pkg"; });
    REQUIRE(pick != r.picks.end());
    CHECK(pick->filename == c.pick);
    CHECK(pick->sha256 != hc_b);  // never the digest of the other listing
  }
}

TEST_CASE("resolve keeps a file listed twice with one digest as one candidate", "[resolve][hash][conflict]") {
  const auto snap = test::snapshot({{"pkg", {{hc_best, "", hc_a}, {hc_best, "", hc_a}}}, {"other", {{hc_other, "", hc_d}}}});
  SECTION("picked, with its digest") {
    const auto r = hc_run(snap);
    REQUIRE(r.ok());
    CHECK(r.picks[0].filename == hc_best);
    CHECK(r.picks[0].sha256 == hc_a);
  }
  SECTION("reported once when nothing fits") {
    const auto r = hc_run(snap, "3.11");  // a cp312 wheel cannot fit
    REQUIRE_FALSE(r.ok());
    const auto v = hc_verdicts(r, hc_best);
    REQUIRE(v.size() == 1);
    CHECK(v[0].note.empty());
  }
}

TEST_CASE("resolve names the page and packages.json when a fragment and packages.json disagree by URL",
          "[resolve][hash][conflict]") {
  // packages.json names the href's URL under another file name: the file-name book cannot see
  // it, the URL lookup does.
  auto snap = test::snapshot({{"pkg", {{hc_best, "", hc_a}}}, {"other", {{hc_other, "", hc_d}}}});
  snap.packages_json = hc_packages({{"renamed.whl", hc_listed(hc_best), hc_b}});
  const auto r = hc_run(snap);
  REQUIRE_FALSE(r.ok());
  const auto warnings = hc_conflict_warnings(r);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("the href on " + hc_page + " says sha256 " + hc_a + ", " + hc_packages_json +
                                          " says sha256 " + hc_b));
}
