// Backend plugins on Windows (under wine here): DLLs loaded from a folder, pinned, the trust rule
// by owner and DACL (untrusted_because(SecurityFacts)), reparse points refused, WHEELFIT_PLUGIN_PATH
// split on ';', the plugins\ folder beside wheelfit.exe, a non-ASCII folder.
// docs/decisions/0035-windows-plugin-trust.md.
#include <catch2/catch.hpp>

#include <windows.h>
#include <aclapi.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/util/win_file.hpp"

using namespace wheelfit;
using registry::DirSource;
using registry::PluginDir;
using registry::Registry;
using registry::SecurityFacts;
using registry::SkipReason;
namespace fs = std::filesystem;

namespace {

// The build's folders are given as /work/...: made absolute on the current drive (Z:\ under wine).
fs::path test_plugin_dll(const std::string& kase) {
  return fs::absolute(WHEELFIT_TEST_PLUGIN_DIR) / kase / ("wheelfit_test_plugin_" + kase + ".dll");
}

// Adds an allow entry for Everyone with `rights` to `p`'s DACL (wine turns it into the unix
// mode's "other" bits, which it reads back as Everyone's full write).
void grant_everyone(const fs::path& p, DWORD rights) {
  PACL old = nullptr, updated = nullptr;
  PSECURITY_DESCRIPTOR sd = nullptr;
  REQUIRE(::GetNamedSecurityInfoW(p.c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr, &old, nullptr, &sd) == 0);
  EXPLICIT_ACCESSW ea{};
  ea.grfAccessPermissions = rights;
  ea.grfAccessMode = GRANT_ACCESS;
  ea.grfInheritance = NO_INHERITANCE;
  ea.Trustee.TrusteeForm = TRUSTEE_IS_NAME;
  ea.Trustee.ptstrName = const_cast<LPWSTR>(L"Everyone");
  REQUIRE(::SetEntriesInAclW(1, &ea, old, &updated) == 0);
  const DWORD set = ::SetNamedSecurityInfoW(const_cast<LPWSTR>(p.c_str()), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr,
                                            nullptr, updated, nullptr);
  ::LocalFree(updated);
  ::LocalFree(sd);
  REQUIRE(set == 0);
}

// A plugin folder under a non-ASCII name, holding copies of test plugins.
struct NonAsciiPluginFolder {
  test::TempDir tmp;
  fs::path dir = tmp.path() / fs::path(u8"Jürgen 测试") / "plugins";
  NonAsciiPluginFolder() { fs::create_directories(dir); }
  fs::path add(const std::string& kase, const std::string& name = "") {
    const fs::path to = dir / (name.empty() ? test_plugin_dll(kase).filename() : fs::path(name));
    fs::copy_file(test_plugin_dll(kase), to);
    return to;
  }
};

}  // namespace

