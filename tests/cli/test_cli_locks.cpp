// The lock files and the torch family as a user writes them: `wheelfit resolve -o` (pixi.toml,
// requirements*.txt, pylock*.toml, --pixi-pins) and `wheelfit mirror --with-torch`, on a farm
// with real wheel files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "cli/deliver_farm.hpp"
#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
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

namespace {

/// A PEP 503 torch index per line under `root` (cu128/, cu130/): small real wheels of torch,
/// torchvision and torchaudio with #sha256=, and decoys a machine must not get (another Python,
/// another CPU, a version outside the pin, an older patch release).
void torch_index_cli_deliver(const fs::path& root) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> lines = {
      {"cu128", {"torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl", "torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torch-2.8.1+cu128-cp311-cp311-manylinux_2_28_x86_64.whl", "torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_aarch64.whl",
                 "torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torchvision-0.23.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torchaudio-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"}}};
  for (const auto& [line, files] : lines) {
    std::map<std::string, std::string> pages;
    for (const auto& name : files) {
      const std::string dist = name.substr(0, name.find('-'));
      const std::string version = name.substr(dist.size() + 1, name.find('-', dist.size() + 1) - dist.size() - 1);
      write_file(root / "files" / name, wheelfit::test::build_zip({{dist + "-" + version + ".dist-info/METADATA",
                                                                  "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n"}}));
      pages[dist] += "<a href=\"../../files/" + name + "#sha256=" + sha256_of(root / "files" / name) + "\">" + name + "</a><br>\n";
    }
    for (const auto& [dist, anchors] : pages) write_file(root / line / dist / "index.html", "<html><body>\n" + anchors + "</body></html>\n");
  }
}

}  // namespace

TEST_CASE("wheelfit mirror --with-torch: each machine's torch family, the newest fitting file, in its view and its locks",
          "[cli][mirror][torch]") {
  const Farm f;
  const TempDir t, out;
  torch_index_cli_deliver(t / "torch");
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
