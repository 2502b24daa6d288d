// `wheelfit download` and `wheelfit mirror` as a user runs them: a farm with real wheel files
// (wheelfit-farmgen --with-files, file:// links), machine profiles, the report, the JSON, the
// progress lines on a stderr that is not a terminal, the exit codes and the usage errors. The lock
// files and --with-torch: test_cli_locks.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "cli/deliver_farm.hpp"
#include "mirror/mirror_support.hpp"
#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit::test;
using namespace wheelfit::test::cli_deliver;

namespace {

// The farm over loopback: its pages from one server, its wheel files from another (farmgen
// --base-url names it). The first `trickled` connections to the files server send the header
// and 200 body bytes at once, then a byte every 100 ms (at most 100: a failing test still ends);
// the others serve the files with Range support.
struct HttpFarm {
  TempDir dir;
  fs::path index = dir / "farm";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machine = dir / "h100.toml";
  int trickled;
  std::atomic<int> file_connections{0};
  wheelfit::testing::ConnScript rest = wheelfit::testing::serve_directory(index, with_ranges());
  wheelfit::testing::TestServer files{[this](wheelfit::testing::Conn& c) { serve_file(c); }};
  wheelfit::testing::TestServer pages{wheelfit::testing::serve_directory(index)};

  explicit HttpFarm(int trickled_connections) : trickled(trickled_connections) {
    const auto gen = run_program("", fs::path(WHEELFIT_BINARY_DIR) / "scripts/farmgen/wheelfit-farmgen",
                                 {"--out", index.string(), "--with-files", "--packages", "2", "--base-url", files.url("")});
    REQUIRE(gen.code == 0);
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"cc_torch\", \"cubvh\"]\n");
    write_file(machine, Farm::profile("9.0"));
  }
  [[nodiscard]] std::vector<std::string> args(const char* command, const fs::path& to, std::vector<std::string> more) const {
    std::vector<std::string> out{command, config.string(), "--index", pages.url("/"), "--machine", machine.string(), "--no-cache",
                                 std::string(command) == "mirror" ? "--out" : "-d", to.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }

 private:
  static wheelfit::testing::DirectoryOptions with_ranges() {
    wheelfit::testing::DirectoryOptions o;
    o.ranges = true;
    return o;
  }
  void serve_file(wheelfit::testing::Conn& c) {
    if (file_connections++ >= trickled) return rest(c);
    const auto r = c.read_request();
    if (!r) return;
    std::string path;  // the target percent-decoded ("%2B" in the wheel names)
    for (std::size_t i = 0; i < r->target.size(); ++i) {
      if (r->target[i] == '%' && i + 2 < r->target.size()) {
        path += static_cast<char>(std::stoi(r->target.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        path += r->target[i];
      }
    }
    const std::string body = read_file(index / path.substr(1));
    const std::size_t head = std::min<std::size_t>(200, body.size());
    if (!c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, head))) return;
    for (std::size_t i = head; i < std::min(body.size(), head + 100); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!c.write(body.substr(i, 1))) return;
    }
  }
};

}  // namespace

