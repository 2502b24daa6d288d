// util/read_file: a whole input file under a size limit, every failure naming the file.
#include <catch2/catch.hpp>

#include <string>

#include "support/test_support.hpp"
#include "wheelfit/util/read_file.hpp"

using namespace wheelfit;

TEST_CASE("read_file reads a file up to its limit and names the file in every error", "[util][read_file]") {
  test::TempDir dir;
  test::write_file(dir / "small.toml", "a = 1\n");
  test::write_file(dir / "exact.toml", std::string(1u << 20, 'x'));
  test::write_file(dir / "big.toml", std::string((1u << 20) + 1, 'x'));
  test::write_file(dir / "odd.toml", std::string(11, 'x'));

  SECTION("a file within its limit, and one exactly at it, are read whole") {
    auto small = util::read_file((dir / "small.toml").string(), 1u << 20, "a machine profile");
    REQUIRE(small);
    CHECK(*small == "a = 1\n");
    auto exact = util::read_file((dir / "exact.toml").string(), 1u << 20, "a machine profile");
    REQUIRE(exact);
    CHECK(exact->size() == (1u << 20));
  }

  struct Row {
    std::string file;
    std::uintmax_t limit;
    Errc code;
    std::string message;  // after "<path>: "
  };
  const std::vector<Row> rows{
      {"missing.toml", 1u << 20, Errc::not_found, "no such machine profile"},
      {"", 1u << 20, Errc::io_error, "is a directory, not a machine profile"},
      {"big.toml", 1u << 20, Errc::too_large, "over the 1 MiB limit for a machine profile"},
      {"odd.toml", 10, Errc::too_large, "over the 10 bytes limit for a machine profile"},
  };
  for (const auto& r : rows) {
    const std::string path = r.file.empty() ? dir.path().string() : (dir / r.file).string();
    INFO(path);
    auto got = util::read_file(path, r.limit, "a machine profile");
    REQUIRE_FALSE(got);
    CHECK(got.error().code == r.code);
    CHECK(got.error().message == path + ": " + r.message);
  }
}
