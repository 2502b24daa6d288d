// The lock files and the torch family as a user writes them: `wheelfit resolve -o` (pixi.toml,
// requirements*.txt, pylock*.toml, --pixi-pins) and `wheelfit mirror --with-torch`, on a farm
// with real wheel files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <regex>
#include <thread>

#include "cli/deliver_farm.hpp"
#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "support/torch_index.hpp"
#include "support/wheel_builder.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;
using namespace wheelfit::test::cli_deliver;

TEST_CASE("wheelfit resolve -o: pixi.toml, requirements*.txt or pylock*.toml by name or --format; --pixi-pins", "[cli][locks]") {
  const Farm f;
  const TempDir to;
  const auto resolve_to = [&](const std::string& file, std::vector<std::string> more) {
    std::vector<std::string> args{"resolve", f.config.string(), "--index", f.index.string(), "--machine", f.machine("h100"),
                                  "-o", (to / file).string()};
    args.insert(args.end(), more.begin(), more.end());
    return run_wheelfit_cli_deliver(args);
  };
  const std::string cc = "cc_torch-0.0.0+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  const std::string cc_sha = sha256_of(f.file_of(cc));
  SECTION("requirements.txt: name @ URL --hash, the torch pins named as not locked") {
    const auto r = resolve_to("requirements-gpu.txt", {});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const std::string text = read_file(to / "requirements-gpu.txt");
    CHECK_THAT(text, Catch::Contains("cc-torch @ file://"));
    CHECK_THAT(text, Catch::Contains(" --hash=sha256:" + cc_sha + "\n"));
    CHECK_THAT(text, Catch::Contains("# not locked here (its index publishes no digest wheelfit reads): torch==2.8.*"));
  }
  SECTION("pylock.toml and pylock.<name>.toml: PEP 751") {
    for (const char* name : {"pylock.toml", "pylock.gpu.toml"}) {
      const auto r = resolve_to(name, {});
      INFO(r.out << r.err);
      REQUIRE(r.code == 0);
      const std::string text = read_file(to / name);
      CHECK_THAT(text, Catch::Contains("lock-version = \"1.0\""));
      CHECK_THAT(text, Catch::Contains("sha256 = \"" + cc_sha + "\""));
    }
  }
  SECTION("any other name is a pixi manifest, as -o always wrote") {
    REQUIRE(resolve_to("env.toml", {}).code == 0);
    CHECK_THAT(read_file(to / "env.toml"), Catch::Contains("[workspace]"));
  }
  SECTION("--format wins over the name; --pixi-pins index pins by version from the index") {
    REQUIRE(resolve_to("locked.lst", {"--format", "requirements"}).code == 0);
    CHECK_THAT(read_file(to / "locked.lst"), Catch::Contains("--hash=sha256:" + cc_sha));
    REQUIRE(resolve_to("pixi.toml", {"--pixi-pins", "index"}).code == 0);
    CHECK_THAT(read_file(to / "pixi.toml"), Catch::Contains("cc-torch = { index = \"file://"));
    CHECK_THAT(read_file(to / "pixi.toml"), Catch::Contains("version = \"==0.0.0+cu128torch2.8\" }"));
  }
  SECTION("usage errors: exit 2, nothing written") {
    struct Row {
      const char* file;
      std::vector<std::string> more;
      const char* says;
    };
    for (const auto& row : {Row{"pixi.toml", {"--format", "conda"}, "--format: 'conda' is not one of pixi, requirements, pylock"},
                            Row{"pixi.toml", {"--pixi-pins", "hash"}, "--pixi-pins: 'hash' is not url or index"},
                            Row{"pylock.toml", {"--pixi-pins", "index"}, "--pixi-pins is for a pixi.toml"}}) {
      const auto r = resolve_to(row.file, row.more);
      INFO(row.file << ": " << r.err);
      CHECK(r.code == 2);
      CHECK_THAT(r.err, Catch::Contains(row.says));
      CHECK_FALSE(fs::exists(to / row.file));
    }
  }
}