TEST_CASE("wheelfit download: fetched, verified, then already there", "[cli][deliver]") {
  const Farm f;
  const TempDir to;
  const auto first = run_wheelfit_cli_deliver(f.download(to.path(), {"--machine", f.machine("h100")}));
  INFO(first.out << first.err);
  REQUIRE(first.code == 0);
  CHECK_THAT(first.out, Catch::Contains("resolved: cu12.8/torch2.8 via tier 1 (bootstrap)"));
  CHECK_THAT(first.out, Catch::Contains("downloads:\n  fetched  cc_torch-0.0.0+cu128torch2.8-cp312-cp312-"));
  CHECK_THAT(first.out, Catch::Contains("sha256 verified"));
  CHECK_THAT(first.out, Catch::Contains("total: 2.7 KiB fetched, 0 B already there\n"));
  // stderr is no terminal here: one plain line per file, no cursor movement.
  CHECK_THAT(first.err, Catch::Contains("downloaded cc_torch-0.0.0+cu128torch2.8-cp312-cp312-"));
  CHECK_THAT(first.err, Catch::Contains("downloaded cubvh-0.0.0+cu128torch2.8-cp312-cp312-"));
  CHECK_THAT(first.err, !Catch::Contains("\x1b["));

  const auto again = run_wheelfit_cli_deliver(f.download(to.path(), {"--machine", f.machine("h100"), "--json"}));
  INFO(again.out << again.err);
  REQUIRE(again.code == 0);
  CHECK_THAT(again.err, Catch::Contains("already there cc_torch-"));
  const auto doc = parse_object_cli_deliver(again.out);
  CHECK(doc.at("combo").as_object() == json::object{{"cuda", "12.8"}, {"torch", "2.8"}});  // the resolve object, then ...
  const auto& downloads = doc.at("downloads").as_array();
  REQUIRE(downloads.size() == 2);
  for (const auto& d : downloads) {
    const auto& o = d.as_object();
    CHECK(o.at("status") == "present");
    CHECK(o.at("verified") == true);
    CHECK(o.at("resumed") == false);
    CHECK(o.at("continued") == false);
    CHECK(o.at("error").is_null());
    const fs::path path(std::string(o.at("path").as_string()));
    CHECK(path.parent_path() == to.path());
    CHECK(fs::file_size(path) == o.at("bytes").to_number<std::uint64_t>());
    CHECK(sha256_of(path) == o.at("sha256").as_string());
  }
  // Only the wheels, the folder's lock and the wheels' digest records: no part, no meta.
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(to.path())) {
    const std::string name = e.path().filename().string();
    entries += name != ".wheelfit.lock" && !name.ends_with(".whl.sha256");
    CHECK_FALSE(name.ends_with(".part"));
  }
  CHECK(entries == 2);
}

TEST_CASE("wheelfit download: a wheel whose digest does not match is exit 5 and leaves nothing", "[cli][deliver]") {
  const Farm f;
  const TempDir to;
  const std::string victim = "cubvh-0.0.0+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  const fs::path farm_file = f.file_of(victim);
  const std::string expected = sha256_of(farm_file);
  std::string bytes = read_file(farm_file);
  bytes[bytes.size() / 2] ^= 0x20;
  write_file(farm_file, bytes);

  const auto r = run_wheelfit_cli_deliver(f.download(to.path(), {"--machine", f.machine("h100")}));
  INFO(r.out << r.err);
  CHECK(r.code == 5);
  // The report's line for the file says what was wrong; stderr's progress line that it failed.
  CHECK_THAT(r.out, Catch::Contains("  failed  " + victim + ": sha256 mismatch: expected " + expected +
                                    ", got " + sha256_of(farm_file)));
  CHECK_THAT(r.out, Catch::Contains("stale proxy"));
  CHECK_THAT(r.err, Catch::Contains("failed " + victim));
  CHECK_THAT(r.out, Catch::Contains(", 1 failed\n"));
  CHECK_FALSE(fs::exists(to / victim));
  CHECK_FALSE(fs::exists(to / ("." + victim + ".part")));
  CHECK(fs::exists(to / "cc_torch-0.0.0+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"));

  const auto j = run_wheelfit_cli_deliver(f.download(to.path(), {"--machine", f.machine("h100"), "--json"}));
  CHECK(j.code == 5);
  const auto doc = parse_object_cli_deliver(j.out);
  bool seen = false;
  for (const auto& d : doc.at("downloads").as_array()) {
    if (d.at("filename").as_string() != victim) continue;
    seen = true;
    CHECK(d.at("status") == "failed");
    CHECK_THAT(std::string(d.at("error").as_string()), Catch::Contains("sha256 mismatch"));
  }
  CHECK(seen);
}

