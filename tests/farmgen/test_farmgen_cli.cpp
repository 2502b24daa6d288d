// The wheelfit-farmgen executable's --only: a farm of just the named packages (the demo writes
// the real wheel files of its four packages, not the farm's 14,000), and its usage errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
namespace wt = wheelfit::test;

namespace {

wt::CliRun run_farmgen(const std::vector<std::string>& args) {
  return wt::run_program("", fs::path(WHEELFIT_BINARY_DIR) / "scripts/farmgen/wheelfit-farmgen", args);
}

// The project folders of a farm (each holds its index.html), in name order.
std::vector<std::string> projects_of(const fs::path& farm) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(farm))
    if (e.is_directory() && fs::exists(e.path() / "index.html")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("farmgen --only writes just the named packages, in either spelling", "[farmgen][cli]") {
  wt::TempDir tmp;
  const auto r = run_farmgen({"--out", (tmp.path() / "farm").string(), "--only", "flash_attn,Cumesh,sageattention"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(projects_of(tmp.path() / "farm") == std::vector<std::string>{"cumesh", "flash-attn", "sageattention"});
  const std::string root = wt::read_file(tmp.path() / "farm/index.html");
  CHECK(wt::contains(root, "flash-attn"));
  CHECK_FALSE(wt::contains(root, "nvdiffrast"));
}

TEST_CASE("farmgen --only refuses names it does not know, and an empty list", "[farmgen][cli]") {
  struct Row {
    std::string value, part;
  };
  const Row rows[] = {
      {"flash_attn,no-such-package", "--only: 'no-such-package' is not a package of the built-in list"},
      {"", "--only: give one or more package names, comma-separated"},
      {"flash_attn,,cumesh", "--only: '' is not a package of the built-in list"},
  };
  for (const auto& row : rows) {
    wt::TempDir tmp;
    CAPTURE(row.value);
    const auto r = run_farmgen({"--out", (tmp.path() / "farm").string(), "--only", row.value});
    CHECK(r.code == 2);
    CHECK(wt::contains(r.err, row.part));
    CHECK_FALSE(fs::exists(tmp.path() / "farm"));
  }
}
