// Credentials (transports/credentials.hpp): where they come from (URL userinfo, per-origin
// credentials, netrc), where they may go (their own origin, https unless the host is allowed
// insecure), and what follows a redirect to another origin. The rules as tables, then the
// transport against loopback servers that check HTTP Basic and Bearer credentials.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "test_http_support.hpp"
#include "wheelfit/transports/credentials.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;
using transports::Credentials;

namespace {

transports::Url url_of(const std::string& text) {
  auto u = transports::parse_url(text);
  REQUIRE(u);
  return *u;
}

Credentials with_netrc(const std::string& text, std::vector<std::string> insecure = {}) {
  Credentials c;
  auto n = transports::parse_netrc(text, "/home/u/.netrc");
  REQUIRE(n);
  c.netrc = std::move(*n);
  c.netrc_source = "/home/u/.netrc";
  c.insecure_hosts = std::move(insecure);
  return c;
}

// A getenv over a map (nullptr for a name it lacks).
std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// A server that answers 200 "welcome" when Authorization is `expected`, else 401.
std::string guarded(const HttpRequest& r, const std::string& expected) {
  if (r.header("authorization") == expected) return http_response(200, "welcome");
  return http_response(401, "who are you", {{"WWW-Authenticate", "Basic realm=\"idx\""}});
}

}  // namespace

TEST_CASE("parse_host_list: hosts and HOST:PORT, commas or spaces", "[transports][credentials]") {
  const std::vector<test::CaseOf<std::vector<std::string>>> rows = {
      {"", {}},
      {"127.0.0.1", {"127.0.0.1"}},
      {"Mirror.Corp.TEST, 10.0.0.5:8080", {"mirror.corp.test", "10.0.0.5:8080"}},
      {"a.test b.test\tc.test:80", {"a.test", "b.test", "c.test:80"}},
      {"[::1]:8443,[::1]", {"[::1]:8443", "[::1]"}},
      {" , a.test ,, ", {"a.test"}},
  };
  test::check_each(rows, [](const std::string& list) {
    auto h = transports::parse_host_list(list, "--allow-insecure-host");
    REQUIRE(h);
    return *h;
  });
  for (std::string bad : {"http://a.test", "a.test/path", "user@a.test", "a.test:0", "a.test:99999", "a.test:x",
                          "::1", "[::1", "a_b!.test", "a.test?x"}) {
    CAPTURE(bad);
    auto h = transports::parse_host_list(bad, "--allow-insecure-host");
    REQUIRE_FALSE(h);
    CHECK(h.error().is(Errc::invalid_input));
    CHECK_THAT(h.error().message, Catch::Contains("--allow-insecure-host"));
  }
}

TEST_CASE("insecure_host_allowed: the host, or the host with its port", "[transports][credentials]") {
  const std::vector<std::string> hosts = {"a.test", "b.test:8080", "[::1]:9000"};
  struct Row {
    std::string url;
    bool allowed;
  };
  const std::vector<Row> rows = {
      {"http://a.test/", true},          {"http://a.test:1234/", true}, {"http://b.test:8080/", true},
      {"http://b.test/", false},         {"http://b.test:8081/", false}, {"http://[::1]:9000/", true},
      {"http://[::1]:9001/", false},     {"http://sub.a.test/", false}, {"http://a.test.evil/", false},
  };
  for (const auto& r : rows) {
    CAPTURE(r.url);
    CHECK(transports::insecure_host_allowed(hosts, url_of(r.url)) == r.allowed);
  }
}

TEST_CASE("choose_authorization: URL, then origin credentials, then netrc; https unless allowed", "[transports][credentials]") {
  Credentials c = with_netrc("machine idx.test login nu password np\nmachine plain.test login pu password pp\n",
                             {"plain.test"});
  c.origins.push_back({"https://idx.test", "iu:ip", "", "--index"});
  c.origins.push_back({"https://tok.test:8443", "", "t0k", "WHEELFIT_INDEX_TOKEN"});
  struct Row {
    std::string url;
    std::string header;  // "" = none
    std::string source;
    bool refused;
  };
  const std::vector<Row> rows = {
      {"https://uu:up@idx.test/x", transports::basic_auth("uu:up"), "the URL", false},
      {"https://tok3n@idx.test/x", transports::basic_auth("tok3n:"), "the URL", false},  // pip's token-only form
      {"https://idx.test/simple/", transports::basic_auth("iu:ip"), "--index", false},
      {"https://IDX.test:443/simple/", transports::basic_auth("iu:ip"), "--index", false},
      {"https://idx.test:444/", transports::basic_auth("nu:np"), "/home/u/.netrc", false},  // another origin: netrc by host
      {"https://tok.test:8443/p/", "Bearer t0k", "WHEELFIT_INDEX_TOKEN", false},
      {"https://tok.test/p/", "", "", false},  // the token's port differs: not its origin
      {"http://idx.test/", "", "/home/u/.netrc", true},  // plain http, not allowed
      {"http://plain.test/", transports::basic_auth("pu:pp"), "/home/u/.netrc", false},
      {"http://uu:up@idx.test/", "", "the URL", true},
      {"https://nobody.test/", "", "", false},
  };
  for (const auto& r : rows) {
    CAPTURE(r.url);
    const auto a = transports::choose_authorization(c, url_of(r.url));
    CHECK(a.header == r.header);
    CHECK(a.source == r.source);
    CHECK(a.refused == r.refused);
  }
}

