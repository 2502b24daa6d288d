// util/read_file: a whole input file under a size limit, every failure naming the file.
#include <fcntl.h>

#include <catch2/catch.hpp>

#include <filesystem>
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

#ifndef _WIN32  // FIFOs, /dev/null and symlinks; tests/windows/test_files_win.cpp has Windows' pipes and devices
TEST_CASE("read_file and open_regular_file refuse what is not a regular file, without blocking", "[util][read_file][posix]") {
  // Issue 20 item 7: a FIFO blocked the open (and the command) forever; a device was read as if
  // it were the input. test::Fifo lets a blocked reader go, so the bug fails here, not hangs.
  test::TempDir dir;
  const test::Fifo fifo(dir / "fifo.toml");
  std::filesystem::create_symlink("/dev/null", dir / "null.toml");
  std::filesystem::create_symlink(fifo.path(), dir / "to-fifo.toml");
  struct Row {
    std::string file;
    std::string message;  // after "<path>: "
  };
  const std::vector<Row> rows{
      {"fifo.toml", "is a FIFO, not a regular file"},
      {"to-fifo.toml", "is a FIFO, not a regular file"},  // a symlink is followed, then judged
      {"null.toml", "is a character device, not a regular file"},
  };
  for (const auto& r : rows) {
    const std::string path = (dir / r.file).string();
    INFO(path);
    auto got = util::read_file(path, 1u << 20, "a machine profile");
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::io_error);
    CHECK(got.error().message == path + ": " + r.message);
    auto opened = util::open_regular_file(path, "a machine profile");
    REQUIRE_FALSE(opened);
    CHECK(opened.error().message == path + ": " + r.message);
  }
  SECTION("a regular file opens blocking, ready for plain reads") {
    test::write_file(dir / "ok.toml", "a = 1\n");
    auto opened = util::open_regular_file((dir / "ok.toml").string(), "a machine profile");
    REQUIRE(opened);
    CHECK((::fcntl(opened->fd(), F_GETFL) & O_NONBLOCK) == 0);
  }
}
#endif
