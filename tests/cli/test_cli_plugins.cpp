// `wheelfit plugins` end to end, and `resolve` with a backend that is only a test plugin: the
// built executable, run with WHEELFIT_PLUGIN_PATH unset (the build tree's plugins) or listing
// temporary folders of test plugins (WHEELFIT_TEST_PLUGIN_DIR/<case>/), searched before the
// built-in folder. Where only the test plugins may be seen, a copy of the executable runs from a
// temporary <prefix>/bin without <prefix>/lib/wheelfit/plugins (lone_wheelfit()).
#include <catch2/catch.hpp>


#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;

namespace {

using CliPluginsRun = CliRun;

// Runs the built wheelfit (or `exe`); `plugin_path` (WHEELFIT_PLUGIN_PATH, a folder or a
// ':'-separated list) empty = unset.
CliPluginsRun run_wheelfit_cli_plugins(const std::vector<std::string>& args, const std::string& plugin_path = {},
                 const fs::path& exe = built_wheelfit()) {
  std::string env = "env -u WHEELFIT_PLUGIN_PATH -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA "
                    "-u CONDA_OVERRIDE_GLIBC";
  if (!plugin_path.empty()) env += " WHEELFIT_PLUGIN_PATH=" + shell_quote(plugin_path);
  return wheelfit::test::run_program(env, exe, args);
}

// A copy of the built wheelfit in a temporary <prefix>/bin with no <prefix>/lib/wheelfit/plugins:
// its built-in plugin folder is missing, so it sees only what WHEELFIT_PLUGIN_PATH lists. Made
// once per test run.
struct LoneWheelfit {
  TempDir prefix;
  fs::path exe = prefix / "bin" / "wheelfit";
  fs::path builtin = prefix / "lib" / "wheelfit" / "plugins";  // never made
  LoneWheelfit() {
    fs::create_directories(exe.parent_path());
    fs::copy_file(built_wheelfit(), exe);
  }
};
const LoneWheelfit& lone_wheelfit() {
  static const LoneWheelfit lone;
  return lone;
}

fs::path test_plugin(const std::string& kase) {
  return fs::path(WHEELFIT_TEST_PLUGIN_DIR) / kase / ("libwheelfit_test_plugin_" + kase + ".so");
}

// A plugin folder (0755) with copies of test plugins.
struct PluginFolder {
  TempDir tmp;
  fs::path dir = tmp / "plugins";
  explicit PluginFolder(std::initializer_list<const char*> cases) {
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    for (const char* c : cases) fs::copy_file(test_plugin(c), dir / test_plugin(c).filename());
  }
};

const boost::json::object& backend(const boost::json::object& listing, std::string_view name) {
  for (const auto& b : listing.at("backends").as_array()) {
    if (b.as_object().at("name").as_string() == name) return b.as_object();
  }
  FAIL("no backend " << name << " in " << boost::json::serialize(listing));
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("wheelfit plugins lists the built backends: cuda and rocm", "[cli][plugins]") {
  SECTION("the report") {
    auto r = run_wheelfit_cli_plugins({"plugins"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("plugin folders (in search order; the first to supply a backend wins):\n  "));
    CHECK_THAT(r.out, Catch::Contains("plugins (built-in)\n"));
    CHECK_THAT(r.out, Catch::Contains("\ncuda: ") && Catch::Contains("\nrocm: "));
    CHECK_THAT(r.out, Catch::Contains("https://comfy-forge.github.io/cuda-wheels/ (override: COMFY_ENV_CUDA_WHEELS_INDEX)"));
    CHECK_THAT(r.out, Catch::Contains("fallback:      aarch64 cu13.0/torch2.10, x86_64 cu12.8/torch2.8"));
    CHECK_THAT(r.out, Catch::Contains("none published (override: WHEELFIT_ROCM_WHEELS_INDEX)"));
    CHECK_THAT(r.out, !Catch::Contains("skipped:"));
  }
  SECTION("--json: one object") {
    auto r = run_wheelfit_cli_plugins({"plugins", "--json"});
    CHECK(r.code == 0);
    const auto v = boost::json::parse(r.out).as_object();
    CHECK(fs::weakly_canonical(std::string(v.at("plugin_dir").as_string())) ==
          fs::weakly_canonical(wheelfit::test::binary_dir() / "plugins"));
    const auto& dirs = v.at("plugin_dirs").as_array();
    REQUIRE(dirs.size() == 1);
    CHECK(dirs[0].at("path") == v.at("plugin_dir"));
    CHECK(dirs[0].at("source") == "built-in");
    CHECK(dirs[0].at("error").is_null());
    CHECK(v.at("backends").as_array().size() == 2);
    CHECK(v.at("skipped").as_array().empty());
    const auto& cuda = backend(v, "cuda");
    CHECK(cuda.at("index_url") == "https://comfy-forge.github.io/cuda-wheels/");
    CHECK(cuda.at("index_env") == "COMFY_ENV_CUDA_WHEELS_INDEX");
    CHECK(cuda.at("releases_repo") == "Comfy-Forge/cuda-wheels");
    CHECK(cuda.at("torch_labels").as_array() == boost::json::array{"cu{line:nodot}", "cu{line:nodot}.*", "cuda{line}"});
    CHECK(cuda.at("combo_labels").as_array() == boost::json::array{"cu{line:nodot}torch{torch}", "pt{torch}cu{line:nodot}"});
    CHECK(cuda.at("torch_index_pattern") == "https://download.pytorch.org/whl/cu{line_nodot}");
    CHECK(cuda.at("line").at("key") == "cuda");
    CHECK(cuda.at("detection") == true);
    CHECK(cuda.at("fallback").at("x86_64").at("cuda") == "12.8");
    CHECK(cuda.at("fallback").at("x86_64").at("torch") == "2.8");
    CHECK(cuda.at("fallback").at("aarch64").at("cuda") == "13.0");
    CHECK(cuda.at("fallback").at("aarch64").at("torch") == "2.10");
    CHECK_THAT(std::string(cuda.at("file").as_string()), Catch::EndsWith(".so"));
    const auto& rocm = backend(v, "rocm");
    CHECK(rocm.at("index_url") == "");
    CHECK(rocm.at("index_env") == "WHEELFIT_ROCM_WHEELS_INDEX");
    CHECK(rocm.at("torch_index_pattern") == "https://download.pytorch.org/whl/rocm{line}");
    CHECK(rocm.at("torch_labels").as_array() == boost::json::array{"rocm{line}"});
    CHECK(rocm.at("fallback").at("x86_64").at("rocm") == "7.1");
    CHECK_FALSE(rocm.contains("policy_error"));
  }
}

TEST_CASE("wheelfit plugins with WHEELFIT_PLUGIN_PATH: a test backend, files skipped with reasons", "[cli][plugins]") {
  PluginFolder folder({"fake", "wrong_abi", "throwing"});
  write_file(folder.dir / "README.md", "not a plugin");
  SECTION("--json") {
    auto r = run_wheelfit_cli_plugins({"plugins", "--json"}, folder.dir);
    CHECK(r.code == 0);
    const auto v = boost::json::parse(r.out).as_object();
    CHECK(v.at("plugin_dir") == folder.dir.string().c_str());  // the first folder searched
    const auto& dirs = v.at("plugin_dirs").as_array();
    REQUIRE(dirs.size() == 2);  // the variable's folder, then the built-in one
    CHECK(dirs[0].at("path") == folder.dir.string().c_str());
    CHECK(dirs[0].at("source") == "WHEELFIT_PLUGIN_PATH");
    CHECK(dirs[0].at("error").is_null());
    CHECK(fs::weakly_canonical(std::string(dirs[1].at("path").as_string())) ==
          fs::weakly_canonical(wheelfit::test::binary_dir() / "plugins"));
    CHECK(dirs[1].at("source") == "built-in");
    CHECK(v.at("backends").as_array().size() == 4);  // fake and throwing, and the built cuda and rocm
    const auto& fake = backend(v, "fake");
    CHECK(fake.at("index_url") == "https://example.test/fake-wheels/");
    CHECK(fake.at("fallback").at("x86_64").at("fake") == "1.2");
    CHECK(fake.at("fallback").at("aarch64").at("torch") == "7.8");
    CHECK(fake.at("policy_version") == "fake-1");
    CHECK(fake.at("file") == (folder.dir / "libwheelfit_test_plugin_fake.so").string().c_str());
    const auto& throwing = backend(v, "throwing");
    CHECK(throwing.at("fallback").as_object().empty());
    CHECK(throwing.at("policy_version") == "test-1");
    const auto& skipped = v.at("skipped").as_array();
    REQUIRE(skipped.size() == 2);
    CHECK(skipped[0].at("file") == (folder.dir / "README.md").string().c_str());
    CHECK(skipped[0].at("kind") == "not_plugin_name");
    CHECK(skipped[1].at("file") == (folder.dir / "libwheelfit_test_plugin_wrong_abi.so").string().c_str());
    CHECK(skipped[1].at("kind") == "abi_mismatch");
    CHECK(skipped[1].at("reason") == "built for wheelfit backend ABI 1; this wheelfit reads ABI 2");
  }
  SECTION("the report") {
    auto r = run_wheelfit_cli_plugins({"plugins"}, folder.dir);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("\nfake: a test backend\n") && Catch::Contains("fallback:      aarch64 fk5.6/torch7.8, x86_64 fk1.2/torch3.4"));
    CHECK_THAT(r.out, Catch::Contains("fallback:      none"));
    CHECK_THAT(r.out, Catch::StartsWith("plugin folders (in search order; the first to supply a backend wins):\n  " +
                                        folder.dir.string() + " (WHEELFIT_PLUGIN_PATH)\n  "));
    CHECK_THAT(r.out, Catch::Contains("skipped:\n  " + (folder.dir / "README.md").string() + ": not a plugin file name"));
    CHECK_THAT(r.out, Catch::Contains("libwheelfit_test_plugin_wrong_abi.so: built for wheelfit backend ABI 1; this wheelfit reads ABI 2"));
    CHECK(r.err.empty());
  }
}

TEST_CASE("wheelfit plugins: a folder that cannot be used is reported; exit 2 only when none can", "[cli][plugins]") {
  PluginFolder folder({"fake"});
  const auto& lone = lone_wheelfit();
  SECTION("world-writable, the built-in folder usable: reported, nothing loaded from it, exit 0") {
    fs::permissions(folder.dir, fs::perms::others_write, fs::perm_options::add);
    auto j = run_wheelfit_cli_plugins({"plugins", "--json"}, folder.dir);
    CHECK(j.code == 0);
    const auto v = boost::json::parse(j.out).as_object();
    const auto& dirs = v.at("plugin_dirs").as_array();
    REQUIRE(dirs.size() == 2);
    CHECK_THAT(std::string(dirs[0].at("error").as_string()), Catch::Contains(folder.dir.string()) &&
                                                               Catch::Contains("world-writable"));
    CHECK(dirs[1].at("error").is_null());
    for (const auto& b : v.at("backends").as_array()) CHECK(b.at("name") != "fake");
    auto r = run_wheelfit_cli_plugins({"plugins"}, folder.dir);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("  " + folder.dir.string() + " (WHEELFIT_PLUGIN_PATH): not used: the plugin folder is world-writable"));
  }
  SECTION("world-writable and no built-in folder: exit 2 naming both") {
    fs::permissions(folder.dir, fs::perms::others_write, fs::perm_options::add);
    auto r = run_wheelfit_cli_plugins({"plugins"}, folder.dir, lone.exe);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("no plugin folder could be used") && Catch::Contains(folder.dir.string()) &&
                          Catch::Contains("world-writable") && Catch::Contains(lone.builtin.string()) &&
                          Catch::Contains("WHEELFIT_PLUGIN_PATH"));
    auto j = run_wheelfit_cli_plugins({"plugins", "--json"}, folder.dir, lone.exe);
    CHECK(j.code == 2);
    CHECK(boost::json::parse(j.out).as_object().at("error").at("exit_code") == 2);
  }
  SECTION("missing, and no built-in folder") {
    auto r = run_wheelfit_cli_plugins({"plugins"}, (folder.tmp / "nowhere").string(), lone.exe);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("nowhere: no such plugin folder"));
  }
  SECTION("arguments it does not take") {
    CHECK(run_wheelfit_cli_plugins({"plugins", "extra"}).code == 2);
    CHECK_THAT(run_wheelfit_cli_plugins({"plugins", "--bogus"}).err, Catch::Contains("unknown option --bogus"));
  }
}

