// The mirror's pages and its atomic publish (core/src/mirror).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <regex>

#include "mirror/mirror_support.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/answer/answer.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/util/log.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit;
using wheelfit::test::contains;
using wheelfit::test::read_file;
using wheelfit::test::TempDir;
using wheelfit::test::write_file;
using namespace wheelfit::test_mirror;

fs::path current_root(const fs::path& out) { return fs::canonical(out / "current"); }

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

}  // namespace

TEST_CASE("mirror text helpers escape and encode", "[mirror][pages]") {
  struct Row {
    std::string in, escaped, encoded;
  };
  const std::vector<Row> rows = {
      {"a-1.0+cu128-cp312.whl", "a-1.0+cu128-cp312.whl", "a-1.0%2Bcu128-cp312.whl"},
      {"<b>&\"'", "&lt;b&gt;&amp;&quot;&#39;", "%3Cb%3E%26%22%27"},
      {"sp ace/x", "sp ace/x", "sp%20ace%2Fx"},
      {"~_.-", "~_.-", "~_.-"},
  };
  for (const auto& r : rows) {
    CHECK(mirror::html_escape(r.in) == r.escaped);
    CHECK(mirror::percent_encode(r.in) == r.encoded);
  }
  CHECK(mirror::file_href("a+b.whl", std::nullopt, true) == "../files/a%2Bb.whl");
  CHECK(mirror::file_href("a+b.whl", std::nullopt, false) == "files/a%2Bb.whl");
  CHECK(mirror::file_href("a+b.whl", "https://m.example/simple//", true) == "https://m.example/simple/files/a%2Bb.whl");
}

TEST_CASE("a project page is a PEP 503 page with hashes, metadata and requires-python", "[mirror][pages]") {
  mirror::File f;
  f.project = "flash-attn";
  f.filename = "flash_attn-2.8.3+cu128torch2.11-cp312-cp312-linux_x86_64.whl";
  f.sha256 = std::string(64, 'a');
  f.requires_python = ">=3.10";
  f.anchors = {"flash_attn-2.8.3+cu128torch2.10-cp312-cp312-linux_x86_64.whl", f.filename};
  const std::string page = mirror::project_page("flash-attn", {&f}, {std::string(64, 'b')}, std::nullopt);
  CHECK(contains(page, "data-core-metadata=\"sha256=" + std::string(64, 'b') + "\""));
  CHECK(contains(page, "data-dist-info-metadata=\"sha256="));
  CHECK(contains(page, "data-requires-python=\"&gt;=3.10\""));
  auto parsed = index::parse_simple_html(page, "http://127.0.0.1:8080/flash-attn/");
  REQUIRE(parsed);
  REQUIRE(parsed->links.size() == 2);
  for (const auto& l : parsed->links) {
    CHECK(l.url == "http://127.0.0.1:8080/files/flash_attn-2.8.3%2Bcu128torch2.11-cp312-cp312-linux_x86_64.whl");
    CHECK(l.sha256 == f.sha256);
    CHECK(l.requires_python == ">=3.10");
  }
  CHECK(parsed->links[0].text == f.anchors[0]);  // sorted by anchor text; the synthetic name kept

  const std::string absolute = mirror::project_page("flash-attn", {&f}, {""}, std::string("https://m.example/wheels"));
  CHECK(contains(absolute, "href=\"https://m.example/wheels/files/flash_attn-2.8.3%2Bcu128torch2.11"));
  CHECK_FALSE(contains(absolute, "data-core-metadata"));

  const std::string root = mirror::root_page({"cumm", "flash-attn"});
  auto links = index::parse_simple_html(root, "http://h/");
  REQUIRE(links);
  CHECK(links->skipped.size() == 2);  // directory links: the projects, not wheels
  CHECK(contains(root, "<a href=\"flash-attn/\">flash-attn</a>"));
}

