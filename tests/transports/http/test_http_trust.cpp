// The trust store and the client certificate (trust_store.hpp): the order of --cert and the
// variables pip, requests, curl and OpenSSL users set, each proven against a loopback TLS server
// with a CA made at test time (docs/network-faults.md T02, T06, T07); a store that cannot be
// loaded is an error naming it and where it came from; mutual TLS.
#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <unistd.h>

#include <list>
#include <map>

#include "support/test_support.hpp"
#include "test_http_support.hpp"
#include "wheelfit/transports/trust_store.hpp"

using namespace wheelfit;
using namespace wheelfit::test_http;
using wheelfit::test::ScopedEnv;
using wheelfit::test::TempDir;
namespace fs = std::filesystem;

namespace {

/// fast_options() reading the variables (as the CLI does).
transports::HttpOptions from_env() {
  auto o = fast_options();
  o.ca_from_env = true;
  return o;
}

TestServer::Options tls_options_http_trust(const TlsFiles& files, std::optional<fs::path> client_ca = std::nullopt) {
  TestServer::Options o;
  o.tls = files;
  o.client_ca = std::move(client_ca);
  return o;
}

/// One PEM file holding a certificate and its key (what --client-cert takes).
fs::path combined(const TlsFiles& files, const fs::path& out) {
  test::write_file(out, test::read_file(files.cert_chain) + test::read_file(files.key));
  return out;
}

/// The key of `files`, encrypted with a passphrase, after the certificate.
fs::path with_encrypted_key(const TlsFiles& files, const fs::path& out) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_file(files.key.c_str(), "r"), &BIO_free);
  REQUIRE(in);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr),
                                                         &EVP_PKEY_free);
  REQUIRE(key);
  std::unique_ptr<BIO, decltype(&BIO_free)> mem(BIO_new(BIO_s_mem()), &BIO_free);
  char pass[] = "secret";
  REQUIRE(PEM_write_bio_PKCS8PrivateKey(mem.get(), key.get(), EVP_aes_128_cbc(), pass, 6, nullptr, nullptr) == 1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem.get(), &data);
  test::write_file(out, test::read_file(files.cert_chain) + std::string(data, static_cast<std::size_t>(n)));
  return out;
}

}  // namespace

