// `wheelfit resolve` over the network, end to end: the real farm snapshot served on loopback
// with faults gives the same answer as the clean file:// run (docs/network-faults.md N01, N11).
#include <catch2/catch.hpp>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit::test;
using namespace wheelfit::testing;

namespace {

wheelfit::test::CliRun run_wheelfit_cli_network(const std::vector<std::string>& args, const std::string& env = "") {
  // Quick retries; no proxy, token, index or trust store from the caller's environment.
  return wheelfit::test::run_program(wheelfit::test::clean_network_env() + " " + env, wheelfit::test::built_wheelfit(), args);
}

const char* const kMachine =
    "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
    "driver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n";

// The part of a --json answer that must not depend on where the pages came from.
struct Answer {
  json::value combo, tier, pins;
  std::set<std::string> packages;  // "name version url sha256"
  std::set<std::string> unresolved;
  bool operator==(const Answer&) const = default;
};
Answer answer_of(const std::string& out) {
  auto v = json::parse(out).as_object();
  Answer a{v.at("combo"), v.at("tier"), v.at("pins"), {}, {}};
  for (const auto& p : v.at("packages").as_array()) {
    const auto& o = p.as_object();
    a.packages.insert(json::serialize(o.at("name")) + " " + json::serialize(o.at("version")) + " " +
                      json::serialize(o.at("url")) + " " + json::serialize(o.at("sha256")));
  }
  for (const auto& u : v.at("unresolved").as_array()) a.unresolved.insert(json::serialize(u.at("name")));
  return a;
}

// The file under the snapshot that a request target names ("/cumesh/" -> cumesh/index.html),
// or nullopt.
std::optional<std::string> snapshot_file(const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  if (path.find("..") != std::string::npos || path.empty() || path[0] != '/') return std::nullopt;
  fs::path file = wheelfit::test::farm_index_dir() / path.substr(1);
  if (path.back() == '/') file /= "index.html";
  if (!fs::is_regular_file(file)) return std::nullopt;
  return read_file(file);
}

std::string content_type(const std::string& target) {
  return target.find(".json") != std::string::npos ? "application/json" : "text/html";
}

// The farm's wheels as GitHub releases (one per release tag, from the download URLs), the way
// the Releases API lists them, split into pages of `per_page` releases.
std::vector<std::string> releases_pages(std::size_t per_page) {
  auto pj = json::parse(read_file(wheelfit::test::farm_index_dir() / "packages.json")).as_object();
  std::map<std::string, json::array> assets_by_tag;
  for (const auto& [name, entry] : pj.at("packages").as_object()) {
    for (const auto& w : entry.as_object().at("wheels").as_array()) {
      const auto& o = w.as_object();
      const std::string url(o.at("url").as_string());
      const auto at = url.find("/download/") + 10;
      const std::string tag = url.substr(at, url.find('/', at) - at);
      json::value digest = nullptr;
      if (o.contains("sha256") && o.at("sha256").is_string()) digest = "sha256:" + std::string(o.at("sha256").as_string());
      assets_by_tag[tag].push_back(json::object{{"name", o.at("filename")},
                                                {"browser_download_url", url},
                                                {"digest", digest},
                                                {"content_type", "application/octet-stream"},
                                                {"size", 1000}});
    }
  }
  std::vector<std::string> pages;
  json::array page;
  for (auto& [tag, assets] : assets_by_tag) {
    page.push_back(json::object{{"tag_name", tag}, {"name", tag}, {"assets", std::move(assets)}});
    if (page.size() == per_page) pages.push_back(json::serialize(std::exchange(page, {})));
  }
  if (!page.empty()) pages.push_back(json::serialize(page));
  return pages;
}

// The real geometrypack config on an H100 machine, and its answer from the clean file:// run.
struct Reference {
  TempDir dir;
  std::string config = (wheelfit::test::fixtures_dir() / "comfy-env" / "geometrypack.comfy-env.toml").string();
  std::string machine = (dir / "machine.toml").string();
  Answer expected;
  Reference() {
    write_file(dir / "machine.toml", kMachine);
    auto clean = run_wheelfit_cli_network({"resolve", config, "--index", wheelfit::test::farm_index_dir().string(), "--machine",
                               machine, "--json"});
    REQUIRE(clean.code == 0);
    expected = answer_of(clean.out);
  }
};

}  // namespace

