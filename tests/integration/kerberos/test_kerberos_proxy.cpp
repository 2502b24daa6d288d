// Issue 24 end to end with real components: an MIT KDC, squid demanding Negotiate (Kerberos),
// loopback origins serving a small PEP 503 index over http and https (a test CA), and the built
// wheelfit run with a ticket from kinit (support/net/kerberos_rig.hpp). A resolve through the
// proxy with a ticket, over http and through CONNECT, names alice in squid's access log; without
// a ticket, with an expired one, with a service the KDC does not know and with the KDC gone it
// is exit 4 with the proxy, "Negotiate (Kerberos)" and GSS-API's words; the 407 and the success
// share one connection; no token reaches any output or cache file; `wheelfit doctor --url`
// names the proxy and the method. Run by ctest as integration.kerberos (label "integration"),
// skipped (77, with the reason) where krb5kdc, kinit or squid is missing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <list>
#include <thread>

#include "support/cli_support.hpp"
#include "support/net/kerberos_rig.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/http_transport.hpp"

namespace {

namespace fs = std::filesystem;
using namespace wheelfit::testing;
using wheelfit::test::contains;
using wheelfit::test::read_file;
using wheelfit::test::write_file;

const std::string kKrbTags = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";

/// A PEP 503 page for "pkg" with one wheel, whatever the target ("/pkg/").
std::string krb_index_answer(const HttpRequest& r) {
  if (r.target != "/pkg/") return http_response(404, "not here");
  const std::string file = "pkg-1.0+cu128torch2.8-" + kKrbTags;
  return http_response(200, "<a href=\"../dl/pkg-1.0%2Bcu128torch2.8-" + kKrbTags + "#sha256=" + std::string(64, 'a') + "\">" +
                                file + "</a>",
                       {{"Content-Type", "text/html"}});
}

/// The rig, the origins (http and https), a config asking for "pkg" and an H100 machine.
struct KerberosWorld {
  KerberosRig rig;
  wheelfit::test::TempDir dir;
  TestCa ca{dir.path()};
  TestServer origin{serve(krb_index_answer)};
  TestServer tls_origin{serve(krb_index_answer), [this] {
                          TestServer::Options o;
                          o.tls = ca.issue("origin");
                          return o;
                        }()};
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "machine.toml";

  KerberosWorld() {
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "driver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
  }

  /// `wheelfit resolve` of the config against `index` through the rig's proxy (`proxy`: its URL),
  /// with the debug log on and a cache of its own (`cache`).
  wheelfit::test::CliRun resolve(const std::string& index, const std::string& proxy, const fs::path& cache,
                                 const std::vector<std::string>& more = {}) const {
    const std::string env = wheelfit::test::clean_network_env() + " " + rig.client_env_words() +
                            " WHEELFIT_DEBUG=1 http_proxy=" + wheelfit::test::shell_quote(proxy) +
                            " https_proxy=" + wheelfit::test::shell_quote(proxy) + " NO_PROXY= no_proxy=";
    std::vector<std::string> args = {"resolve", config.string(), "--index", index, "--machine", machine.string(), "--json",
                                     "--no-fallback", "--cache-dir", cache.string(), "--cert", ca.cert().string(),
                                     "--timeout", "20"};
    args.insert(args.end(), more.begin(), more.end());
    return wheelfit::test::run_program(env, wheelfit::test::built_wheelfit(), args);
  }
};

/// Fails when any output or cache file holds a Negotiate token (base64 SPNEGO starts "YII").
void check_no_token(const wheelfit::test::CliRun& run, const fs::path& cache) {
  for (const std::string* text : {&run.out, &run.err}) {
    CHECK_FALSE(contains(*text, "Negotiate YII"));
    CHECK_FALSE(contains(*text, "YIIC"));
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string text = read_file(it->path());
    INFO(it->path().string());
    CHECK_FALSE(contains(text, "Negotiate "));
    CHECK_FALSE(contains(text, "YIIC"));
  }
}

#define WHEELFIT_KERBEROS_OR_SKIP()                                                   \
  do {                                                                                \
    if (auto missing = KerberosRig::missing_tool()) {                                 \
      WARN("SKIPPED: " << *missing << " is not installed (scripts/install-deps.sh)"); \
      return;                                                                         \
    }                                                                                 \
  } while (false)

}  // namespace

