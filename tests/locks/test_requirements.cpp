// requirements.txt read back (locks/read.hpp, issue 35): the forms pip takes, the lines skipped
// with a warning, and the lines refused.
#include <catch2/catch.hpp>

#include <string>

#include "support/test_support.hpp"
#include "wheelfit/locks/read.hpp"
#include "wheelfit/util/text.hpp"

using wheelfit::locks::Entry;
using wheelfit::locks::Format;
using wheelfit::locks::parse_lock;
using wheelfit::test::contains;

namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');
const std::string kWheel = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl";
const std::string kUrl = "https://h/files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl";

wheelfit::locks::LockFile requirements(const std::string& text) {
  auto lock = parse_lock(text, "requirements.txt");
  if (!lock) FAIL(lock.error().message);
  REQUIRE(lock->format == Format::requirements);
  return std::move(*lock);
}

}  // namespace

TEST_CASE("requirements: the forms of one pin", "[locks][requirements]") {
  struct Row {
    std::string line;
    std::string name, version, filename, url, path;
    std::optional<std::string> sha256;
  };
  const Row rows[] = {
      {"flash-attn @ " + kUrl + " --hash=sha256:" + kA, "flash-attn", "2.8.3+cu128torch2.8", kWheel, kUrl, "", kA},
      {"Flash_Attn==2.8.3+cu128torch2.8 --hash=sha256:" + kA, "flash-attn", "2.8.3+cu128torch2.8", "", "", "", kA},
      {"flash-attn == 2.8.3 --hash sha256:" + kA, "flash-attn", "2.8.3", "", "", "", kA},
      {"flash-attn===2.8.3.weird", "flash-attn", "2.8.3.weird", "", "", "", std::nullopt},
      {"flash-attn[extra1,extra2]==2.8.3 ; python_version >= '3.10' --hash=sha256:" + kA, "flash-attn", "2.8.3", "", "", "", kA},
      {"flash-attn==2.8.3;sys_platform=='linux'", "flash-attn", "2.8.3", "", "", "", std::nullopt},
      {"flash-attn @ " + kUrl + " ; python_version >= '3.10'", "flash-attn", "2.8.3+cu128torch2.8", kWheel, kUrl, "", std::nullopt},
      {"flash-attn @ " + kUrl + "#sha256=" + kB, "flash-attn", "2.8.3+cu128torch2.8", kWheel, kUrl + "#sha256=" + kB, "", kB},
      {"flash-attn @ " + kUrl + "#sha256=" + kB + " --hash=sha256:" + kA, "flash-attn", "2.8.3+cu128torch2.8", kWheel,
       kUrl + "#sha256=" + kB, "", kA},
      {kUrl + " --hash=sha256:" + kA, "flash-attn", "2.8.3+cu128torch2.8", kWheel, kUrl, "", kA},
      {"../../files/" + kWheel + " --hash=sha256:" + kA, "flash-attn", "2.8.3+cu128torch2.8", kWheel, "", "../../files/" + kWheel, kA},
      {"cumm @ ./cumm-0.8.2-cp312-cp312-linux_x86_64.whl", "cumm", "0.8.2", "cumm-0.8.2-cp312-cp312-linux_x86_64.whl", "",
       "./cumm-0.8.2-cp312-cp312-linux_x86_64.whl", std::nullopt},
      {"cumm-0.8.2-cp312-cp312-linux_x86_64.whl", "cumm", "0.8.2", "cumm-0.8.2-cp312-cp312-linux_x86_64.whl", "",
       "cumm-0.8.2-cp312-cp312-linux_x86_64.whl", std::nullopt},
      {"flash-attn==2.8.3 --hash=sha256:" + std::string(64, 'A'), "flash-attn", "2.8.3", "", "", "", kA},
      {"flash-attn==2.8.3 --hash=sha512:" + std::string(128, 'c') + " --hash=md5:00", "flash-attn", "2.8.3", "", "", "", std::nullopt},
      {"flash-attn==2.8.3 --hash=sha256:" + kA + " # via torch", "flash-attn", "2.8.3", "", "", "", kA},
  };
  for (const auto& row : rows) {
    CAPTURE(row.line);
    const auto lock = requirements(row.line + "\n");
    REQUIRE(lock.entries.size() == 1);
    const Entry& e = lock.entries[0];
    CHECK(e.name == row.name);
    CHECK(e.version == row.version);
    CHECK(e.filename == row.filename);
    CHECK(e.url == row.url);
    CHECK(e.path == row.path);
    CHECK(e.sha256 == row.sha256);
    CHECK(e.line == 1);
    CHECK(lock.warnings.empty());
  }
}

TEST_CASE("requirements: continuations, comments, several hashes, the index, line numbers", "[locks][requirements]") {
  const std::string text = "# made for h100\n"
                           "--index-url https://u:secret@mirror/simple\n"
                           "-i https://second/simple\n"
                           "--extra-index-url=https://extra/simple\n"
                           "\n"
                           "flash-attn==2.8.3 \\\n"
                           "    --hash=sha256:" + kA + " \\\n"
                           "    --hash=sha256:" + kB + "\n"
                           "    # via -r requirements.in\n"
                           "cumm==0.8.2 --hash=sha256:" + kB + "  # the last\n"
                           "spconv==2.3.8 \\\n"
                           "  # a comment ends the continuation\n"
                           "--no-index --pre --require-hashes\n"
                           "last==1.0 \\";  // a final continuation without a line after it
  const auto lock = requirements(text);
  REQUIRE(lock.index == "https://u:secret@mirror/simple");
  REQUIRE(lock.entries.size() == 4);
  CHECK(lock.entries[0].name == "flash-attn");
  CHECK(lock.entries[0].line == 6);
  CHECK(lock.entries[0].sha256 == kA);
  CHECK(lock.entries[0].other_sha256 == std::vector<std::string>{kB});
  CHECK(lock.entries[1].name == "cumm");
  CHECK(lock.entries[1].line == 10);
  CHECK(lock.entries[2].name == "spconv");
  CHECK(lock.entries[2].line == 11);
  CHECK(lock.entries[3].name == "last");
  CHECK(lock.entries[3].line == 14);
  CHECK(lock.warnings.empty());
}