TEST_CASE("publish writes a complete tree and points current at it", "[mirror][publish]") {
  TempDir tmp;
  const fs::path out = tmp / "mirror";
  auto a = pool_wheel(out, "flash-attn", "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl", "2.8.3+cu128torch2.8", {"a", "b"});
  auto b = pool_wheel(out, "cumm", "cumm-0.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl", "0.8.2+cu128torch2.8", {"a"});
  b.anchors.push_back("cumm-0.8.2+cu128torch2.7-cp312-cp312-linux_x86_64.whl");
  auto published = mirror::publish(snapshot_of(out, {a, b}));
  REQUIRE(published);
  CHECK(published->files == 2);
  CHECK(published->projects == 2);
  const fs::path root = current_root(out);
  CHECK(root == fs::canonical(published->root));
  CHECK(fs::is_symlink(out / "current"));
  for (const char* rel : {"index.html", "flash-attn/index.html", "cumm/index.html", "packages.json", "mirror.json"}) {
    CHECK(fs::is_regular_file(root / rel));
  }
  // The wheel, byte for byte (a hard link into the pool), and its METADATA beside it.
  CHECK(read_file(root / "files" / a.filename) == read_file(mirror::pool_dir(out) / a.filename));
  CHECK(fs::hard_link_count(root / "files" / a.filename) >= 2);
  const std::string meta = read_file(root / "files" / (a.filename + ".metadata"));
  CHECK(contains(meta, "Name: flash_attn"));
  deliver::Sha256 h;
  h.update(meta);
  CHECK(contains(read_file(root / "flash-attn/index.html"), "data-core-metadata=\"sha256=" + h.hex() + "\""));
  // Two anchors for cumm (the synthetic name kept), one file.
  auto cumm = index::parse_simple_html(read_file(root / "cumm/index.html"), "http://h/cumm/");
  REQUIRE(cumm);
  CHECK(cumm->links.size() == 2);

  // packages.json in the farm's schema; its relative urls resolve against its own URL.
  const std::string base = "http://127.0.0.1:9/";
  auto pj = index::parse_packages_json(read_file(root / "packages.json"), base + "packages.json");
  REQUIRE(pj);
  CHECK(pj->repo == "Owner/farm");
  REQUIRE(pj->packages.count("flash-attn"));
  CHECK(pj->packages.at("flash-attn").wheels.at(0).url ==
        base + "files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl");
  CHECK(pj->sha256_for(base + "files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl", "") == a.sha256);
  const auto doc = boost::json::parse(read_file(root / "packages.json"));
  CHECK(doc.at("packages").at("flash-attn").at("wheels").at(0).at("version") == "2.8.3+cu128torch2.8");

  // mirror.json: which machine uses which file.
  const auto manifest = boost::json::parse(read_file(root / "mirror.json"));
  CHECK(manifest.at("upstream") == "https://example.invalid/index/");
  const auto& machines = manifest.at("machines").as_array();
  REQUIRE(machines.size() == 2);
  CHECK(machines[0].at("name") == "a");
  CHECK(machines[0].at("files").as_array().size() == 2);
  CHECK(machines[1].at("files").as_array().size() == 1);
  auto files = mirror::current_files(out);
  REQUIRE(files);
  CHECK(files->size() == 2);
}

TEST_CASE("a re-run carries files no machine picks, unless pruned; two snapshots are kept", "[mirror][publish]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  auto b = pool_wheel(out, "beta", "beta-1.0-py3-none-any.whl", "1.0", {"b"});
  REQUIRE(mirror::publish(snapshot_of(out, {a, b})));
  const std::string first = fs::read_symlink(out / "current").filename().string();

  auto kept = mirror::publish(snapshot_of(out, {a}));  // no machine picks beta now
  REQUIRE(kept);
  CHECK(kept->carried == 1);
  CHECK(kept->files == 2);
  CHECK(fs::exists(current_root(out) / "beta/index.html"));
  const auto manifest = boost::json::parse(read_file(current_root(out) / "mirror.json"));
  for (const auto& f : manifest.at("files").as_array()) {
    if (f.at("filename") == "beta-1.0-py3-none-any.whl") CHECK(f.at("machines").as_array().empty());
  }
  CHECK(fs::exists(out / "snapshots" / first));  // the one before stays for readers in it

  auto s = snapshot_of(out, {a});
  s.prune = true;
  auto pruned = mirror::publish(s);
  REQUIRE(pruned);
  CHECK(pruned->pruned == std::vector<std::string>{"beta-1.0-py3-none-any.whl"});
  CHECK(pruned->files == 1);
  CHECK_FALSE(fs::exists(current_root(out) / "beta"));
  CHECK_FALSE(fs::exists(mirror::pool_dir(out) / "beta-1.0-py3-none-any.whl"));
  CHECK_FALSE(fs::exists(out / "snapshots" / first));  // older than the one before: removed
  CHECK(entries(out / "snapshots") == 2);
}

