// index::read_index over an in-memory transport: one batch, each page once, statuses kept
// apart, and pages that are not index pages (docs/network-faults.md H02).
#include <catch2/catch.hpp>

#include <map>

#include "support/memory_transport.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/net/transport.hpp"

using namespace wheelfit;

namespace {

using TableTransport = test::MemoryTransport;  // answers from a table by URL, records every batch

net::Response page(std::string body, std::string type) {
  net::Response r;
  r.body = std::move(body);
  r.content_type = std::move(type);
  return r;
}

const std::string kWheel = "<a href='pkg-1.0-py3-none-any.whl'>pkg-1.0-py3-none-any.whl</a>";

}  // namespace

TEST_CASE("read_index reads packages.json and every page in one batch, each once", "[index][read_index]") {
  TableTransport t;
  t.origin().serve("https://i.test/pkg/", page(kWheel, "text/html"));
  auto snap = index::read_index(t, "https://i.test", {"pkg", "pkg", "other"});
  REQUIRE(t.origin().batches().size() == 1);
  CHECK(t.origin().batches()[0] == std::vector<std::string>{"https://i.test/packages.json", "https://i.test/other/", "https://i.test/pkg/"});
  CHECK(snap.base_url == "https://i.test/");
  CHECK(snap.projects.at("pkg").status == index::ProjectPage::Status::ok);
  CHECK(snap.projects.at("other").status == index::ProjectPage::Status::not_published);
  CHECK(snap.warnings.empty());
}

TEST_CASE("read_index: pages that are not index pages (H02)", "[index][read_index]") {
  struct Row {
    const char* what;
    std::string body, type;
    index::ProjectPage::Status status;
    const char* error_or_warning;  // in page.error (failed) or in snap.warnings (ok)
  };
  const std::vector<Row> rows{
      {"html with a charset", kWheel, "text/html; charset=utf-8", index::ProjectPage::Status::ok, ""},
      {"upper-case type", kWheel, "Text/HTML", index::ProjectPage::Status::ok, ""},
      {"no type (file mirror)", kWheel, "", index::ProjectPage::Status::ok, ""},
      {"text/plain", kWheel, "text/plain", index::ProjectPage::Status::ok, ""},
      {"a binary type", kWheel, "application/octet-stream", index::ProjectPage::Status::failed,
       "not an index page (Content-Type application/octet-stream)"},
      {"an image", "GIF89a", "image/gif", index::ProjectPage::Status::failed, "Content-Type image/gif"},
      {"a proxy's block page, status 200", "<html><body><h1>Access denied</h1><p>by policy</p></body></html>",
       "text/html", index::ProjectPage::Status::ok, "no links at all"},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    TableTransport t;
    t.origin().serve("https://i.test/pkg/", page(row.body, row.type));
    auto snap = index::read_index(t, "https://i.test/", {"pkg"});
    const auto& p = snap.projects.at("pkg");
    CHECK(p.status == row.status);
    if (row.status == index::ProjectPage::Status::failed) {
      CHECK_THAT(p.error, Catch::Contains(row.error_or_warning));
      CHECK_THAT(p.error, Catch::Contains("https://i.test/pkg/"));
    } else if (*row.error_or_warning) {
      REQUIRE(snap.warnings.size() == 1);
      CHECK_THAT(snap.warnings[0], Catch::Contains(row.error_or_warning));
      CHECK_THAT(snap.warnings[0], Catch::Contains("https://i.test/pkg/"));
    } else {
      CHECK(snap.warnings.empty());
      CHECK(p.page.links.size() == 1);
    }
  }
}

TEST_CASE("read_index keeps a read failure apart from 'not published'", "[index][read_index]") {
  TableTransport t;
  t.origin().fail("https://i.test/a/", net::net_error(net::NetErrc::reset, "connection reset by 1.2.3.4:443"));
  t.origin().fail("https://i.test/packages.json",
                    net::net_error(net::NetErrc::http_status, "HTTP 503 from 1.2.3.4:443"));
  auto snap = index::read_index(t, "https://i.test/", {"a", "b"});
  CHECK(snap.projects.at("a").status == index::ProjectPage::Status::failed);
  CHECK_THAT(snap.projects.at("a").error, Catch::Contains("connection reset"));
  CHECK(snap.projects.at("b").status == index::ProjectPage::Status::not_published);
  CHECK_THAT(snap.packages_json_note, Catch::Contains("could not be read") && Catch::Contains("503"));
}