TEST_CASE("choose_authorization: a token with a line break is never sent", "[transports][credentials]") {
  Credentials c;
  c.origins.push_back({"https://idx.test", "", "t\r\nX-Evil: 1", "WHEELFIT_INDEX_TOKEN"});
  CHECK(transports::choose_authorization(c, url_of("https://idx.test/")).header.empty());
}

TEST_CASE("refusal_message names the way out and no secret", "[transports][credentials]") {
  const auto url = url_of("http://user:TOPSECRET@127.0.0.1:8080/simple/");
  const auto a = transports::choose_authorization(Credentials{}, url);
  REQUIRE(a.refused);
  const std::string m = transports::refusal_message(a, url);
  CHECK_THAT(m, Catch::Contains("http://127.0.0.1:8080"));
  CHECK_THAT(m, Catch::Contains("--allow-insecure-host 127.0.0.1"));
  CHECK_THAT(m, Catch::Contains("WHEELFIT_ALLOW_INSECURE_HOST"));
  CHECK_THAT(m, !Catch::Contains("TOPSECRET"));
}

TEST_CASE("survives_cross_origin_redirect: only headers known to carry no credential", "[transports][credentials]") {
  for (std::string h : {"Accept", "user-agent", "Range", "If-Range", "If-None-Match", "If-Modified-Since"}) {
    CAPTURE(h);
    CHECK(transports::survives_cross_origin_redirect(h));
  }
  for (std::string h : {"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "Private-Token", "X-Custom-Token",
                        "X-GitHub-Api-Version"}) {
    CAPTURE(h);
    CHECK_FALSE(transports::survives_cross_origin_redirect(h));
  }
}