TEST_CASE("a failed or killed publish leaves the served tree as it was", "[mirror][publish]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  const fs::path before = fs::read_symlink(out / "current");
  const std::string page = read_file(out / "current/alpha/index.html");

  SECTION("a file missing from the pool") {
    mirror::File ghost = a;
    ghost.filename = "ghost-1.0-py3-none-any.whl";
    ghost.project = "ghost";
    auto r = mirror::publish(snapshot_of(out, {a, ghost}));
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "ghost-1.0-py3-none-any.whl"));
  }
  SECTION("a wheel without METADATA") {
    write_file(mirror::pool_dir(out) / "bare-1.0-py3-none-any.whl", test::build_zip({{"bare/__init__.py", ""}}));
    mirror::File bare = a;
    bare.filename = "bare-1.0-py3-none-any.whl";
    bare.project = "bare";
    bare.size = fs::file_size(mirror::pool_dir(out) / bare.filename);
    bare.sha256 = *deliver::sha256_file(mirror::pool_dir(out) / bare.filename);
    auto r = mirror::publish(snapshot_of(out, {a, bare}));
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "METADATA"));
  }
  SECTION("a size that does not match") {
    mirror::File wrong = a;
    wrong.size += 1;
    auto r = mirror::publish(snapshot_of(out, {wrong}));
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "bytes"));
  }
  CHECK(fs::read_symlink(out / "current") == before);
  CHECK(read_file(out / "current/alpha/index.html") == page);
  CHECK(entries(out / "snapshots") == 1);  // no half-built tree left beside it
}

TEST_CASE("leftovers of a killed run are removed by the next publish", "[mirror][publish]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  fs::create_directories(out / "snapshots/.tmp-20260101T000000Z-99999/files");
  fs::create_symlink("snapshots/nowhere", out / ".current.tmp-99999");
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  CHECK_FALSE(fs::exists(out / "snapshots/.tmp-20260101T000000Z-99999"));
  CHECK_FALSE(fs::is_symlink(out / ".current.tmp-99999"));
  CHECK(entries(out / "snapshots") == 2);
}

TEST_CASE("publish refuses a folder that is not a mirror, bad names, and a concurrent run", "[mirror][publish]") {
  TempDir tmp;
  write_file(tmp / "notes.txt", "mine");
  mirror::Snapshot s = snapshot_of(tmp.path(), {});
  auto r = mirror::publish(s);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "not a wheelfit mirror"));
  CHECK_FALSE(mirror::prepare(tmp.path()));

  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  for (const std::string bad : {"../x.whl", ".hidden.whl", "a/b.whl", ""}) {
    mirror::File f = a;
    f.filename = bad;
    auto bad_r = mirror::publish(snapshot_of(out, {f}));
    REQUIRE_FALSE(bad_r);
    CHECK(contains(bad_r.error().message, "not a plain file name"));
  }
  auto twice = mirror::publish(snapshot_of(out, {a, a}));
  REQUIRE_FALSE(twice);
  CHECK(contains(twice.error().message, "listed twice"));

  const int fd = ::open((out / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);  // another run holds the lock (flock is per open file)
  auto locked = mirror::publish(snapshot_of(out, {a}));
  ::close(fd);
  REQUIRE_FALSE(locked);
  CHECK(contains(locked.error().message, "another wheelfit run"));
  CHECK(contains(locked.error().message, "mirroring into"));
}