TEST_CASE("read_index keeps packages.json's requested records only; another project's bad record costs them nothing",
          "[index][read_index][packages-json-select]") {
  const std::string sha(64, 'a');
  const std::string body = R"({"schema": 1, "repo": "o/r", "packages": {
      "other": {"wheels": [{"filename": "other-1.whl", "url": "https://h/o.whl", "sha256": "not hex"}]},
      "pkg": {"torch_free": true, "wheels": [{"filename": "pkg-1.0-py3-none-any.whl", "url": "pkg-1.0-py3-none-any.whl",
                                            "sha256": ")" + sha + R"("}]}}})";
  TableTransport t;
  t.origin().serve("https://i.test/packages.json", page(body, "application/json"));
  t.origin().serve("https://i.test/pkg/", page(kWheel, "text/html"));
  t.origin().serve("https://i.test/other/", page("<html>" + kWheel + "<a href='#x'>x</a></html>", "text/html"));
  struct Way {
    const char* what;
    index::ReadIndexOptions options;
  };
  for (const auto& way : {Way{"as the answers come", {}}, Way{"after the batch", {.parse_as_answers_arrive = false}}}) {
    INFO(way.what);
    const auto snap = index::read_index(t, "https://i.test/", {"pkg"}, way.options);
    REQUIRE(snap.packages_json);
    CHECK(snap.packages_json_note.empty());
    CHECK(snap.packages_json->repo == "o/r");
    REQUIRE(snap.packages_json->packages.size() == 1);
    CHECK(snap.packages_json->packages.at("pkg").torch_free);
    CHECK(snap.packages_json->sha256_for("https://i.test/pkg-1.0-py3-none-any.whl", "") == sha);  // relative url resolved
    CHECK(snap.projects.at("pkg").status == index::ProjectPage::Status::ok);
  }
  SECTION("both pages, in the pages' order, each way") {
    const auto as_they_come = index::read_index(t, "https://i.test/", {"pkg", "other"});
    const auto after = index::read_index(t, "https://i.test/", {"pkg", "other"}, {.parse_as_answers_arrive = false});
    CHECK(as_they_come.warnings == after.warnings);
    CHECK_FALSE(as_they_come.packages_json);  // asked for, the bad record is refused as before
    CHECK_THAT(as_they_come.packages_json_note,
               Catch::Contains("packages.json ignored") && Catch::Contains("packages.other.wheels[0].sha256"));
    CHECK(as_they_come.packages_json_note == after.packages_json_note);
  }
  SECTION("asked for whole, every record is checked") {
    const auto whole = index::read_index(t, "https://i.test/", {"pkg"}, {.whole_packages_json = true});
    CHECK_FALSE(whole.packages_json);
    CHECK_THAT(whole.packages_json_note, Catch::Contains("packages.other.wheels[0].sha256"));
  }
}

TEST_CASE("contain_links: what a page may link, by where it answered from (H05)", "[index][read_index]") {
  struct Row {
    const char* page;
    const char* link;
    const char* refused;  // nullptr: kept
  };
  const std::vector<Row> rows{
      {"https://i.test/p/", "https://cdn.test/a.whl", nullptr},
      {"https://i.test/p/", "HTTPS://cdn.test/a.whl", nullptr},
      {"https://i.test/p/", "http://cdn.test/a.whl", "a downgrade"},
      {"https://i.test/p/", "file:///etc/a.whl", "local file link on a remote page"},
      {"https://i.test/p/", "/etc/a.whl", "local file link on a remote page"},
      {"https://i.test/p/", "ftp://cdn.test/a.whl", "scheme 'ftp'"},
      {"https://i.test/p/", "javascript:alert(1)", "scheme 'javascript'"},
      {"http://i.test/p/", "http://cdn.test/a.whl", nullptr},
      {"http://i.test/p/", "https://cdn.test/a.whl", nullptr},
      {"http://i.test/p/", "FILE:///etc/a.whl", "local file link on a remote page"},
      {"file:///srv/farm/p/", "file:///srv/farm/p/a.whl", nullptr},
      {"file:///srv/farm/p/", "https://cdn.test/a.whl", nullptr},
      {"file:///srv/farm/p/", "http://cdn.test/a.whl", nullptr},
      {"/srv/farm/p/", "/srv/farm/p/a.whl", nullptr},
      {"/srv/farm/p/", "data:text/plain,x", "scheme 'data'"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.page, row.link);
    index::Page page;
    index::Link link;
    link.url = row.link;
    link.filename = "a.whl";
    page.links.push_back(link);
    const std::size_t moved = index::contain_links(page, row.page);
    if (!row.refused) {
      CHECK(moved == 0);
      CHECK(page.links.size() == 1);
      CHECK(page.skipped.empty());
      continue;
    }
    CHECK(moved == 1);
    CHECK(page.links.empty());
    REQUIRE(page.skipped.size() == 1);
    CHECK_THAT(page.skipped[0], Catch::Contains(row.link) && Catch::Contains(row.refused));
  }
}