TEST_CASE("Through squid with a Kerberos ticket: http, CONNECT, one connection, doctor", "[integration][kerberos][negotiate]") {
  WHEELFIT_KERBEROS_OR_SKIP();
  KerberosWorld w;
  w.rig.kinit();
  INFO(w.rig.logs());

  SECTION("http: the request in absolute form carries the ticket; squid logs alice") {
    const fs::path cache = w.dir / "cache-http";
    const auto run = w.resolve(w.origin.url("/"), w.rig.proxy_url(), cache);
    INFO(run.err);
    CHECK(run.code == 0);
    CHECK(contains(run.out, "pkg-1.0"));
    const std::string log = w.rig.access_log();
    INFO(log);
    CHECK(contains(log, "TCP_DENIED/407 GET " + w.origin.url("/")));  // packages.json or /pkg/: the first
    CHECK(contains(log, "/200 GET " + w.origin.url("/pkg/") + " alice@TEST.LOCAL"));
    check_no_token(run, cache);
  }
  SECTION("https: the CONNECT carries the ticket, the origin's certificate from the test CA") {
    const fs::path cache = w.dir / "cache-https";
    const auto run = w.resolve(w.tls_origin.url("/"), w.rig.proxy_url(), cache);
    INFO(run.err);
    CHECK(run.code == 0);
    const std::string log = w.rig.access_log();
    INFO(log);
    CHECK(contains(log, "TCP_TUNNEL/200 CONNECT 127.0.0.1:" + std::to_string(w.tls_origin.port()) + " alice@TEST.LOCAL"));
    check_no_token(run, cache);
  }
  SECTION("the 407 and the success share one connection, and the pool keeps it") {
    std::list<wheelfit::test::ScopedEnv> env;
    for (const auto& [k, v] : w.rig.client_env()) env.emplace_back(k, v);
    wheelfit::transports::HttpOptions o;
    o.proxy_from_env = false;
    o.proxy.http_proxy = w.rig.proxy_url();
    o.credentials_from_env = false;
    auto t = wheelfit::transports::make_http_transport(o);
    REQUIRE(t);
    wheelfit::net::Request req;
    req.url = w.origin.url("/pkg/");
    auto r = (*t)->get(req);
    INFO((r ? std::string() : r.error().message));
    REQUIRE(r);
    CHECK(r->status == 200);
    r = (*t)->get(req);  // the next request: a token first, on the pooled connection
    REQUIRE(r);
    CHECK((*t)->stats().connections == 1);
    const std::string log = w.rig.access_log();
    INFO(log);
    CHECK(contains(log, "TCP_DENIED/407"));
  }
  SECTION("doctor --url names the proxy, the method and alice's ticket") {
    const std::string env = wheelfit::test::clean_network_env() + " " + w.rig.client_env_words() +
                            " https_proxy=" + w.rig.proxy_url();
    const auto run = wheelfit::test::run_program(env, wheelfit::test::built_wheelfit(),
                                                 {"doctor", "--url", w.tls_origin.url("/pkg/")});
    INFO(run.err);
    CHECK(run.code == 0);
    CHECK(contains(run.out, "proxy:  " + w.rig.proxy_url() + " (https_proxy"));
    CHECK(contains(run.out, "negotiate (Kerberos) when the proxy asks for it"));
    CHECK(contains(run.out, "service HTTP@localhost"));
    CHECK(contains(run.out, "alice@TEST.LOCAL, valid for"));
  }
}

TEST_CASE("Through squid without a usable ticket: exit 4, the proxy and GSS-API's words", "[integration][kerberos][negotiate]") {
  WHEELFIT_KERBEROS_OR_SKIP();
  KerberosWorld w;
  INFO(w.rig.logs());
  const std::string proxy_name = "proxy localhost:" + std::to_string(w.rig.proxy_port());
  const auto check_refused = [&](const wheelfit::test::CliRun& run, const fs::path& cache, const std::string& gss_words) {
    INFO(run.err);
    CHECK(run.code == 4);
    CHECK(contains(run.err, proxy_name));
    CHECK(contains(run.err, "asked for Negotiate (Kerberos) authentication"));
    CHECK(contains(run.err, gss_words));
    check_no_token(run, cache);
  };

  SECTION("no ticket: http and CONNECT") {
    w.rig.kdestroy();
    check_refused(w.resolve(w.origin.url("/"), w.rig.proxy_url(), w.dir / "c1"), w.dir / "c1",
                  "No Kerberos credentials available (default cache: FILE:" + (w.rig.dir() / "alice.cc").string() + "): run kinit");
    check_refused(w.resolve(w.tls_origin.url("/"), w.rig.proxy_url(), w.dir / "c2"), w.dir / "c2", "run kinit");
  }
  SECTION("an expired ticket") {
    w.rig.kinit("1s");
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // the ticket's lifetime, not a timed check
    check_refused(w.resolve(w.origin.url("/"), w.rig.proxy_url(), w.dir / "c3"), w.dir / "c3", "Ticket expired: run kinit");
  }
  SECTION("a proxy URL whose host is not the service's (127.0.0.1, not localhost)") {
    w.rig.kinit();
    const auto run = w.resolve(w.origin.url("/"), w.rig.proxy_url("127.0.0.1"), w.dir / "c4");
    INFO(run.err);
    CHECK(run.code == 4);
    CHECK(contains(run.err, "not found in Kerberos database"));
    CHECK(contains(run.err, "must match its service principal"));
  }
  SECTION("no KDC reachable: a ticket for the realm but none for the proxy yet") {
    w.rig.kinit();
    w.rig.stop_kdc();
    check_refused(w.resolve(w.origin.url("/"), w.rig.proxy_url(), w.dir / "c5"), w.dir / "c5", "Cannot contact any KDC");
  }
}
