// Tests of wheelfit::model::url (model/url.hpp): the one URL implementation. The rows cover the
// cases the former helpers' tests cover (index/test_links_url.cpp, transports/test_file_transport,
// transports/http/test_net_policy, the Releases origin) and the negative cases of each call.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "support/checks.hpp"
#include "wheelfit/model/url.hpp"

using namespace wheelfit;
namespace url = wheelfit::model::url;

namespace {

// A reference's parts in one line: each component present as "<name>=<text>", absent ones left out.
std::string shown(const url::Parts& p) {
  std::string out;
  const auto part = [&out](bool has, std::string_view name, std::string_view text) {
    if (has) out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::string(text);
  };
  part(p.has_scheme, "scheme", p.scheme);
  part(p.has_authority, "authority", p.authority);
  part(true, "path", p.path);
  part(p.has_query, "query", p.query);
  part(p.has_fragment, "fragment", p.fragment);
  return out;
}
// An authority's parts the same way; "refused" for nullopt.
std::string shown(const std::optional<url::Authority>& a) {
  if (!a) return "refused";
  std::string out = (a->has_userinfo ? "userinfo=" + std::string(a->userinfo) + " " : "") + (a->ipv6 ? "v6=" : "host=");
  out += std::string(a->host) + (a->has_port ? " port=" + std::string(a->port) : "");
  return out;
}

struct TextRow {
  std::string_view input, expected;
};

}  // namespace

TEST_CASE("url::split follows RFC 3986 appendix B", "[model][url]") {
  const TextRow rows[] = {
      {"https://h:8/a/b?q=1#f", "scheme=https authority=h:8 path=/a/b query=q=1 fragment=f"},
      {"file:///srv/x", "scheme=file authority= path=/srv/x"},
      {"g:h", "scheme=g path=h"},
      {"//cdn/x", "authority=cdn path=/x"},
      {"../a?b", "path=../a query=b"},
      {"#s", "path= fragment=s"},
      {"a#b?c", "path=a fragment=b?c"},  // a '?' in the fragment is not a query
      {"", "path="},
      {"1a:b", "path=1a:b"},  // a scheme starts with a letter
      {"C:/x", "scheme=C path=/x"},
      {"http://h?x/y", "scheme=http authority=h path= query=x/y"},
  };
  test::check_each(rows, [](std::string_view in) { return shown(url::split(in)); });
}

TEST_CASE("url::split_authority: userinfo, host, port, IPv6 literals", "[model][url]") {
  const TextRow rows[] = {
      {"h", "host=h"},
      {"User:p%40ss@H.example:8443", "userinfo=User:p%40ss host=H.example port=8443"},
      {"a@b@h", "userinfo=a@b host=h"},  // the last '@' ends the userinfo
      {"[::1]", "v6=::1"},
      {"[fe80::1%25eth0]:80", "v6=fe80::1%25eth0 port=80"},
      {"u@[2001:db8::2]:", "userinfo=u v6=2001:db8::2 port="},
      {"h:", "host=h port="},
      {"", "host="},
      // brackets that do not make one IPv6 literal
      {"[::1", "refused"},
      {"[::1]x", "refused"},
      {"[::1]]:80", "refused"},
      {"h]", "refused"},
      {"a[b]", "refused"},
      {"[[::1]]", "refused"},
  };
  test::check_each(rows, [](std::string_view in) { return shown(url::split_authority(in)); });
}

TEST_CASE("url::scheme and url::url_scheme tell URLs from paths", "[model][url]") {
  struct Row {
    std::string_view in, scheme, url_scheme;
  };
  const Row rows[] = {
      {"HTTPS://H/", "https", "https"},
      {"file:///x", "file", "file"},
      {"mem+x.y-z://a", "mem+x.y-z", "mem+x.y-z"},
      {"C:/x", "c", ""},  // a Windows drive path, not a URL
      {"C:\\x", "c", ""},
      {"mailto:a@b", "mailto", ""},
      {"/srv/x", "", ""},
      {"x", "", ""},
      {"://h", "", ""},
      {"1http://h", "", ""},
      {"ht tp://h", "", ""},
      {"a:b://h", "a", ""},
      {"", "", ""},
  };
  for (const Row& r : rows) {
    CAPTURE(r.in);
    CHECK(url::scheme(r.in) == r.scheme);
    CHECK(url::url_scheme(r.in) == r.url_scheme);
  }
}