TEST_CASE("read_index resolves a redirected page's hrefs against the URL that answered (R03)", "[index][read_index]") {
  TableTransport t;
  auto moved = page("<a href='pkg-1.0-py3-none-any.whl'>x</a><a href='file:///x/pkg-2.0-py3-none-any.whl'>y</a>", "text/html");
  moved.url = "https://mirror.test/v2/pkg/";
  t.origin().serve("http://i.test/pkg/", moved);
  auto snap = index::read_index(t, "http://i.test", {"pkg"});
  const auto& p = snap.projects.at("pkg");
  REQUIRE(p.status == index::ProjectPage::Status::ok);
  CHECK(p.final_url == "https://mirror.test/v2/pkg/");
  REQUIRE(p.page.links.size() == 1);
  CHECK(p.page.links[0].url == "https://mirror.test/v2/pkg/pkg-1.0-py3-none-any.whl");
  REQUIRE(snap.warnings.size() == 1);
  CHECK_THAT(snap.warnings[0], Catch::Contains("http://i.test/pkg/ (answered by https://mirror.test/v2/pkg/): 1 link skipped"));
}

TEST_CASE("read_index: a page of a newer PEP 629 major version fails naming it, a newer minor warns", "[index][read_index][pep629]") {
  struct Row {
    const char* version;
    index::ProjectPage::Status status;
    const char* error_or_warning;  // in page.error (failed) or in snap.warnings (ok); "" for neither
  };
  const std::vector<Row> rows{
      {"1.0", index::ProjectPage::Status::ok, ""},
      {"1.1", index::ProjectPage::Status::ok, "repository version '1.1' (PEP 629, <meta name=\"pypi:repository-version\">) is newer than 1.0"},
      {"2.0", index::ProjectPage::Status::failed, "repository version '2.0' (PEP 629, <meta name=\"pypi:repository-version\">) is newer than 1.x"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.version);
    TableTransport t;
    t.origin().serve("https://i.test/pkg/",
                      page("<html><head><meta name=\"pypi:repository-version\" content=\"" + std::string(row.version) +
                               "\"></head><body>" + kWheel + "</body></html>",
                           "text/html"));
    t.origin().serve("https://i.test/other/", page(kWheel, "text/html"));
    auto snap = index::read_index(t, "https://i.test/", {"pkg", "other"});
    const auto& p = snap.projects.at("pkg");
    CHECK(p.status == row.status);
    CHECK(snap.projects.at("other").status == index::ProjectPage::Status::ok);  // one page's version is that page's
    if (row.status == index::ProjectPage::Status::failed) {
      CHECK_THAT(p.error, Catch::StartsWith("https://i.test/pkg/: ") && Catch::Contains(row.error_or_warning));
      CHECK(snap.warnings.empty());
    } else if (*row.error_or_warning) {
      REQUIRE(snap.warnings.size() == 1);
      CHECK_THAT(snap.warnings[0], Catch::StartsWith("https://i.test/pkg/: ") && Catch::Contains(row.error_or_warning));
      CHECK(p.page.links.size() == 1);
    } else {
      CHECK(snap.warnings.empty());
      CHECK(p.page.links.size() == 1);
    }
  }
}

