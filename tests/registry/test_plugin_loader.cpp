// load_plugins and the plugin search list (plugin_dirs, builtin_plugin_dir) with real shared
// libraries: the test-only plugins of tests/registry/plugins/ (built into
// WHEELFIT_TEST_PLUGIN_DIR/<case>/), copied into temporary folders, one scenario each. Cases tagged
// [posix] test Linux-only rules (modes, symbolic links, ':' lists, *.so names); the Windows ones
// are in tests/windows/test_plugins_win.cpp.
#include <catch2/catch.hpp>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#include <sys/stat.h>
#endif

#include <boost/json.hpp>
#include <filesystem>
#include <functional>

#include "support/test_support.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/registry/registry.hpp"

using namespace wheelfit;
using registry::DirSource;
using registry::PluginDir;
using registry::Registry;
using registry::SkipReason;
namespace fs = std::filesystem;
using test::TempDir;

namespace {

/// The built test plugin for `kase` (a folder of tests/registry/plugins/CMakeLists.txt).
fs::path test_plugin(const std::string& kase) {
#ifdef _WIN32
  return fs::path(WHEELFIT_TEST_PLUGIN_DIR) / kase / ("wheelfit_test_plugin_" + kase + ".dll");
#else
  return fs::path(WHEELFIT_TEST_PLUGIN_DIR) / kase / ("libwheelfit_test_plugin_" + kase + ".so");
#endif
}

/// A temporary plugin folder (mode 0755) holding copies of test plugins.
struct PluginFolder {
  TempDir tmp;
  fs::path dir = tmp / "plugins";
  PluginFolder() {
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  }
  fs::path add(const std::string& kase, std::string name = "") {
    if (name.empty()) name = test_plugin(kase).filename().string();
    const fs::path to = dir / name;
    fs::copy_file(test_plugin(kase), to);
    return to;
  }
};

#ifndef _WIN32
void chmod_add(const fs::path& p, fs::perms perms) { fs::permissions(p, perms, fs::perm_options::add); }

/// A setup copying the test plugin `kase` into a PluginFolder.
std::function<void(PluginFolder&)> adding(std::string kase) {
  return [kase](PluginFolder& f) { f.add(kase); };
}
#endif

}  // namespace

