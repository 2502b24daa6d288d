// util/atomic_file: a write replaces the file whole or leaves it (and its folder) as it was.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/util/atomic_file.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("write_file_atomic replaces an existing file with the pieces, whole", "[util][atomic]") {
  const std::string large(1 << 20, 'x');
  struct Row {
    const char* name;
    std::string_view a, b, c;
    std::string content;
  };
  const std::vector<Row> rows = {
      {"empty pieces", "", "", "", ""},
      {"one piece", "new", "", "", "new"},
      {"several pieces", "head\n", "", "body", "head\nbody"},
      {"a large piece", large, "", "!", large + "!"},
  };
  for (const auto& r : rows) {
    for (const bool durable : {true, false}) {
      CAPTURE(r.name, durable);
      test::TempDir dir;
      const auto target = dir / "out.txt";
      test::write_file(target, "an older and longer content");
      REQUIRE(util::write_file_atomic(target, {r.a, r.b, r.c}, {.durable = durable}));
      CHECK(test::read_file(target) == r.content);
      CHECK(names_in(dir.path()) == std::vector<std::string>{"out.txt"});
    }
  }
  SECTION("no pieces at all make an empty file") {
    test::TempDir dir;
    test::write_file(dir / "out.txt", "old");
    REQUIRE(util::write_file_atomic(dir / "out.txt", {}));
    CHECK(test::read_file(dir / "out.txt").empty());
  }
}

TEST_CASE("write_file_atomic creates a missing file with the given mode", "[util][atomic]") {
  test::TempDir dir;
  const auto target = dir / "fresh";
  const ::mode_t old_mask = ::umask(022);
  const auto w = util::write_file_atomic(target, {"x"}, {.durable = false, .mode = 0600});
  ::umask(old_mask);
  REQUIRE(w);
  CHECK(test::read_file(target) == "x");
  CHECK((fs::status(target).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("write_file_atomic failures name the path and leave no temporary file", "[util][atomic]") {
  test::TempDir dir;
  SECTION("a missing folder") {
    const auto target = dir / "nope" / "out.txt";
    const auto w = util::write_file_atomic(target, {"new"});
    REQUIRE_FALSE(w);
    CHECK(w.error().is(Errc::io_error));
    CHECK_THAT(w.error().message, Catch::Contains(target.string()) && Catch::Contains("No such file or directory"));
    CHECK(names_in(dir.path()).empty());
  }
  SECTION("a folder where the file should be: the rename fails, the folder stays") {
    const auto target = dir / "taken";
    fs::create_directory(target);
    test::write_file(target / "inside", "kept");
    const auto w = util::write_file_atomic(target, {"new"}, {.durable = false});
    REQUIRE_FALSE(w);
    CHECK_THAT(w.error().message, Catch::Contains(target.string()) && Catch::Contains("rename failed"));
    CHECK(names_in(dir.path()) == std::vector<std::string>{"taken"});
    CHECK(test::read_file(target / "inside") == "kept");
  }
}
