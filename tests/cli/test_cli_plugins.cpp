// `wheelfit plugins` end to end, and `resolve` with a backend that is only a test plugin: the
// built executable, run with WHEELFIT_PLUGIN_PATH unset (the build tree's plugins) or pointing
// at a temporary folder of test plugins (WHEELFIT_TEST_PLUGIN_DIR/<case>/).
#include <catch2/catch.hpp>


#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using wheelfit::test::read_file;
using wheelfit::test::TempDir;
using wheelfit::test::write_file;

namespace {

using Run = wheelfit::test::CliRun;
using wheelfit::test::built_wheelfit;
using wheelfit::test::shell_quote;

// Runs the built wheelfit (or `exe`); `plugin_dir` empty = WHEELFIT_PLUGIN_PATH unset.
Run run_wheelfit(const std::vector<std::string>& args, const fs::path& plugin_dir = {}, const fs::path& exe = built_wheelfit()) {
  std::string env = "env -u WHEELFIT_PLUGIN_PATH -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA "
                    "-u CONDA_OVERRIDE_GLIBC";
  if (!plugin_dir.empty()) env += " WHEELFIT_PLUGIN_PATH=" + shell_quote(plugin_dir.string());
  return wheelfit::test::run_program(env, exe, args);
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
    auto r = run_wheelfit({"plugins"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("plugin folder: ") && Catch::Contains("plugins"));
    CHECK_THAT(r.out, Catch::Contains("\ncuda: ") && Catch::Contains("\nrocm: "));
    CHECK_THAT(r.out, Catch::Contains("https://comfy-forge.github.io/cuda-wheels/ (override: COMFY_ENV_CUDA_WHEELS_INDEX)"));
    CHECK_THAT(r.out, Catch::Contains("fallback:      aarch64 cu13.0/torch2.10, x86_64 cu12.8/torch2.8"));
    CHECK_THAT(r.out, Catch::Contains("none published (override: WHEELFIT_ROCM_WHEELS_INDEX)"));
    CHECK_THAT(r.out, !Catch::Contains("skipped:"));
  }
  SECTION("--json: one object") {
    auto r = run_wheelfit({"plugins", "--json"});
    CHECK(r.code == 0);
    const auto v = boost::json::parse(r.out).as_object();
    CHECK(fs::weakly_canonical(std::string(v.at("plugin_dir").as_string())) ==
          fs::weakly_canonical(wheelfit::test::binary_dir() / "plugins"));
    CHECK(v.at("backends").as_array().size() == 2);
    CHECK(v.at("skipped").as_array().empty());
    const auto& cuda = backend(v, "cuda");
    CHECK(cuda.at("index_url") == "https://comfy-forge.github.io/cuda-wheels/");
    CHECK(cuda.at("index_env") == "COMFY_ENV_CUDA_WHEELS_INDEX");
    CHECK(cuda.at("releases_repo") == "Comfy-Forge/cuda-wheels");
    CHECK(cuda.at("torch_labels").as_array() == boost::json::array{"cu{line:nodot}", "cu{line:nodot}.*"});
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
    auto r = run_wheelfit({"plugins", "--json"}, folder.dir);
    CHECK(r.code == 0);
    const auto v = boost::json::parse(r.out).as_object();
    CHECK(v.at("plugin_dir") == folder.dir.string().c_str());
    CHECK(v.at("backends").as_array().size() == 2);
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
    auto r = run_wheelfit({"plugins"}, folder.dir);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("\nfake: a test backend\n") && Catch::Contains("fallback:      aarch64 fk5.6/torch7.8, x86_64 fk1.2/torch3.4"));
    CHECK_THAT(r.out, Catch::Contains("fallback:      none"));
    CHECK_THAT(r.out, Catch::Contains("skipped:\n  README.md: not a plugin file name"));
    CHECK_THAT(r.out, Catch::Contains("libwheelfit_test_plugin_wrong_abi.so: built for wheelfit backend ABI 1; this wheelfit reads ABI 2"));
    CHECK(r.err.empty());
  }
}

TEST_CASE("wheelfit plugins: an unusable plugin folder exits 2 naming it", "[cli][plugins]") {
  PluginFolder folder({"fake"});
  SECTION("world-writable") {
    fs::permissions(folder.dir, fs::perms::others_write, fs::perm_options::add);
    auto r = run_wheelfit({"plugins"}, folder.dir);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(folder.dir.string()) && Catch::Contains("world-writable") &&
                          Catch::Contains("WHEELFIT_PLUGIN_PATH"));
    auto j = run_wheelfit({"plugins", "--json"}, folder.dir);
    CHECK(j.code == 2);
    CHECK(boost::json::parse(j.out).as_object().at("error").at("exit_code") == 2);
  }
  SECTION("missing") {
    auto r = run_wheelfit({"plugins"}, folder.tmp / "nowhere");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("nowhere: no such plugin folder"));
  }
  SECTION("arguments it does not take") {
    CHECK(run_wheelfit({"plugins", "extra"}).code == 2);
    CHECK_THAT(run_wheelfit({"plugins", "--bogus"}).err, Catch::Contains("unknown option --bogus"));
  }
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
    auto r = run_wheelfit(args, folder.dir);
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
    auto r = run_wheelfit(base, folder.dir);  // the default backend, cuda, is not in this folder
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("unknown backend 'cuda' (known: fake)"));
  }
  SECTION("a plugin folder that cannot be used stops resolve with exit 2") {
    auto r = run_wheelfit(base, folder.tmp / "nowhere");
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
  auto r = run_wheelfit({"plugins", "--json"}, {}, prefix / "bin" / "wheelfit");
  CHECK(r.code == 0);
  const auto v = boost::json::parse(r.out).as_object();
  const fs::path expected = fs::canonical(prefix / "lib" / "wheelfit" / "plugins");
  CHECK(fs::path(std::string(v.at("plugin_dir").as_string())) == expected);
  REQUIRE(v.at("backends").as_array().size() == 1);
  CHECK(fs::path(std::string(backend(v, "fake").at("file").as_string())) == expected / "fake.so");

  SECTION("no plugin folder there: the error names where they were expected") {
    fs::remove_all(prefix / "lib");
    auto missing = run_wheelfit({"plugins"}, {}, prefix / "bin" / "wheelfit");
    CHECK(missing.code == 2);
    CHECK_THAT(missing.err, Catch::Contains("lib/wheelfit/plugins: no such plugin folder"));
  }
}