TEST_CASE("current_files reads the manifest and names it when it is broken", "[mirror][publish]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto none = mirror::current_files(out);
  REQUIRE(none);
  CHECK(none->empty());
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  const fs::path manifest = current_root(out) / "mirror.json";
  struct Row {
    std::string text, says;
  };
  const std::vector<Row> rows = {
      {"{", "not a JSON object"},
      {"[]", "not a JSON object"},
      {"{\"files\": 3}", "no \"files\" array"},
      {"{\"files\": [1]}", "files[0]: not an object"},
      {"{\"files\": [{\"filename\": \"../x\", \"project\": \"p\", \"sha256\": \"x\"}]}", "files[0]"},
  };
  for (const auto& row : rows) {
    fs::remove(manifest);
    write_file(manifest, row.text);
    auto r = mirror::current_files(out);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "mirror.json"));
    CHECK(contains(r.error().message, row.says));
  }
}

TEST_CASE("a wheel replaced upstream under the same name is served with its own METADATA, and warned about", "[mirror][publish][cache]") {
  // The farm publishes under *-latest release tags whose assets are replaced: same name, new
  // bytes. The METADATA is kept by the wheel's digest, so the new wheel never gets the old one's.
  TempDir tmp;
  const fs::path out = tmp / "m";
  const std::string name = "alpha-1.0-py3-none-any.whl";
  auto before = pool_wheel(out, "alpha", name, "1.0", {"a"});
  REQUIRE(mirror::publish(snapshot_of(out, {before})));
  CHECK(contains(read_file(current_root(out) / "files" / (name + ".metadata")), "Version: 1.0\n"));

  std::vector<std::string> warnings;
  const auto previous = log::set_sink([&](log::Level level, std::string_view m) {
    if (level == log::Level::warn) warnings.emplace_back(m);
  });
  auto same = mirror::publish(snapshot_of(out, {before}));  // the same bytes again: nothing to say
  auto after = pool_wheel(out, "alpha", name, "1.0.post1", {"a"});  // the asset replaced, re-downloaded
  REQUIRE(after.sha256 != before.sha256);
  auto replaced = mirror::publish(snapshot_of(out, {after}));
  log::set_sink(previous);
  REQUIRE(same);
  CHECK(same->replaced.empty());
  REQUIRE(replaced);
  // files/ is served as immutable (decision 0041): the run says the name changed bytes.
  CHECK(replaced->replaced == std::vector<std::string>{name});
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("files/" + name) && Catch::Contains(before.sha256) && Catch::Contains(after.sha256) &&
                              Catch::Contains("immutable"));
  const std::string metadata = read_file(current_root(out) / "files" / (name + ".metadata"));
  CHECK(contains(metadata, "Version: 1.0.post1\n"));
  deliver::Sha256 h;
  h.update(metadata);
  CHECK(contains(read_file(current_root(out) / "alpha" / "index.html"), "data-core-metadata=\"sha256=" + h.hex() + "\""));
  // Only the served wheel's METADATA is kept in the pool.
  CHECK(entries(mirror::pool_dir(out) / ".metadata") == 1);
  CHECK(fs::exists(mirror::pool_dir(out) / ".metadata" / (after.sha256 + ".metadata")));
}

// ---- issue 21: PEP 691 JSON pages and the per-machine views ----