TEST_CASE("normalize_base and index_url_for keep an http(s) index's query after the path", "[index][read_index][query]") {
  struct Row {
    const char* base;
    const char* normalized;
    const char* page;  ///< index_url_for(normalized, "torch/")
  };
  const std::vector<Row> rows{
      {"https://i.test/simple", "https://i.test/simple/", "https://i.test/simple/torch/"},
      {"https://i.test/simple/", "https://i.test/simple/", "https://i.test/simple/torch/"},
      {"https://i.test/simple/?token=X", "https://i.test/simple/?token=X", "https://i.test/simple/torch/?token=X"},
      {"https://i.test/simple?token=X", "https://i.test/simple/?token=X", "https://i.test/simple/torch/?token=X"},
      {"HTTP://i.test/s?a=1&b=/2/", "HTTP://i.test/s/?a=1&b=/2/", "HTTP://i.test/s/torch/?a=1&b=/2/"},  // a '/' in the query
      {"https://i.test/simple/?token=X#frag", "https://i.test/simple/?token=X", "https://i.test/simple/torch/?token=X"},
      {"https://i.test/simple#frag", "https://i.test/simple/", "https://i.test/simple/torch/"},
      {"https://i.test/simple/?", "https://i.test/simple/", "https://i.test/simple/torch/"},  // an empty query
      {"https://i.test", "https://i.test/", "https://i.test/torch/"},
      // Not http(s): a folder may hold '?' or '#' in its name; nothing is split off.
      {"/srv/wheels?v1", "/srv/wheels?v1/", "/srv/wheels?v1/torch/"},
      {"file:///srv/a#b", "file:///srv/a#b/", "file:///srv/a#b/torch/"},
      {"", "", "torch/"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.base);
    const std::string base = index::normalize_base(row.base);
    CHECK(base == row.normalized);
    CHECK(index::index_url_for(base, "torch/") == row.page);
  }
}

TEST_CASE("read_index: an index URL with a query keeps it on every page and packages.json; hrefs resolve by RFC 3986",
          "[index][read_index][query]") {
  TableTransport t;
  net::Response torch = page(
      "<a href='../../files/torch-2.8.0-cp312-cp312-linux_x86_64.whl'>t</a>"
      "<a href='https://cdn.test/torch-2.7.0-cp312-cp312-linux_x86_64.whl?token=Y'>u</a>",
      "text/html");
  torch.url = "https://i.test/simple/torch/?token=X";
  t.origin().serve("https://i.test/simple/torch/?token=X", torch);
  t.origin().serve("https://i.test/simple/packages.json?token=X", page("{\"packages\": {}}", "application/json"));
  auto snap = index::read_index(t, "https://i.test/simple?token=X", {"torch", "absent"});
  REQUIRE(t.origin().batches().size() == 1);
  CHECK(t.origin().batches()[0] == std::vector<std::string>{"https://i.test/simple/packages.json?token=X",
                                                 "https://i.test/simple/absent/?token=X",
                                                 "https://i.test/simple/torch/?token=X"});
  CHECK(snap.base_url == "https://i.test/simple/?token=X");
  const auto& p = snap.projects.at("torch");
  REQUIRE(p.status == index::ProjectPage::Status::ok);
  REQUIRE(p.page.links.size() == 2);
  // RFC 3986 (as pip resolves them): a relative href does not inherit the page's query ...
  CHECK(p.page.links[0].url == "https://i.test/files/torch-2.8.0-cp312-cp312-linux_x86_64.whl");
  CHECK(p.page.links[0].filename == "torch-2.8.0-cp312-cp312-linux_x86_64.whl");
  // ... and an href's own query stays, out of the file name.
  CHECK(p.page.links[1].url == "https://cdn.test/torch-2.7.0-cp312-cp312-linux_x86_64.whl?token=Y");
  CHECK(p.page.links[1].filename == "torch-2.7.0-cp312-cp312-linux_x86_64.whl");
  CHECK(snap.projects.at("absent").status == index::ProjectPage::Status::not_published);
  CHECK(snap.projects.at("absent").url == "https://i.test/simple/absent/?token=X");
}
