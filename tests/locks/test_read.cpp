// parse_lock's format detection and the checks every format shares, read_lock's file reading,
// and large inputs (issue 35).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_support.hpp"
#include "wheelfit/locks/read.hpp"

using wheelfit::Errc;
using wheelfit::locks::Format;
using wheelfit::locks::parse_lock;
using wheelfit::locks::read_lock;
using wheelfit::test::contains;

namespace {

const std::string kPylock = "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{ path = \"a-1-py3-none-any.whl\" }]\n";
const std::string kPixi = "[pypi-dependencies]\na = \"==1\"\n";
const std::string kRequirements = "a==1\n";

std::string repeated(std::string_view part, std::size_t n) {
  std::string out;
  out.reserve(part.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += part;
  return out;
}

}  // namespace

TEST_CASE("format_name names each format", "[locks]") {
  CHECK(wheelfit::locks::format_name(Format::pixi) == "pixi");
  CHECK(wheelfit::locks::format_name(Format::requirements) == "requirements");
  CHECK(wheelfit::locks::format_name(Format::pylock) == "pylock");
}

TEST_CASE("parse_lock: the format as given, else by name, else by content", "[locks]") {
  struct Row {
    std::string name;
    const std::string* text;
    std::optional<Format> given;
    Format expected;
  };
  const Row rows[] = {
      {"requirements.txt", &kRequirements, std::nullopt, Format::requirements},
      {"out/requirements-h100.txt", &kRequirements, std::nullopt, Format::requirements},
      {"LOCK.TXT", &kRequirements, std::nullopt, Format::requirements},
      {"pylock.toml", &kPylock, std::nullopt, Format::pylock},
      {"views/h100/pylock.h100.toml", &kPylock, std::nullopt, Format::pylock},
      {"C:\\locks\\pylock.toml", &kPylock, std::nullopt, Format::pylock},
      {"pixi.toml", &kPixi, std::nullopt, Format::pixi},
      {"other.toml", &kPixi, std::nullopt, Format::pixi},
      {"other.toml", &kPylock, std::nullopt, Format::pylock},
      {"-", &kPylock, std::nullopt, Format::pylock},
      {"-", &kPixi, std::nullopt, Format::pixi},
      {"-", &kRequirements, std::nullopt, Format::requirements},
      {"lock", &kRequirements, Format::requirements, Format::requirements},
      {"anything.txt", &kPylock, Format::pylock, Format::pylock},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name, *row.text);
    auto lock = parse_lock(*row.text, row.name, row.given);
    REQUIRE(lock);
    CHECK(lock->format == row.expected);
    CHECK(lock->path == row.name);
    REQUIRE(lock->entries.size() == 1);
    CHECK(lock->entries[0].name == "a");
    CHECK(lock->entries[0].version == "1");
  }
  SECTION("content that reads as requirements, whatever its '='") {
    for (const std::string text : {"a==1\n", "# c\n\na == 1\n", "--index-url=https://h/simple\na==1\n", "a @ https://h/a-1-py3-none-any.whl?x=1\n"}) {
      CAPTURE(text);
      auto lock = parse_lock(text, "lock");
      REQUIRE(lock);
      CHECK(lock->format == Format::requirements);
    }
  }
}

