// The http transport on Windows against Linux servers (ctest win.net: tests/windows/net/net_rig.py
// starts them and runs these cases under wine with WHEELFIT_NET_* naming them): an https origin
// whose private CA is added to the current user's ROOT store (trusted with no flag; refused
// without it; still trusted beside a bundle given), CONNECT through a Basic proxy, the system
// proxy settings written to the registry and read through WinHTTP, and Negotiate through SSPI
// to the Kerberos rig's squid. Not in win.windows: outside net_rig.py the servers are missing.
#include <catch2/catch.hpp>

#include <windows.h>
#include <wincrypt.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/system_proxy.hpp"
#include "windows/system_proxy_registry.hpp"

namespace {

namespace fs = std::filesystem;
using namespace wheelfit;
using namespace wheelfit::transports;
using Catch::Matchers::Contains;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) FAIL(name << " is not set: run these cases through ctest win.net (tests/windows/net/net_rig.py)");
  return v;
}

/// A file of the rig's folder (a Linux path, reached through wine's Z: drive).
fs::path rig_file(const std::string& name) { return fs::path("Z:" + env("WHEELFIT_NET_DIR")) / name; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Options with nothing from the environment: no variable, no proxy, one attempt.
HttpOptions quiet() {
  HttpOptions o;
  o.ca_from_env = false;
  o.proxy_from_env = false;
  o.credentials_from_env = false;
  o.retry.retries = 0;
  o.connect_timeout = std::chrono::milliseconds(10000);
  return o;
}

Expected<net::Response> fetch(const HttpOptions& o, const std::string& url) {
  auto t = make_http_transport(o);
  if (!t) return t.error();
  net::Request r;
  r.url = url;
  return (*t)->get(r);
}

/// The body of `url`, REQUIREd to be fetched (the error shown when it is not).
std::string fetched(const HttpOptions& o, const std::string& url) {
  const auto r = fetch(o, url);
  INFO(url << ": " << (r ? std::string() : r.error().message));
  REQUIRE(r);
  return r->body;
}

/// The rig's CA in the current user's ROOT store while it lives (CertAddEncodedCertificateToStore;
/// no dialog under wine, unlike Windows), removed again after. The store is closed at once after
/// each change: wine writes a system store back when it is closed, and the fetch that must see
/// the CA runs in another process.
class UserRootCa {
 public:
  explicit UserRootCa(const fs::path& pem) {
    const std::string text = slurp(pem);
    DWORD size = 0;
    REQUIRE(CryptStringToBinaryA(text.c_str(), 0, CRYPT_STRING_BASE64HEADER, nullptr, &size, nullptr, nullptr));
    der_.assign(size, '\0');
    REQUIRE(CryptStringToBinaryA(text.c_str(), 0, CRYPT_STRING_BASE64HEADER, reinterpret_cast<BYTE*>(der_.data()), &size,
                                 nullptr, nullptr));
    HCERTSTORE store = open();
    REQUIRE(store);
    const BOOL added = CertAddEncodedCertificateToStore(store, X509_ASN_ENCODING, reinterpret_cast<const BYTE*>(der_.data()),
                                                        size, CERT_STORE_ADD_REPLACE_EXISTING, nullptr);
    CertCloseStore(store, 0);
    REQUIRE(added);
  }
  ~UserRootCa() {
    HCERTSTORE store = open();
    PCCERT_CONTEXT mine = CertCreateCertificateContext(X509_ASN_ENCODING, reinterpret_cast<const BYTE*>(der_.data()),
                                                       static_cast<DWORD>(der_.size()));
    if (store && mine) {
      if (PCCERT_CONTEXT there = CertFindCertificateInStore(store, X509_ASN_ENCODING, 0, CERT_FIND_EXISTING, mine, nullptr))
        CertDeleteCertificateFromStore(there);  // frees `there` too
    }
    if (mine) CertFreeCertificateContext(mine);
    if (store) CertCloseStore(store, 0);
  }
  UserRootCa(const UserRootCa&) = delete;
  UserRootCa& operator=(const UserRootCa&) = delete;

 private:
  static HCERTSTORE open() {
    return CertOpenStore(CERT_STORE_PROV_SYSTEM_W, 0, 0, CERT_SYSTEM_STORE_CURRENT_USER, L"ROOT");
  }
  std::string der_;
};

/// Runs [.net_fetch] (below) in a new process of this executable: `url` fetched with the system
/// store, and `ca_file` as --cert when not empty.
test::CliRun fetch_in_new_process(const std::string& url, const std::string& ca_file) {
  std::string env_prefix = "env WHEELFIT_NET_FETCH_URL=" + url;
  if (!ca_file.empty()) env_prefix += " WHEELFIT_NET_FETCH_CA=" + ca_file;
  return test::run_program(env_prefix, test::binary_dir() / "tests" / "wheelfit_tests.exe", {"[.net_fetch]"});
}

}  // namespace

// The child of fetch_in_new_process: prints "body: " and what it fetched; fails (exit 1) naming
// the error otherwise.
TEST_CASE("(helper) fetch WHEELFIT_NET_FETCH_URL in this process", "[.net_fetch]") {
  HttpOptions o = quiet();
  if (const char* ca = std::getenv("WHEELFIT_NET_FETCH_CA"); ca && *ca) {
    o.ca_file = ca;
    o.ca_source = "--cert";
  }
  std::printf("body: %s", fetched(o, env("WHEELFIT_NET_FETCH_URL")).c_str());
}

