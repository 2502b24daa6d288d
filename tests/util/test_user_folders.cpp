// util/user_folders: where the caches and the default netrc are, per platform (the Windows rows,
// LocalAppData and curl's _netrc, are in tests/windows/test_files_win.cpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "support/test_support.hpp"
#include "wheelfit/util/user_folders.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {

util::EnvReader env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace

TEST_CASE("user_cache_root: an absolute XDG_CACHE_HOME wins on every platform", "[util][folders]") {
  test::TempDir dir;
  const std::string xdg = dir.path().string();
  CHECK(util::user_cache_root(env_of({{"XDG_CACHE_HOME", xdg}, {"HOME", xdg + "/home"}})) == dir.path() / "wheelfit");
  // A relative one is no choice: the platform's default applies (the same as with none).
  CHECK(util::user_cache_root(env_of({{"XDG_CACHE_HOME", "cache"}, {"HOME", xdg}})) ==
        util::user_cache_root(env_of({{"HOME", xdg}})));
  CHECK(util::env_utf8("WHEELFIT_SURELY_UNSET_VARIABLE") == std::nullopt);
}

#ifndef _WIN32
TEST_CASE("user_cache_root and default_netrc on POSIX: under HOME", "[util][folders][posix]") {
  struct Row {
    const char* what;
    std::map<std::string, std::string> env;
    std::optional<fs::path> cache, netrc;
  };
  const std::vector<Row> rows = {
      {"XDG_CACHE_HOME", {{"XDG_CACHE_HOME", "/x/cache"}, {"HOME", "/home/u"}}, fs::path("/x/cache/wheelfit"), fs::path("/home/u/.netrc")},
      {"HOME only", {{"HOME", "/home/u"}}, fs::path("/home/u/.cache/wheelfit"), fs::path("/home/u/.netrc")},
      {"a relative XDG_CACHE_HOME", {{"XDG_CACHE_HOME", "x"}, {"HOME", "/home/u"}}, fs::path("/home/u/.cache/wheelfit"), fs::path("/home/u/.netrc")},
      {"a relative HOME: no cache", {{"HOME", "home"}}, std::nullopt, fs::path("home/.netrc")},
      {"an empty HOME", {{"HOME", ""}}, std::nullopt, std::nullopt},
      {"nothing", {}, std::nullopt, std::nullopt},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    CHECK(util::user_cache_root(env_of(r.env)) == r.cache);
    CHECK(util::default_netrc(env_of(r.env)) == r.netrc);
  }
  CHECK(util::no_cache_root_reason() == "neither XDG_CACHE_HOME nor HOME is set to an absolute path");
}
#endif