TEST_CASE("wheelfit download: a fleet fetches the union of its picks once", "[cli][deliver][fleet]") {
  const Farm f;
  const TempDir to;
  const auto r = run_wheelfit_cli_deliver(f.download(to.path(), {"--machines", f.machines.string(), "--json"}));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto doc = parse_object_cli_deliver(r.out);
  CHECK(doc.at("machines").as_array().size() == 2);
  CHECK(doc.at("downloads").as_array().size() == 2);  // both machines pick the same two files
  const auto text = run_wheelfit_cli_deliver(f.download(to.path(), {"--machines", f.machines.string()}));
  CHECK_THAT(text.out, Catch::Contains("== a6000 ==\n"));
  CHECK_THAT(text.out, Catch::Contains("summary:\n"));
  CHECK_THAT(text.out, Catch::Contains("total: 0 B fetched, 2.7 KiB already there\n"));
}

TEST_CASE("wheelfit download: an unresolved machine is exit 1 and fetches nothing", "[cli][deliver]") {
  const Farm f;
  const TempDir to;
  const TempDir other;
  write_file(other / "k40.toml", Farm::profile("3.5"));
  const auto r = run_wheelfit_cli_deliver(f.download(to.path(), {"--machine", (other / "k40.toml").string(), "--no-fallback"}));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, !Catch::Contains("downloads:"));
  CHECK((!fs::exists(to.path()) || fs::is_empty(to.path())));
}

TEST_CASE("wheelfit mirror: published, re-run, absolute hrefs, pruned, offline", "[cli][mirror]") {
  const Farm f;
  const TempDir work;
  const fs::path out = work / "mirror";
  const auto first = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string(), "--json"}));
  INFO(first.out << first.err);
  REQUIRE(first.code == 0);
  const auto doc = parse_object_cli_deliver(first.out);
  const auto& published = doc.at("published").as_object();
  CHECK(published.at("files") == 2);
  CHECK(published.at("projects") == 2);
  const fs::path current = out / "current";
  REQUIRE(fs::is_symlink(current));
  CHECK(fs::read_symlink(current).filename() == std::string(published.at("id").as_string()));
  const std::string page = read_file(current / "cc-torch" / "index.html");
  CHECK_THAT(page, Catch::Contains("href=\"../files/cc_torch-0.0.0%2Bcu128torch2.8-"));
  CHECK_THAT(page, Catch::Contains("#sha256="));
  CHECK_THAT(page, Catch::Contains("data-core-metadata=\"sha256="));
  const auto manifest = parse_object_cli_deliver(read_file(current / "mirror.json"));
  CHECK(manifest.at("machines").as_array().size() == 2);

  // The mirror is an index: resolving against it picks the same files, now from it.
  const auto again = run_wheelfit_cli_deliver({"resolve", f.config.string(), "--index", current.string(), "--machine", f.machine("h100"), "--json"});
  INFO(again.err);
  REQUIRE(again.code == 0);
  const auto picked = parse_object_cli_deliver(again.out);
  for (const auto& p : picked.at("packages").as_array()) {
    CHECK_THAT(std::string(p.at("url").as_string()), Catch::Contains("/files/"));
  }

  SECTION("a re-run with --base-url fetches nothing and writes absolute hrefs") {
    const auto r = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string(), "--base-url", "https://mirror.corp/wheels/"}));
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("total: 0 B fetched, 2.7 KiB already there\n"));
    CHECK_THAT(read_file(current / "cc-torch" / "index.html"), Catch::Contains("href=\"https://mirror.corp/wheels/files/cc_torch-"));
  }
  SECTION("a file no machine picks any more is kept, then dropped with --prune") {
    write_file(f.config, "python = \"3.12\"\n[cuda]\npackages = [\"cc_torch\"]\n");
    const auto kept = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string(), "--json"}));
    REQUIRE(kept.code == 0);
    CHECK(parse_object_cli_deliver(kept.out).at("published").at("carried") == 1);
    CHECK(fs::exists(current / "cubvh" / "index.html"));
    const auto pruned = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string(), "--prune", "--json"}));
    REQUIRE(pruned.code == 0);
    CHECK(parse_object_cli_deliver(pruned.out).at("published").at("pruned").as_array().size() == 1);
    CHECK_FALSE(fs::exists(current / "cubvh"));
    for (const auto& e : fs::directory_iterator(out / "pool")) CHECK_THAT(e.path().filename().string(), !Catch::Contains("cubvh"));
  }
  SECTION("--offline builds from the pool alone") {
    fs::remove_all(f.index / "releases");  // no file can be fetched now
    const auto ok = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string(), "--offline"}));
    INFO(ok.out << ok.err);
    CHECK(ok.code == 0);
    CHECK_THAT(ok.out, Catch::Contains("0 B fetched"));
  }
}

