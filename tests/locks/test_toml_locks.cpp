// pylock.toml and pixi.toml read back (locks/read.hpp, issue 35): PEP 751's packages and wheels,
// pixi's [pypi-dependencies] tables, and what each refuses.
#include <catch2/catch.hpp>

#include <string>

#include "support/test_support.hpp"
#include "wheelfit/locks/read.hpp"

using wheelfit::locks::Entry;
using wheelfit::locks::Format;
using wheelfit::locks::parse_lock;
using wheelfit::test::contains;

namespace {

const std::string kTomlA(64, 'a');
const std::string kTomlB(64, 'b');

wheelfit::locks::LockFile parsed(const std::string& text, const std::string& name, Format format) {
  auto lock = parse_lock(text, name);
  if (!lock) FAIL(lock.error().message);
  REQUIRE(lock->format == format);
  return std::move(*lock);
}

std::string pylock(const std::string& packages) { return "lock-version = \"1.0\"\ncreated-by = \"someone\"\n\n" + packages; }

}  // namespace

TEST_CASE("pylock: one entry per wheel, with the package's name, version and index", "[locks][pylock]") {
  const std::string text = pylock(
      "[[packages]]\n"                                                                   // 4
      "name = \"Flash_Attn\"\n"
      "version = \"2.8.3+cu128torch2.8\"\n"
      "wheels = [{ name = \"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl\", url = "
      "\"https://u:p@h/f/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl\", size = 10, hashes = { sha256 = \"" + kTomlA + "\", "
      "sha512 = \"x\" } }]\n"                                                            // 7
      "\n"
      "[[packages]]\n"                                                                   // 9
      "name = \"cumm\"\n"
      "version = \"0.8.2\"\n"
      "index = \"https://pypi.org/simple\"\n"
      "sdist = { url = \"https://h/cumm-0.8.2.tar.gz\" }\n"                              // 13
      "wheels = [\n"
      "  { url = \"https://h/cumm-0.8.2-cp312-cp312-linux_x86_64.whl\", hashes = { sha256 = \"" + std::string(64, 'B') + "\" } },\n"  // 15
      "  { path = \"../../files/cumm-0.8.2-cp311-cp311-linux_x86_64.whl\" },\n"         // 16
      "]\n"
      "\n"
      "[[packages]]\n"                                                                   // 19
      "name = \"src-pkg\"\n"
      "directory = { path = \"./src\" }\n"                                               // 21
      "\n"
      "[[packages]]\n"                                                                   // 23
      "name = \"bare\"\n");
  const auto lock = parsed(text, "pylock.toml", Format::pylock);
  REQUIRE(lock.entries.size() == 3);
  const Entry& fa = lock.entries[0];
  CHECK(fa.name == "flash-attn");
  CHECK(fa.version == "2.8.3+cu128torch2.8");
  CHECK(fa.filename == "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
  CHECK(fa.url == "https://u:p@h/f/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl");
  CHECK(fa.size == 10u);
  CHECK(fa.sha256 == kTomlA);
  CHECK(fa.line == 7);
  CHECK(fa.index.empty());
  const Entry& c1 = lock.entries[1];
  CHECK(c1.filename == "cumm-0.8.2-cp312-cp312-linux_x86_64.whl");
  CHECK(c1.sha256 == kTomlB);
  CHECK(c1.index == "https://pypi.org/simple");
  CHECK(c1.line == 15);
  const Entry& c2 = lock.entries[2];
  CHECK(c2.filename == "cumm-0.8.2-cp311-cp311-linux_x86_64.whl");
  CHECK(c2.path == "../../files/cumm-0.8.2-cp311-cp311-linux_x86_64.whl");
  CHECK(c2.url.empty());
  CHECK_FALSE(c2.sha256);
  CHECK_FALSE(c2.size);
  CHECK(c2.line == 16);
  REQUIRE(lock.warnings.size() == 3);
  CHECK(lock.warnings[0].starts_with("pylock.toml:13: 'cumm' has an sdist source"));
  CHECK(lock.warnings[1].starts_with("pylock.toml:21: 'src-pkg' has a directory source"));
  CHECK(lock.warnings[2].starts_with("pylock.toml:23: 'bare' lists no wheels"));
  CHECK_FALSE(lock.index);
}

TEST_CASE("pylock: wheels and sources as tables of their own ([[packages.wheels]])", "[locks][pylock]") {
  const auto lock = parsed(pylock("[[packages]]\n"                                    // 4
                                  "name = \"x\"\n"
                                  "version = \"1.0\"\n"
                                  "[packages.sdist]\n"                                // 7
                                  "url = \"https://h/x-1.0.tar.gz\"\n"
                                  "[[packages.wheels]]\n"                             // 9
                                  "url = \"https://h/x-1.0-py3-none-any.whl\"\n"
                                  "size = 0\n"
                                  "[packages.wheels.hashes]\n"
                                  "sha256 = \"" + kTomlA + "\"\n"
                                  "[[packages.wheels]]\n"                             // 14
                                  "name = \"x-1.0-py2-none-any.whl\"\n"
                                  "path = \"x-1.0-py2-none-any.whl\"\n"),
                           "pylock.toml", Format::pylock);
  REQUIRE(lock.entries.size() == 2);
  CHECK(lock.entries[0].line == 9);
  CHECK(lock.entries[0].size == 0u);
  CHECK(lock.entries[0].sha256 == kTomlA);
  CHECK(lock.entries[0].version == "1.0");
  CHECK(lock.entries[1].line == 14);
  CHECK(lock.entries[1].filename == "x-1.0-py2-none-any.whl");
  REQUIRE(lock.warnings.size() == 1);
  CHECK(lock.warnings[0].starts_with("pylock.toml:7: 'x' has an sdist source"));
}

TEST_CASE("pylock: a file or a package it cannot read is an error naming file, line and what", "[locks][pylock][hostile]") {
  const std::string wheel = "x-1.0-py3-none-any.whl";
  struct Row {
    std::string text;
    std::string error;
  };
  const Row rows[] = {
      {"created-by = \"x\"\n", "pylock.toml:1: no lock-version"},
      {"lock-version = 1\n", "pylock.toml:1: the top-level lock-version is not a string"},
      {"lock-version = \"2.0\"\n", "pylock.toml:1: lock-version '2.0' is not 1.x"},
      {pylock("packages = 3\n"), "pylock.toml:4: packages is not an array"},
      {pylock("packages = [1]\n"), "pylock.toml:4: a package is not a table"},
      {pylock("[[packages]]\nversion = \"1\"\n"), "pylock.toml:4: a package without a name"},
      {pylock("[[packages]]\nname = \"-x\"\n"), "pylock.toml:4: '-x' is not a project name"},
      {pylock("[[packages]]\nname = \"x\"\nversion = 1\n"), "pylock.toml:6: the package 'x''s version is not a string"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = 1\n"), "pylock.toml:6: the wheels of 'x' are not an array"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [1]\n"), "pylock.toml:6: a wheel of 'x' is not a table"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ name = \"" + wheel + "\" }]\n"), "pylock.toml:6: the wheel of 'x' has neither url nor path"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ path = \"/srv/" + wheel + "\" }]\n"),
       "pylock.toml:6: the path '/srv/" + wheel + "' leaves the lock's folder (absolute)"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ path = \"C:/w/" + wheel + "\" }]\n"), "leaves the lock's folder (a drive letter)"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ path = \"c:" + wheel + "\" }]\n"), "leaves the lock's folder (a drive letter)"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ path = '\\\\srv\\share\\" + wheel + "' }]\n"), "(a UNC or device prefix)"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ path = '//srv/share/" + wheel + "' }]\n"), "(a UNC or device prefix)"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ path = '\\" + wheel + "' }]\n"), "leaves the lock's folder (absolute)"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/" + wheel + "\", size = -1 }]\n"),
       "pylock.toml:6: the size of '" + wheel + "' is not a non-negative integer"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/" + wheel + "\", size = \"10\" }]\n"), "is not a non-negative integer"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/" + wheel + "\", hashes = \"" + kTomlA + "\" }]\n"),
       "the hashes of '" + wheel + "' are not a table"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/" + wheel + "\", hashes = { sha256 = \"abc\" } }]\n"),
       "pylock.toml:6: the sha256 'abc' of '" + wheel + "' is not 64 hex digits"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/" + wheel + "\", hashes = { sha256 = 5 } }]\n"), "sha256 is not a string"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ name = \"../" + wheel + "\", url = \"https://h/" + wheel + "\" }]\n"),
       "the file name '../" + wheel + "' holds a path separator"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ name = \"..\", url = \"https://h/" + wheel + "\" }]\n"), "names a folder"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/%2e%2e\" }]\n"), "names no file"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/y-1.0-py3-none-any.whl\" }]\n"), "is no file of the project 'x'"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://h/x.tar.gz\" }]\n"), "is not a valid wheel file name"},
      {pylock("[[packages]]\nname = \"x\"\nwheels = [{ url = \"https://alice:hunter2@h/\" }]\n"), "the location 'https://h/' names no file"},
      {"lock-version = \"1.0\"\n[[packages]\nname = 1\n", "pylock.toml:2: TOML syntax error"},
      {"lock-version = \"1.0\"\nx = \"https://alice:hunter2@h/\n", "pylock.toml:2: TOML syntax error"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    auto lock = parse_lock(row.text, "pylock.toml");
    REQUIRE_FALSE(lock);
    CHECK(contains(lock.error().message, row.error));
    CHECK_FALSE(contains(lock.error().message, "hunter2"));
    CHECK_FALSE(contains(lock.error().message, "alice"));
  }
}