TEST_CASE("url::is_http, is_file_url and is_local", "[model][url]") {
  struct Row {
    std::string_view in;
    bool http, file, local;
  };
  const Row rows[] = {
      {"http://h/", true, false, false},   {"HTTPS://h/", true, false, false}, {"Http://h", true, false, false},
      {"httpx://h/", false, false, false}, {"http:/h", false, false, true},     {"file:///x", false, true, true},
      {"FILE:///x", false, true, true},    {"File:///x", false, false, false}, {"mem://x", false, false, false},
      {"/srv/index", false, false, true},  {"index", false, false, true},      {"", false, false, true},
  };
  for (const Row& r : rows) {
    CAPTURE(r.in);
    CHECK(url::is_http(r.in) == r.http);
    CHECK(url::is_file_url(r.in) == r.file);
    CHECK(url::is_local(r.in) == r.local);
  }
}

TEST_CASE("url::origin: scheme, host and port, userinfo dropped", "[model][url]") {
  const auto origin = [](std::string_view in) -> std::string {
    const auto o = url::origin(in);
    return o ? o->scheme + " " + o->host + " " + o->port : "none";
  };
  const TextRow rows[] = {
      {"https://api.github.com/repos/a/b", "https api.github.com 443"},
      {"http://H.Example/x", "http h.example 80"},
      {"https://u:p@h:8443/x?y#z", "https h 8443"},
      {"http://[::1]:9/x", "http [::1] 9"},
      {"https://[::1]", "https [::1] 443"},
      {"HTTPS://h?q", "https h 443"},
      {"/srv/x", "none"},
      {"https:///x", "none"},
      {"https://u@/x", "none"},
      {"http://[::1/x", "none"},
      {"http://[::1]x/", "none"},
      {"C:/x", "none"},
  };
  test::check_each(rows, [&](std::string_view in) { return origin(in); });
  CHECK(url::origin("https://h/a") == url::origin("https://H:443/b"));
  CHECK_FALSE(url::origin("https://h/a") == url::origin("http://h/a"));
}

TEST_CASE("url::resolve: RFC 3986 section 5.4 and index pages", "[model][url]") {
  struct Row {
    std::string_view base, ref, expected;
  };
  const Row rows[] = {
      {"http://a/b/c/d;p?q", "g", "http://a/b/c/g"},
      {"http://a/b/c/d;p?q", "../../../g", "http://a/g"},
      {"http://a/b/c/d;p?q", "?y", "http://a/b/c/d;p?y"},
      {"http://a/b/c/d;p?q", "", "http://a/b/c/d;p?q"},
      {"http://a/b/c/d;p?q", "g;x=1/../y", "http://a/b/c/y"},
      {"http://a/b/c/d;p?q", "g?y/../x", "http://a/b/c/g?y/../x"},
      {"http://a/b/c/d;p?q", "http:g", "http:g"},
      {"https://example.org", "f.whl", "https://example.org/f.whl"},
      {"https://example.org/simple/foo/", "//cdn.example.net/f.whl", "https://cdn.example.net/f.whl"},
      {"https://h/a/", "%2e%2e/x.whl", "https://h/a/%2e%2e/x.whl"},
      {"file:///srv/index/foo/", "foo-1.0.whl", "file:///srv/index/foo/foo-1.0.whl"},
      {"mem://store/simple/a/", "../b/", "mem://store/simple/b/"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.base, r.ref);
    CHECK(url::resolve(r.base, r.ref) == r.expected);
  }
  SECTION("resolve_into says where the path lies") {
    std::string out = "x";
    const auto range = url::resolve_into(out, url::split("https://h/a/b?q"), "c?d#e");
    CHECK(out == "xhttps://h/a/c?d#e");
    CHECK(out.substr(range.begin, range.end - range.begin) == "/a/c");
  }
}