TEST_CASE("untrusted_because on Windows: a trusted owner, and nobody else can change it", "[windows][plugins][trust]") {
  const SecurityFacts::Grant system{"", true, GENERIC_ALL | 0x1f01ff};
  const SecurityFacts::Grant everyone_read{"Everyone", false, 0x1200a9};
  auto grant = [](std::string who, DWORD mask) { return SecurityFacts::Grant{std::move(who), false, mask}; };
  struct Row {
    const char* what;
    SecurityFacts facts;
    bool folder, parent;
    std::optional<std::string> why;
  };
  auto row = GENERATE_COPY(values<Row>({
      {"ours, others read", {"me", true, true, {system, everyone_read}}, true, false, std::nullopt},
      {"a file of ours, others read", {"me", true, true, {system, everyone_read}}, false, false, std::nullopt},
      {"another owner", {"BUILTIN\\Users", false, true, {system}}, true, false,
       "owned by BUILTIN\\Users (neither SYSTEM, Administrators, TrustedInstaller nor you)"},
      {"another owner of a folder on the way", {"WIN\\mallory", false, true, {}}, true, true,
       "owned by WIN\\mallory (neither SYSTEM, Administrators, TrustedInstaller nor you)"},
      {"a NULL DACL", {"me", true, false, {}}, true, false, "open to everyone (it has no access list)"},
      {"Everyone may add a file to the plugin folder", {"me", true, true, {system, grant("Everyone", FILE_ADD_FILE)}}, true,
       false, "writable by Everyone"},
      {"Users may add a subfolder to the plugin folder", {"me", true, true, {grant("BUILTIN\\Users", FILE_ADD_SUBDIRECTORY)}},
       true, false, "writable by BUILTIN\\Users"},
      {"C:\\ on the way: Authenticated Users may add folders", {"SYSTEM", true, true, {system, grant("NT AUTHORITY\\Authenticated Users", FILE_ADD_SUBDIRECTORY | 0x1200a9)}},
       true, true, std::nullopt},
      {"a folder on the way others may add files to", {"me", true, true, {grant("Everyone", FILE_ADD_FILE)}}, true, true, std::nullopt},
      {"a folder on the way others may delete in", {"me", true, true, {grant("BUILTIN\\Users", FILE_DELETE_CHILD)}}, true, true,
       "writable by BUILTIN\\Users"},
      {"a folder on the way others may rename", {"me", true, true, {grant("Everyone", DELETE)}}, true, true, "writable by Everyone"},
      {"a file others may re-permit", {"me", true, true, {grant("Everyone", WRITE_DAC)}}, false, false, "writable by Everyone"},
      {"a file others may re-own", {"me", true, true, {grant("Everyone", WRITE_OWNER)}}, false, false, "writable by Everyone"},
      {"a file others may append to", {"me", true, true, {grant("Everyone", FILE_APPEND_DATA)}}, false, false, "writable by Everyone"},
      {"a file with generic write for others", {"me", true, true, {grant("S-1-5-21-1-2-3-1001", GENERIC_WRITE)}}, false, false,
       "writable by S-1-5-21-1-2-3-1001"},
      {"delete-child means nothing on a file", {"me", true, true, {grant("Everyone", FILE_DELETE_CHILD)}}, false, false, std::nullopt},
      {"a trusted principal may write", {"me", true, true, {SecurityFacts::Grant{"", true, GENERIC_ALL}}}, true, false, std::nullopt},
  }));
  CAPTURE(row.what);
  CHECK(registry::untrusted_because(row.facts, row.folder, row.parent) == row.why);
}

TEST_CASE("plugin_dirs on Windows: WHEELFIT_PLUGIN_PATH split on ';', as PATH", "[windows][plugins]") {
  const fs::path builtin = "C:\\wf\\plugins";
  const PluginDir b{builtin, DirSource::builtin};
  struct Row {
    const char* what;
    std::string env;
    std::vector<PluginDir> expected;
  };
  auto row = GENERATE_REF(values<Row>({
      {"drive letters keep their colon", "C:\\a;D:\\b", {{"C:\\a", DirSource::env}, {"D:\\b", DirSource::env}, b}},
      {"empty entries are ignored", ";;C:\\a;", {{"C:\\a", DirSource::env}, b}},
      {"a folder listed twice is searched once", "C:\\a;C:\\a\\;C:\\a\\.\\", {{"C:\\a", DirSource::env}, b}},
      {"a UNC path", "\\\\server\\share\\plugins", {{"\\\\server\\share\\plugins", DirSource::env}, b}},
      {"a non-ASCII folder, as UTF-8", "C:\\Users\\J\xc3\xbcrgen\\plugins", {{fs::path(L"C:\\Users\\J\u00fcrgen\\plugins"), DirSource::env}, b}},
  }));
  CAPTURE(row.what);
  const auto dirs = registry::plugin_dirs(row.env, builtin);
  REQUIRE(dirs.size() == row.expected.size());
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    CAPTURE(i);
    CHECK(dirs[i] == row.expected[i]);
  }
}

