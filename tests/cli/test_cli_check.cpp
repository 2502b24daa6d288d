// `wheelfit check LOCK...` end to end (issue 35, decision 0043): a generated farm served on
// loopback, locks of each format written by `wheelfit resolve -o`, then the farm yanks one file,
// removes one, republishes one with other bytes and publishes a newer build of a fourth; each
// entry gets its status and the exit code is the worst. A lock checked against another machine
// names the demand that fails; hostile locks get an error naming them, never a secret.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <map>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit::test;

namespace {

std::string profile(const char* gpus) {
  return "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\n"
         "torch = \"2.8.0+cu128\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"" +
         std::string(gpus) + "\"]\n";
}

// The demo's four packages as a farm on loopback (pages and files from one server), a config,
// an H100 and a GTX 1080 profile, and the three locks of the H100 written by `resolve -o`.
struct CheckFarm {
  TempDir dir;
  fs::path farm = dir / "farm";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path h100 = dir / "h100.toml";
  fs::path gtx1080 = dir / "gtx1080.toml";
  wheelfit::testing::TestServer server{wheelfit::testing::serve_directory(farm)};
  std::map<std::string, fs::path> locks;  // by format

  CheckFarm() {
    const auto gen = run_program("", fs::path(WHEELFIT_BINARY_DIR) / "scripts/farmgen/wheelfit-farmgen",
                                 {"--out", farm.string(), "--with-files", "--only", "flash_attn,nvdiffrast,cumesh,sageattention",
                                  "--base-url", server.url("")});
    REQUIRE(gen.code == 0);
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"flash_attn\", \"nvdiffrast\", \"cumesh\", \"sageattention\"]\n");
    write_file(h100, profile("9.0"));
    write_file(gtx1080, profile("6.1"));
    fs::create_directories(dir / "locks");
    for (const char* name : {"pixi.toml", "requirements.txt", "pylock.toml"}) {
      const fs::path out = dir / "locks" / name;
      const auto r = run({"resolve", config.string(), "--index", index(), "--machine", h100.string(), "--no-cache", "-o", out.string()});
      INFO(r.out << r.err);
      REQUIRE(r.code == 0);
      locks[name] = out;
    }
  }
  [[nodiscard]] std::string index() const { return server.url("/"); }
  static CliRun run(const std::vector<std::string>& args) { return run_program(clean_network_env(), built_wheelfit(), args); }
  [[nodiscard]] CliRun check(const fs::path& lock, const fs::path& machine, std::vector<std::string> more = {}) const {
    std::vector<std::string> args{"check", lock.string(), "--index", index(), "--machine", machine.string(), "--no-cache", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return run(args);
  }
  // The page of `project` with `edit` applied to its text (and packages.json's, for a digest).
  void edit_page(const std::string& project, const std::function<std::string(std::string)>& edit) const {
    const fs::path page = farm / project / "index.html";
    write_file(page, edit(read_file(page)));
  }
};

// The entries of a check's JSON by project name: status, reason, update.
std::map<std::string, json::object> entries_of(const std::string& out) {
  std::map<std::string, json::object> by_name;
  const auto v = json::parse(out).as_object();
  for (const auto& lock : v.at("locks").as_array()) {
    for (const auto& e : lock.at("entries").as_array()) by_name[std::string(e.at("name").as_string())] = e.as_object();
  }
  return by_name;
}

std::string status(const json::object& e) { return std::string(e.at("status").as_string()); }

// The anchor of `filename` on a page: "<a href=...>filename</a>".
std::string anchor_of(const std::string& page, const std::string& filename) {
  const auto at = page.find(">" + filename + "</a>");
  REQUIRE(at != std::string::npos);
  const auto start = page.rfind("<a ", at);
  return page.substr(start, at + filename.size() + 5 - start);
}

}  // namespace

TEST_CASE("check: a fresh lock of each format is ok, exit 0", "[cli][check]") {
  const CheckFarm f;
  for (const auto& [format, lock] : f.locks) {
    CAPTURE(format);
    const auto r = f.check(lock, f.h100);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    const auto entries = entries_of(r.out);
    REQUIRE(entries.size() == 4);
    for (const auto& [name, e] : entries) {
      CAPTURE(name);
      CHECK(status(e) == "ok");
    }
  }
}