TEST_CASE("wheelfit download and mirror: a profile that does not load is its row; the others are delivered",
          "[cli][deliver][mirror][fleet]") {
  // Issue 20 item 9: the exit code is the worst row's (2, bad input); the good machines' wheels
  // are still fetched and published, and mirror.json names the broken machine's reason.
  const Farm f;
  write_file(f.machines / "broken.toml", "glibc = 2.35\n");
  const TempDir work;
  SECTION("download") {
    const auto r = run_wheelfit_cli_deliver(f.download(work / "dl", {"--machines", f.machines.string(), "--json"}));
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    const auto doc = parse_object_cli_deliver(r.out);
    CHECK(doc.at("machines").as_array().size() == 3);
    CHECK(doc.at("summary").as_array()[1].at("status").as_string() == "bad input");
    CHECK(doc.at("downloads").as_array().size() == 2);
  }
  SECTION("mirror") {
    const fs::path out = work / "mirror";
    const auto r = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string()}));
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("== broken ==\nwheelfit: --machines: "));
    CHECK_THAT(r.out, Catch::Contains("broken   -                -          bad input\n"));
    CHECK_THAT(r.out, Catch::Contains("published "));
    const auto manifest = parse_object_cli_deliver(read_file(out / "current" / "mirror.json"));
    const auto& machines = manifest.at("machines").as_array();
    REQUIRE(machines.size() == 3);
    // Issue 31 item 12: mirror.json is served with the pages: the failure's class, never its
    // message (which names local paths); the message stays in the run's report.
    CHECK(machines[1].at("status").as_string() == "bad input");
    CHECK_THAT(read_file(out / "current" / "mirror.json"), !Catch::Contains("broken.toml"));
    CHECK_THAT(read_file(out / "current" / "mirror.json"), !Catch::Contains(f.machines.string()));
    CHECK_THAT(r.out, Catch::Contains("broken.toml"));
    CHECK(fs::exists(out / "current" / "cc-torch" / "index.html"));
  }
}