TEST_CASE("load_plugins: a whole backend from one plugin folder, no core change", "[registry][plugins]") {
  PluginFolder folder;
  const fs::path file = folder.add("fake");
  Registry reg;
  const auto report = registry::load_plugins(reg, folder.dir);
  REQUIRE(report.ok());
  REQUIRE(report.dirs.size() == 1);
  CHECK(report.dirs[0].dir == folder.dir);
  CHECK(report.dirs[0].source == DirSource::given);
  CHECK_FALSE(report.dirs[0].error);
  CHECK(report.skipped.empty());
  REQUIRE(report.loaded.size() == 1);
  CHECK(report.loaded[0].backend == "fake");
  CHECK(report.loaded[0].file == file);

  const auto* b = reg.find("fake");
  REQUIRE(b != nullptr);
  CHECK(b->description == "a test backend");
  CHECK(b->index_url == "https://example.test/fake-wheels/");
  CHECK(b->index_env == "WHEELFIT_FAKE_WHEELS_INDEX");
  CHECK(b->releases_repo == "example/fake-wheels");
  CHECK(b->origin == file.string());
  CHECK(b->has_detection);
  CHECK(b->targets.parse_target != nullptr);
  CHECK(b->targets.parse_target_list != nullptr);
  CHECK(b->targets.match_targets != nullptr);
  CHECK(b->targets.read_device_code == nullptr);

  SECTION("its detection reaches the plugin on every call") {
    for (int call = 1; call <= 2; ++call) {
      auto text = reg.detect("fake");
      REQUIRE(text);
      const auto v = boost::json::parse(*text).as_object();
      CHECK(v.at("present") == true);
      CHECK(v.at("facts").at("gpus").as_array().at(0) == "fk1");
      CHECK(v.at("notes").as_array().at(0) == ("call " + std::to_string(call)).c_str());
    }
  }
  SECTION("its policy data brings its notation, label grammar, fallback combos and torch index") {
    auto policy = registry::make_policy(*b, std::nullopt);
    REQUIRE(policy);
    CHECK(policy->source() == file.string() + " (built-in policy)");
    CHECK(policy->version() == "fake-1");
    CHECK(policy->notation().key == "fake");
    CHECK(policy->notation().prefix == "fk");
    CHECK(policy->notation().name == "Fake");
    CHECK(policy->device_name() == "fake target");
    CHECK(policy->code_sections() == std::vector<std::string>{".fake_code"});
    CHECK(policy->driver_rule() == semantics::DriverRule::unknown);
    CHECK(policy->combo_str(*policy->fallback_combo("x86_64")) == "fk1.2/torch3.4");
    CHECK(policy->combo_str(*policy->fallback_combo("aarch64")) == "fk5.6/torch7.8");  // "arm64" in the file
    CHECK(policy->fallback_combos().size() == 2);
    CHECK(policy->torch_index_url(*model::NumericVersion::parse("1.2")) == "https://example.test/torch/fk12");
    const auto label = policy->parse_combo_label("+fk12torch3.4");
    REQUIRE(label);
    CHECK(policy->combo_str(*label) == "fk1.2/torch3.4");
    CHECK(policy->parse_torch_label("fk12") == *model::NumericVersion::parse("1.2"));
  }
  SECTION("its target functions are the policy's rules, called across the plugin boundary") {
    auto policy = registry::make_policy(*b, std::nullopt);
    REQUIRE(policy);
    REQUIRE(policy->rules() != nullptr);
    CHECK(policy->rules()->parse_target("  FK1 ").value() == "fk1");
    auto bad = policy->rules()->parse_target("  ");
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("is not a test target"));
    // The row " FK1 ; fk2+jit " was canonicalised by the plugin's parse_target_list on reading.
    const auto row = policy->platform_arch_list(*policy->fallback_combo("x86_64"), "linux");
    REQUIRE(row);
    CHECK(row->list == "fk1;fk2+jit");
    const auto native = policy->rules()->match(row->list, "fk1");
    REQUIRE(native);
    CHECK(native->kind == semantics::DeviceRules::Match::Kind::native);
    CHECK(native->via == "fk1");
    const auto jit = policy->rules()->match(row->list, "fk2");
    REQUIRE(jit);
    CHECK(jit->kind == semantics::DeviceRules::Match::Kind::jit);
    CHECK(jit->via == "fk2+jit");
    const auto none = policy->rules()->match(row->list, "fk3");
    REQUIRE(none);
    CHECK_FALSE(none->covers());
    CHECK_FALSE(policy->rules()->match(";", "fk1"));  // malformed: -1 from the plugin
  }
  SECTION("its index is chosen like any backend's") {
    auto choice = registry::choose_index(*b, std::nullopt, std::string("/srv/fake"));
    REQUIRE(choice);
    CHECK(choice->origin == "env WHEELFIT_FAKE_WHEELS_INDEX");
  }
}