TEST_CASE("the JSON pages are PEP 691 (api-version 1.1) with PEP 700's size, upload-time and versions", "[mirror][pages][json]") {
  mirror::File f;
  f.project = "flash-attn";
  f.filename = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl";
  f.sha256 = std::string(64, 'a');
  f.size = 1234;
  f.requires_python = ">=3.9";
  f.anchors = {f.filename};
  mirror::File other = f;
  other.filename = "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl";
  other.anchors = {other.filename};
  other.requires_python.reset();
  const auto doc = json::parse(mirror::project_json("flash-attn", {&f, &other}, {std::string(64, 'b'), ""},
                                                    {"2026-12-01T00:00:00.000000Z", ""}, std::nullopt, 3));
  CHECK(doc.at("meta").at("api-version") == "1.1");
  CHECK(doc.at("name") == "flash-attn");
  CHECK(doc.at("versions") == json::array{"2.8.2+cu128torch2.8", "2.8.3+cu128torch2.8"});
  const auto& files = doc.at("files").as_array();
  REQUIRE(files.size() == 2);
  const auto& newer = files[1].as_object();  // sorted by name, as the HTML page
  CHECK(newer.at("filename").as_string() == f.filename);
  CHECK(newer.at("url") == "../../../files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl");
  CHECK(newer.at("hashes").at("sha256").as_string() == f.sha256);
  CHECK(newer.at("requires-python") == ">=3.9");
  CHECK(newer.at("core-metadata").at("sha256").as_string() == std::string(64, 'b'));
  CHECK_FALSE(newer.contains("dist-info-metadata"));  // PEP 714: pip 23.0 crashes on it
  CHECK(newer.at("size") == 1234);
  CHECK(newer.at("upload-time") == "2026-12-01T00:00:00.000000Z");
  const auto& older = files[0].as_object();
  CHECK(older.at("core-metadata") == false);
  CHECK_FALSE(older.contains("requires-python"));
  CHECK_FALSE(older.contains("upload-time"));
  const auto root = json::parse(mirror::root_json({"cumm", "flash-attn"}));
  CHECK(root.at("projects") == json::array{json::object{{"name", "cumm"}}, json::object{{"name", "flash-attn"}}});
}

TEST_CASE("a view's name must be a safe path segment", "[mirror][views]") {
  struct Row {
    const char* name;
    bool ok;
  };
  for (const Row& r : {Row{"h100", true}, Row{"rtx-5090_a.b+1", true}, Row{"", false}, Row{".", false}, Row{"..", false},
                       Row{".hidden", false}, Row{"a/b", false}, Row{"a\\b", false}, Row{"a b", false}, Row{"a\nb", false},
                       Row{"h100%2F..", false}}) {
    CAPTURE(r.name);
    CHECK(mirror::view_name_problem(r.name).empty() == r.ok);
  }
  CHECK_FALSE(mirror::view_name_problem(std::string(129, 'a')).empty());
}

TEST_CASE("publish writes a view per resolved machine: its picks only, HTML and JSON, its lock files", "[mirror][publish][views]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  auto b = pool_wheel(out, "beta", "beta-1.0-py3-none-any.whl", "1.0", {"a", "b"});
  auto s = snapshot_of(out, {a, b});
  s.machines.push_back(machine_of("c", "-", "-", "unresolved"));
  s.machines[0].lock_files = {{"requirements.txt", "alpha==1.0 --hash=sha256:" + a.sha256 + "\n"},
                              {"pylock.toml", "lock-version = \"1.0\"\n"}};
  auto published = mirror::publish(s);
  REQUIRE(published);
  CHECK(published->views == 2);
  const fs::path root = current_root(out);
  CHECK(read_file(root / "machines/a/index.html").find("alpha") != std::string::npos);
  CHECK(read_file(root / "machines/b/index.html").find("alpha") == std::string::npos);  // b picked beta only
  CHECK(contains(read_file(root / "machines/b/beta/index.html"), "href=\"../../../files/beta-1.0-py3-none-any.whl#sha256=" + b.sha256));
  CHECK(json::parse(read_file(root / "machines/b/beta/index.json")).at("files").as_array().size() == 1);
  CHECK(fs::exists(root / "index.json"));
  CHECK(fs::exists(root / "beta/index.json"));
  CHECK(read_file(root / "machines/a/requirements.txt") == s.machines[0].lock_files[0].text);
  CHECK(fs::exists(root / "machines/a/pylock.toml"));
  CHECK_FALSE(fs::exists(root / "machines/a/pixi.toml"));  // none given: no base URL
  CHECK_FALSE(fs::exists(root / "machines/b/requirements.txt"));
  CHECK_FALSE(fs::exists(root / "machines/c"));  // unresolved: no view

  SECTION("a machine name that is not a safe path segment: nothing is published") {
    const fs::path before = fs::read_symlink(out / "current");
    auto bad = snapshot_of(out, {a});
    bad.machines[0].name = "../escape";
    auto r = mirror::publish(bad);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "'../escape'"));
    CHECK(fs::read_symlink(out / "current") == before);
  }
}