TEST_CASE("wheelfit mirror --with-torch: each machine's torch family, the newest fitting file, in its view and its locks",
          "[cli][mirror][torch]") {
  const Farm f;
  const TempDir t, out;
  write_torch_index(t / "torch");
  const std::string pattern = (t / "torch").string() + "/cu{line_nodot}";
  SECTION("mirrored, verified, listed in the machine's view and locked") {
    const auto r = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100"), "--with-torch", "--torch-index", pattern}));
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const fs::path view = out / "current" / "machines" / "h100";
    CHECK(fs::exists(out / "current" / "files" / "torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"));
    CHECK_THAT(read_file(out / "current" / "torch" / "index.html"), Catch::Contains(">torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl<"));
    const std::string page = read_file(view / "torch" / "index.html");
    CHECK_THAT(page, Catch::Contains("torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"));
    for (const char* decoy : {"torch-2.8.0+", "cp311", "aarch64", "torch-2.9.0"}) CHECK_THAT(page, !Catch::Contains(decoy));
    CHECK(fs::exists(view / "torchvision" / "index.html"));
    const std::string requirements = read_file(view / "requirements.txt");
    CHECK_THAT(requirements, Catch::Contains("torch==2.8.1+cu128 --hash=sha256:" +
                                             sha256_of(t / "torch/files/torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl")));
    CHECK_THAT(requirements, Catch::Contains("torchaudio==2.8.0+cu128 --hash=sha256:"));
    CHECK_THAT(requirements, !Catch::Contains("not locked here"));
    CHECK_THAT(read_file(view / "pylock.toml"), Catch::Contains("name = \"torchvision\""));
  }
  SECTION("a --torch-index that is no index: exit 5 naming it, nothing published") {
    const auto r = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100"), "--with-torch", "--torch-index",
                                                                   (t / "nowhere").string()}));
    INFO(r.out << r.err);
    CHECK(r.code == 5);
    CHECK_THAT(r.err, Catch::Contains("--with-torch: the torch index"));
    CHECK_THAT(r.err, Catch::Contains("nowhere"));
    CHECK_FALSE(fs::exists(out / "current"));
  }
  SECTION("--torch-index without --with-torch is a usage error") {
    const auto r = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100"), "--torch-index", pattern}));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("give --with-torch"));
  }
}

namespace {

/// Whether no file at any depth under `dir` is named `name`.
bool holds_no_file_named(const fs::path& dir, const std::string& name) {
  if (!fs::exists(dir)) return true;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename() == name) return false;
  }
  return true;
}

/// `anchor` added to the torch index page of `project` under `line_dir`.
void add_torch_anchor(const fs::path& line_dir, const std::string& project, const std::string& anchor) {
  const fs::path page = line_dir / project / "index.html";
  std::string html = read_file(page);
  html.insert(html.find("</body>"), anchor);
  write_file(page, html);
}

std::string torch_anchor(const std::string& file, const std::string& sha256) {
  return "<a href=\"../../files/" + file + "#sha256=" + sha256 + "\">" + file + "</a><br>\n";
}

}  // namespace

TEST_CASE("wheelfit mirror --with-torch: a torch file listed with two sha256 is exit 5 naming both; nothing fetched or published",
          "[cli][mirror][torch][hash]") {
  const Farm f;
  const std::string other(64, 'b');
  const std::string older = "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";
  struct Case {
    const char* name;
    std::function<void(const fs::path& line_dir, const std::string& sha256)> spoil;  ///< sha256: the pick's true digest
    bool conflict;
  };
  const Case cases[] = {
      {"the page lists the pick twice with two sha256",
       [&](const fs::path& d, const std::string&) { add_torch_anchor(d, "torch", torch_anchor(kTorchPick, other)); }, true},
      {"the index's packages.json gives the pick another sha256",
       [&](const fs::path& d, const std::string&) {
         write_file(d / "packages.json", R"({"schema": 1, "packages": {"torch": {"wheels": [{"filename": ")" + kTorchPick +
                                             R"(", "url": "../files/)" + kTorchPick + R"(", "sha256": ")" + other + R"("}]}}})");
       },
       true},
      {"the page lists the pick twice with one sha256 (no conflict)",
       [&](const fs::path& d, const std::string& sha) { add_torch_anchor(d, "torch", torch_anchor(kTorchPick, sha)); }, false},
      {"packages.json agrees with the page (no conflict)",
       [&](const fs::path& d, const std::string& sha) {
         write_file(d / "packages.json", R"({"schema": 1, "packages": {"torch": {"wheels": [{"filename": ")" + kTorchPick +
                                             R"(", "url": "../files/)" + kTorchPick + R"(", "sha256": ")" + sha + R"("}]}}})");
       },
       false},
      {"an older file, not the pick, listed with two sha256 (no conflict for the pick)",
       [&](const fs::path& d, const std::string&) { add_torch_anchor(d, "torch", torch_anchor(older, other)); }, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const TempDir t, out;
    write_torch_index(t / "torch");
    const std::string sha = wheelfit::deliver::sha256_file(t / "torch" / "files" / kTorchPick).value();
    c.spoil(t / "torch" / "cu128", sha);
    const auto r = run_wheelfit_cli_deliver(
        f.mirror(out.path(), {"--machine", f.machine("h100"), "--with-torch", "--torch-index", (t / "torch").string() + "/cu{line_nodot}"}));
    INFO(r.out << r.err);
    if (!c.conflict) {
      CHECK(r.code == 0);
      CHECK(fs::exists(out / "current" / "files" / kTorchPick));
      continue;
    }
    CHECK(r.code == 5);
    CHECK_THAT(r.err, Catch::Contains("--with-torch") && Catch::Contains(kTorchPick) && Catch::Contains("hash conflict"));
    CHECK_THAT(r.err, Catch::Contains("sha256 " + sha) && Catch::Contains("sha256 " + other));
    CHECK_FALSE(fs::exists(out / "current"));
    CHECK(holds_no_file_named(out.path(), kTorchPick));  // not fetched into the pool either
  }
}