#ifndef _WIN32
TEST_CASE("load_plugins skips a bad file with its reason and loads nothing from it", "[registry][plugins][posix]") {
  struct Row {
    const char* what;
    std::function<void(PluginFolder&)> setup;
    SkipReason kind;
    std::vector<std::string> says;
  };
  auto row = GENERATE(values<Row>({
      {"a file not named *.so", [](PluginFolder& f) { test::write_file(f.dir / "README.txt", "hi"); },
       SkipReason::not_plugin_name, {"not a plugin file name"}},
      {"a hidden .so", [](PluginFolder& f) { f.add("fake", ".hidden.so"); }, SkipReason::not_plugin_name,
       {"not a plugin file name"}},
      {"a folder named *.so", [](PluginFolder& f) { fs::create_directory(f.dir / "folder.so"); },
       SkipReason::not_regular_file, {"not a regular file"}},
      {"a dangling link", [](PluginFolder& f) { fs::create_symlink(f.dir / "gone", f.dir / "dangling.so"); },
       SkipReason::not_regular_file, {"not a regular file"}},
      {"a world-writable plugin",
       [](PluginFolder& f) { chmod_add(f.add("fake"), fs::perms::others_write); },
       SkipReason::world_writable, {"world-writable"}},
      {"a text file named *.so", [](PluginFolder& f) { test::write_file(f.dir / "text.so", "not a library\n"); },
       SkipReason::not_shared_library, {"not a shared library"}},
      {"a truncated ELF file",
       [](PluginFolder& f) { test::write_file(f.dir / "trunc.so", std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(9, '\0')); },
       SkipReason::load_failed, {"failed to load: ", "trunc.so"}},
      {"a library without the entry", adding("no_entry"), SkipReason::no_entry,
       {"no wheelfit_backend_entry entry point"}},
      {"an entry returning NULL", adding("null_entry"), SkipReason::entry_failed, {"returned NULL"}},
      {"a plugin built for ABI 1", adding("wrong_abi"), SkipReason::abi_mismatch,
       {"built for wheelfit backend ABI 1; this wheelfit reads ABI 2"}},
      {"a descriptor smaller than v2", adding("small"), SkipReason::bad_descriptor,
       {"descriptor size 8 is smaller than wheelfit_backend_v2"}},
      {"an invalid backend name", adding("bad_name"), SkipReason::bad_descriptor, {"backend name 'Not A Name'"}},
      {"an empty policy_json", adding("no_policy"), SkipReason::bad_descriptor,
       {"descriptor field 'policy_json' is empty"}},
      {"a NULL match_targets", adding("no_rules"), SkipReason::bad_descriptor,
       {"descriptor function 'match_targets' is NULL (required)"}},
  }));
  CAPTURE(row.what);
  PluginFolder folder;
  row.setup(folder);
  Registry reg;
  const auto report = registry::load_plugins(reg, folder.dir);
  REQUIRE(report.ok());
  CHECK(report.loaded.empty());
  CHECK(reg.names().empty());
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].kind == row.kind);
  CHECK(report.skipped[0].file.parent_path() == folder.dir);  // the record names the file
  for (const auto& text : row.says) CHECK_THAT(report.skipped[0].reason, Catch::Contains(text));
}
#endif

#ifndef _WIN32
TEST_CASE("load_plugins: a duplicate backend name is skipped naming both files; file-name order decides",
          "[registry][plugins][posix]") {
  PluginFolder folder;
  const auto first = folder.add("fake_again", "a_first.so");
  const auto second = folder.add("fake", "b_second.so");
  Registry reg;
  const auto report = registry::load_plugins(reg, folder.dir);
  REQUIRE(report.ok());
  REQUIRE(report.loaded.size() == 1);
  CHECK(report.loaded[0].file == first);
  CHECK(reg.find("fake")->description == "the same name again");
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].kind == SkipReason::duplicate_name);
  CHECK(report.skipped[0].file == second);
  CHECK_THAT(report.skipped[0].reason,
             Catch::Contains("'fake'") && Catch::Contains(first.string()) && Catch::Contains(second.string()));

  SECTION("a backend without detection says so") {
    auto r = reg.detect("fake");
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::unsupported));
    CHECK(r.error().message == "backend fake has no detection");
  }
}
#endif

#ifndef _WIN32
TEST_CASE("load_plugins goes through the folder in name order and keeps going past bad files", "[registry][plugins][posix]") {
  PluginFolder folder;
  folder.add("wrong_abi", "c.so");
  folder.add("throwing", "b.so");
  folder.add("fake", "d.so");
  test::write_file(folder.dir / "a.txt", "");
  folder.add("no_entry", "e.so");
  Registry reg;
  const auto report = registry::load_plugins(reg, folder.dir);
  REQUIRE(report.ok());
  REQUIRE(report.loaded.size() == 2);
  CHECK(report.loaded[0].backend == "throwing");
  CHECK(report.loaded[1].backend == "fake");
  REQUIRE(report.skipped.size() == 3);
  CHECK(report.skipped[0].file.filename() == "a.txt");
  CHECK(report.skipped[1].file.filename() == "c.so");
  CHECK(report.skipped[2].file.filename() == "e.so");
  CHECK(reg.names() == std::vector<std::string>{"fake", "throwing"});
}
#endif

TEST_CASE("a detection that throws inside the plugin reaches the core as a value", "[registry][plugins]") {
  PluginFolder folder;
  folder.add("throwing");
  Registry reg;
  REQUIRE(registry::load_plugins(reg, folder.dir).loaded.size() == 1);
  for (int call = 0; call < 2; ++call) {
    auto text = reg.detect("throwing");
    REQUIRE(text);  // a value, not an exception and not a crash
    const auto v = boost::json::parse(*text).as_object();
    CHECK(v.at("present") == false);
    CHECK(v.at("error").as_string() == "detection failed: the probe exploded \"loudly\"");
  }
}