TEST_CASE("trust: the order is --cert, PIP_CERT, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE/DIR, the system",
          "[transports][http][tls][trust]") {
  TempDir dir;
  fs::create_directories(dir / "folder");
  const std::string folder = (dir / "folder").string();
  struct Row {
    const char* what;
    std::map<std::string, std::string> env;
    std::optional<std::string> cert;  // --cert
    bool from_env;
    std::string source;
    std::vector<std::string> paths;
    std::vector<bool> folders;
  };
  const std::map<std::string, std::string> all = {{"PIP_CERT", "/p.pem"},        {"REQUESTS_CA_BUNDLE", "/r.pem"},
                                                  {"CURL_CA_BUNDLE", "/c.pem"},  {"SSL_CERT_FILE", "/s.pem"},
                                                  {"SSL_CERT_DIR", "/d1:/d2"}};
  auto without = [&](std::initializer_list<const char*> names) {
    auto e = all;
    for (const char* n : names) e.erase(n);
    return e;
  };
  const std::vector<Row> rows{
      {"nothing set: the system store", {}, std::nullopt, true, "system", {}, {}},
      {"--cert wins over every variable", all, "/flag.pem", true, "--cert", {"/flag.pem"}, {false}},
      {"--cert naming a folder", all, folder, true, "--cert", {folder}, {true}},
      {"PIP_CERT first", all, std::nullopt, true, "PIP_CERT", {"/p.pem"}, {false}},
      {"then REQUESTS_CA_BUNDLE", without({"PIP_CERT"}), std::nullopt, true, "REQUESTS_CA_BUNDLE", {"/r.pem"}, {false}},
      {"then CURL_CA_BUNDLE", without({"PIP_CERT", "REQUESTS_CA_BUNDLE"}), std::nullopt, true, "CURL_CA_BUNDLE",
       {"/c.pem"}, {false}},
      {"then SSL_CERT_FILE with SSL_CERT_DIR's folders", without({"PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"}),
       std::nullopt, true, "SSL_CERT_FILE + SSL_CERT_DIR", {"/s.pem", "/d1", "/d2"}, {false, true, true}},
      {"SSL_CERT_DIR alone", {{"SSL_CERT_DIR", "/d1::"}}, std::nullopt, true, "SSL_CERT_DIR", {"/d1"}, {true}},
      {"a variable set to \"\" counts as unset", {{"PIP_CERT", ""}, {"CURL_CA_BUNDLE", "/c.pem"}}, std::nullopt, true,
       "CURL_CA_BUNDLE", {"/c.pem"}, {false}},
      {"a bundle variable naming a folder", {{"REQUESTS_CA_BUNDLE", folder}}, std::nullopt, true, "REQUESTS_CA_BUNDLE",
       {folder}, {true}},
      {"ca_from_env false: no variable is read", all, std::nullopt, false, "system", {}, {}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    transports::HttpOptions o;
    o.ca_from_env = row.from_env;
    if (row.cert) {
      o.ca_file = row.cert;
      o.ca_source = "--cert";
    }
    const auto choice = transports::choose_trust(o, [&](const char* name) -> const char* {
      auto it = row.env.find(name);
      return it == row.env.end() ? nullptr : it->second.c_str();
    });
    CHECK(choice.source() == row.source);
    REQUIRE(choice.locations.size() == row.paths.size());
    for (std::size_t i = 0; i < row.paths.size(); ++i) {
      CHECK(choice.locations[i].path == row.paths[i]);
      CHECK(choice.locations[i].directory == row.folders[i]);
    }
    if (row.paths.empty()) CHECK(choice.describe() == "the system store");
    for (const auto& l : choice.locations) CHECK(contains(choice.describe(), l.path + " (" + l.source + ")"));
  }
}

TEST_CASE("trust: the client certificate is the option's, else SSL_CLIENT_CERT", "[transports][http][tls][trust]") {
  const std::map<std::string, std::string> env = {{"SSL_CLIENT_CERT", "/env.pem"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  transports::HttpOptions o;
  auto c = transports::choose_trust(o, getenv);
  REQUIRE(c.client_cert);
  CHECK(c.client_cert->path == "/env.pem");
  CHECK(c.client_cert->source == "SSL_CLIENT_CERT");
  o.client_cert = "/flag.pem";
  o.client_cert_source = "--client-cert";
  c = transports::choose_trust(o, getenv);
  REQUIRE(c.client_cert);
  CHECK(c.client_cert->path == "/flag.pem");
  CHECK(c.client_cert->source == "--client-cert");
  o.client_cert.reset();
  o.ca_from_env = false;
  CHECK_FALSE(transports::choose_trust(o, getenv).client_cert);
}

TEST_CASE("https: T02 each trust variable, SSL_CERT_DIR a hashed folder, names the test CA; the first set wins",
          "[transports][http][tls][trust]") {
  TempDir dir;
  TestCa ca(dir / "ca");
  TestCa other(dir / "other", "wheelfit other CA");
  const fs::path hashed = dir / "hashed";
  ca.write_hashed(hashed);
  TestServer server(serve([](const HttpRequest& r) { return http_response(200, "trusted " + r.target); }),
                    tls_options_http_trust(ca.issue("leaf")));
  const std::string good = ca.cert().string();
  const std::string bad = other.cert().string();
  struct Row {
    const char* what;
    std::map<std::string, std::string> env;
    bool ok;
  };
  const std::vector<Row> rows{
      {"PIP_CERT", {{"PIP_CERT", good}}, true},
      {"REQUESTS_CA_BUNDLE", {{"REQUESTS_CA_BUNDLE", good}}, true},
      {"CURL_CA_BUNDLE", {{"CURL_CA_BUNDLE", good}}, true},
      {"SSL_CERT_FILE", {{"SSL_CERT_FILE", good}}, true},
      {"SSL_CERT_DIR: a hashed folder", {{"SSL_CERT_DIR", hashed.string()}}, true},
      {"REQUESTS_CA_BUNDLE naming the hashed folder", {{"REQUESTS_CA_BUNDLE", hashed.string()}}, true},
      {"PIP_CERT (another CA) wins over REQUESTS_CA_BUNDLE", {{"PIP_CERT", bad}, {"REQUESTS_CA_BUNDLE", good}}, false},
      {"CURL_CA_BUNDLE (another CA) wins over SSL_CERT_FILE", {{"CURL_CA_BUNDLE", bad}, {"SSL_CERT_FILE", good}}, false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CleanTrustEnv clean;
    std::list<ScopedEnv> set;
    for (const auto& [k, v] : row.env) set.emplace_back(k, v);
    auto t = make(from_env());
    auto r = t->get(req(server.url("/p/", "localhost")));
    if (row.ok) {
      WHEELFIT_REQUIRE_OK(r);
      CHECK(r->body == "trusted /p/");
    } else {
      REQUIRE_FALSE(r);
      CHECK(net::is(r.error(), NetErrc::certificate));
    }
  }
}

TEST_CASE("trust: a store that cannot be loaded is an error naming it and the flag or variable",
          "[transports][http][tls][trust]") {
  TempDir dir;
  TestCa ca(dir / "ca");
  test::write_file(dir / "empty.pem", "not a certificate\n");
  fs::create_directories(dir / "unhashed");
  fs::copy_file(ca.cert(), dir / "unhashed" / "ca.pem");
  const fs::path unreadable = dir / "locked.pem";
  fs::copy_file(ca.cert(), unreadable);
  fs::permissions(unreadable, fs::perms::none);
  const test::Fifo fifo(dir / "fifo.pem");  // issue 20 item 7: OpenSSL's open blocked on it forever
  fs::create_symlink("/dev/null", dir / "null.pem");
  struct Row {
    const char* what;
    std::string variable;  // "" = --cert
    std::string path;
    const char* why;
  };
  std::vector<Row> rows{
      {"--cert: a FIFO", "", fifo.string(), "is a FIFO, not a regular file"},
      {"SSL_CERT_FILE: a link to /dev/null", "SSL_CERT_FILE", (dir / "null.pem").string(), "is a character device, not a regular file"},
      {"--cert: a missing file", "", (dir / "missing.pem").string(), "does not exist"},
      {"--cert: no certificate in it", "", (dir / "empty.pem").string(), "holds no certificate"},
      {"--cert: a folder without hashed names", "", (dir / "unhashed").string(), "openssl rehash"},
      {"REQUESTS_CA_BUNDLE: a missing file", "REQUESTS_CA_BUNDLE", (dir / "missing.pem").string(), "does not exist"},
      {"CURL_CA_BUNDLE: no certificate", "CURL_CA_BUNDLE", (dir / "empty.pem").string(), "holds no certificate"},
      {"PIP_CERT: a missing file", "PIP_CERT", (dir / "missing.pem").string(), "does not exist"},
      {"SSL_CERT_DIR: a missing folder", "SSL_CERT_DIR", (dir / "missing").string(), "not a folder"},
      {"SSL_CERT_DIR: a folder without hashed names", "SSL_CERT_DIR", (dir / "unhashed").string(), "hashed"},
  };
  if (::geteuid() != 0) rows.push_back({"--cert: unreadable", "", unreadable.string(), "Permission denied"});
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CleanTrustEnv clean;
    std::optional<ScopedEnv> var;
    auto o = from_env();
    if (row.variable.empty()) {
      o.ca_file = row.path;
      o.ca_source = "--cert";
    } else {
      var.emplace(row.variable, row.path);
    }
    auto t = transports::make_http_transport(o);
    REQUIRE_FALSE(t);
    INFO(t.error().message);
    CHECK(t.error().is(Errc::invalid_input));
    CHECK(contains(t.error().message, row.path));
    CHECK(contains(t.error().message, row.variable.empty() ? "--cert" : row.variable));
    CHECK(contains(t.error().message, row.why));
  }
}

TEST_CASE("trust: an empty system store fails each https request naming it, before connecting, never retried",
          "[transports][http][tls][trust]") {
  TempDir dir;
  TestCa ca(dir / "ca");
  TestServer server(serve([](const HttpRequest&) { return http_response(200, "unreachable"); }), tls_options_http_trust(ca.issue("leaf")));
  TestServer plain(serve([](const HttpRequest&) { return http_response(200, "plain"); }));
  CleanTrustEnv clean;
  // OpenSSL's own defaults read these two; wheelfit (ca_from_env false) does not.
  ScopedEnv file("SSL_CERT_FILE", (dir / "none.pem").string());
  ScopedEnv folder("SSL_CERT_DIR", (dir / "none").string());
  auto t = make(fast_options());
  auto before = t->get(req(plain.url("/")));  // plain http needs no trust store
  WHEELFIT_REQUIRE_OK(before);
  for (int i = 0; i < 2; ++i) {
    auto r = t->get(req(server.url("/p/", "localhost")));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(net::is(r.error(), NetErrc::certificate));
    CHECK(contains(r.error().message, "system trust store"));
    CHECK(contains(r.error().message, (dir / "none.pem").string()));
    CHECK(contains(r.error().message, "--cert"));
  }
  CHECK(server.connections() == 0);
  CHECK(t->stats().retries == 0);
}

TEST_CASE("https: T06 mutual TLS: --client-cert or SSL_CLIENT_CERT is presented; without one, or another, no retry",
          "[transports][http][tls][trust]") {
  TempDir dir;
  TestCa ca(dir / "ca");
  TestCa other(dir / "other", "wheelfit other CA");
  TestServer server(serve([](const HttpRequest& r) { return http_response(200, "hello client " + r.target); }),
                    tls_options_http_trust(ca.issue("leaf"), ca.cert()));
  const fs::path mine = combined(ca.issue("client"), dir / "client.pem");
  const fs::path foreign = combined(other.issue("client"), dir / "foreign.pem");
  struct Row {
    const char* what;
    std::optional<fs::path> option, variable;
    const char* error;  // nullptr: succeeds
  };
  const std::vector<Row> rows{
      {"--client-cert", mine, std::nullopt, nullptr},
      {"SSL_CLIENT_CERT", std::nullopt, mine, nullptr},
      {"none", std::nullopt, std::nullopt, "requires a client certificate"},
      {"one from another CA", foreign, std::nullopt, "refused the client certificate"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CleanTrustEnv clean;
    std::optional<ScopedEnv> var;
    if (row.variable) var.emplace("SSL_CLIENT_CERT", row.variable->string());
    auto o = from_env();
    o.ca_file = ca.cert().string();
    if (row.option) {
      o.client_cert = row.option->string();
      o.client_cert_source = "--client-cert";
    }
    const int before = server.connections();
    auto t = make(o);
    auto r = t->get(req(server.url("/p/", "localhost")));
    if (!row.error) {
      WHEELFIT_REQUIRE_OK(r);
      CHECK(r->body == "hello client /p/");
      continue;
    }
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(net::is(r.error(), NetErrc::certificate));
    CHECK(contains(r.error().message, row.error));
    if (!row.option) CHECK(contains(r.error().message, "--client-cert"));
    CHECK(t->stats().retries == 0);
    CHECK(server.connections() == before + 1);
  }
}

TEST_CASE("trust: a client certificate that cannot be used is an error naming it and the flag or variable",
          "[transports][http][tls][trust]") {
  TempDir dir;
  TestCa ca(dir / "ca");
  const TlsFiles a = ca.issue("a");
  const TlsFiles b = ca.issue("b");
  test::write_file(dir / "mismatch.pem", test::read_file(a.cert_chain) + test::read_file(b.key));
  const fs::path encrypted = with_encrypted_key(a, dir / "encrypted.pem");
  struct Row {
    const char* what;
    std::string path;
    bool variable;
    const char* why;
  };
  const test::Fifo fifo(dir / "fifo.pem");  // issue 20 item 7: OpenSSL's open blocked on it forever
  const std::vector<Row> rows{
      {"a FIFO", fifo.string(), false, "is a FIFO, not a regular file"},
      {"missing", (dir / "missing.pem").string(), false, "does not exist"},
      {"no certificate", ca.issue("c").key.string(), true, "holds no certificate"},
      {"a certificate without its key", a.cert_chain.string(), false, "holds no unencrypted private key"},
      {"an encrypted key (never a passphrase prompt)", encrypted.string(), true, "holds no unencrypted private key"},
      {"another certificate's key", (dir / "mismatch.pem").string(), false, "does not belong"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CleanTrustEnv clean;
    std::optional<ScopedEnv> var;
    auto o = from_env();
    o.ca_file = ca.cert().string();
    if (row.variable) {
      var.emplace("SSL_CLIENT_CERT", row.path);
    } else {
      o.client_cert = row.path;
      o.client_cert_source = "--client-cert";
    }
    auto t = transports::make_http_transport(o);
    REQUIRE_FALSE(t);
    INFO(t.error().message);
    CHECK(t.error().is(Errc::invalid_input));
    CHECK(contains(t.error().message, row.path));
    CHECK(contains(t.error().message, row.variable ? "SSL_CLIENT_CERT" : "--client-cert"));
    CHECK(contains(t.error().message, row.why));
  }
}
