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
#include "wheelfit/util/safe_text.hpp"

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

/// A one-project index under `root` (cc-torch/index.html or index.json, as `page` is HTML or
/// JSON) beside files/ with a real wheel of each name: a machine with an H100 resolves
/// cc_torch from it. `page` is the page's text with "{good}" and "{newer}" replaced by the two
/// wheels' file names and "{good_sha}" / "{newer_sha}" by their digests.
struct HostileIndex {
  static constexpr const char* kTags = "+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  TempDir dir;
  fs::path index = dir / "idx";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "h100.toml";
  std::string good = std::string("cc_torch-0.0.0") + kTags, newer = std::string("cc_torch-0.0.1") + kTags;

  HostileIndex(std::string page, bool json) {
    for (const auto& [name, version] : {std::pair{good, "0.0.0"}, std::pair{newer, "0.0.1"}}) {
      write_file(index / "files" / name,
                 wheelfit::test::build_zip({{"cc_torch-" + std::string(version) + ".dist-info/METADATA",
                                             "Metadata-Version: 2.1\nName: cc_torch\nVersion: " + std::string(version) + "\n"}}));
    }
    const std::pair<std::string, std::string> subst[] = {{"{good_sha}", sha256_of(index / "files" / good)},
                                                         {"{newer_sha}", sha256_of(index / "files" / newer)},
                                                         {"{good}", good}, {"{newer}", newer}};
    for (const auto& [key, value] : subst) {
      for (std::size_t at; (at = page.find(key)) != std::string::npos;) page.replace(at, key.size(), value);
    }
    write_file(index / "cc-torch" / (json ? "index.json" : "index.html"), page);
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"cc_torch\"]\n");
    write_file(machine, Farm::profile("9.0"));
  }
  [[nodiscard]] std::vector<std::string> args(std::vector<std::string> more) const {
    std::vector<std::string> out{"resolve", config.string(), "--index", index.string(), "--machine", machine.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
};

const std::string kInjected = "evil @ http://127.0.0.1:9/evil-1.0-py3-none-any.whl --hash=sha256:" + std::string(64, 'e');

std::string json_page(const std::string& newer_url) {
  return R"({"meta": {"api-version": "1.0"}, "name": "cc-torch", "files": [)"
         R"({"filename": "{newer}", "url": ")" + newer_url + R"(", "hashes": {"sha256": "{newer_sha}"}},)"
         R"({"filename": "{good}", "url": "../files/{good}", "hashes": {"sha256": "{good_sha}"}}]})";
}

std::string html_page(const std::string& newer_href, const std::string& good_attrs = "") {
  return "<html><body>\n<a href=\"" + newer_href + "\">{newer}</a><br>\n<a href=\"../files/{good}#sha256={good_sha}\"" +
         good_attrs + ">{good}</a><br>\n</body></html>\n";
}

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

TEST_CASE("wheelfit resolve -o requirements.txt: a hostile page cannot add a line or a token (issue 31)", "[cli][locks][hostile]") {
  struct Row {
    const char* what;
    std::string page;
    bool json;
  };
  const std::vector<Row> rows = {
      {"PEP 691: a raw LF (\\n) in the url", json_page("../files/{newer}\\n" + kInjected), true},
      {"PEP 691: U+2028 in the url", json_page("../files/{newer}\\u2028" + kInjected), true},
      {"PEP 691: a space and a second digest", json_page("../files/{newer} --hash=sha256:" + std::string(64, 'f')), true},
      {"HTML: &#12; (form feed)", html_page("../files/{newer}&#12;" + kInjected + "#sha256={newer_sha}"), false},
      {"HTML: &#x2028;", html_page("../files/{newer}&#x2028;" + kInjected + "#sha256={newer_sha}"), false},
      {"HTML: a raw VT", html_page("../files/{newer}\v" + kInjected + "#sha256={newer_sha}"), false},
      {"HTML: a raw NEL", html_page("../files/{newer}\xc2\x85" + kInjected + "#sha256={newer_sha}"), false},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    const HostileIndex idx(row.page, row.json);
    const TempDir to;
    const auto r = run_wheelfit_cli_deliver(idx.args({"-o", (to / "requirements.txt").string()}));
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const std::string text = read_file(to / "requirements.txt");
    CHECK_THAT(text, Catch::Contains("cc-torch @ ") && Catch::Contains(idx.good + " --hash=sha256:"));
    CHECK_THAT(text, !Catch::Contains("evil") && !Catch::Contains("0.0.1") && !Catch::Contains("sha256:fff"));
    std::size_t requirements = 0;
    for (std::size_t b = 0, e; b < text.size(); b = e + 1) {  // each line is one line to pip too
      e = text.find('\n', b);
      const std::string line = text.substr(b, e - b);
      CHECK(wheelfit::util::one_line_problem(line).empty());
      if (!line.starts_with("#")) ++requirements;
    }
    CHECK(requirements == 1);
    CHECK_THAT(r.out, Catch::Contains("cc-torch/") && Catch::Contains("1 link skipped for a URL that is not one token"));
  }
}

TEST_CASE("wheelfit resolve -o requirements.txt refuses ${NAME}, which pip expands: exit 2, nothing written (issue 31)",
          "[cli][locks][hostile]") {
  const HostileIndex idx(html_page("../files/{newer}?k=${AWS_SECRET_ACCESS_KEY}#sha256={newer_sha}"), false);
  const TempDir to;
  const auto r = run_wheelfit_cli_deliver(idx.args({"-o", (to / "requirements.txt").string()}));
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("requirements.txt: the URL of '" + idx.newer + "'") &&
                        Catch::Contains("holds '${', which pip expands from the installer's environment"));
  CHECK_FALSE(fs::exists(to / "requirements.txt"));
  SECTION("a TOML string carries it as written") {
    REQUIRE(run_wheelfit_cli_deliver(idx.args({"-o", (to / "pylock.toml").string()})).code == 0);
    CHECK_THAT(read_file(to / "pylock.toml"), Catch::Contains("?k=${AWS_SECRET_ACCESS_KEY}\""));
  }
}