TEST_CASE("load_plugins refuses the folder itself when it is unsafe or missing", "[registry][plugins]") {
  PluginFolder folder;
  folder.add("fake");
  Registry reg;
#ifndef _WIN32
  SECTION("world-writable: nothing is loaded") {
    chmod_add(folder.dir, fs::perms::others_write);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE_FALSE(report.ok());
    CHECK(report.error->is(Errc::invalid_input));
    CHECK_THAT(report.error->message, Catch::Contains(folder.dir.string()) && Catch::Contains("world-writable"));
    CHECK(report.loaded.empty());
    CHECK(reg.names().empty());
  }
  SECTION("world-writable with the sticky bit (like /tmp) is still refused") {
    chmod_add(folder.dir, fs::perms::others_write | fs::perms::sticky_bit);
    CHECK_FALSE(registry::load_plugins(reg, folder.dir).ok());
  }
#endif
  SECTION("missing") {
    const auto report = registry::load_plugins(reg, folder.tmp / "nope");
    REQUIRE_FALSE(report.ok());
    CHECK(report.error->is(Errc::not_found));
    CHECK_THAT(report.error->message, Catch::Contains("nope") && Catch::Contains("no such plugin folder"));
  }
  SECTION("a file, not a folder") {
    const auto report = registry::load_plugins(reg, folder.dir / test_plugin("fake").filename());
    REQUIRE_FALSE(report.ok());
    CHECK(report.error->is(Errc::io_error));
  }
  SECTION("empty: fine, nothing loaded") {
    PluginFolder empty;
    const auto report = registry::load_plugins(reg, empty.dir);
    CHECK(report.ok());
    CHECK(report.loaded.empty());
    CHECK(report.skipped.empty());
  }
}

TEST_CASE("plugins are never unloaded: their code outlives the registry", "[registry][plugins]") {
  PluginFolder folder;
  const auto file = folder.add("fake", "keep" + test_plugin("fake").extension().string());
  {
    Registry first;
    REQUIRE(registry::load_plugins(first, folder.dir).loaded.size() == 1);
    Registry moved = std::move(first);
    REQUIRE(moved.detect("fake"));
  }
#ifdef _WIN32
  // Pinned: still mapped (GetModuleHandleW finds only a loaded module).
  CHECK(::GetModuleHandleW(file.c_str()) != nullptr);
#else
  // RTLD_NOLOAD finds the library only if it is still mapped.
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  CHECK(handle != nullptr);
  if (handle) ::dlclose(handle);
#endif
}

#ifndef _WIN32
TEST_CASE("plugin_dirs: WHEELFIT_PLUGIN_PATH's folders in order, then the built-in one", "[registry][plugins][posix]") {
  struct Row {
    const char* what;
    std::optional<std::string> env;
    std::vector<PluginDir> expected;
  };
  const fs::path builtin = "/opt/wheelfit/lib/wheelfit/plugins";
  const PluginDir b{builtin, DirSource::builtin};
  auto row = GENERATE_REF(values<Row>({
      {"unset: the built-in folder only", std::nullopt, {b}},
      {"empty: the built-in folder only", "", {b}},
      {"one folder, searched first", "/a", {{"/a", DirSource::env}, b}},
      {"a list, in its order", "/b:/a", {{"/b", DirSource::env}, {"/a", DirSource::env}, b}},
      {"empty entries are ignored (no current-folder entry)", ":/a::/b:",
       {{"/a", DirSource::env}, {"/b", DirSource::env}, b}},
      {"only separators", ":::", {b}},
      {"a relative entry is kept as written", "plugins", {{"plugins", DirSource::env}, b}},
      {"a folder listed twice is searched once, at its first place", "/a:/b:/a/:/a/./",
       {{"/a", DirSource::env}, {"/b", DirSource::env}, b}},
      {"the built-in folder named in the list keeps the list's place", "/a:/opt/wheelfit/lib/wheelfit/plugins/",
       {{"/a", DirSource::env}, {"/opt/wheelfit/lib/wheelfit/plugins/", DirSource::env}}},
  }));
  CAPTURE(row.what);
  const auto dirs = registry::plugin_dirs(row.env ? std::optional<std::string_view>(*row.env) : std::nullopt, builtin);
  REQUIRE(dirs.size() == row.expected.size());
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    CAPTURE(i);
    CHECK(dirs[i].path == row.expected[i].path);
    CHECK(dirs[i].source == row.expected[i].source);
  }
}
#endif

