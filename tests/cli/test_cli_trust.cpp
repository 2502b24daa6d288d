// `wheelfit resolve` against an https index on loopback (a CA made at test time): --cert and the
// trust variables, named in the report's index line and the JSON `index.tls`; a trust store or
// client certificate that cannot be loaded stops the run naming it (exit 2); a page's hostile
// links are skipped with a warning (README "TLS", docs/network-faults.md T07, H05).
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit::test;     // TempDir, read_file, write_file, ...
using namespace wheelfit::testing;  // the loopback servers

namespace {

// The built wheelfit with nothing of the caller's network environment (proxies, tokens, trust).
wheelfit::test::CliRun run_wheelfit_cli_trust(const std::vector<std::string>& args, const std::string& env = "") {
  return wheelfit::test::run_program(wheelfit::test::clean_network_env() + " " + env, wheelfit::test::built_wheelfit(), args);
}

// One run of a table of trust settings: its flags and environment, and what its output names
// (where the trust store came from, or a part of the error).
struct TlsRun {
  const char* what;
  std::vector<std::string> flags;
  std::string env;
  std::string names;
};

const std::string kTagsCliTrust = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";

// A one-package index served over TLS by a server whose certificate a test CA issued; its page
// also links a local file, which a remote page may not.
struct SecureIndex {
  TempDir dir;
  TestCa ca{dir / "ca"};
  fs::path index = dir / "index";
  fs::path config = dir / "comfy-env.toml";
  fs::path machine = dir / "machine.toml";
  std::unique_ptr<TestServer> server;

  SecureIndex() {
    const std::string file = "pkg-1.0+cu128torch2.8-" + kTagsCliTrust;
    write_file(index / "pkg" / "index.html",
               "<html><body><a href=\"pkg-1.0%2Bcu128torch2.8-" + kTagsCliTrust + "#sha256=" + std::string(64, 'a') + "\">" +
                   file + "</a>\n<a href=\"file:///etc/pkg-2.0+cu128torch2.8-" + kTagsCliTrust + "\">pkg-2.0+cu128torch2.8-" +
                   kTagsCliTrust + "</a></body></html>");
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "driver_version = \"580.65.06\"\ndriver_line = \"13.0\"\ngpus = [\"9.0\"]\n");
    TestServer::Options o;
    o.tls = ca.issue("leaf");
    server = std::make_unique<TestServer>(serve_directory(index), o);
  }
  std::vector<std::string> args(std::vector<std::string> extra = {}) const {
    std::vector<std::string> a{"resolve", config.string(), "--index", server->url("/", "localhost"), "--machine",
                               machine.string(), "--no-cache"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

}  // namespace

TEST_CASE("resolve names the trust store in the index line and index.tls: --cert, then the variables",
          "[cli][network][tls]") {
  SecureIndex world;
  const std::string ca = world.ca.cert().string();
  const std::vector<TlsRun> rows{
      {"--cert", {"--cert", ca}, "", "--cert"},
      {"REQUESTS_CA_BUNDLE", {}, "REQUESTS_CA_BUNDLE=" + wheelfit::test::shell_quote(ca), "REQUESTS_CA_BUNDLE"},
      {"--cert wins over SSL_CERT_FILE", {"--cert", ca}, "SSL_CERT_FILE=/nonexistent.pem", "--cert"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto flags = row.flags;
    flags.push_back("--json");
    auto r = run_wheelfit_cli_trust(world.args(flags), row.env);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto out = json::parse(r.out).as_object();
    const auto& tls = out.at("index").at("tls").as_object();
    CHECK(std::string(tls.at("trust_from").as_string()) == row.names);
    REQUIRE(tls.at("trust").as_array().size() == 1);
    CHECK(std::string(tls.at("trust").at(0).at("path").as_string()) == ca);
    CHECK(tls.at("client_cert").is_null());
    // The page's file:// link is skipped, and the warning names the page.
    bool warned = false;
    for (const auto& w : out.at("warnings").as_array()) {
      const std::string text(w.as_string());
      warned = warned || (text.find(world.server->url("/pkg/", "localhost")) != std::string::npos &&
                          text.find("local file link on a remote page") != std::string::npos);
    }
    CHECK(warned);
    CHECK(std::string(out.at("packages").at(0).at("url").as_string()).rfind("https://localhost:", 0) == 0);

    auto human = run_wheelfit_cli_trust(world.args(row.flags), row.env);
    REQUIRE(human.code == 0);
    CHECK_THAT(human.out, Catch::Contains("; trust: " + ca + " (" + row.names + "))"));
  }
}

TEST_CASE("resolve: a trust store or client certificate that cannot be loaded stops the run naming it (exit 2)",
          "[cli][network][tls]") {
  SecureIndex world;
  const std::string missing = (world.dir / "missing.pem").string();
  const std::vector<TlsRun> rows{
      {"--cert", {"--cert", missing}, "", missing + " (from --cert) does not exist"},
      {"CURL_CA_BUNDLE", {}, "CURL_CA_BUNDLE=" + missing, missing + " (from CURL_CA_BUNDLE) does not exist"},
      {"--client-cert", {"--cert", world.ca.cert().string(), "--client-cert", missing}, "",
       missing + " (from --client-cert) does not exist"},
      {"SSL_CLIENT_CERT", {}, "SSL_CLIENT_CERT=" + missing, missing + " (from SSL_CLIENT_CERT) does not exist"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto r = run_wheelfit_cli_trust(world.args(row.flags), row.env);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(row.names));
  }
  CHECK(world.server->requests().empty());
}

TEST_CASE("resolve: without a trust store naming the test CA the index is unreadable (exit 4), a certificate error",
          "[cli][network][tls]") {
  SecureIndex world;
  auto r = run_wheelfit_cli_trust(world.args({"--retries", "0"}));
  INFO(r.err);
  CHECK(r.code == 4);
  CHECK_THAT(r.err, Catch::Contains("certificate"));
}