TEST_CASE("wheelfit mirror --with-torch: a --torch-index user:password goes with its pages and the wheels on its origin",
          "[cli][mirror][torch][secrets]") {
  using wheelfit::testing::HttpRequest;
  const Farm f;
  const TempDir t, out;
  write_torch_index(t / "torch");
  const std::string password = "TORCH-SECRET-PW";
  std::atomic<int> refused{0};
  // The torch index and its files on one origin, each request needing alice's password.
  wheelfit::testing::TestServer server{wheelfit::testing::serve([&](const HttpRequest& q) {
    if (q.header("authorization") != "Basic YWxpY2U6VE9SQ0gtU0VDUkVULVBX") {  // alice:TORCH-SECRET-PW
      ++refused;
      return wheelfit::testing::http_response(401, "no", {{"WWW-Authenticate", "Basic realm=\"torch\""}});
    }
    std::string path = q.target.substr(0, q.target.find('?'));
    for (std::size_t at; (at = path.find("%2B")) != std::string::npos;) path.replace(at, 3, "+");
    fs::path file = t / "torch" / path.substr(1);
    if (path.ends_with("/")) file /= "index.html";
    if (path.find("..") != std::string::npos || !fs::is_regular_file(file)) return wheelfit::testing::http_response(404, "not here");
    return wheelfit::testing::http_response(200, read_file(file), {{"Content-Type", path.ends_with("/") ? "text/html" : "application/zip"}});
  })};
  const std::string pattern = "http://alice:" + password + "@127.0.0.1:" + std::to_string(server.port()) + "/cu{line_nodot}";
  SECTION("allowed over plain http to this host: the torch family mirrored, the password written nowhere") {
    const auto r = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100"), "--with-torch", "--torch-index",
                                                                   pattern, "--allow-insecure-host", "127.0.0.1", "--retries", "0"}));
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(refused == 0);
    CHECK(fs::exists(out / "current" / "files" / kTorchPick));
    bool wheel_asked = false;
    for (const auto& q : server.requests()) wheel_asked = wheel_asked || q.target.find("/files/torch-2.8.1") == 0;
    CHECK(wheel_asked);
    CHECK_THAT(r.out + r.err, !Catch::Contains(password));
    for (const auto& e : fs::recursive_directory_iterator(out.path())) {
      CAPTURE(e.path());
      if (e.is_regular_file() && e.path().extension() != ".whl") CHECK_THAT(read_file(e.path()), !Catch::Contains(password));
    }
  }
  SECTION("not allowed over plain http: exit 2 naming the way out, before any request") {
    const auto r = run_wheelfit_cli_deliver(
        f.mirror(out.path(), {"--machine", f.machine("h100"), "--with-torch", "--torch-index", pattern, "--retries", "0"}));
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--allow-insecure-host 127.0.0.1"));
    CHECK_THAT(r.out + r.err, !Catch::Contains(password));
    CHECK(server.requests().empty());
    CHECK_FALSE(fs::exists(out / "current"));
  }
}