TEST_CASE("without the CA in the user's ROOT store the origin is refused; a bundle with it is trusted",
          "[windows][net][trust]") {
  const std::string url = env("WHEELFIT_NET_HTTPS") + "/ok";
  SECTION("not in the store: refused, naming the certificate") {
    const auto r = fetch(quiet(), url);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(net::is(r.error(), net::NetErrc::certificate));
  }
  SECTION("a bundle with the CA, the store without it: fetched (as on Linux)") {
    HttpOptions o = quiet();
    o.ca_file = rig_file("ca.pem").string();
    o.ca_source = "--cert";
    CHECK(fetched(o, url) == "hello from linux\n");
  }
}

TEST_CASE("a CA in the user's ROOT store is trusted with no flag", "[windows][net][trust]") {
  const std::string url = env("WHEELFIT_NET_HTTPS") + "/ok";
  // The fetch runs in a new process (this executable's [.net_fetch]), as a user's next run would.
  SECTION("in the store: fetched") {
    const UserRootCa ca(rig_file("ca.pem"));
    const auto r = fetch_in_new_process(url, "");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("body: hello from linux"));
  }
  SECTION("in the store and a bundle given (--cert of another CA): the store still counts") {
    const UserRootCa ca(rig_file("ca.pem"));
    const auto r = fetch_in_new_process(url, rig_file("other-ca.pem").string());
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("body: hello from linux"));
  }
}

TEST_CASE("CONNECT through a proxy asking for Basic", "[windows][net][proxy]") {
  HttpOptions o = quiet();
  o.ca_file = rig_file("ca.pem").string();
  const std::string url = env("WHEELFIT_NET_HTTPS") + "/ok";
  SECTION("with the proxy URL's user:password: fetched, Basic sent") {
    o.proxy.https_proxy = "http://wf:secret@" + env("WHEELFIT_NET_BASIC_PROXY");
    CHECK(fetched(o, url) == "hello from linux\n");
    CHECK_THAT(slurp(rig_file("basic-proxy.log")), Contains(" ok auth=Basic"));
  }
  SECTION("a wrong password: the 407 names the proxy and never the password") {
    o.proxy.https_proxy = "http://wf:wrong@" + env("WHEELFIT_NET_BASIC_PROXY");
    const auto r = fetch(o, url);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK_THAT(r.error().message, Contains("407"));
    CHECK_THAT(r.error().message, Contains(env("WHEELFIT_NET_BASIC_PROXY")));
    CHECK_THAT(r.error().message, !Contains("wrong"));
  }
}

TEST_CASE("the system proxy settings, written to the registry, route a request", "[windows][net][system_proxy]") {
  const std::string proxy = env("WHEELFIT_NET_OPEN_PROXY");
  const test::SystemProxyRegistry saved;  // restores the user's settings after
  test::write_system_proxy(0x3, "https=" + proxy, "<-loopback>", "");
  const auto settings = read_system_proxy();
  REQUIRE(settings);
  CHECK(settings->proxy == "https=" + proxy);
  HttpOptions o = quiet();
  o.proxy_from_env = true;  // the variables (unset by net_rig.py), then the system settings
  o.ca_file = rig_file("ca.pem").string();
  const std::string url = env("WHEELFIT_NET_HTTPS") + "/ok";
  const auto plan = plan_proxy(o, url);
  REQUIRE(plan);
  CHECK(plan->proxy == "http://" + proxy);
  CHECK(plan->source == "the system proxy settings, a CONNECT tunnel");
  CHECK(fetched(o, url) == "hello from linux\n");
  CHECK_THAT(slurp(rig_file("open-proxy.log")), Contains("CONNECT " + url.substr(8, url.size() - 11) + " ok"));
}

TEST_CASE("Negotiate through SSPI to the Kerberos rig's squid", "[windows][net][kerberos]") {
  const std::string squid = env("WHEELFIT_NET_KRB_PROXY");
  HttpOptions o = quiet();
  o.proxy.http_proxy = squid;
  const std::string url = env("WHEELFIT_NET_HTTP") + "/ok";
  SECTION("with alice's ticket: fetched, squid names alice") {
    const auto plan = plan_proxy(o, url);
    REQUIRE(plan);
    INFO(plan->detail);
    CHECK_THAT(plan->detail, Contains("service HTTP@localhost"));
    CHECK_THAT(plan->detail, Contains("(SSPI Negotiate), valid for"));  // wine names no user (SECPKG_CRED_ATTR_NAMES)
    CHECK(fetched(o, url) == "hello from linux\n");
    std::string log = slurp(fs::path("Z:" + env("WHEELFIT_NET_KRB_LOG")));
    CHECK_THAT(log, Contains("TCP_MISS/200 GET " + url + " alice@TEST.LOCAL"));
  }
  SECTION("--proxy-auth none: the 407 names Negotiate and the mode") {
    o.proxy_auth = ProxyAuth::none;
    const auto r = fetch(o, url);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK_THAT(r.error().message, Contains("407"));
    CHECK_THAT(r.error().message, Contains("Negotiate"));
  }
  SECTION("no ticket: SSPI's words and what to do") {
    const std::string cache = env("KRB5CCNAME").substr(5);  // FILE:/...
    const fs::path ticket = fs::path("Z:" + cache), aside = fs::path("Z:" + cache + ".aside");
    fs::rename(ticket, aside);
    const auto r = fetch(o, url);
    fs::rename(aside, ticket);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK_THAT(r.error().message, Contains("asked for Negotiate (Kerberos) authentication"));
    CHECK_THAT(r.error().message, Contains("SSPI could not make a token: AcquireCredentialsHandleW: "));
    CHECK_THAT(r.error().message, Contains("SEC_E_NO_CREDENTIALS"));
    CHECK_THAT(r.error().message, Contains("0x8009030E): log on with a domain account"));
  }
}