TEST_CASE("add_credentials_from_env: NETRC, ~/.netrc, WHEELFIT_ALLOW_INSECURE_HOST", "[transports][credentials]") {
  test::TempDir dir;
  LogCapture logs;
  test::write_file(dir / ".netrc", "machine h.test login u password hunter2\n");
  ::chmod((dir / ".netrc").c_str(), 0600);
  test::write_file(dir / "other", "machine o.test login v password w\n");
  ::chmod((dir / "other").c_str(), 0600);
  test::write_file(dir / "broken", "machine h.test login u password hunter2 extra\n");
  ::chmod((dir / "broken").c_str(), 0600);
  test::write_file(dir / "open", "machine h.test login u password hunter2\n");
  ::chmod((dir / "open").c_str(), 0644);
  const std::string home = dir.path().string();
  SECTION("~/.netrc by default") {
    const std::map<std::string, std::string> vars{{"HOME", home}};
    Credentials c;
    transports::add_credentials_from_env(c, env_of(vars));
    REQUIRE(c.netrc);
    CHECK(c.netrc_source == home + "/.netrc");
    CHECK(c.netrc->find("h.test")->password == "hunter2");
    CHECK(logs.find(log::Level::warn, "netrc").empty());
  }
  SECTION("NETRC wins over ~/.netrc") {
    const std::map<std::string, std::string> vars{{"HOME", home}, {"NETRC", home + "/other"}};
    Credentials c;
    transports::add_credentials_from_env(c, env_of(vars));
    REQUIRE(c.netrc);
    CHECK(c.netrc->find("h.test") == nullptr);
    CHECK(c.netrc->find("o.test"));
  }
  SECTION("a missing ~/.netrc is normal; a missing NETRC file is a warning") {
    const std::map<std::string, std::string> quiet{{"HOME", home + "/nowhere"}};
    Credentials c;
    transports::add_credentials_from_env(c, env_of(quiet));
    CHECK_FALSE(c.netrc);
    CHECK(logs.find(log::Level::warn, "netrc").empty());
    const std::map<std::string, std::string> named{{"NETRC", home + "/missing"}};
    transports::add_credentials_from_env(c, env_of(named));
    CHECK_FALSE(c.netrc);
    CHECK(logs.find(log::Level::warn, "NETRC names " + home + "/missing").size() == 1);
  }
  SECTION("a netrc that is a FIFO or a device is a warning, never read") {  // issue 20 item 7
    const test::Fifo fifo(dir / "fifo");
    std::filesystem::create_symlink("/dev/null", dir / "null");
    for (const std::string name : {"fifo", "null"}) {
      CAPTURE(name);
      const std::map<std::string, std::string> vars{{"NETRC", home + "/" + name}};
      Credentials c;
      transports::add_credentials_from_env(c, env_of(vars));
      CHECK_FALSE(c.netrc);
      CHECK(logs.find(log::Level::warn, "the netrc " + home + "/" + name + " (NETRC) is not a regular file").size() == 1);
    }
  }
  SECTION("a netrc that does not parse is a warning with its line, without the password") {
    const std::map<std::string, std::string> vars{{"NETRC", home + "/broken"}};
    Credentials c;
    transports::add_credentials_from_env(c, env_of(vars));
    CHECK_FALSE(c.netrc);
    const auto w = logs.find(log::Level::warn, home + "/broken:1: unexpected token");
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], !Catch::Contains("hunter2"));
  }
  SECTION("a netrc others can read is used, with a warning") {
    const std::map<std::string, std::string> vars{{"NETRC", home + "/open"}};
    Credentials c;
    transports::add_credentials_from_env(c, env_of(vars));
    CHECK(c.netrc);
    CHECK(logs.find(log::Level::warn, "chmod 600").size() == 1);
  }
  SECTION("WHEELFIT_ALLOW_INSECURE_HOST adds hosts; a bad list is a warning") {
    const std::map<std::string, std::string> good{{"WHEELFIT_ALLOW_INSECURE_HOST", "a.test,b.test:81"}};
    Credentials c;
    c.insecure_hosts = {"given.test"};
    transports::add_credentials_from_env(c, env_of(good));
    CHECK(c.insecure_hosts == std::vector<std::string>{"given.test", "a.test", "b.test:81"});
    const std::map<std::string, std::string> bad{{"WHEELFIT_ALLOW_INSECURE_HOST", "http://x.test"}};
    transports::add_credentials_from_env(c, env_of(bad));
    CHECK(c.insecure_hosts.size() == 3);
    CHECK(logs.find(log::Level::warn, "WHEELFIT_ALLOW_INSECURE_HOST").size() == 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Against loopback servers

TEST_CASE("credentials on the wire: URL userinfo and netrc as HTTP Basic, over http only when allowed",
          "[transports][credentials][http]") {
  const std::string url_basic = transports::basic_auth("alice:TOPSECRET");
  const std::string netrc_basic = transports::basic_auth("bob:NETRC-SECRET");
  TestServer server(serve([&](const HttpRequest& r) {
    return guarded(r, r.target == "/netrc/" ? netrc_basic : url_basic);
  }));
  const std::string with_userinfo = "http://alice:TOPSECRET@" + loopback(server.port()) + "/simple/";
  auto o = fast_options();
  o.credentials = with_netrc("machine 127.0.0.1 login bob password NETRC-SECRET\n");
  LogCapture logs;

  SECTION("plain http to a host not allowed: userinfo is an error, netrc is not sent (one warning)") {
    auto t = make(o);
    auto r = t->get(req(with_userinfo));
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK_THAT(r.error().message, Catch::Contains("--allow-insecure-host 127.0.0.1"));
    CHECK_THAT(r.error().message, !Catch::Contains("TOPSECRET"));
    CHECK(server.requests().empty());
    auto a = t->get(req(server.url("/netrc/")));
    auto b = t->get(req(server.url("/netrc/")));
    REQUIRE_FALSE(a);
    CHECK_THAT(a.error().message, Catch::Contains("401"));
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 2);
    CHECK_FALSE(reqs[0].header("authorization"));
    CHECK(logs.find(log::Level::warn, "not sending the credentials from /home/u/.netrc").size() == 1);
  }
  SECTION("allowed by host: both are sent") {
    o.credentials.insecure_hosts = {"127.0.0.1"};
    auto t = make(o);
    auto r = t->get(req(with_userinfo));
    WHEELFIT_REQUIRE_OK(r);
    CHECK(r->body == "welcome");
    CHECK(r->url == server.url("/simple/"));  // the answer's URL carries no userinfo
    auto n = t->get(req(server.url("/netrc/")));
    WHEELFIT_REQUIRE_OK(n);
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].header("authorization") == url_basic);
    CHECK(reqs[1].header("authorization") == netrc_basic);
  }
  SECTION("allowed by another port of the host: not sent") {
    o.credentials.insecure_hosts = {"127.0.0.1:" + std::to_string(unused_port())};
    auto t = make(o);
    CHECK_FALSE(t->get(req(with_userinfo)));
    CHECK(server.requests().empty());
  }
}