TEST_CASE("resolve over loopback with resets and 503s gives the file:// answer", "[cli][network][fixtures]") {
  Reference ref;
  const auto& [dir, config, machine, expected] = ref;

  // Connections 0 and 1 are reset before any byte (N01); packages.json answers 503 twice (N11).
  std::atomic<int> json_requests{0};
  auto pages = wheelfit::testing::serve([&](const HttpRequest& r) {
    if (r.target == "/packages.json" && json_requests++ < 2) return http_response(503, "busy", {{"Retry-After", "0"}});
    auto body = snapshot_file(r.target);
    return body ? http_response(200, *body, {{"Content-Type", content_type(r.target)}}) : http_response(404, "not found");
  });
  TestServer server([&](wheelfit::testing::Conn& c) {
    if (c.index() < 2) return c.reset();
    pages(c);
  });
  auto net = run_wheelfit_cli_network({"resolve", config, "--index", server.url("/"), "--machine", machine,
                           "--json", "--no-cache"});
  INFO(net.err);
  REQUIRE(net.code == 0);
  CHECK(answer_of(net.out) == expected);
  CHECK(json_requests.load() == 3);
  CHECK_THAT(net.err, Catch::Contains("retry"));
  const auto index = json::parse(net.out).at("index").as_object();
  CHECK(index.at("source") == "index");

  SECTION("a second run through the cache revalidates and gives the same answer") {
    const std::string cache = (dir / "cache").string();
    auto first = run_wheelfit_cli_network({"resolve", config, "--index", server.url("/"), "--machine", machine,
                               "--json", "--cache-dir", cache});
    REQUIRE(first.code == 0);
    auto offline = run_wheelfit_cli_network({"resolve", config, "--index", server.url("/"), "--machine",
                                 machine, "--json", "--cache-dir", cache, "--offline"});
    INFO(offline.err);
    REQUIRE(offline.code == 0);
    CHECK(answer_of(offline.out) == expected);
  }
}

TEST_CASE("resolve with the Pages host dead answers from the Releases API", "[cli][network][fixtures]") {
  Reference ref;
  const auto& [dir, config, machine, expected] = ref;

  // Pages: every connection reset. API: the farm's releases, 5 a page, linked by rel="next".
  TestServer dead([](wheelfit::testing::Conn& c) { c.reset(); });
  const auto pages = releases_pages(5);
  REQUIRE(pages.size() > 1);
  std::atomic<int> api_requests{0};
  std::unique_ptr<TestServer> api;
  api = std::make_unique<TestServer>(wheelfit::testing::serve([&](const HttpRequest& r) {
    ++api_requests;
    const std::string prefix = "/repos/Comfy-Forge/cuda-wheels/releases?per_page=100";
    if (r.target.rfind(prefix, 0) != 0) return http_response(404, "{}");
    std::size_t n = 1;
    if (auto at = r.target.find("&page="); at != std::string::npos) n = std::stoul(r.target.substr(at + 6));
    if (n < 1 || n > pages.size()) return http_response(200, "[]", {{"Content-Type", "application/json"}});
    wheelfit::testing::TestHeaders h{{"Content-Type", "application/json"}};
    if (n < pages.size()) h.emplace_back("Link", "<" + api->url(prefix + "&page=" + std::to_string(n + 1)) + ">; rel=\"next\"");
    return http_response(200, pages[n - 1], h);
  }));

  auto net = run_wheelfit_cli_network({"resolve", config, "--index", dead.url("/"), "--machine", machine,
                           "--json", "--no-cache", "--retries", "1"},
                          "WHEELFIT_GITHUB_API=" + shell_quote(api->url("/").substr(0, api->url("/").size() - 1)) +
                              " WHEELFIT_RELEASES_REPO=Comfy-Forge/cuda-wheels");
  INFO(net.err);
  REQUIRE(net.code == 0);
  CHECK(answer_of(net.out) == expected);
  CHECK(api_requests.load() == static_cast<int>(pages.size()));
  const auto index = json::parse(net.out).at("index").as_object();
  CHECK(index.at("source") == "releases-api");
  CHECK_THAT(std::string(index.at("failover").as_string()), Catch::Contains("Releases API"));
}