TEST_CASE("wheelfit resolve --json stays JSON when a page holds bytes that are not UTF-8 (issue 31)", "[cli][json][hostile]") {
  const HostileIndex idx(html_page("../files/{newer}\xff.whl#sha256={newer_sha}", " data-requires-python=\"&gt;=3.9\xff\"") +
                             "<meta name=\"pypi:repository-version\" content=\"1.\xfe\"><a name=\"\xfd\">x\xfc</a>",
                         false);
  const auto r = run_wheelfit_cli_deliver(idx.args({"--json"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  boost::system::error_code ec;
  const auto doc = json::parse(r.out, ec);  // Boost.JSON refuses bytes that are not UTF-8
  REQUIRE_FALSE(ec);
  const std::string all = json::serialize(doc);
  CHECK_THAT(all, Catch::Contains("text that is not UTF-8") && Catch::Contains("not ASCII and not percent-encoded"));
  CHECK(wheelfit::util::is_utf8(r.err));
}

TEST_CASE("wheelfit mirror: bytes that are not UTF-8 upstream stay out of its JSON; an unreadable mirror.json fails no run (issue 31)",
          "[cli][mirror][hostile]") {
  const HostileIndex idx(html_page("../files/{newer}\xff.whl#sha256={newer_sha}", " data-requires-python=\"&gt;=3.9\xff\""), false);
  const TempDir out;
  const auto mirror = [&] {
    return run_wheelfit_cli_deliver({"mirror", idx.config.string(), "--index", idx.index.string(), "--out", out.path().string(),
                                     "--machine", idx.machine.string()});
  };
  const auto first = mirror();
  INFO(first.out << first.err);
  REQUIRE(first.code == 0);
  std::size_t documents = 0;
  for (const auto& e : fs::recursive_directory_iterator(out / "current")) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path());
    boost::system::error_code ec;
    (void)json::parse(read_file(e.path()), ec);  // Boost.JSON refuses bytes that are not UTF-8
    CHECK_FALSE(ec);
    ++documents;
  }
  CHECK(documents >= 3);  // mirror.json, packages.json, the project's PEP 691 page at least
  CHECK_THAT(read_file(out / "current" / "mirror.json"), Catch::Contains(idx.good) && !Catch::Contains("requires_python"));

  // An older run's manifest that no longer reads: the next run warns and publishes.
  const fs::path manifest = fs::canonical(out / "current") / "mirror.json";
  fs::permissions(manifest, fs::perms::owner_write, fs::perm_options::add);
  write_file(manifest, "{\"schema\": 1, \"files\": [{\"requires_python\": \">=3.9\xff\"}]}");
  const auto second = mirror();
  INFO(second.out << second.err);
  CHECK(second.code == 0);
  CHECK_THAT(second.err, Catch::Contains("mirror.json") && Catch::Contains("read as no previous files"));
  boost::system::error_code ec;
  (void)json::parse(read_file(out / "current" / "mirror.json"), ec);
  CHECK_FALSE(ec);
}
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