TEST_CASE("an unreadable previous mirror.json is a warning, read as no previous files (issue 31)", "[mirror][publish][hostile]") {
  struct Row {
    const char* what;
    std::string manifest;  ///< what the served snapshot's mirror.json holds
  };
  const std::vector<Row> rows = {
      {"bytes that are not UTF-8 (an older run's)", "{\"schema\": 1, \"files\": [{\"requires_python\": \">=3.9\xff\"}]}"},
      {"not JSON", "{\"files\": ["},
      {"no files array", "{\"schema\": 1}"},
      {"a file without a digest", "{\"files\": [{\"filename\": \"beta-1.0-py3-none-any.whl\", \"project\": \"beta\"}]}"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    TempDir tmp;
    const fs::path out = tmp / "m";
    auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
    auto b = pool_wheel(out, "beta", "beta-1.0-py3-none-any.whl", "1.0", {"b"});
    REQUIRE(mirror::publish(snapshot_of(out, {a, b})));
    const fs::path manifest = current_root(out) / "mirror.json";
    fs::permissions(manifest, fs::perms::owner_write, fs::perm_options::add);
    write_file(manifest, row.manifest);
    REQUIRE_FALSE(mirror::current_files(out));

    std::vector<std::string> warnings;
    const auto previous = log::set_sink([&](log::Level level, std::string_view m) {
      if (level == log::Level::warn) warnings.emplace_back(m);
    });
    auto again = mirror::publish(snapshot_of(out, {a}));
    log::set_sink(previous);
    INFO((again ? std::string() : again.error().message));
    REQUIRE(again);
    CHECK(again->carried == 0);  // beta was only in the unreadable manifest
    CHECK(again->files == 1);
    REQUIRE(warnings.size() == 1);
    const std::string named = (fs::path("snapshots") / manifest.parent_path().filename() / "mirror.json").string();
    CHECK_THAT(warnings[0], Catch::Contains(named) && Catch::Contains("read as no previous files"));
    auto files = mirror::current_files(out);  // the new one reads
    REQUIRE(files);
    CHECK(files->size() == 1);
  }
}

// ---- issue 35: a name under files/ is one file's bytes (served as immutable) ----

TEST_CASE("publish never places two files under one name of files/ (a listed .metadata beside a wheel's)", "[mirror][publish][cache]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  REQUIRE(mirror::publish(snapshot_of(out, {a})));
  const fs::path served = fs::read_symlink(out / "current");
  mirror::File clash = a;
  clash.filename = a.filename + ".metadata";
  clash.anchors = {clash.filename};
  write_file(mirror::pool_dir(out) / clash.filename, "not the METADATA\n");
  clash.size = std::string("not the METADATA\n").size();
  clash.sha256 = *deliver::sha256_file(mirror::pool_dir(out) / clash.filename);
  auto r = mirror::publish(snapshot_of(out, {a, clash}));
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "files/" + clash.filename + " would be two files"));
  CHECK(fs::read_symlink(out / "current") == served);
  CHECK(contains(read_file(current_root(out) / "files" / clash.filename), "Version: 1.0\n"));  // the wheel's METADATA still
}

// ---- issue 35: what the pages say of each file beyond its link: a yank kept from upstream
// (PEP 592 data-yanked, PEP 691 "yanked", mirror.json) in the union and the views, and PEP 700's
// upload-time and size on every JSON entry ----