TEST_CASE("wheelfit mirror and download: a folder not wheelfit's is refused (exit 2); a user's files are never removed",
          "[cli][deliver][mirror][folder]") {
  // Issue 31 items 2 and 8: the user's files survive byte for byte.
  const Farm f;
  const TempDir work;
  using wheelfit::test_mirror::tree_of;
  const std::vector<std::pair<std::string, std::string>> mine = {{"snapshots/keep-me/notes.txt", "keep me\n"},
                                                                 {"pool/.metadata/notes.txt", "notes\n"},
                                                                 {"pool/.report.pdf.part", "half a report"},
                                                                 {".report.pdf.part", "half a report"}};
  auto plant_mine = [&](const fs::path& dir) {
    for (const auto& [rel, bytes] : mine) write_file(dir / rel, bytes);
  };
  auto check_mine = [&](const fs::path& dir) {
    for (const auto& [rel, bytes] : mine) {
      CAPTURE(rel);
      CHECK((fs::exists(dir / rel) && read_file(dir / rel) == bytes));
    }
  };
  SECTION("mirror --out a folder of the user's: exit 2 naming it, nothing touched") {
    const fs::path out = work / "mine";
    plant_mine(out);
    const auto before = tree_of(out);
    const auto r = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string()}));
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(out.string() + ": not a wheelfit mirror"));
    CHECK(tree_of(out) == before);
  }
  SECTION("mirror --out a folder it made: what the user adds stays, run after run") {
    const fs::path out = work / "m";
    REQUIRE(run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string()})).code == 0);
    CHECK(fs::is_regular_file(out / ".wheelfit-mirror"));
    plant_mine(out);
    for (int run = 0; run < 3; ++run) {
      const auto r = run_wheelfit_cli_deliver(f.mirror(out, {"--machines", f.machines.string()}));
      INFO(r.out << r.err);
      CHECK(r.code == 0);
    }
    check_mine(out);
  }
  SECTION("download -d: a user's .X.part stays; wheelfit's own leftover goes") {
    const fs::path dl = work / "dl";
    plant_mine(dl);
    write_file(dl / ".report.pdf.part.meta", "\"etag\"\n");
    write_file(dl / ".old-1.0-py3-none-any.whl.part", "an earlier run's");
    const auto r = run_wheelfit_cli_deliver(f.download(dl, {"--machine", f.machine("h100")}));
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    check_mine(dl);
    CHECK(read_file(dl / ".report.pdf.part.meta") == "\"etag\"\n");
    CHECK_FALSE(fs::exists(dl / ".old-1.0-py3-none-any.whl.part"));
  }
}

TEST_CASE("wheelfit download and mirror: usage errors exit 2 and say why", "[cli][deliver][mirror]") {
  const Farm f;
  const TempDir work;
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string cfg = f.config.string();
  const std::string dir = (work / "d").string();
  const std::vector<Row> rows = {
      {{"download", "-d", dir}, "download: give at least one comfy-env.toml"},
      {{"download", cfg}, "download: give the folder to download into (-d DIR)"},
      {{"download", cfg, "-d", dir, "--jobs", "0"}, "--jobs"},
      {{"download", cfg, "-d", dir, "--jobs", "many"}, "--jobs"},
      {{"download", cfg, "-d", dir, "--offline", "--no-cache"}, "--offline reads only the cache"},
      {{"download", cfg, "-d", dir, "--machine", (work / "missing.toml").string()}, "missing.toml"},
      {{"download", cfg, "-d", dir, "--out", dir}, "--out"},
      {{"mirror", "--out", dir, "--machines", f.machines.string()}, "mirror: give at least one comfy-env.toml"},
      {{"mirror", cfg, "--machines", f.machines.string()}, "mirror: give the mirror folder (--out DIR)"},
      {{"mirror", cfg, "--out", dir}, "mirror: give the fleet"},
      {{"mirror", cfg, "--out", dir, "--machines", f.machines.string(), "--offline", "--no-cache"}, "--offline reads only the cache"},
      {{"mirror", cfg, "--out", dir, "--machines", f.machines.string(), "--base-url", "ftp://mirror/"}, "--base-url: 'ftp://mirror/' is not an http(s) URL"},
      {{"mirror", cfg, "--out", f.machines.string(), "--machines", f.machines.string()}, f.machines.string() + ": not a wheelfit mirror"},
  };
  for (const auto& row : rows) {
    for (const bool as_json : {false, true}) {
      auto args = row.args;
      if (as_json) args.push_back("--json");
      const auto r = run_wheelfit_cli_deliver(args);
      CAPTURE(args, r.out, r.err);
      CHECK(r.code == 2);
      if (as_json) {
        const auto doc = parse_object_cli_deliver(r.out);
        CHECK(doc.at("error").at("exit_code") == 2);
        CHECK_THAT(std::string(doc.at("error").at("message").as_string()), Catch::Contains(row.message));
      } else {
        CHECK_THAT(r.err, Catch::Contains(row.message));
      }
    }
  }
  CHECK_FALSE(fs::exists(work / "d"));  // nothing was made for a refused call
}