TEST_CASE("builtin_plugin_dir on Windows: the build tree's plugins, else plugins\\ beside the executable",
          "[windows][plugins]") {
  test::TempDir tmp;
  const fs::path app = tmp.path() / fs::path(u8"Programme ü") / "wheelfit";
  fs::create_directories(app / "plugins");
  CHECK(registry::builtin_plugin_dir(app / "wheelfit.exe") == app / "plugins");
  CHECK(registry::builtin_plugin_dir(tmp.path() / "elsewhere" / "wheelfit.exe") == tmp.path() / "elsewhere" / "plugins");
  for (const fs::path& unknown : {fs::path(), fs::path("wheelfit.exe"), fs::path("\\bin\\wheelfit.exe")}) {
    CAPTURE(unknown.string());
    const fs::path dir = registry::builtin_plugin_dir(unknown);
    CHECK(dir.is_absolute());
    CHECK(dir.filename() == "plugins");
  }
  // This test program in <build>\tests: <build>\plugins, not the test plugins' <build>\tests\plugins.
  CHECK(fs::weakly_canonical(registry::builtin_plugin_dir()) == fs::weakly_canonical(test::binary_dir() / "plugins"));
}

TEST_CASE("load_plugins on Windows: DLLs from a non-ASCII folder, pinned, bad files skipped with their reason",
          "[windows][plugins]") {
  NonAsciiPluginFolder folder;
  const fs::path file = folder.add("fake");
  folder.add("fake_again", "zz_Again.DLL");  // a DLL whatever the case of its name
  test::write_file(folder.dir / "README.txt", "hi");
  test::write_file(folder.dir / "text.dll", "not a library\n");
  std::string truncated = std::string("MZ") + std::string(0x3a, '\0') + std::string("\x40\0\0\0", 4) + "PE" + std::string(2, '\0');
  test::write_file(folder.dir / "trunc.dll", truncated + std::string(16, '\0'));
  {
    Registry reg;
    const auto report = registry::load_plugins(reg, folder.dir);
    INFO((report.error ? report.error->message : std::string()));
    REQUIRE(report.ok());
    REQUIRE(report.loaded.size() == 1);
    CHECK(report.loaded[0].backend == "fake");
    CHECK(report.loaded[0].file == file);
    CHECK(reg.find("fake")->origin == file.string());
    CHECK(reg.detect("fake"));
    REQUIRE(report.skipped.size() == 4);
    CHECK(report.skipped[0].kind == SkipReason::not_plugin_name);  // README.txt
    CHECK(report.skipped[0].reason == "not a plugin file name (plugins are named *.dll)");
    CHECK(report.skipped[1].kind == SkipReason::not_shared_library);  // text.dll
    CHECK_THAT(report.skipped[1].reason, Catch::Contains("no PE header"));
    CHECK(report.skipped[2].kind == SkipReason::load_failed);  // trunc.dll
    CHECK_THAT(report.skipped[2].reason, Catch::StartsWith("failed to load: ") && Catch::Contains("(error "));
    CHECK(report.skipped[3].kind == SkipReason::duplicate_name);  // zz_Again.DLL
  }
  // Pinned: the registry is gone and FreeLibrary is called, yet the DLL stays mapped.
  HMODULE module = ::GetModuleHandleW(file.c_str());
  REQUIRE(module != nullptr);
  ::FreeLibrary(module);
  ::FreeLibrary(module);
  CHECK(::GetModuleHandleW(file.c_str()) != nullptr);
}