TEST_CASE("parse_lock: what no format may be", "[locks][hostile]") {
  struct Row {
    std::string text;
    std::string name;
    std::string error;
    Errc code = Errc::invalid_input;
  };
  const Row rows[] = {
      {std::string("a==1\nb==2\0\n", 11), "requirements.txt", "requirements.txt:2: holds a NUL byte (at byte 9)"},
      {std::string("lock-version = \"1.0\"\x00", 21), "pylock.toml", "pylock.toml:1: holds a NUL byte"},
      {"a==1\n\n\xff==2\n", "requirements.txt", "requirements.txt:3: is not UTF-8 (at byte 6)"},
      {"[pypi-dependencies]\na = \"\xc3\x28\"\n", "pixi.toml", "pixi.toml:2: is not UTF-8"},
      {"[x]\ny = 1\n", "other.toml", "other.toml:1: neither a pylock.toml"},
      {"[x]\ny = 1\n", "-", "-:1: neither a pylock.toml"},
      {"[[packages]\n", "pylock.toml", "pylock.toml:1: TOML syntax error"},
      {"[pypi-dependencies]\na = \"==1\"\na = \"==2\"\n", "pixi.toml", "pixi.toml:3: TOML syntax error"},
      {std::string(wheelfit::locks::kMaxLockBytes + 1, '#'), "requirements.txt", "over the 64 MiB limit", Errc::too_large},
      // toml++ recurses once per part of a dotted key: tens of thousands overflow the stack.
      {"[pypi-dependencies]\na" + repeated(".a", 100'000) + " = 1\n", "pixi.toml", "pixi.toml:2: more than 1000 dotted key parts"},
      {"lock-version = \"1.0\"\n[" + repeated("a.", 1001) + "a]\n", "pylock.toml", "pylock.toml:2: more than 1000 dotted key parts"},
      {"a = [ \"\"\"\n.\n\"\"\", {" + repeated("b.", 60'000) + "b = 1} ]\n", "pixi.toml", "pixi.toml:3: more than 1000"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name, row.error);
    auto lock = parse_lock(row.text, row.name);
    REQUIRE_FALSE(lock);
    CHECK(lock.error().is(row.code));
    CHECK(contains(lock.error().message, row.error));
  }
}

TEST_CASE("parse_lock: dots in strings and comments are no key parts", "[locks]") {
  const std::string dots = repeated(".", 5000);
  const std::string text = "# " + dots + "\nx = \"\"\"\n" + dots + "\n\"\"\"\ny = '" + dots + "'\nz = \"\\\"" + dots +
                           "\"\n[pypi-dependencies]\na = \"==1\"\n";
  auto lock = parse_lock(text, "pixi.toml");
  REQUIRE(lock);
  CHECK(lock->entries.size() == 1);
}

TEST_CASE("read_lock reads a regular file and refuses anything else, naming it", "[locks]") {
  wheelfit::test::TempDir dir;
  const auto good = dir / "requirements.txt";
  wheelfit::test::write_file(good, kRequirements);
  auto lock = read_lock(good.string());
  REQUIRE(lock);
  CHECK(lock->path == good.string());
  CHECK(lock->entries.size() == 1);
  auto as_pylock = read_lock(good.string(), Format::pylock);
  REQUIRE_FALSE(as_pylock);
  CHECK(contains(as_pylock.error().message, good.string() + ":1: "));

  auto missing = read_lock((dir / "missing.txt").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().is(Errc::not_found));
  CHECK(contains(missing.error().message, "missing.txt"));

  auto folder = read_lock(dir.path().string());
  REQUIRE_FALSE(folder);
  CHECK(contains(folder.error().message, dir.path().string()));
  CHECK(contains(folder.error().message, "directory"));

  wheelfit::test::Fifo fifo(dir / "fifo.txt");
  auto from_fifo = read_lock(fifo.string());
  REQUIRE_FALSE(from_fifo);
  CHECK(contains(from_fifo.error().message, "FIFO"));

  const auto big = dir / "big.txt";
  { std::ofstream(big) << ""; }
  std::filesystem::resize_file(big, wheelfit::locks::kMaxLockBytes + 1);  // sparse: no disk used
  auto too_big = read_lock(big.string());
  REQUIRE_FALSE(too_big);
  CHECK(too_big.error().is(Errc::too_large));
  CHECK(contains(too_big.error().message, "big.txt"));
}

// Linear in the text: a million lines of each shape finish (no timing is asserted; the test's
// time is the check). Comment lines keep the entries, and the memory, to a fraction.
TEST_CASE("parse_lock reads a million lines of each format", "[locks][large]") {
  constexpr std::size_t kLines = 1'000'000;
  const std::string hex(64, 'a');
  SECTION("requirements: a pin, its hash on a continuation, a comment and a blank line, 250,000 times") {
    std::string text;
    text.reserve(kLines * 30);
    for (std::size_t i = 0; i < kLines / 4; ++i) text += "a==1 \\\n  --hash=sha256:" + hex + "\n# via b\n\n";
    auto lock = parse_lock(text, "requirements.txt");
    REQUIRE(lock);
    CHECK(lock->entries.size() == kLines / 4);
    CHECK(lock->entries.back().line == kLines - 3);
  }
  SECTION("requirements: one line continued a million times") {
    std::string text = "a==1 \\\n";
    text.reserve(kLines * 4);
    for (std::size_t i = 0; i < kLines; ++i) text += " \\\n";
    text += " --hash=sha256:" + hex + "\n";
    auto lock = parse_lock(text, "requirements.txt");
    REQUIRE(lock);
    REQUIRE(lock->entries.size() == 1);
    CHECK(lock->entries[0].sha256 == hex);
  }
  SECTION("requirements: a million comment lines, and a line of 50,000 hashes") {
    std::string text(kLines * 2, '\n');
    for (std::size_t i = 0; i < kLines * 2; i += 2) text[i] = '#';
    text += "a==1";
    for (std::size_t i = 0; i < kLines / 20; ++i) text += " --hash=md5:0";
    auto lock = parse_lock(text + "\n", "requirements.txt");
    REQUIRE(lock);
    CHECK(lock->entries.size() == 1);
  }
  SECTION("pylock: a million lines, a package in every sixteen") {
    std::string text = "lock-version = \"1.0\"\n";
    text.reserve(kLines * 8);
    for (std::size_t i = 0; i < kLines / 16; ++i) {
      text += "[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{ path = \"a-1-py3-none-any.whl\" }]\n";
      for (int c = 0; c < 12; ++c) text += "#\n";
    }
    auto lock = parse_lock(text, "pylock.toml");
    REQUIRE(lock);
    CHECK(lock->entries.size() == kLines / 16);
  }
  SECTION("pixi: a million lines, a dependency in every four") {
    std::string text = "[pypi-dependencies]\n";
    text.reserve(kLines * 8);
    for (std::size_t i = 0; i < kLines / 4; ++i) text += "p" + std::to_string(i) + " = \"==1\"\n#\n#\n#\n";
    auto lock = parse_lock(text, "pixi.toml");
    REQUIRE(lock);
    CHECK(lock->entries.size() == kLines / 4);
    CHECK(lock->entries.back().line == kLines - 2);
  }
}