TEST_CASE("wheelfit mirror: a --base-url with a user name or password is refused, never published", "[cli][mirror][secrets]") {
  const Farm f;
  struct Row {
    std::string base_url;
    std::string shown;  // how the message names the URL; "" when the URL is taken
  };
  const std::vector<Row> rows = {
      {"https://user:s3cret@mirror.corp/wheels/", "'https://mirror.corp/wheels/'"},
      {"https://s3cret@mirror.corp/", "'https://mirror.corp/'"},
      {"http://user:s3cret@10.0.0.5:8080", "'http://10.0.0.5:8080'"},
      {"https://user:@mirror.corp/w/", "'https://mirror.corp/w/'"},
      {"https://mirror.corp/wheels/@latest/", ""},  // an '@' in the path is no userinfo
  };
  for (const auto& row : rows) {
    for (const bool as_json : {false, true}) {
      const TempDir work;
      auto args = f.mirror(work / "mirror", {"--machines", f.machines.string(), "--base-url", row.base_url});
      if (as_json) args.push_back("--json");
      const auto r = run_wheelfit_cli_deliver(args);
      CAPTURE(row.base_url, as_json, r.out, r.err);
      if (row.shown.empty()) {
        CHECK(r.code == 0);
        CHECK_THAT(read_file(work / "mirror" / "current" / "cc-torch" / "index.html"),
                   Catch::Contains("href=\"" + row.base_url + "files/cc_torch-"));
        continue;
      }
      CHECK(r.code == 2);
      const std::string message =
          as_json ? std::string(parse_object_cli_deliver(r.out).at("error").at("message").as_string()) : r.err;
      CHECK_THAT(message, Catch::Contains("--base-url: " + row.shown + " was given with a user name or password"));
      CHECK_THAT(r.out + r.err, !Catch::Contains("s3cret"));
      CHECK_FALSE(fs::exists(work / "mirror"));  // refused before anything was made
    }
  }
}

TEST_CASE("wheelfit download: a trickling wheel is cut by --speed-limit / --speed-time and continued with Range",
          "[cli][deliver][speed]") {
  HttpFarm f(1);  // the first file connection trickles
  const TempDir to;
  const auto r = run_wheelfit_cli_deliver(f.args("download", to.path(), {"--speed-limit", "1000", "--speed-time", "1", "--json"}));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Catch::Contains("retry 1 of 3") && Catch::Contains("too slow"));
  int continued = 0;
  const auto doc = parse_object_cli_deliver(r.out);
  for (const auto& d : doc.at("downloads").as_array()) {
    CHECK(d.at("status") == "fetched");
    CHECK(d.at("verified") == true);
    continued += d.at("continued") == true ? 1 : 0;
  }
  CHECK(continued == 1);
  bool ranged = false;
  for (const auto& q : f.files.requests()) ranged = ranged || q.header("range").value_or("").starts_with("bytes=2");
  CHECK(ranged);  // the retry asked for the rest, from where the cut body stopped
}

TEST_CASE("wheelfit download and mirror: --max-time bounds the whole command (exit 5, nothing kept)", "[cli][deliver][speed]") {
  HttpFarm f(1000);  // every file connection trickles
  const TempDir to;
  const bool mirror = GENERATE(false, true);
  CAPTURE(mirror);
  const auto r = run_wheelfit_cli_deliver(f.args(mirror ? "mirror" : "download", to.path(), {"--speed-limit", "0", "--max-time", "2"}));
  INFO(r.out << r.err);
  CHECK(r.code == 5);
  CHECK_THAT(r.out + r.err, Catch::Contains("the --max-time of 2 s"));
  if (mirror) {
    CHECK_FALSE(fs::exists(to / "current"));
  } else {
    for (const auto& e : fs::directory_iterator(to.path())) CHECK_THAT(e.path().filename().string(), Catch::StartsWith("."));
  }
}