TEST_CASE("load_plugins on Windows refuses what others can change, naming who", "[windows][plugins][trust]") {
  NonAsciiPluginFolder folder;
  const fs::path plugin = folder.add("fake");
  Registry reg;
  SECTION("the trusted folder loads") {
    auto at = registry::check_trusted_path(folder.dir, "the plugin folder");
    INFO((at ? std::string() : at.error().message));
    REQUIRE(at);
    CHECK(registry::load_plugins(reg, folder.dir).loaded.size() == 1);
  }
  SECTION("a plugin folder Everyone may add files to") {
    grant_everyone(folder.dir, FILE_ADD_FILE);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE_FALSE(report.ok());
    CHECK(report.error->is(Errc::invalid_input));
    CHECK_THAT(report.error->message, Catch::StartsWith(folder.dir.string() + ": the plugin folder is writable by ") &&
                                          Catch::Contains("Everyone") && Catch::Contains("refusing to load from it"));
    CHECK(report.loaded.empty());
  }
  SECTION("a folder on the way others may delete in") {
    grant_everyone(folder.dir.parent_path(), FILE_ADD_FILE | FILE_DELETE_CHILD);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE_FALSE(report.ok());
    CHECK_THAT(report.error->message, Catch::Contains("the folder " + folder.dir.parent_path().string() + " on the way to it is writable by"));
  }
  SECTION("a plugin file others may write is skipped as untrusted") {
    grant_everyone(plugin, FILE_WRITE_DATA);
    const auto report = registry::load_plugins(reg, folder.dir);
    REQUIRE(report.ok());
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].kind == SkipReason::untrusted);
    CHECK_THAT(report.skipped[0].reason, Catch::StartsWith("the file is writable by ") && Catch::EndsWith("; not loaded"));
  }
  SECTION("a relative folder is refused") {
    const auto report = registry::load_plugins(reg, fs::path("plugins"));
    REQUIRE_FALSE(report.ok());
    CHECK_THAT(report.error->message, Catch::Contains("not an absolute path"));
  }
}

TEST_CASE("load_plugins on Windows refuses a reparse point (a link) on the way", "[windows][plugins][trust]") {
  // Made by the ctest fixture win.plugins.links (wine cannot create a link itself; it reports a
  // unix symlink as a reparse point): links/fake -> tests/plugins/fake, links/cases -> tests/plugins.
  const fs::path links = fs::absolute(WHEELFIT_TEST_PLUGIN_DIR).parent_path() / "plugin-links";
  if (!(::GetFileAttributesW((links / "fake").c_str()) & FILE_ATTRIBUTE_REPARSE_POINT) ||
      ::GetFileAttributesW((links / "fake").c_str()) == INVALID_FILE_ATTRIBUTES) {
    WARN("no links in " << links.string() << " (ctest's win.plugins.links makes them)");
    return;
  }
  Registry reg;
  auto report = registry::load_plugins(reg, links / "fake");
  REQUIRE_FALSE(report.ok());
  CHECK(report.error->is(Errc::invalid_input));
  CHECK_THAT(report.error->message, Catch::Contains("the plugin folder is a reparse point"));
  report = registry::load_plugins(reg, links / "cases" / "fake");
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.error->message, Catch::Contains("the folder " + (links / "cases").string() + " on the way to it is a reparse point"));
  // The folder it leads to, named, loads.
  CHECK(registry::load_plugins(reg, test_plugin_dll("fake").parent_path()).loaded.size() == 1);
}

TEST_CASE("wheelfit.exe loads the plugins beside it, in a non-ASCII folder, and prints the path as UTF-8",
          "[windows][plugins][cli]") {
  test::TempDir tmp;
  const fs::path app = tmp.path() / fs::path(u8"Jürgen_Müller") / "wheelfit";
  fs::create_directories(app / "plugins");
  fs::copy_file(test::built_wheelfit(), app / "wheelfit.exe");
  for (const auto& entry : fs::directory_iterator(test::binary_dir() / "plugins")) {
    if (entry.path().extension() == ".dll") fs::copy_file(entry.path(), app / "plugins" / entry.path().filename());
  }
  const auto r = test::run_program("env -u WHEELFIT_PLUGIN_PATH", app / "wheelfit.exe", {"plugins", "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto answer = boost::json::parse(r.out).as_object();
  CHECK(answer.at("plugin_dir").as_string() == util::win::u8(app / "plugins").c_str());
  CHECK_THAT(r.out, Catch::Contains("\"cuda\""));
  SECTION("WHEELFIT_PLUGIN_PATH naming a non-ASCII folder") {
    const auto again = test::run_program("env WHEELFIT_PLUGIN_PATH=" + util::win::u8(app / "plugins"), app / "wheelfit.exe", {"plugins", "--json"});
    INFO(again.err);
    CHECK(again.code == 0);
    CHECK_THAT(again.out, Catch::Contains(boost::json::serialize(boost::json::value(util::win::u8(app / "plugins")))));
  }
}
