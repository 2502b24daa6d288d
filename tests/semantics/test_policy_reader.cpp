// Unit tests of the core's policy reader (wheelfit/semantics/reader.hpp): the one format reader a
// process installs (catch_main installs policies/'s, as the executables do), and reading a
// policy or a policy file through it.

#include <catch2/catch.hpp>

#ifndef _WIN32
#include <sys/stat.h>
#endif

#include <fstream>
#include <vector>

#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/reader.hpp"

using wheelfit::Errc;
namespace semantics = wheelfit::semantics;

namespace {

wheelfit::Expected<semantics::Policy> other_format(std::string_view, std::string_view source,
                                                std::shared_ptr<const semantics::DeviceRules>) {
  return wheelfit::unexpected(Errc::unsupported, std::string(source) + ": other format");
}

/// The CUDA backend's own policy text, as the plugin supplies it.
const std::string& cuda_policy_text() { return wheelfit::test::cuda_backend().policy_json; }

}  // namespace

TEST_CASE("semantics::install_reader: one reader a process; the same again is harmless", "[policy][reader]") {
  CHECK(wheelfit::policies::register_format());  // catch_main installed it already: a no-op
  CHECK(semantics::install_reader(&wheelfit::policies::parse_policy_json));

  auto other = semantics::install_reader(&other_format);
  REQUIRE_FALSE(other);
  CHECK(other.error().is(Errc::invalid_input));
  CHECK(other.error().message.find("another policy reader is installed") != std::string::npos);

  auto none = semantics::install_reader(nullptr);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("no reader given") != std::string::npos);

  // The installed reader is still policies/'s.
  auto p = semantics::read(cuda_policy_text(), "cuda.json", nullptr);
  REQUIRE(p);
  CHECK(p->source() == "cuda.json");
  CHECK(p->notation().key == "cuda");
}

TEST_CASE("semantics::read and read_file: what the installed format says, naming the input", "[policy][reader]") {
  auto bad = semantics::read("{", "broken.json", nullptr);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().is(Errc::invalid_input));
  CHECK(bad.error().message.find("broken.json") != std::string::npos);

  wheelfit::test::TempDir dir;
  const std::string path = (dir.path() / "policy.json").string();
  std::ofstream(path) << cuda_policy_text();
  auto from_file = semantics::read_file(path, nullptr);
  REQUIRE(from_file);
  CHECK(from_file->source() == path);
  CHECK(from_file->fallback_combos() == semantics::read(cuda_policy_text(), "x", nullptr)->fallback_combos());

  struct Row {
    std::string name;
    std::string path;
    Errc code;
  };
  std::vector<Row> rows{{"missing", (dir.path() / "none.json").string(), Errc::not_found},
                        {"a folder", dir.path().string(), Errc::io_error}};
#ifndef _WIN32  // Windows has no FIFOs (tests/windows/test_files_win.cpp refuses its pipes and devices)
  const std::string fifo = (dir.path() / "fifo.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  rows.push_back({"a FIFO (never opened for reading: no hang)", fifo, Errc::io_error});
#endif
  for (const Row& r : rows) {
    INFO(r.name);
    auto e = semantics::read_file(r.path, nullptr);
    REQUIRE_FALSE(e);
    CHECK(e.error().is(r.code));
    CHECK(e.error().message.find(r.path) != std::string::npos);
  }
}
