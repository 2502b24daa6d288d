// deliver::download with no server: file:// sources, the names refused before any request, the
// digests. These run on Windows too (tests/windows.cmake); the tests needing the HTTP test server
// (test_download*.cpp) are Linux-only.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "deliver/download_files.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
using namespace wheelfit::test_deliver;
using test::TempDir;

TEST_CASE("download: file:// sources, whole and continued", "[deliver][download][file]") {
  TempDir src, dir;
  const std::string body = random_bytes(3u << 20, 8);  // more than one 1 MiB block
  test::write_file(src / kName, body);
  auto t = transports::make_file_transport();
  const auto w = wanted(transports::to_url((src / kName).string(), false), kName, body);
  bool part = false;
  SECTION("whole") {}
  SECTION("continued from a part") {
    leave_part(dir.path(), kName, std::string_view(body).substr(0, 1234567), "");
    part = true;
  }
  auto got = deliver::download(*t, {w}, options_for(dir.path()));
  check_delivered(got.at(0), dir.path(), body);
  CHECK(got[0].resumed == part);
}

TEST_CASE("download: bad file names are refused before any request", "[deliver][download]") {
  TempDir src;
  test::write_file(src / "x", "x");
  auto inner = transports::make_file_transport();
  std::vector<std::string> names = {"", ".", "..", "a/b.whl", "../up.whl", std::string("nul\0.whl", 8)};
#ifdef _WIN32
  // Windows: its other separator, a drive or a stream, what names cannot hold, device names, a
  // trailing dot or space.
  names.insert(names.end(), {"a\\b.whl", "..\\up.whl", "c:up.whl", "pkg-1.0-py3-none-any.whl:hidden", "pkg<1>.whl",
                             "NUL.whl", "con", "Com1.whl", "lpt9", "pkg-1.0-py3-none-any.whl.", "trailing "});
#endif
  for (const auto& name : names) {
    CAPTURE(name);
    TempDir dir;
    CountingTransport t(*inner);
    auto w = wanted(transports::to_url((src / "x").string(), false), name, "x");
    auto got = deliver::download(t, {w}, options_for(dir.path()));
    REQUIRE(got.at(0).status == Delivered::Status::failed);
    REQUIRE(got[0].error);
    CHECK(got[0].error->is(Errc::invalid_input));
    CHECK(t.origin().calls() == 0);
  }
}

TEST_CASE("download: sha256_file and Sha256 agree with known digests", "[deliver][sha256]") {
  TempDir dir;
  test::write_file(dir / "abc", "abc");
  auto d = deliver::sha256_file(dir / "abc");
  REQUIRE(d);
  CHECK(*d == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK_FALSE(deliver::sha256_file(dir / "missing"));
}