#ifndef _WIN32
TEST_CASE("plugin_dirs(): the variable's folders, then the build tree's plugins folder", "[registry][plugins][posix]") {
  const fs::path built = fs::weakly_canonical(test::binary_dir() / "plugins");
  SECTION("the built-in folder: <build>/plugins for an executable in <build>/tests") {
    CHECK(fs::weakly_canonical(registry::builtin_plugin_dir()) == built);
  }
  SECTION("unset") {
    test::ScopedEnv env("WHEELFIT_PLUGIN_PATH", std::nullopt);
    const auto dirs = registry::plugin_dirs();
    REQUIRE(dirs.size() == 1);
    CHECK(fs::weakly_canonical(dirs[0].path) == built);
    CHECK(dirs[0].source == DirSource::builtin);
  }
  SECTION("set: searched before the built-in folder, which is still searched") {
    test::ScopedEnv env("WHEELFIT_PLUGIN_PATH", "/opt/wf/plugins:/srv/more");
    const auto dirs = registry::plugin_dirs();
    REQUIRE(dirs.size() == 3);
    CHECK(dirs[0] == PluginDir{"/opt/wf/plugins", DirSource::env});
    CHECK(dirs[1] == PluginDir{"/srv/more", DirSource::env});
    CHECK(fs::weakly_canonical(dirs[2].path) == built);
    CHECK(dirs[2].source == DirSource::builtin);
  }
  CHECK(registry::to_string(DirSource::env) == "WHEELFIT_PLUGIN_PATH");
  CHECK(registry::to_string(DirSource::builtin) == "built-in");
}
#endif

