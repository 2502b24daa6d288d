// Secrets end to end: `wheelfit resolve` against loopback servers that demand credentials (URL
// userinfo, netrc and WHEELFIT_INDEX_TOKEN), with GITHUB_TOKEN set and the Releases API answering
// a page the index cannot serve. Each run's every output (stdout, stderr with the debug log,
// --json, pixi.toml, every cache file) is searched for each secret, and none is found.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <set>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;     // TempDir, read_file, write_file, ...
using namespace wheelfit::testing;  // the loopback servers

namespace {

const std::string kUrlPassword = "TOPSECRET-URL-PW";
const std::string kNetrcPassword = "NETRC-SECRET-PW";
const std::string kIndexToken = "INDEX-TOKEN-SECRET";
const std::string kGithubToken = "ghp_" + std::string(36, 'Q');
const std::string kTagsCliSecrets = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";

// HTTP Basic credentials as the index expects them (base64 of "alice:<kUrlPassword>" and
// "nora:<kNetrcPassword>").
const std::string kUrlBasic = "Basic YWxpY2U6VE9QU0VDUkVULVVSTC1QVw==";
const std::string kNetrcBasic = "Basic bm9yYTpORVRSQy1TRUNSRVQtUFc=";

// The index (127.0.0.1): any of the three credentials opens it; "other" always fails (503), so the
// Releases API is asked for it. The API (localhost, plain http) lists the wheel of "other".
struct CliSecretsWorld {
  TempDir dir;
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "machine.toml";
  fs::path netrc = dir / "netrc";
  fs::path cache = dir / "cache";
  std::set<std::string> accepted = {kUrlBasic, kNetrcBasic, "Bearer " + kIndexToken};
  std::atomic<int> refused{0};
  TestServer index{wheelfit::testing::serve([this](const HttpRequest& r) {
    const auto auth = r.header("authorization");
    if (!auth || !accepted.count(*auth)) {
      ++refused;
      return http_response(401, "no", {{"WWW-Authenticate", "Basic realm=\"idx\""}});
    }
    if (r.target == "/pkg/") {
      const std::string file = "pkg-1.0+cu128torch2.8-" + kTagsCliSecrets;
      return http_response(200, "<a href=\"../dl/pkg-1.0%2Bcu128torch2.8-" + kTagsCliSecrets + "#sha256=" + std::string(64, 'a') +
                                    "\">" + file + "</a>",
                           {{"Content-Type", "text/html"}, {"Set-Cookie", "session=COOKIE-SECRET"}});
    }
    if (r.target == "/other/") return http_response(503, "down");
    return http_response(404, "not here");
  })};
  std::unique_ptr<TestServer> api;

  CliSecretsWorld() {
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"pkg\", \"other\"]\n");
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "driver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
    write_file(netrc, "machine 127.0.0.1 login nora password " + kNetrcPassword + "\n");
    ::chmod(netrc.c_str(), 0600);
    api = std::make_unique<TestServer>(wheelfit::testing::serve([this](const HttpRequest& r) {
      if (r.target.rfind("/repos/o/n/releases", 0) != 0) return http_response(404, "{}");
      const std::string name = "other-2.0+cu128torch2.8-" + kTagsCliSecrets;
      const std::string asset = "{\"name\":\"" + name + "\",\"browser_download_url\":\"" + api->url("/dl/") + name +
                                "\",\"digest\":\"sha256:" + std::string(64, 'b') + "\",\"size\":1000}";
      return http_response(200, "[{\"tag_name\":\"v2\",\"name\":\"v2\",\"assets\":[" + asset + "]}]",
                           {{"Content-Type", "application/json"}});
    }));
  }

  [[nodiscard]] std::string index_url(const std::string& userinfo = "") const {
    return "http://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" + std::to_string(index.port()) + "/";
  }

  wheelfit::test::CliRun run(std::vector<std::string> extra, const std::string& env) const {
    std::vector<std::string> args = {"resolve", config.string(), "--machine", machine.string(), "--cache-dir",
                                     cache.string(), "--retries", "0", "--releases-repo", "o/n"};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string api_base = api->url("/", "localhost");
    return wheelfit::test::run_program(
        "env -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA -u CONDA_OVERRIDE_GLIBC "
        "-u WHEELFIT_PLUGIN_PATH -u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy "
        "-u WHEELFIT_ALLOW_INSECURE_HOST -u WHEELFIT_INDEX_TOKEN -u WHEELFIT_RELEASES_REPO WHEELFIT_DEBUG=1 "
        "WHEELFIT_RETRY_BACKOFF_MS=1 NETRC=" + shell_quote(netrc.string()) + " GITHUB_TOKEN=" + kGithubToken +
            " WHEELFIT_GITHUB_API=" + shell_quote(api_base.substr(0, api_base.size() - 1)) + " " + env,
        wheelfit::test::built_wheelfit(), args);
  }

  // Every file under the cache: no secret, files 0600, folders 0700.
  void check_cache() const {
    REQUIRE(fs::is_directory(cache));
    CHECK(file_mode(cache) == 0700);
    for (const auto& e : fs::recursive_directory_iterator(cache)) {
      CAPTURE(e.path());
      if (e.is_directory()) {
        CHECK(file_mode(e.path()) == 0700);
      } else {
        CHECK(file_mode(e.path()) == 0600);
        check_clean(read_file(e.path()));
      }
    }
  }