namespace {

/// The farm's page for alpha: 1.0 yanked with a reason that needs escaping, 1.1 live, 0.9 yanked
/// without a reason.
constexpr const char* kYankingPage =
    "<!DOCTYPE html><html><body>\n"
    "<a href=\"https://up.test/files/alpha-1.0-py3-none-any.whl\" data-yanked=\"broken &quot;build&quot; &lt;3 &amp; more\">"
    "alpha-1.0-py3-none-any.whl</a>\n"
    "<a href=\"https://up.test/files/alpha-1.1-py3-none-any.whl\">alpha-1.1-py3-none-any.whl</a>\n"
    "<a href=\"https://up.test/files/alpha-0.9-py3-none-any.whl\" data-yanked>alpha-0.9-py3-none-any.whl</a>\n"
    "</body></html>\n";
const std::string kReason = "broken \"build\" <3 & more";

/// A resolution of machine `a` picking the three (a yanked file reaches a mirror when something
/// picks it: the tests of the pages do not depend on which).
resolve::Resolution picks_of_alpha(const std::vector<mirror::File>& files) {
  resolve::Resolution r;
  r.notation = {"cuda", "cu", "CUDA"};
  r.combo = model::Combo{*model::NumericVersion::parse("12.8"), *model::NumericVersion::parse("2.8")};
  r.tier = "bootstrap";
  for (const auto& f : files) {
    resolve::Pick p;
    p.name = "alpha";
    p.filename = f.filename;
    p.url = "https://up.test/files/" + f.filename;
    p.version = f.fields.front().second;
    p.sha256 = f.sha256;
    r.picks.push_back(p);
  }
  return r;
}

/// The entries of the project JSON page at `page`, by file name.
std::map<std::string, json::object> json_entries(const fs::path& page) {
  std::map<std::string, json::object> out;
  const json::value doc = json::parse(read_file(page));  // kept: the loop reads into it
  for (const auto& e : doc.at("files").as_array()) out[std::string(e.at("filename").as_string())] = e.as_object();
  return out;
}

}  // namespace