#ifndef _WIN32
TEST_CASE("load_plugins over a list of folders: the first to supply a backend wins; a folder not used is reported",
          "[registry][plugins][posix]") {
  // Folders "a", "b", "ww" (world-writable) under one temporary folder; "missing" is never made.
  struct Folders {
    TempDir tmp;
    fs::path at(const std::string& name) const { return tmp / name; }
    fs::path add(const std::string& folder, const std::string& kase, const std::string& name = "") {
      const fs::path dir = at(folder);
      if (!fs::exists(dir)) {
        fs::create_directory(dir);
        fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
      }
      const fs::path to = dir / (name.empty() ? test_plugin(kase).filename().string() : name);
      fs::copy_file(test_plugin(kase), to);
      return to;
    }
    /// Copies the test plugin `kase` into folder "ww" and makes the folder world-writable.
    void add_world_writable(const std::string& kase) {
      add("ww", kase);
      chmod_add(at("ww"), fs::perms::others_write);
    }
    /// A setup copying the test plugin `kase` into `folder`.
    static std::function<void(Folders&)> adding(std::string folder, std::string kase) {
      return [folder, kase](Folders& f) { f.add(folder, kase); };
    }
  };
  struct Loaded {
    const char* backend;
    const char* folder;
  };

  struct Row {
    const char* what;
    std::function<void(Folders&)> setup;
    std::string env;  // WHEELFIT_PLUGIN_PATH, with {T} standing for the temporary folder
    const char* builtin;
    std::vector<Loaded> loaded;
    std::vector<SkipReason> skipped;
    std::vector<std::optional<Errc>> dir_errors;  // per searched folder
    std::optional<Errc> error;                    // the report's
    std::vector<std::string> says;                // in the first skip reason, else the report's error
  };
  auto row = GENERATE(values<Row>({
      {"two folders, the same backend in both: the first folder's wins, the other is skipped naming both",
       [](Folders& f) {
         f.add("a", "fake_again", "z_last.so");
         f.add("b", "fake", "a_first.so");
       },
       "{T}/a:{T}/b", "b", {{"fake", "a"}}, {SkipReason::duplicate_name}, {std::nullopt, std::nullopt}, std::nullopt,
       {"backend 'fake' is supplied by both", "/a/z_last.so (loaded)", "/b/a_first.so (skipped)"}},
      {"the list's folders come before the built-in one",
       [](Folders& f) {
         f.add("a", "throwing");
         f.add("b", "fake");
       },
       "{T}/a", "b", {{"throwing", "a"}, {"fake", "b"}}, {}, {std::nullopt, std::nullopt}, std::nullopt, {}},
      {"the built-in folder loses a name the list supplies",
       [](Folders& f) {
         f.add("a", "fake_again");
         f.add("b", "fake");
       },
       "{T}/a", "b", {{"fake", "a"}}, {SkipReason::duplicate_name}, {std::nullopt, std::nullopt}, std::nullopt,
       {"/a/libwheelfit_test_plugin_fake_again.so (loaded)"}},
      {"empty entries are ignored", Folders::adding("a", "fake"),
       ":{T}/a::", "b", {{"fake", "a"}}, {}, {std::nullopt, Errc::not_found}, std::nullopt, {}},
      {"a missing folder in the list is reported, the others still load", Folders::adding("b", "fake"),
       "{T}/missing", "b", {{"fake", "b"}}, {}, {Errc::not_found, std::nullopt}, std::nullopt, {}},
      {"a world-writable folder in the list is refused, nothing loads from it",
       [](Folders& f) {
         f.add_world_writable("throwing");
         f.add("b", "fake");
       },
       "{T}/ww", "b", {{"fake", "b"}}, {}, {Errc::invalid_input, std::nullopt}, std::nullopt, {}},
      {"a missing built-in folder is fine when the list supplies plugins", Folders::adding("a", "fake"),
       "{T}/a", "missing", {{"fake", "a"}}, {}, {std::nullopt, Errc::not_found}, std::nullopt, {}},
      {"no folder can be used: an error naming each",
       [](Folders& f) { f.add_world_writable("fake"); },
       "{T}/ww", "missing", {}, {}, {Errc::invalid_input, Errc::not_found}, Errc::invalid_input,
       {"no plugin folder could be used: ", "/ww: the plugin folder is world-writable", "/missing: no such plugin folder"}},
      {"a folder listed twice is searched once: no duplicate of itself", Folders::adding("a", "fake"),
       "{T}/a:{T}/a/", "a", {{"fake", "a"}}, {}, {std::nullopt}, std::nullopt, {}},
      {"an empty folder is used, and loads nothing",
       [](Folders& f) {
         f.add("a", "fake");
         fs::remove(f.at("a") / test_plugin("fake").filename());
       },
       "{T}/a", "missing", {}, {}, {std::nullopt, Errc::not_found}, std::nullopt, {}},
  }));
  CAPTURE(row.what);
  Folders folders;
  row.setup(folders);
  std::string env = row.env;
  for (std::size_t at = env.find("{T}"); at != std::string::npos; at = env.find("{T}")) {
    env.replace(at, 3, folders.tmp.path().string());
  }
  const auto dirs = registry::plugin_dirs(env, folders.at(row.builtin));
  Registry reg;
  const auto report = registry::load_plugins(reg, dirs);
  CHECK(report.ok() == !row.error);
  if (row.error) {
    REQUIRE(report.error);
    CHECK(report.error->is(*row.error));
  }
  REQUIRE(report.dirs.size() == row.dir_errors.size());
  for (std::size_t i = 0; i < report.dirs.size(); ++i) {
    CAPTURE(i, report.dirs[i].dir.string());
    CHECK(report.dirs[i].dir == dirs[i].path);
    CHECK(report.dirs[i].source == dirs[i].source);
    CHECK(report.dirs[i].error.has_value() == row.dir_errors[i].has_value());
    if (report.dirs[i].error && row.dir_errors[i]) {
      CHECK(report.dirs[i].error->is(*row.dir_errors[i]));
      CHECK_THAT(report.dirs[i].error->message, Catch::StartsWith(report.dirs[i].dir.string() + ": "));
    }
  }
  REQUIRE(report.loaded.size() == row.loaded.size());
  for (std::size_t i = 0; i < row.loaded.size(); ++i) {
    CHECK(report.loaded[i].backend == row.loaded[i].backend);
    CHECK(report.loaded[i].file.parent_path() == folders.at(row.loaded[i].folder));
    REQUIRE(reg.find(row.loaded[i].backend) != nullptr);
    CHECK(reg.find(row.loaded[i].backend)->origin == report.loaded[i].file.string());
  }
  REQUIRE(report.skipped.size() == row.skipped.size());
  for (std::size_t i = 0; i < row.skipped.size(); ++i) CHECK(report.skipped[i].kind == row.skipped[i]);
  const std::string said = !report.skipped.empty() ? report.skipped[0].reason : report.error ? report.error->message : "";
  for (const auto& text : row.says) CHECK_THAT(said, Catch::Contains(text));
}
#endif