TEST_CASE("requirements: pip's line breaks and a byte order mark", "[locks][requirements]") {
  const auto lock = requirements("\xef\xbb\xbf" "a==1\r\nb==2\rc==3\fd==4\xe2\x80\xa8" "e==5\n");
  REQUIRE(lock.entries.size() == 5);
  CHECK(lock.entries[4].name == "e");
  CHECK(lock.entries[4].line == 5);
}

TEST_CASE("requirements: what holds no wheel pin is a warning naming file and line", "[locks][requirements]") {
  struct Row {
    std::string line;
    std::string warning;
  };
  const Row rows[] = {
      {"torch>=2.8", "pins no one version"},
      {"torch==2.8.*", "pins no one version"},
      {"torch==2.8,<3", "pins no one version"},
      {"torch", "names no version"},
      {"torch ; python_version > '3'", "names no version"},
      {"spconv @ https://h/spconv-2.3.8.tar.gz", "not a wheel"},
      {"spconv @ git+https://github.com/x/spconv@v2", "VCS source"},
      {"git+https://github.com/x/spconv", "VCS source"},
      {"-r other.txt", "names another file, 'other.txt'"},
      {"--constraint=c.txt", "names another file"},
      {"-e ./src", "editable"},
      {"--weird-option", "not one wheelfit reads"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.line);
    const auto lock = requirements("ok==1\n" + row.line + "\n");
    CHECK(lock.entries.size() == 1);
    REQUIRE(lock.warnings.size() == 1);
    CHECK(lock.warnings[0].starts_with("requirements.txt:2: "));
    CHECK(contains(lock.warnings[0], row.warning));
  }
}

TEST_CASE("requirements: a line it cannot read is an error naming file, line and what", "[locks][requirements][hostile]") {
  struct Row {
    std::string line;
    std::string error;
  };
  const Row rows[] = {
      {"a==1 --hash=sha256:abc", "the sha256 'abc' of this requirement is not 64 hex digits"},
      {"a==1 --hash=sha256:" + std::string(63, 'a') + "g", "is not 64 hex digits"},
      {"a==1 --hash=sha256:" + kA + "a", "is not 64 hex digits"},
      {"a==1 --hash=" + kA, "is not <kind>:<hex digits>"},
      {"a==1 --hash", "--hash without its value"},
      {"-i", "-i without its value"},
      {"--index-url", "--index-url without its value"},
      {"_bad==1", "is not a project name"},
      {"a.==1", "is not a project name"},
      {"torch @ " + kUrl, "is no file of the project 'torch'"},
      {"x @ https://h/x-1.0.whl", "is not a valid wheel file name"},
      {"x @ https://h/x-1.0-py3-none-any.whl extra", "is not one requirement"},
      {"x[extra==1", "are not closed"},
      {"x @", "'@' without a URL"},
      {"x @ https://h/dir%2Fx-1.0-py3-none-any.whl", "names no file"},
      {"x @ https://h/files/", "names no file"},
      {"x @ /abs/x-1.0-py3-none-any.whl", "leaves the lock's folder (absolute)"},
      {"x @ C:\\w\\x-1.0-py3-none-any.whl", "leaves the lock's folder (a drive letter)"},
      {"x @ \\\\server\\share\\x-1.0-py3-none-any.whl", "a UNC or device prefix"},
      {"x @ https://h/x-1.0-py3-none-any.whl#sha256=zz", "the sha256 'zz'"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.line);
    auto lock = parse_lock("ok==1\n" + row.line + "\n", "requirements.txt");
    REQUIRE_FALSE(lock);
    CHECK(lock.error().is(wheelfit::Errc::invalid_input));
    CHECK(lock.error().message.starts_with("requirements.txt:2: "));
    CHECK(contains(lock.error().message, row.error));
  }
}

TEST_CASE("requirements: no message holds a URL's credentials; the entry keeps them", "[locks][requirements][hostile]") {
  const std::string secret_url = "https://alice:hunter2@h/x-1.0-py3-none-any.whl?token=tok3n";
  for (const std::string& line : std::vector<std::string>{"x @ " + secret_url + " --hash=sha256:bad", "x @ " + secret_url + " trailing",
                                 "y @ " + secret_url, "-r https://alice:hunter2@h/other.txt",
                                 "x @ https://alice:hunter2@h/?token=tok3n", "x @ git+https://alice:hunter2@h/x?token=tok3n"}) {
    CAPTURE(line);
    auto lock = parse_lock(line + "\n", "requirements.txt");
    const std::string said = lock ? wheelfit::util::join(lock->warnings, "\n") : lock.error().message;
    CHECK_FALSE(said.empty());
    CHECK_FALSE(contains(said, "alice"));
    CHECK_FALSE(contains(said, "hunter2"));
    CHECK_FALSE(contains(said, "tok3n"));
  }
  auto lock = parse_lock("x @ " + secret_url + "\n", "requirements.txt");
  REQUIRE(lock);
  CHECK(lock->entries.at(0).url == secret_url);
}