TEST_CASE("pixi: the wheels its [pypi-dependencies] tables pin, in file order", "[locks][pixi]") {
  const std::string url = "https://u:p@h/f/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl";
  const std::string text =
      "[workspace]\nname = \"demo\"\nchannels = [\"conda-forge\"]\nplatforms = [\"linux-64\"]\n"  // 1-4
      "\n"
      "[feature.demo.pypi-dependencies]\n"                                                       // 6
      "trimesh = \"*\"\n"                                                                        // 7
      "torch = { version = \"==2.8.*\", index = \"https://download.pytorch.org/whl/cu128\" }\n"  // 8
      "zeta = { version = \"==1.2.3\", index = \"https://mirror/simple\" }\n"                    // 9
      "flash-attn = { url = \"" + url + "#sha256=" + kTomlA + "\" }\n"                               // 10
      "alpha = \"==0.1\"\n"                                                                      // 11
      "local = { path = \"wheels/local-1.0-py3-none-any.whl\" }\n"                               // 12
      "src = { path = \"./src\", editable = true }\n"                                            // 13
      "gitdep = { git = \"https://github.com/x/y\" }\n"                                          // 14
      "sdist = { url = \"https://h/sdist-1.0.tar.gz\" }\n"                                       // 15
      "\n"
      "[feature.demo.target.linux-64.pypi-dependencies]\n"                                       // 17
      "only-linux = { url = \"https://h/only_linux-2.0-py3-none-any.whl\" }\n"                   // 18
      "\n"
      "[pypi-dependencies]\n"                                                                    // 20
      "top = \"===7\"\n"                                                                         // 21
      "\n"
      "[environments]\ndemo = [\"demo\"]\n";
  const auto lock = parsed(text, "pixi.toml", Format::pixi);
  REQUIRE(lock.entries.size() == 6);
  CHECK(lock.entries[0].name == "zeta");
  CHECK(lock.entries[0].version == "1.2.3");
  CHECK(lock.entries[0].index == "https://mirror/simple");
  CHECK(lock.entries[0].filename.empty());
  CHECK(lock.entries[0].line == 9);
  const Entry& fa = lock.entries[1];
  CHECK(fa.name == "flash-attn");
  CHECK(fa.url == url + "#sha256=" + kTomlA);
  CHECK(fa.filename == "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
  CHECK(fa.version == "2.8.3+cu128torch2.8");
  CHECK(fa.sha256 == kTomlA);
  CHECK(fa.line == 10);
  CHECK(lock.entries[2].name == "alpha");
  CHECK(lock.entries[2].version == "0.1");
  CHECK(lock.entries[3].path == "wheels/local-1.0-py3-none-any.whl");
  CHECK(lock.entries[3].filename == "local-1.0-py3-none-any.whl");
  CHECK(lock.entries[4].name == "only-linux");
  CHECK(lock.entries[4].line == 18);
  CHECK(lock.entries[5].name == "top");
  CHECK(lock.entries[5].version == "7");
  CHECK(lock.index == "https://mirror/simple");  // no [pypi-options]: the first entry's index
  REQUIRE(lock.warnings.size() == 5);
  CHECK(lock.warnings[0].starts_with("pixi.toml:7: [feature.demo.pypi-dependencies] 'trimesh' '*' pins no one version"));
  CHECK(lock.warnings[1].starts_with("pixi.toml:8: "));
  CHECK((contains(lock.warnings[2], "pixi.toml:13: ") && contains(lock.warnings[2], "is not a wheel")));
  CHECK((contains(lock.warnings[3], "pixi.toml:14: ") && contains(lock.warnings[3], "VCS source")));
  CHECK((contains(lock.warnings[4], "pixi.toml:15: ") && contains(lock.warnings[4], "is not a wheel")));
}

TEST_CASE("pixi: [pypi-options] index-url is the lock's index", "[locks][pixi]") {
  const auto top = parsed("[pypi-options]\nindex-url = \"https://top/simple\"\n[pypi-dependencies]\na = \"==1\"\n", "pixi.toml", Format::pixi);
  CHECK(top.index == "https://top/simple");
  const auto feature = parsed("[feature.b.pypi-options]\nindex-url = \"https://b/simple\"\n[feature.a.pypi-options]\n"
                              "index-url = \"https://a/simple\"\n[pypi-dependencies]\na = { version = \"==1\", index = \"https://x/\" }\n",
                              "pixi.toml", Format::pixi);
  CHECK(feature.index == "https://b/simple");  // the first in the file
}

TEST_CASE("pixi: a dependency it cannot read is an error naming file, line and what", "[locks][pixi][hostile]") {
  struct Row {
    std::string deps;
    std::string error;
  };
  const Row rows[] = {
      {"a = 1", "pixi.toml:2: [pypi-dependencies] 'a' is neither a version string nor a table"},
      {"a = { url = 1 }", "pixi.toml:2: [pypi-dependencies] 'a''s url is not a string"},
      {"\"-a\" = \"==1\"", "pixi.toml:2: '-a' is not a project name"},
      {"a = { path = \"/srv/a-1.0-py3-none-any.whl\" }", "pixi.toml:2: the path '/srv/a-1.0-py3-none-any.whl' leaves the lock's folder"},
      {"a = { url = \"https://h/a-1.0-py3-none-any.whl#sha256=12\" }", "the sha256 '12' of 'a-1.0-py3-none-any.whl' is not 64 hex digits"},
      {"a = { url = \"https://h/b-1.0-py3-none-any.whl\" }", "is no file of the project 'a'"},
      {"a = { url = \"https://alice:hunter2@h/a/?token=tok3n\" }", "names no file"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.deps);
    auto lock = parse_lock("[pypi-dependencies]\n" + row.deps + "\n", "pixi.toml");
    REQUIRE_FALSE(lock);
    CHECK(lock.error().is(wheelfit::Errc::invalid_input));
    CHECK(contains(lock.error().message, row.error));
    CHECK_FALSE(contains(lock.error().message, "hunter2"));
    CHECK_FALSE(contains(lock.error().message, "tok3n"));
  }
}