TEST_CASE("load_plugins: an empty list of folders is an error", "[registry][plugins]") {
  Registry reg;
  const auto report = registry::load_plugins(reg, std::vector<PluginDir>{});
  REQUIRE_FALSE(report.ok());
  CHECK(report.error->is(Errc::not_found));
  CHECK(report.dirs.empty());
}

#ifndef _WIN32
TEST_CASE("untrusted_because: root's or ours, writable by nobody else; a root-owned sticky folder on the way",
          "[registry][plugins][posix][trust]") {
  constexpr unsigned me = 1000, other = 1001;
  struct Row {
    const char* what;
    unsigned uid, mode;
    bool parent;
    std::optional<std::string> why;
  };
  auto row = GENERATE(values<Row>({
      {"our folder 0755", me, S_IFDIR | 0755, false, std::nullopt},
      {"root's folder 0755", 0, S_IFDIR | 0755, false, std::nullopt},
      {"our file 0644", me, S_IFREG | 0644, false, std::nullopt},
      {"our file 0600", me, S_IFREG | 0600, false, std::nullopt},
      {"another user's file", other, S_IFREG | 0644, false, "owned by uid 1001 (neither root nor you)"},
      {"another user's folder on the way", other, S_IFDIR | 0755, true, "owned by uid 1001 (neither root nor you)"},
      {"a group-writable file", me, S_IFREG | 0664, false, "group-writable"},
      {"a group-writable folder on the way", me, S_IFDIR | 0775, true, "group-writable"},
      {"a world-writable file", me, S_IFREG | 0646, false, "world-writable"},
      {"world- and group-writable says world", me, S_IFREG | 0666, false, "world-writable"},
      {"/tmp on the way: root-owned, sticky", 0, S_IFDIR | 01777, true, std::nullopt},
      {"/tmp as the plugin folder itself", 0, S_IFDIR | 01777, false, "world-writable"},
      {"a sticky folder of ours on the way", me, S_IFDIR | 01777, true, "world-writable"},
      {"a root-owned world-writable folder without the sticky bit", 0, S_IFDIR | 0777, true, "world-writable"},
      {"a root-owned sticky group-writable folder on the way", 0, S_IFDIR | 01775, true, std::nullopt},
      {"a sticky file is not a sticky folder", 0, S_IFREG | 01666, true, "world-writable"},
  }));
  CAPTURE(row.what);
  CHECK(registry::untrusted_because(row.uid, row.mode, row.parent, me) == row.why);
  SECTION("for root, only root's objects are trusted") {
    CHECK(registry::untrusted_because(me, S_IFREG | 0644, false, 0) == std::optional<std::string>("owned by uid 1000 (neither root nor you)"));
  }
}
#endif