TEST_CASE("WHEELFIT_PLUGIN_PATH is a list of folders searched before the built-in one", "[cli][plugins]") {
  // Folders "a" and "b" of test plugins under one temporary folder ({T} in `path`); "missing" is
  // never made; "builtin" is lone_wheelfit()'s built-in folder (missing too).
  struct Row {
    const char* what;
    std::string path;
    std::vector<std::string> a, b;                             // the test plugins copied into each folder
    std::vector<std::pair<std::string, std::string>> dirs;     // (folder, source), in search order
    std::vector<std::pair<std::string, std::string>> loaded;  // (backend, the folder it came from)
    std::vector<std::string> skipped;                          // kinds, in order
    std::vector<std::string> says;                             // in the folder errors or skip reasons
  };
  auto row = GENERATE(values<Row>({
      {"two folders, the same backend in both: the first wins, the second is skipped naming both", "{T}/a:{T}/b",
       {"fake_again"}, {"fake"},
       {{"a", "WHEELFIT_PLUGIN_PATH"}, {"b", "WHEELFIT_PLUGIN_PATH"}, {"builtin", "built-in"}},
       {{"fake", "a"}}, {"duplicate_name"},
       {"backend 'fake' is supplied by both ", "/a/libwheelfit_test_plugin_fake_again.so (loaded) and ",
        "/b/libwheelfit_test_plugin_fake.so (skipped)"}},
      {"the same folders the other way round: the other file wins", "{T}/b:{T}/a", {"fake_again"}, {"fake"},
       {{"b", "WHEELFIT_PLUGIN_PATH"}, {"a", "WHEELFIT_PLUGIN_PATH"}, {"builtin", "built-in"}},
       {{"fake", "b"}}, {"duplicate_name"}, {"/b/libwheelfit_test_plugin_fake.so (loaded)"}},
      {"different backends in two folders: both load", "{T}/a:{T}/b", {"fake"}, {"throwing"},
       {{"a", "WHEELFIT_PLUGIN_PATH"}, {"b", "WHEELFIT_PLUGIN_PATH"}, {"builtin", "built-in"}},
       {{"fake", "a"}, {"throwing", "b"}}, {}, {}},
      {"empty entries are ignored", "::{T}/a:", {"fake"}, {},
       {{"a", "WHEELFIT_PLUGIN_PATH"}, {"builtin", "built-in"}}, {{"fake", "a"}}, {}, {}},
      {"a missing folder is reported and the others still load", "{T}/missing:{T}/a", {"fake"}, {},
       {{"missing", "WHEELFIT_PLUGIN_PATH"}, {"a", "WHEELFIT_PLUGIN_PATH"}, {"builtin", "built-in"}},
       {{"fake", "a"}}, {}, {"/missing: no such plugin folder"}},
      {"a folder listed twice is searched once", "{T}/a:{T}/a/", {"fake"}, {},
       {{"a", "WHEELFIT_PLUGIN_PATH"}, {"builtin", "built-in"}}, {{"fake", "a"}}, {}, {}},
  }));
  CAPTURE(row.what);
  TempDir root;
  for (const auto& [name, cases] : {std::pair{"a", &row.a}, std::pair{"b", &row.b}}) {
    fs::create_directory(root / name);
    fs::permissions(root / name, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
    for (const auto& c : *cases) fs::copy_file(test_plugin(c), root / name / test_plugin(c).filename());
  }
  std::string path = row.path;
  for (auto at = path.find("{T}"); at != std::string::npos; at = path.find("{T}")) path.replace(at, 3, root.path().string());
  const auto& lone = lone_wheelfit();
  auto folder_of = [&](const std::string& name) { return name == "builtin" ? lone.builtin : root / name; };

  auto r = run_wheelfit_cli_plugins({"plugins", "--json"}, path, lone.exe);
  REQUIRE(r.code == 0);
  const auto v = boost::json::parse(r.out).as_object();
  const auto& dirs = v.at("plugin_dirs").as_array();
  REQUIRE(dirs.size() == row.dirs.size());
  std::string said;  // every folder error and skip reason
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    CAPTURE(i);
    CHECK(fs::path(std::string(dirs[i].at("path").as_string())).lexically_normal() ==
          folder_of(row.dirs[i].first).lexically_normal());
    CHECK(dirs[i].at("source") == row.dirs[i].second.c_str());
    const bool missing = row.dirs[i].first == "missing" || row.dirs[i].first == "builtin";
    CHECK(dirs[i].at("error").is_null() == !missing);
    if (!dirs[i].at("error").is_null()) said += std::string(dirs[i].at("error").as_string()) + "\n";
  }
  CHECK(v.at("plugin_dir") == dirs[0].at("path"));
  REQUIRE(v.at("backends").as_array().size() == row.loaded.size());
  for (const auto& [name, from] : row.loaded) {
    CHECK(fs::path(std::string(backend(v, name).at("file").as_string())).parent_path() == folder_of(from));
  }
  const auto& skipped = v.at("skipped").as_array();
  REQUIRE(skipped.size() == row.skipped.size());
  for (std::size_t i = 0; i < skipped.size(); ++i) {
    CHECK(skipped[i].at("kind") == row.skipped[i].c_str());
    said += std::string(skipped[i].at("reason").as_string()) + "\n";
  }
  for (const auto& text : row.says) CHECK_THAT(said, Catch::Contains(text));
}