TEST_CASE("url::last_path_segment", "[model][url]") {
  const TextRow rows[] = {{"https://h/a/b.whl?x#y", "b.whl"}, {"https://h/a/", ""}, {"https://h", ""}, {"https://h?x/y", ""},
                          {"b.whl", "b.whl"},                 {"../b%2B.whl", "b%2B.whl"}, {"", ""}};
  test::check_each(rows, [](std::string_view in) { return url::last_path_segment(in); });
}

TEST_CASE("url::percent_decode once, percent_encode by component", "[model][url]") {
  const TextRow decode[] = {{"a-1.0%2Bcu128", "a-1.0+cu128"}, {"a%252B", "a%2B"}, {"a+b", "a+b"}, {"100%", "100%"},
                            {"%2", "%2"}, {"%zz", "%zz"}, {"%%2B", "%+"}, {"%E2%82%AC", "\xe2\x82\xac"}, {"", ""}};
  const TextRow segment[] = {{"a-1.0+cu128_x~.whl", "a-1.0%2Bcu128_x~.whl"}, {"a b/c", "a%20b%2Fc"},
                             {"\xe2\x82\xac", "%E2%82%AC"}, {"%", "%25"}, {"", ""}};
  const TextRow path[] = {{"/srv/a+b@c,d=e:f", "/srv/a+b@c,d=e:f"}, {"/a b#?%", "/a%20b%23%3F%25"}, {"C:/x", "C:/x"}};
  test::check_each(decode, [](std::string_view in) { return url::percent_decode(in); });
  for (const TextRow& r : segment) {
    CAPTURE(r.input);
    CHECK(url::percent_encode(r.input, url::Component::segment) == r.expected);
    CHECK(url::percent_decode(r.expected) == r.input);  // a round trip
  }
  test::check_each(path, [](std::string_view in) { return url::percent_encode(in, url::Component::path); });
}

TEST_CASE("url::to_path and from_path: file URLs and local paths", "[model][url]") {
  SECTION("a URL or a plain path as it is") {
    CHECK(url::from_path("https://h/simple", true) == "https://h/simple/");
    CHECK(url::from_path("mem://x/", false) == "mem://x/");
    CHECK(url::to_path("relative/dir").value() == "relative/dir");
  }
  SECTION("file URLs decode once; host localhost or none") {
    CHECK(url::to_path("file:///srv/a%2Bb/x.whl").value() == "/srv/a+b/x.whl");
    CHECK(url::to_path("FILE://localhost/srv/x?q#f").value() == "/srv/x");
    CHECK(url::to_path("file:///srv/a%252B").value() == "/srv/a%2B");
  }
  SECTION("refused: another scheme, a remote host, a NUL byte") {
    const auto other = url::to_path("https://h/x");
    REQUIRE_FALSE(other);
    CHECK(other.error().code == make_error_code(Errc::unsupported));
    const auto remote = url::to_path("file://server/share/x");
    REQUIRE_FALSE(remote);
    CHECK(remote.error().code == make_error_code(Errc::invalid_input));
    CHECK(remote.error().message.find("'server'") != std::string::npos);
    const auto nul = url::to_path("file:///a%00b");
    REQUIRE_FALSE(nul);
    CHECK(nul.error().message.find("NUL") != std::string::npos);
  }
}

TEST_CASE("url::from_path makes POSIX paths absolute file URLs", "[model][url][posix]") {
  CHECK(url::from_path("/srv/a b+c/", false) == "file:///srv/a%20b+c/");
  CHECK(url::from_path("/srv/x/../index", true) == "file:///srv/index/");
  const std::string rel = url::from_path("some dir", false);
  CHECK(rel.starts_with("file:///"));
  CHECK(rel.ends_with("/some%20dir"));
  CHECK(url::to_path(url::from_path("/srv/ä €", false)).value() == "/srv/ä €");
}
