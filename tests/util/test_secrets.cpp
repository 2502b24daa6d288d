// util/secrets: redaction of free text, credential-free URLs and private folders, as tables with
// the shapes secrets come in (userinfo, headers, query parameters, token shapes) and the text
// that must be left alone.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>
#include <string_view>
#include <vector>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/util/secrets.hpp"

using namespace wheelfit;

namespace {

const std::string kGithubToken = "ghp_" + std::string(36, 'A');

}  // namespace

TEST_CASE("redact hides userinfo, credential headers, credential query values and token shapes", "[util][secrets]") {
  const std::vector<test::CaseOf<std::string>> rows = {
      {"https://u:secret@h.test/x", "https://u:***@h.test/x"},
      {"https://ghp_abc@github.test/x", "https://***@github.test/x"},
      {"https://u:p@ss@h.test/", "https://u:***@h.test/"},  // '@' inside the password
      {"https://u:pa`s's@h.test/x", "https://u:***@h.test/x"},  // a backtick or quote inside it (found by fuzz_url)
      {"see `https://h.test/x` and mail bob@example.test", "see `https://h.test/x` and mail bob@example.test"},
      {"https://h.test/path@v1", "https://h.test/path@v1"},
      {"mail bob@example.test", "mail bob@example.test"},
      {"Authorization: Bearer abc.def", "Authorization: Bearer ***"},
      {"proxy-authorization: Basic dTpw\r\nHost: h", "proxy-authorization: Basic ***\r\nHost: h"},
      {"Cookie: session=abc; theme=dark", "Cookie: ***"},
      {"set-cookie: id=1; HttpOnly\nnext", "set-cookie: ***\nnext"},
      {"X-Api-Key: k1\nPRIVATE-TOKEN: k2\nX-JFrog-Art-Api: k3", "X-Api-Key: ***\nPRIVATE-TOKEN: ***\nX-JFrog-Art-Api: ***"},
      {"Accept: text/html", "Accept: text/html"},
      {"note: time 10:30", "note: time 10:30"},
      {"https://h.test/x?token=abc&y=1", "https://h.test/x?token=***&y=1"},
      {"https://h.test/x?y=1&password=hunter2#f", "https://h.test/x?y=1&password=***#f"},
      {"https://s.test/a?X-Amz-Credential=AK%2F1&X-Amz-Signature=de&X-Amz-Date=1",
       "https://s.test/a?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Date=1"},
      {"https://b.test/c?sv=2021&sig=abc%3D&se=x", "https://b.test/c?sv=2021&sig=***&se=x"},
      {"https://h.test/x?tokens=abc&mytoken=def", "https://h.test/x?tokens=abc&mytoken=def"},
      {"https://h.test/x?token=", "https://h.test/x?token="},
      {"GITHUB_TOKEN was " + kGithubToken + ".", "GITHUB_TOKEN was ***."},
      {"github_pat_" + std::string(40, 'x'), "***"},
      {"glpat-" + std::string(20, 'z') + " ok", "*** ok"},
      {"the ghp_ prefix and ghp_short stay", "the ghp_ prefix and ghp_short stay"},
      {"xghp_" + std::string(30, 'a'), "xghp_" + std::string(30, 'a')},  // inside a word: not a token
      {"", ""},
  };
  test::check_each(rows, [](const std::string& text) { return util::redact(text); });
}

TEST_CASE("redact is linear on hostile text", "[util][secrets]") {
  // Many separators and one '=' far away, many ':' with long names before them.
  const std::string a = std::string(200000, '&') + "token=x";
  CHECK(util::redact(a) == std::string(200000, '&') + "token=***");
  const std::string b(200000, ':');
  CHECK(util::redact(b) == b);
  const std::string c = std::string(100000, 'a') + ":" + std::string(100000, 'b');
  CHECK(util::redact(c) == c);
}