TEST_CASE("a file yanked upstream stays yanked through the mirror: its anchor, its JSON entry, mirror.json", "[mirror][pages][yank]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  const std::vector<mirror::File> pooled = {pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"}),
                                            pool_wheel(out, "alpha", "alpha-1.1-py3-none-any.whl", "1.1", {"a"}),
                                            pool_wheel(out, "alpha", "alpha-0.9-py3-none-any.whl", "0.9", {"a"})};
  auto page = index::parse_simple_html(kYankingPage, "https://up.test/simple/alpha/");
  REQUIRE(page);
  index::IndexSnapshot snap;
  snap.projects["alpha"].page = *page;
  const auto r = picks_of_alpha(pooled);
  auto answer = answer::build({{"a", &r, &snap, "https://up.test/simple/", std::nullopt}});
  std::vector<deliver::Delivered> delivered;
  for (const auto& f : pooled) {
    deliver::Delivered d;
    d.filename = f.filename;
    d.sha256 = f.sha256;
    d.bytes = f.size;
    d.verified = true;
    delivered.push_back(d);
  }
  mirror::take_delivered(answer, delivered);
  auto s = snapshot_of(out, mirror::files_of(answer, delivered));
  s.machines.resize(1);  // machine a
  REQUIRE(mirror::publish(s));
  const fs::path root = current_root(out);

  for (const std::string tree : {"", "machines/a/"}) {  // the union and the view
    CAPTURE(tree);
    const std::string html = read_file(root / (tree + "alpha/index.html"));
    CHECK(contains(html, "data-yanked=\"broken &quot;build&quot; &lt;3 &amp; more\">alpha-1.0-py3-none-any.whl</a>"));
    CHECK(contains(html, "data-yanked=\"\">alpha-0.9-py3-none-any.whl</a>"));
    auto read = index::parse_simple_html(html, "http://m.test/" + tree + "alpha/");
    REQUIRE(read);
    REQUIRE(read->links.size() == 3);
    std::map<std::string, const index::Link*> by_name;
    for (const auto& l : read->links) by_name[l.text] = &l;
    CHECK(by_name.at("alpha-1.0-py3-none-any.whl")->yanked);
    CHECK(by_name.at("alpha-1.0-py3-none-any.whl")->yank_reason == kReason);
    CHECK(by_name.at("alpha-0.9-py3-none-any.whl")->yanked);
    CHECK(by_name.at("alpha-0.9-py3-none-any.whl")->yank_reason.empty());
    CHECK_FALSE(by_name.at("alpha-1.1-py3-none-any.whl")->yanked);

    const auto entries = json_entries(root / (tree + "alpha/index.json"));
    CHECK(entries.at("alpha-1.0-py3-none-any.whl").at("yanked") == kReason.c_str());
    CHECK(entries.at("alpha-0.9-py3-none-any.whl").at("yanked") == true);
    CHECK_FALSE(entries.at("alpha-1.1-py3-none-any.whl").contains("yanked"));
    auto parsed = index::parse_simple_json(read_file(root / (tree + "alpha/index.json")), "http://m.test/" + tree + "alpha/");
    REQUIRE(parsed);
    for (const auto& l : parsed->links) CHECK(l.yanked == (l.text != "alpha-1.1-py3-none-any.whl"));
  }

  // mirror.json records it, and a later run that carries the file keeps it yanked.
  auto files = mirror::current_files(out);
  REQUIRE(files);
  for (const auto& f : *files) {
    CAPTURE(f.filename);
    CHECK(f.yanked == (f.filename != "alpha-1.1-py3-none-any.whl"));
    CHECK(f.yank_reason == (f.filename == "alpha-1.0-py3-none-any.whl" ? kReason : std::string()));
  }
  std::vector<mirror::File> live;
  for (const auto& f : s.files)
    if (!f.yanked) live.push_back(f);
  REQUIRE(live.size() == 1);
  auto again = mirror::publish(snapshot_of(out, live));
  REQUIRE(again);
  CHECK(again->carried == 2);
  CHECK(contains(read_file(current_root(out) / "alpha/index.html"), "data-yanked=\"broken &quot;build&quot;"));
}

TEST_CASE("every JSON entry of a published mirror has PEP 700's upload-time (RFC 3339, 'Z') and size", "[mirror][pages][json]") {
  TempDir tmp;
  const fs::path out = tmp / "m";
  auto a = pool_wheel(out, "alpha", "alpha-1.0-py3-none-any.whl", "1.0", {"a"});
  auto b = pool_wheel(out, "beta", "beta-1.0-py3-none-any.whl", "1.0", {"a", "b"});
  auto c = pool_wheel(out, "beta", "beta-1.1-py3-none-any.whl", "1.1", {"b"});
  REQUIRE(mirror::publish(snapshot_of(out, {a, b, c})));
  REQUIRE(mirror::publish(snapshot_of(out, {b, c})));  // alpha carried over: its entry too
  const std::regex rfc3339(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z)");
  const std::map<std::string, std::uint64_t> sizes = {{a.filename, a.size}, {b.filename, b.size}, {c.filename, c.size}};
  std::size_t pages = 0, checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(current_root(out))) {
    if (e.path().filename() != "index.json") continue;
    const auto doc = json::parse(read_file(e.path()));
    if (!doc.as_object().contains("files")) continue;  // a root page
    ++pages;
    for (const auto& entry : doc.at("files").as_array()) {
      const std::string name(entry.at("filename").as_string());
      CAPTURE(e.path().string(), name);
      REQUIRE(entry.as_object().contains("upload-time"));
      CHECK(std::regex_match(std::string(entry.at("upload-time").as_string()), rfc3339));
      CHECK(entry.at("size").to_number<std::uint64_t>() == sizes.at(name));
      ++checked;
    }
  }
  CHECK(pages == 4);    // alpha and beta; the views' beta pages (a picks only beta now, and so does b)
  CHECK(checked == 6);  // 3 in the union, a's 1, b's 2
}