TEST_CASE("wheelfit mirror: wheels upstream gives no sha256 for are refused unless --allow-unverified", "[cli][mirror]") {
  Farm f;
  // An upstream that publishes no digest: none on the pages' hrefs, none in packages.json.
  for (const auto& e : fs::recursive_directory_iterator(f.index)) {
    if (!e.is_regular_file() || e.path().extension() == ".whl") continue;
    const std::string text = read_file(e.path());
    std::string stripped = std::regex_replace(text, std::regex("#sha256=[0-9a-f]{64}"), "");
    stripped = std::regex_replace(stripped, std::regex(",\\s*\"sha256\": \"[0-9a-f]{64}\""), "");
    if (stripped != text) write_file(e.path(), stripped);
  }
  const TempDir out;
  const auto refused = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100")}));
  INFO(refused.out << refused.err);
  CHECK(refused.code == 5);
  CHECK_THAT(refused.err, Catch::Contains("2 wheels have no sha256 upstream"));
  CHECK_THAT(refused.err, Catch::Contains("--allow-unverified"));
  CHECK_FALSE(fs::exists(out / "current"));

  const auto allowed = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100"), "--allow-unverified", "--json"}));
  INFO(allowed.out << allowed.err);
  REQUIRE(allowed.code == 0);
  CHECK(parse_object_cli_deliver(allowed.out).at("published").at("unverified") == 2);
  const auto manifest = parse_object_cli_deliver(read_file(out / "current" / "mirror.json"));
  REQUIRE(manifest.at("files").as_array().size() == 2);
  for (const auto& file : manifest.at("files").as_array()) CHECK(file.at("verified") == false);
  const auto text = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100"), "--allow-unverified"}));
  CHECK_THAT(text.out, Catch::Contains("2 not verified (upstream publishes no sha256"));
}

TEST_CASE("wheelfit mirror: nothing is published when no machine resolves; a run that fails never prunes", "[cli][mirror]") {
  const Farm f;
  const TempDir out, other;
  REQUIRE(run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100")})).code == 0);
  const fs::path served = fs::read_symlink(out / "current");
  const auto pool_before = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(out / "pool")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto pool = pool_before();
  write_file(other / "k40.toml", Farm::profile("3.5"));

  SECTION("an upstream answering empty pages, with --prune: the served tree and the pool stay") {
    write_file(other / "empty" / "index.html", "<!DOCTYPE html><html><body></body></html>\n");
    std::vector<std::string> args{"mirror", f.config.string(), "--index", (other / "empty").string(), "--out",
                                  out.path().string(), "--machine", f.machine("h100"), "--prune"};
    const auto r = run_wheelfit_cli_deliver(args);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("not published: no machine resolved"));
    CHECK(pool_before() == pool);
  }
  SECTION("one machine unresolved, with --prune: the others are published, nothing is pruned") {
    write_file(other / "proj" / "comfy-env.toml", "python = \"3.12\"\n[cuda]\npackages = [\"cc_torch\"]\n");
    std::vector<std::string> args{"mirror", (other / "proj" / "comfy-env.toml").string(), "--index", f.index.string(),
                                  "--out", out.path().string(), "--machine", f.machine("h100"), "--machine",
                                  (other / "k40.toml").string(), "--no-fallback", "--prune"};
    const auto r = run_wheelfit_cli_deliver(args);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("not pruned: --prune acts only in a run where every machine resolves"));
    CHECK(fs::read_symlink(out / "current") != served);  // published ...
    CHECK(pool_before() == pool);                        // ... and cubvh kept, in the pool and the index
    CHECK(fs::exists(out / "current" / "cubvh" / "index.html"));
    return;
  }
  CHECK(fs::read_symlink(out / "current") == served);
}