#ifndef _WIN32
TEST_CASE("check_trusted_path walks from / and follows links; load_plugins refuses what it refuses",
          "[registry][plugins][posix][trust]") {
  PluginFolder folder;  // <tmp>/plugins, 0755, under the system's temporary folder
  const fs::path plugin = folder.add("fake");
  Registry reg;
  const fs::path tmp = folder.tmp.path();
  auto refused = [&](const fs::path& dir, std::initializer_list<std::string> says) {
    Registry r;
    const auto report = registry::load_plugins(r, dir);
    REQUIRE_FALSE(report.ok());
    CHECK(report.error->is(Errc::invalid_input));
    for (const auto& s : says) CHECK_THAT(report.error->message, Catch::Contains(s));
    CHECK(report.loaded.empty());
  };

  SECTION("a trusted folder: the walk arrives at it") {
    auto at = registry::check_trusted_path(folder.dir);
    REQUIRE(at);
    CHECK(*at == fs::canonical(folder.dir));
  }
  SECTION("a relative folder is refused, never searched from the current folder") {
    refused(fs::path("plugins"), {"plugins: not an absolute path"});
    refused(fs::path(""), {"not an absolute path"});
  }
  SECTION("a group-writable plugin folder") {
    chmod_add(folder.dir, fs::perms::group_write);
    refused(folder.dir, {folder.dir.string() + ": the plugin folder is group-writable", "refusing to load from it"});
  }
  SECTION("a folder above it that others can write (not root-owned and sticky)") {
    chmod_add(tmp, fs::perms::others_write);
    refused(folder.dir, {folder.dir.string() + ": the folder " + tmp.string() + " on the way to it is world-writable"});
  }
  SECTION("a folder above it that its group can write") {
    chmod_add(tmp, fs::perms::group_write);
    refused(folder.dir, {"the folder " + tmp.string() + " on the way to it is group-writable"});
  }
  SECTION("a link to the plugin folder is judged where it leads, and where it lies") {
    const fs::path open = tmp / "open";
    fs::create_directory(open);
    fs::permissions(open, fs::perms::all);  // 0777, no sticky bit
    fs::create_directory_symlink(folder.dir, open / "link");
    refused(open / "link", {"the folder " + open.string() + " on the way to it is world-writable"});
    // A link in a trusted folder leading into the open one is refused for the same reason.
    fs::create_directory(open / "inner");
    fs::permissions(open / "inner", fs::perms::owner_all);
    fs::create_directory_symlink(open / "inner", tmp / "via");
    refused(tmp / "via", {"the folder " + open.string() + " on the way to it is world-writable"});
    // A trusted link to the trusted folder is fine, and loads.
    fs::create_directory_symlink(folder.dir, tmp / "good");
    const auto report = registry::load_plugins(reg, tmp / "good");
    CHECK(report.ok());
    CHECK(report.loaded.size() == 1);
  }
  SECTION("the system's temporary folder on the way is fine when root-owned and sticky, as for ssh and sudo") {
    struct stat st {};
    REQUIRE(::stat(tmp.parent_path().c_str(), &st) == 0);
    if (st.st_uid == 0 && (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH)) {
      CHECK(registry::check_trusted_path(folder.dir));
      CHECK(registry::load_plugins(reg, folder.dir).loaded.size() == 1);
    } else {
      WARN("the temporary folder " << tmp.parent_path() << " is not a root-owned sticky folder");
    }
  }
  SECTION("a group-writable plugin file is skipped as untrusted") {
    chmod_add(plugin, fs::perms::group_write);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE(report.ok());
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].kind == SkipReason::untrusted);
    CHECK(report.skipped[0].reason == "the file is group-writable, so someone else could have put code there; not loaded");
    CHECK(registry::to_string(SkipReason::untrusted) == "untrusted");
  }
  SECTION("a plugin file linked from a folder others can write is skipped") {
    const fs::path open = tmp / "open";
    fs::create_directory(open);
    fs::permissions(open, fs::perms::all);
    fs::rename(plugin, open / "real.so");
    fs::create_symlink(open / "real.so", plugin);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].kind == SkipReason::untrusted);
    CHECK_THAT(report.skipped[0].reason, Catch::Contains("the folder " + open.string() + " on the way to it is world-writable"));
  }
  SECTION("a file owned by another user is skipped (needs root to make one)") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a file to another user; the rule itself is checked by untrusted_because's table");
      return;
    }
    REQUIRE(::chown(plugin.c_str(), 65534, 65534) == 0);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].kind == SkipReason::untrusted);
    CHECK_THAT(report.skipped[0].reason, Catch::Contains("owned by uid 65534 (neither root nor you)"));
    REQUIRE(::chown(folder.dir.c_str(), 65534, 65534) == 0);
    refused(folder.dir, {"the plugin folder is owned by uid 65534"});
  }
}
#endif

#ifndef _WIN32
TEST_CASE("builtin_plugin_dir: without the executable's location, the install prefix's folder, never a relative one",
          "[registry][plugins][posix][trust]") {
  for (const fs::path& exe : {fs::path(), fs::path("wheelfit"), fs::path("bin/wheelfit")}) {
    CAPTURE(exe.string());
    const fs::path dir = registry::builtin_plugin_dir(exe);
    CHECK(dir.is_absolute());
    CHECK(dir.string().ends_with("lib/wheelfit/plugins"));
  }
  CHECK(registry::builtin_plugin_dir("/opt/x/bin/wheelfit").is_absolute());
}
#endif