TEST_CASE("credentials on the wire: https needs no allowance; a bearer token goes to its origin only",
          "[transports][credentials][http]") {
  test::TempDir dir;
  TestCa ca(dir.path());
  TestServer::Options so;
  so.tls = ca.issue("leaf");
  TestServer secure(serve([&](const HttpRequest& r) {
    if (r.target == "/token/") return guarded(r, "Bearer IDX-TOKEN");
    return guarded(r, transports::basic_auth("alice:TOPSECRET"));
  }), so);
  auto o = fast_options();
  o.ca_file = ca.cert().string();
  o.credentials.origins.push_back({url_of(secure.url("/", "localhost")).origin(), "", "IDX-TOKEN", "WHEELFIT_INDEX_TOKEN"});
  auto t = make(o);
  const std::string base = secure.url("/", "localhost");
  auto r = t->get(req("https://alice:TOPSECRET@" + base.substr(8) + "basic/"));
  WHEELFIT_REQUIRE_OK(r);
  auto tok = t->get(req(secure.url("/token/", "localhost")));
  WHEELFIT_REQUIRE_OK(tok);
  // The same server under another name is another origin: the token stays behind.
  auto other = t->get(req(secure.url("/token/")));  // https://127.0.0.1:P
  REQUIRE_FALSE(other);
  const auto reqs = secure.requests();
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0].header("authorization") == transports::basic_auth("alice:TOPSECRET"));
  CHECK(reqs[1].header("authorization") == "Bearer IDX-TOKEN");
  CHECK_FALSE(reqs[2].header("authorization"));
}

TEST_CASE("redirects: every credential header stays behind on a cross-origin hop; netrc follows by host",
          "[transports][credentials][http][redirect]") {
  const std::string alice = transports::basic_auth("alice:TOPSECRET");
  TestServer other(serve([](const HttpRequest&) { return http_response(200, "on the other host"); }));
  std::unique_ptr<TestServer> first;
  first = std::make_unique<TestServer>(serve([&](const HttpRequest& r) {
    if (r.target == "/same") return http_response(302, "", {{"Location", first->url("/landing")}});
    if (r.target == "/landing") return guarded(r, alice);
    return http_response(302, "", {{"Location", other.url("/elsewhere", "localhost")}});
  }));
  auto o = fast_options();
  o.credentials = with_netrc("machine localhost login carol password CAROL-SECRET\n", {"127.0.0.1", "localhost"});
  auto t = make(o);
  const std::string userinfo_base = "http://alice:TOPSECRET@" + loopback(first->port());

  SECTION("the caller's credential headers: only Accept and the validators follow") {
    const net::Headers h = {{"Authorization", "Bearer s3cret"}, {"Cookie", "sid=1"}, {"X-Api-Key", "k"},
                                  {"X-Custom-Token", "c"}, {"Accept", "application/json"}, {"If-None-Match", "\"v1\""}};
    auto r = t->get(req(first->url("/away"), 1000, h));
    WHEELFIT_REQUIRE_OK(r);
    REQUIRE(first->requests().size() == 1);
    CHECK(first->requests()[0].header("x-api-key") == "k");
    const auto reqs = other.requests();
    REQUIRE(reqs.size() == 1);
    for (const char* gone : {"cookie", "x-api-key", "x-custom-token"}) {
      CAPTURE(gone);
      CHECK_FALSE(reqs[0].header(gone));
    }
    // Not the caller's token: the other host's own netrc entry.
    CHECK(reqs[0].header("authorization") == transports::basic_auth("carol:CAROL-SECRET"));
    CHECK(reqs[0].header("accept") == "application/json");
    CHECK(reqs[0].header("if-none-match") == "\"v1\"");
  }
  SECTION("URL userinfo: kept on a same-origin hop, never sent to the other host") {
    auto same = t->get(req(userinfo_base + "/same"));
    WHEELFIT_REQUIRE_OK(same);
    CHECK(same->body == "welcome");
    auto away = t->get(req(userinfo_base + "/away"));
    WHEELFIT_REQUIRE_OK(away);
    const auto reqs = other.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].header("authorization") == transports::basic_auth("carol:CAROL-SECRET"));
    const auto firsts = first->requests();
    REQUIRE(firsts.size() == 3);
    for (const auto& fr : firsts) CHECK(fr.header("authorization") == alice);
  }
}

TEST_CASE("a long password past the cut of an error message is still hidden", "[transports][credentials]") {
  const std::string password(400, 'S');
  auto r = transports::parse_url("https://user:" + password + "@h.test:99999/x");
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, !Catch::Contains("SSSS"));
  CHECK_THAT(r.error().message, Catch::Contains("user:***@"));
  auto q = transports::parse_url("https://h.test/" + std::string(300, 'p') + "?token=" + password + " x");
  REQUIRE_FALSE(q);
  CHECK_THAT(q.error().message, !Catch::Contains("SSSS"));
}