TEST_CASE("wheelfit resolve warns about a listed folder it cannot use and goes on", "[cli][plugins]") {
  PluginFolder folder({"fake"});
  TempDir w;
  write_file(w / "index" / "pkg" / "index.html", "<html><body></body></html>");
  write_file(w / "comfy-env.toml", "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
  write_file(w / "machine.toml", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ngpus = [\"9.0\"]\n");
  const fs::path missing = folder.tmp / "missing";
  auto r = run_wheelfit_cli_plugins({"resolve", (w / "comfy-env.toml").string(), "--index", (w / "index").string(), "--machine",
                         (w / "machine.toml").string(), "--backend", "fake", "--json"},
                        missing.string() + ":" + folder.dir.string(), lone_wheelfit().exe);
  CHECK(r.code == 1);  // the empty index has no wheel; the fake backend judged it
  CHECK_THAT(r.err, Catch::Contains("plugin folder " + missing.string() +
                                    " (WHEELFIT_PLUGIN_PATH) not used: no such plugin folder"));
  CHECK_THAT(r.out, Catch::Contains("libwheelfit_test_plugin_fake.so (built-in policy)"));
}

TEST_CASE("wheelfit resolve takes its backend, policy and fallback from the plugin", "[cli][plugins]") {
  PluginFolder folder({"fake", "wrong_abi"});
  TempDir w;
  write_file(w / "index" / "pkg" / "index.html", "<html><body></body></html>");
  write_file(w / "comfy-env.toml", "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
  write_file(w / "machine.toml", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ngpus = [\"9.0\"]\n");
  const std::vector<std::string> base{"resolve", (w / "comfy-env.toml").string(), "--index", (w / "index").string(),
                                      "--machine", (w / "machine.toml").string()};
  SECTION("--backend fake: the fake's policy data and fallback combo are used") {
    auto args = base;
    args.insert(args.end(), {"--backend", "fake", "--json"});
    auto r = run_wheelfit_cli_plugins(args, folder.dir);
    CHECK(r.code == 1);  // the empty index has no wheel; what matters is whose policy judged it
    const auto v = boost::json::parse(r.out).as_object();
    CHECK_THAT(boost::json::serialize(v), Catch::Contains("libwheelfit_test_plugin_fake.so (built-in policy)"));
    bool fake_fallback = false;
    for (const auto& t : v.at("tiers").as_array()) {
      if (t.at("tier") == "fallback" && t.at("combo").at("fake") == "1.2" && t.at("combo").at("torch") == "3.4") fake_fallback = true;
    }
    CHECK(fake_fallback);
    CHECK_THAT(r.err, Catch::Contains("libwheelfit_test_plugin_wrong_abi.so skipped: built for wheelfit backend ABI 1"));
  }
  SECTION("a backend no plugin supplies is a usage error listing the loaded ones") {
    // The default backend, cuda, is not in this folder, and this copy has no built-in folder.
    auto r = run_wheelfit_cli_plugins(base, folder.dir, lone_wheelfit().exe);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("unknown backend 'cuda' (known: fake)"));
  }
  SECTION("no plugin folder that can be used stops resolve with exit 2") {
    auto r = run_wheelfit_cli_plugins(base, (folder.tmp / "nowhere").string(), lone_wheelfit().exe);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("no such plugin folder"));
  }
}

TEST_CASE("wheelfit finds the installed layout: <prefix>/bin next to <prefix>/lib/wheelfit/plugins", "[cli][plugins]") {
  TempDir prefix;
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "lib" / "wheelfit" / "plugins");
  fs::copy_file(built_wheelfit(), prefix / "bin" / "wheelfit");
  fs::copy_file(test_plugin("fake"), prefix / "lib" / "wheelfit" / "plugins" / "fake.so");
  auto r = run_wheelfit_cli_plugins({"plugins", "--json"}, {}, prefix / "bin" / "wheelfit");
  CHECK(r.code == 0);
  const auto v = boost::json::parse(r.out).as_object();
  const fs::path expected = fs::canonical(prefix / "lib" / "wheelfit" / "plugins");
  CHECK(fs::path(std::string(v.at("plugin_dir").as_string())) == expected);
  REQUIRE(v.at("plugin_dirs").as_array().size() == 1);
  CHECK(v.at("plugin_dirs").as_array()[0].at("source") == "built-in");
  REQUIRE(v.at("backends").as_array().size() == 1);
  CHECK(fs::path(std::string(backend(v, "fake").at("file").as_string())) == expected / "fake.so");

  SECTION("no plugin folder there: the error names where they were expected") {
    fs::remove_all(prefix / "lib");
    auto missing = run_wheelfit_cli_plugins({"plugins"}, {}, prefix / "bin" / "wheelfit");
    CHECK(missing.code == 2);
    CHECK_THAT(missing.err, Catch::Contains("lib/wheelfit/plugins: no such plugin folder"));
  }
}