TEST_CASE("resolve says which flag is wrong for bad network options", "[cli][network]") {
  TempDir dir;
  write_file(dir / "c.toml", "python = \"3.12\"\n[cuda]\npackages = [\"x\"]\n");
  struct Row {
    std::vector<std::string> extra;
    std::string says;
  };
  const std::vector<Row> rows{
      {{"--retries", "-1"}, "--retries"},       {{"--retries", "many"}, "--retries"},
      {{"--timeout", "0"}, "--timeout"},        {{"--jobs", "1000"}, "--jobs"},
      {{"--offline", "--no-cache"}, "--offline"}, {{"--index", "http://exa mple.test/"}, "--index"},
      {{"--index", "gopher://example.test/"}, "gopher"},
      // The user agent goes into a header line as it is: one line, no control byte (as the C API).
      {{"--user-agent", ""}, "--user-agent / WHEELFIT_USER_AGENT: must be one non-empty line without control characters"},
      {{"--user-agent", "wf\r\nX-Evil: 1"}, "--user-agent / WHEELFIT_USER_AGENT"},
      {{"--user-agent", "wf\x1b[2J"}, "--user-agent / WHEELFIT_USER_AGENT"},
      {{"--user-agent", "wf\tx"}, "--user-agent / WHEELFIT_USER_AGENT"},
      {{"--user-agent", "wf\x7f"}, "--user-agent / WHEELFIT_USER_AGENT"},
  };
  for (const auto& row : rows) {
    std::vector<std::string> args{"resolve", (dir / "c.toml").string(), "--machine", (dir / "m.toml").string()};
    write_file(dir / "m.toml", kMachine);
    args.insert(args.end(), row.extra.begin(), row.extra.end());
    auto r = run_wheelfit_cli_network(args);
    INFO(row.says << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(row.says));
  }
}

TEST_CASE("resolve: an index URL with a query (a token) keeps it on every page, never printed", "[cli][network][fixtures][query]") {
  Reference ref;
  const auto& [dir, config, machine, expected] = ref;
  const std::string token = "s3cr3tQueryValue";
  // A private index authenticating by a query token: without it, every page is a 404.
  std::atomic<int> without{0};
  TestServer server(wheelfit::testing::serve([&](const HttpRequest& r) {
    if (!r.target.ends_with("?token=" + token)) {
      ++without;
      return http_response(404, "not found");
    }
    auto body = snapshot_file(r.target);
    return body ? http_response(200, *body, {{"Content-Type", content_type(r.target)}}) : http_response(404, "not found");
  }));
  for (const char* path : {"/?token=", "?token="}) {  // with and without the path's '/'
    CAPTURE(path);
    const std::string index = server.url("") + path + token;
    auto net = run_wheelfit_cli_network({"resolve", config, "--index", index, "--machine", machine, "--json", "--no-cache"});
    INFO(net.err << net.out);
    REQUIRE(net.code == 0);
    CHECK(answer_of(net.out) == expected);
    CHECK(without.load() == 0);
    CHECK(net.out.find(token) == std::string::npos);
    CHECK(net.err.find(token) == std::string::npos);
    auto text = run_wheelfit_cli_network({"resolve", config, "--index", index, "--machine", machine, "--no-cache"});
    CHECK(text.code == 0);
    CHECK(text.out.find(token) == std::string::npos);
  }
}

TEST_CASE("resolve --max-time bounds the whole command: an index that never answers is exit 4 naming it", "[cli][network][speed]") {
  TempDir dir;
  write_file(dir / "c.toml", "python = \"3.12\"\n[cuda]\npackages = [\"x\", \"y\"]\n");
  write_file(dir / "m.toml", kMachine);
  TestServer silent([](wheelfit::testing::Conn& c) {
    if (!c.read_request()) return;
    (void)c.read_some(std::chrono::seconds(20));  // until the client gives up (bounded)
  });
  auto r = run_wheelfit_cli_network({"resolve", (dir / "c.toml").string(), "--index", silent.url("/"), "--machine",
                                     (dir / "m.toml").string(), "--no-cache", "--max-time", "1"});
  INFO(r.out << r.err);
  CHECK(r.code == 4);
  CHECK_THAT(r.err, Catch::Contains("could not be read") && Catch::Contains("the --max-time of 1 s"));

  SECTION("bad values name the flag") {
    for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--max-time", "0"}, {"--max-time", "soon"}, {"--speed-time", "0"}, {"--speed-limit", "-1"}}) {
      auto bad = run_wheelfit_cli_network({"resolve", (dir / "c.toml").string(), "--machine", (dir / "m.toml").string(),
                                           flag, value});
      CAPTURE(flag, value);
      CHECK(bad.code == 2);
      CHECK_THAT(bad.err, Catch::Contains(flag));
    }
  }
}