TEST_CASE("wheelfit: a path the system refuses names it and the system's error, never exit 70", "[cli][deliver][mirror]") {
  const Farm f;
  const TempDir t;
  fs::create_symlink("loop", t / "loop");  // ELOOP for anything under it
  const std::string loop = (t / "loop" / "x").string(), too_long = (t / std::string(300, 'a')).string();
  struct Row {
    std::vector<std::string> args;
    int code;
    const char* says;
  };
  const std::vector<Row> rows = {
      {{"resolve", f.config.string(), "--machine", f.machine("h100"), "--index", loop}, 2, "Too many levels of symbolic links"},
      {{"resolve", f.config.string(), "--machine", f.machine("h100"), "--index", too_long}, 2, "File name too long"},
      {{"download", f.config.string(), "--machine", f.machine("h100"), "--index", f.index.string(), "-d", loop}, 6,
       "Too many levels of symbolic links"},
      {{"mirror", f.config.string(), "--machine", f.machine("h100"), "--index", f.index.string(), "--out", too_long}, 6,
       "File name too long"},
  };
  for (const auto& row : rows) {
    const auto r = run_wheelfit_cli_deliver(row.args);
    INFO(row.args.front() << ": " << r.out << r.err);
    CHECK(r.code == row.code);
    CHECK_THAT(r.err, Catch::Contains(row.says));
    CHECK_THAT(r.err, !Catch::Contains("internal error"));
  }
  // A disk that fills while the snapshot is written (EFBIG past `ulimit -f` stands for ENOSPC):
  // exit 6 naming the file, and the served tree as it was.
  const TempDir out;
  REQUIRE(run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100")})).code == 0);
  const fs::path served = fs::read_symlink(out / "current");
  const auto full = run_program("trap '' XFSZ; ulimit -f 1; exec env -u WHEELFIT_OVERRIDE_PYTHON -u WHEELFIT_OVERRIDE_GPUS " +
                                    clean_network_env(),
                                built_wheelfit(), f.mirror(out.path(), {"--machine", f.machine("h100")}));
  INFO(full.out << full.err);
  CHECK(full.code == 6);
  CHECK_THAT(full.err, Catch::Contains("File too large"));
  CHECK(fs::read_symlink(out / "current") == served);
}

TEST_CASE("wheelfit mirror: the index's facts are written back: requires-python, packages.json's repo, torch_free, fields",
          "[cli][mirror]") {
  const Farm f;
  const fs::path page = f.index / "cc-torch" / "index.html";
  write_file(page, std::regex_replace(read_file(page), std::regex("<a href="), "<a data-requires-python=\"&gt;=3.10\" href="));
  const auto upstream = parse_object_cli_deliver(read_file(f.index / "packages.json"));
  const TempDir out;
  const auto r = run_wheelfit_cli_deliver(f.mirror(out.path(), {"--machine", f.machine("h100")}));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(read_file(out / "current" / "cc-torch" / "index.html"), Catch::Contains("data-requires-python=\"&gt;=3.10\""));
  CHECK_THAT(read_file(out / "current" / "cubvh" / "index.html"), !Catch::Contains("data-requires-python"));
  const auto served = parse_object_cli_deliver(read_file(out / "current" / "packages.json"));
  CHECK(served.at("repo") == upstream.at("repo"));
  for (const char* project : {"cc-torch", "cubvh"}) {
    CAPTURE(project);
    const auto& theirs = upstream.at("packages").at(project).as_object();
    const auto& ours = served.at("packages").at(project).as_object();
    CHECK(ours.at("torch_free") == theirs.at("torch_free"));
    REQUIRE(ours.at("wheels").as_array().size() == 1);
    const auto& wheel = ours.at("wheels").as_array()[0].as_object();
    // The upstream's entry for the same file: every field as it gave it (the url is the mirror's own).
    bool found = false;
    for (const auto& w : theirs.at("wheels").as_array()) {
      if (w.at("filename") != wheel.at("filename")) continue;
      found = true;
      for (const auto& [key, value] : w.as_object()) {
        if (key != "url") CHECK(wheel.at(key) == value);
      }
    }
    CHECK(found);
  }
}