  static void check_clean(const std::string& text) {
    for (const auto& s : {kUrlPassword, kNetrcPassword, kIndexToken, kGithubToken, std::string("COOKIE-SECRET")}) {
      CAPTURE(s);
      CHECK_THAT(text, !Catch::Contains(s));
    }
  }

  [[nodiscard]] std::set<std::string> cache_files() const {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(cache)) {
      if (e.is_regular_file()) out.insert(e.path().filename().string());
    }
    return out;
  }
};

}  // namespace

TEST_CASE("resolve: no secret in any output, whichever way the credentials came", "[cli][network][secrets]") {
  CliSecretsWorld w;
  const fs::path pixi = w.dir / "pixi.toml";

  // 1. The password in the index URL, the index host:port allowed over plain http; the API host
  //    (localhost) is not, so GITHUB_TOKEN stays home.
  auto first = w.run({"--index", w.index_url("alice:" + kUrlPassword), "--allow-insecure-host",
                      "127.0.0.1:" + std::to_string(w.index.port()), "--json", "-o", pixi.string()},
                     "");
  INFO(first.out << first.err);
  REQUIRE(first.code == 0);
  CliSecretsWorld::check_clean(first.out);
  CliSecretsWorld::check_clean(first.err);
  CliSecretsWorld::check_clean(read_file(pixi));
  CHECK_THAT(read_file(pixi), Catch::Contains("# Index: " + w.index_url()));
  CHECK_THAT(first.err, Catch::Contains("GITHUB_TOKEN is not sent to http://localhost:"));
  const auto doc = boost::json::parse(first.out).as_object();
  CHECK(doc.at("index").at("url").as_string() == w.index_url());
  CHECK(doc.at("index").at("source") == "index+releases-api");
  for (const auto& r : w.api->requests()) CHECK_FALSE(r.header("authorization"));
  CHECK(w.refused.load() == 0);
  w.check_cache();
  const auto entries = w.cache_files();

  // 2. The netrc's password, the host allowed by the environment; the same cache entries serve.
  auto second = w.run({"--index", w.index_url(), "-o", pixi.string()}, "WHEELFIT_ALLOW_INSECURE_HOST=127.0.0.1");
  INFO(second.out << second.err);
  REQUIRE(second.code == 0);
  CliSecretsWorld::check_clean(second.out);
  CliSecretsWorld::check_clean(second.err);
  CliSecretsWorld::check_clean(read_file(pixi));
  CHECK(w.cache_files() == entries);

  // 3. WHEELFIT_INDEX_TOKEN (it wins over the netrc for the index's origin).
  auto third = w.run({"--index", w.index_url(), "--allow-insecure-host", "127.0.0.1", "--json"},
                     "WHEELFIT_INDEX_TOKEN=" + kIndexToken);
  INFO(third.out << third.err);
  REQUIRE(third.code == 0);
  CliSecretsWorld::check_clean(third.out);
  CliSecretsWorld::check_clean(third.err);
  w.check_cache();
  CHECK(w.cache_files() == entries);
  CHECK(w.refused.load() == 0);

  // Which credential each run sent to the index (the first request of each run).
  std::vector<std::string> sent;
  for (const auto& r : w.index.requests()) {
    const std::string a = r.header("authorization").value_or("");
    if (sent.empty() || sent.back() != a) sent.push_back(a);
  }
  CHECK(sent == std::vector<std::string>{kUrlBasic, kNetrcBasic, "Bearer " + kIndexToken});
}

TEST_CASE("resolve: credentials for a plain-http index need the host allowed", "[cli][network][secrets]") {
  CliSecretsWorld w;
  SECTION("a password in the URL is refused before any request, naming the way out") {
    auto r = w.run({"--index", w.index_url("alice:" + kUrlPassword)}, "");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--allow-insecure-host 127.0.0.1"));
    CliSecretsWorld::check_clean(r.out);
    CliSecretsWorld::check_clean(r.err);
    CHECK(w.index.requests().empty());
  }
  SECTION("a netrc entry is not sent: the index answers 401, and the warning says why") {
    auto r = w.run({"--index", w.index_url(), "--json"}, "");
    CHECK(r.code != 0);
    CHECK_THAT(r.err, Catch::Contains("not sending the credentials from " + w.netrc.string()));
    CliSecretsWorld::check_clean(r.out);
    CliSecretsWorld::check_clean(r.err);
    for (const auto& q : w.index.requests()) CHECK_FALSE(q.header("authorization"));
  }
  SECTION("a mistyped flag quoting the URL does not print its password") {
    auto r = w.run({"--idnex=" + w.index_url("alice:" + kUrlPassword)}, "");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("unknown option --idnex="));
    CliSecretsWorld::check_clean(r.err);
  }
  SECTION("a bad --allow-insecure-host is a usage error") {
    auto r = w.run({"--index", w.index_url(), "--allow-insecure-host", "http://127.0.0.1/"}, "");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--allow-insecure-host"));
  }
}