TEST_CASE("strip_credentials writes a URL without userinfo or credential parameters", "[util][secrets]") {
  const std::vector<test::TextCase> rows = {
      {"https://user:TOPSECRET@idx.test/simple/", "https://idx.test/simple/"},
      {"http://token@127.0.0.1:8080/x.whl#sha256=ab", "http://127.0.0.1:8080/x.whl#sha256=ab"},
      {"https://s3.test/w.whl?X-Amz-Algorithm=A&X-Amz-Credential=K&X-Amz-Signature=S",
       "https://s3.test/w.whl?X-Amz-Algorithm=A"},
      {"https://h.test/w.whl?token=abc", "https://h.test/w.whl"},
      {"https://h.test/w.whl?token=abc#sha256=00", "https://h.test/w.whl#sha256=00"},
      {"https://h.test/w.whl?a=1&ACCESS_TOKEN=x&b=2", "https://h.test/w.whl?a=1&b=2"},
      {"https://h.test/p@v1/w.whl", "https://h.test/p@v1/w.whl"},
      {"https://h.test/x#frag?token=stays-in-fragment", "https://h.test/x#frag?token=stays-in-fragment"},
      {"file:///srv/index/", "file:///srv/index/"},
      {"/srv/index", "/srv/index"},
      {"", ""},
  };
  test::check_each(rows, [](std::string_view url) { return util::strip_credentials(url); });
}

TEST_CASE("without_userinfo removes only the userinfo", "[util][secrets]") {
  CHECK(util::without_userinfo("https://u:p@h.test/x?token=t") == "https://h.test/x?token=t");
  CHECK(util::without_userinfo("https://h.test/a@b") == "https://h.test/a@b");
  CHECK(util::without_userinfo("no url") == "no url");
}

TEST_CASE("is_credential_param and is_credential_header ignore ASCII case", "[util][secrets]") {
  for (std::string_view p : {"token", "TOKEN", "access_token", "sig", "X-Amz-Signature", "password", "api_key"}) {
    CAPTURE(p);
    CHECK(util::is_credential_param(p));
  }
  for (std::string_view p : {"page", "per_page", "sha256", "tokens", "X-Amz-Date", ""}) {
    CAPTURE(p);
    CHECK_FALSE(util::is_credential_param(p));
  }
  for (std::string_view h : {"Authorization", "proxy-authorization", "COOKIE", "Set-Cookie", "x-api-key"}) {
    CAPTURE(h);
    CHECK(util::is_credential_header(h));
  }
  for (std::string_view h : {"Accept", "ETag", "Range", "authorization2"}) {
    CAPTURE(h);
    CHECK_FALSE(util::is_credential_header(h));
  }
}

#ifndef _WIN32  // modes; on Windows a folder takes its parent's ACL (tests/windows/test_files_win.cpp)
TEST_CASE("create_private_directories makes 0700 folders and tightens only the last", "[util][secrets][posix]") {
  test::TempDir dir;
  SECTION("missing folders are made private") {
    const auto leaf = dir / "a" / "b" / "c";
    REQUIRE(util::create_private_directories(leaf));
    CHECK(test::file_mode(dir / "a") == 0700);
    CHECK(test::file_mode(leaf) == 0700);
  }
  SECTION("an existing open folder is tightened; its parent is left as it is") {
    const auto parent = dir / "shared";
    const auto leaf = parent / "mine";
    std::filesystem::create_directories(leaf);
    ::chmod(parent.c_str(), 0755);
    ::chmod(leaf.c_str(), 0775);
    REQUIRE(util::create_private_directories(leaf));
    CHECK(test::file_mode(leaf) == 0700);
    CHECK(test::file_mode(parent) == 0755);
  }
  SECTION("a file in the way is an error naming the folder") {
    test::write_file(dir / "file", "x");
    auto r = util::create_private_directories(dir / "file" / "sub");
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::io_error));
    CHECK_THAT(r.error().message, Catch::Contains((dir / "file").string()));
  }
}
#endif