TEST_CASE("check: yanked, gone, digest_changed and an update, each named; the exit code is the worst", "[cli][check]") {
  const CheckFarm f;
  auto locked = entries_of(f.check(f.locks.at("requirements.txt"), f.h100).out);  // the files the locks pin
  const auto file = [&locked](const char* name) { return std::string(locked.at(name).at("filename").as_string()); };
  // flash-attn yanked, nvdiffrast removed, cumesh republished with other bytes, sageattention newer.
  f.edit_page("flash-attn", [&](std::string page) {
    const std::string a = anchor_of(page, file("flash-attn"));
    return page.replace(page.find(a), 3, "<a data-yanked=\"a device trap on Ada\" ");
  });
  f.edit_page("nvdiffrast", [&](std::string page) {
    const std::string a = anchor_of(page, file("nvdiffrast"));
    return page.replace(page.find(a), a.size(), "");
  });
  f.edit_page("cumesh", [&](std::string page) {
    const std::string a = anchor_of(page, file("cumesh"));
    const auto at = page.find(a) + a.find("#sha256=") + 8;
    return page.replace(at, 64, std::string(64, 'e'));
  });
  std::string newer;
  f.edit_page("sageattention", [&](std::string page) {
    const std::string name = file("sageattention");  // sageattention-2.2.0+cu128torch2.8-...
    const std::string a = anchor_of(page, name);
    const std::string version = name.substr(name.find('-') + 1, name.find('+') - name.find('-') - 1);
    std::string b = a;
    for (const std::string& sep : {std::string("%2B"), std::string("+")}) {
      for (std::size_t at = 0; (at = b.find("-" + version + sep, at)) != std::string::npos;) b.replace(at, version.size() + 1, "-99.0");
    }
    newer = name.substr(0, name.find('-') + 1) + "99.0" + name.substr(name.find('+'));
    return page.replace(page.find(a), 0, b + "<br>\n");
  });
  for (const char* format : {"requirements.txt", "pylock.toml"}) {
    CAPTURE(format);
    const auto r = f.check(f.locks.at(format), f.h100);
    INFO(r.out << r.err);
    CHECK(r.code == 5);  // digest_changed is the worst
    auto entries = entries_of(r.out);
    REQUIRE(entries.size() == 4);
    CHECK(status(entries["flash-attn"]) == "yanked");
    CHECK_THAT(std::string(entries["flash-attn"].at("reason").as_string()), Catch::Contains("a device trap on Ada"));
    CHECK(status(entries["nvdiffrast"]) == "gone");
    CHECK(status(entries["cumesh"]) == "digest_changed");
    CHECK_THAT(std::string(entries["cumesh"].at("reason").as_string()), Catch::Contains(std::string(64, 'e')));
    CHECK(status(entries["sageattention"]) == "ok");
    CHECK(entries["sageattention"].at("update").as_string() == newer);
  }
  SECTION("the report names each status and the update") {
    const auto r = CheckFarm::run({"check", f.locks.at("pylock.toml").string(), "--index", f.index(), "--machine", f.h100.string(), "--no-cache"});
    CHECK(r.code == 5);
    CHECK_THAT(r.out, Catch::Contains("yanked  flash-attn") && Catch::Contains("gone  nvdiffrast") &&
                          Catch::Contains("digest_changed  cumesh") && Catch::Contains("update: " + newer));
  }
}

TEST_CASE("check: a lock from an H100 checked against a GTX 1080 names the GPU demand", "[cli][check]") {
  const CheckFarm f;
  const auto r = f.check(f.locks.at("pylock.toml"), f.gtx1080);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const auto entries = entries_of(r.out);
  bool named = false;
  for (const auto& [name, e] : entries) {
    if (status(e) != "will_not_run") continue;
    named = true;
    CHECK_THAT(std::string(e.at("reason").as_string()), Catch::Contains("6.1"));
  }
  CHECK(named);
}

TEST_CASE("check: hostile and broken locks are named, exit 2, no secret printed", "[cli][check]") {
  const CheckFarm f;
  const TempDir tmp;
  struct Row {
    const char* name;
    std::string text;
    const char* said;
  };
  const std::vector<Row> rows = {
      {"pylock.toml", "lock-version = \"1.0\"\n[[packages]\nname = \"x\"\n", "pylock.toml"},
      {"requirements.txt", "x @ https://alice:s3cret@host.test/x-1.0-py3-none-any.whl --hash=sha256:zz\n", "requirements.txt"},
      {"pylock.toml",
       "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"x\"\nversion = \"1.0\"\n"
       "wheels = [{ name = \"x-1.0-py3-none-any.whl\", path = \"/etc/x-1.0-py3-none-any.whl\", hashes = { sha256 = \"" +
           std::string(64, 'a') + "\" } }]\n",
       "pylock.toml"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const fs::path lock = tmp / row.name;
    write_file(lock, row.text);
    const auto r = f.check(lock, f.h100);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(row.said));
    CHECK_THAT(r.out + r.err, !Catch::Contains("s3cret"));
  }
  SECTION("a lock that is no file, and one that is missing") {
    for (const fs::path& lock : {fs::path(tmp.path()), tmp / "missing.txt"}) {
      const auto r = f.check(lock, f.h100);
      CHECK(r.code == 2);
      CHECK_THAT(r.err, Catch::Contains(lock.filename().string()));
    }
  }
}

TEST_CASE("check --machines: each machine judged; one whose profile does not load is named, exit 2", "[cli][check]") {
  const CheckFarm f;
  const TempDir fleet;
  write_file(fleet / "h100.toml", read_file(f.h100));
  write_file(fleet / "gtx1080.toml", read_file(f.gtx1080));
  auto r = CheckFarm::run({"check", f.locks.at("requirements.txt").string(), "--index", f.index(), "--machines", fleet.path().string(),
                           "--no-cache", "--json"});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  for (const auto& [name, e] : entries_of(r.out)) {
    CAPTURE(name);
    CHECK(status(e) == "will_not_run");
    CHECK_THAT(std::string(e.at("reason").as_string()), Catch::StartsWith("on gtx1080: "));
  }
  write_file(fleet / "gtx1080.toml", "gpus = [\n");
  r = CheckFarm::run({"check", f.locks.at("requirements.txt").string(), "--index", f.index(), "--machines", fleet.path().string(),
                      "--no-cache", "--json"});
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  const auto v = json::parse(r.out).as_object();
  REQUIRE(v.at("not_judged").as_array().size() == 1);
  CHECK_THAT(std::string(v.at("not_judged").as_array()[0].as_string()), Catch::StartsWith("gtx1080: "));
  for (const auto& [name, e] : entries_of(r.out)) CHECK(status(e) == "ok");  // on the H100
}
