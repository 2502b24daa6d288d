// api::check (wheelfit/api.hpp, decision 0043) over a caller's in-memory index: each status from
// its cause, table-driven (listed, yanked, gone as a file and as a page, another sha256 on the page
// or in packages.json, a lock without a digest, an index without one, an index that cannot be
// read, a machine the wheel does not run on), the update named, the exit code the worst, and a
// requirements entry pinned by version found by its digest.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/backend_support.hpp"
#include "support/memory_transport.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

namespace {

const std::string kFile = "pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl";
const std::string kNewer = "pkg_a-1.1+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl";
const std::string kOtherCombo = "pkg_a-2.0+cu126torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl";
const std::string kA(64, 'a'), kB(64, 'b');

std::string check_anchor(const std::string& file, const std::string& sha256, const std::string& attrs = "") {
  return "<a " + attrs + "href=\"https://files.test/" + file + "#sha256=" + sha256 + "\">" + file + "</a>\n";
}


struct CheckRow {
  const char* what;
  std::string page;          // pkg-a's page ("" none: 404)
  std::string lock_sha256;   // "" : the lock pins none
  machine::Machine machine;
  api::CheckStatus status;
  const char* reason;        // a part of the reason
  int exit_code;
};

}  // namespace

TEST_CASE("api::check: each status from its cause, the worst exit code", "[facade][check]") {
  const auto gtx1080 = test::h100_with({{"gpus", "6.1"}});
  const std::vector<CheckRow> rows = {
      {"listed, same digest", check_anchor(kFile, kA), kA, test::h100(), api::CheckStatus::ok, "", 0},
      {"yanked with a reason", check_anchor(kFile, kA, "data-yanked=\"broken on Ada\" "), kA, test::h100(), api::CheckStatus::yanked,
       "broken on Ada", 1},
      {"the file is no longer listed", check_anchor(kNewer, kA), kA, test::h100(), api::CheckStatus::gone, "no longer listed", 1},
      {"the page is gone", "", kA, test::h100(), api::CheckStatus::gone, "no longer publishes pkg-a", 1},
      {"listed with another sha256", check_anchor(kFile, kB), kA, test::h100(), api::CheckStatus::digest_changed, kB.c_str(), 5},
      {"the lock pins no digest", check_anchor(kFile, kA), "", test::h100(), api::CheckStatus::unchecked, "pins no sha256", 1},
      {"the machine's GPU is not covered", check_anchor(kFile, kA), kA, gtx1080, api::CheckStatus::will_not_run, "6.1", 1},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const test::TempDir tmp;
    const auto lock = tmp / "requirements.txt";
    test::write_file(lock, "pkg-a @ https://files.test/" + kFile +
                               (row.lock_sha256.empty() ? std::string() : " --hash=sha256:" + row.lock_sha256) + "\n");
    auto memory = std::make_shared<test::MemoryTransport>();
    if (!row.page.empty()) memory->origin().serve("https://mirror.test/simple/pkg-a/", "<html><body>\n" + row.page + "</body></html>\n");
    api::CheckRequest req;
    req.resolve.machine = row.machine;
    req.resolve.env_overrides = false;
    req.resolve.index = "https://mirror.test/simple/";
    req.resolve.transport = memory;
    req.resolve.backends = &test::shipped_backends();
    req.locks = {lock.string()};
    const auto r = api::check(req);
    INFO(r.report());
    REQUIRE_FALSE(r.error);
    REQUIRE(r.locks.size() == 1);
    REQUIRE(r.locks[0].entries.size() == 1);
    const auto& e = r.locks[0].entries[0];
    CHECK(e.status == row.status);
    CHECK_THAT(e.reason, Catch::Contains(row.reason));
    CHECK(r.exit_code == row.exit_code);
    CHECK(e.filename == kFile);
  }
}

TEST_CASE("api::check: an update for the same combo only; a pin by version found by its digest", "[facade][check]") {
  const test::TempDir tmp;
  auto memory = std::make_shared<test::MemoryTransport>();
  memory->origin().serve("https://mirror.test/simple/pkg-a/",
                         "<html><body>\n" + check_anchor(kFile, kA) + check_anchor(kNewer, kB) + check_anchor(kOtherCombo, kB) + "</body></html>\n");
  api::CheckRequest req;
  req.resolve.machine = test::h100();
  req.resolve.env_overrides = false;
  req.resolve.index = "https://mirror.test/simple/";
  req.resolve.transport = memory;
  req.resolve.backends = &test::shipped_backends();
  const auto lock = tmp / "requirements.txt";
  test::write_file(lock, "pkg-a @ https://files.test/" + kFile + " --hash=sha256:" + kA + "\n");
  req.locks = {lock.string()};
  auto r = api::check(req);
  INFO(r.report());
  REQUIRE(r.locks.at(0).entries.size() == 1);
  CHECK(r.locks[0].entries[0].status == api::CheckStatus::ok);
  CHECK(r.locks[0].entries[0].update == kNewer);  // 2.0 is another combo (cu126): not an update
  CHECK_THAT(r.report(), Catch::Contains("update: " + kNewer));

  SECTION("name==version --hash: the file of that version with the locked digest") {
    test::write_file(lock, "pkg-a==1.1+cu128torch2.8 --hash=sha256:" + kB + "\n");
    r = api::check(req);
    INFO(r.report());
    REQUIRE(r.locks.at(0).entries.size() == 1);
    CHECK(r.locks[0].entries[0].status == api::CheckStatus::ok);
    test::write_file(lock, "pkg-a==1.0+cu128torch2.8 --hash=sha256:" + kB + "\n");
    r = api::check(req);
    CHECK(r.locks[0].entries[0].status == api::CheckStatus::gone);
  }
  SECTION("an index that cannot be read: unchecked, exit 4, the reason said") {
    memory->origin().fail_all(net::net_error(net::NetErrc::reset, "{url}: connection reset"));
    r = api::check(req);
    INFO(r.report());
    REQUIRE(r.locks.at(0).entries.size() == 1);
    CHECK(r.locks[0].entries[0].status == api::CheckStatus::unchecked);
    CHECK_THAT(r.locks[0].entries[0].reason, Catch::Contains("connection reset"));
    CHECK(r.exit_code == api::kExitUnreadable);
  }
  SECTION("a lock that cannot be read: exit 2 naming it") {
    req.locks = {(tmp / "missing.txt").string()};
    r = api::check(req);
    REQUIRE(r.error);
    CHECK(r.exit_code == api::kExitBadInput);
    CHECK_THAT(r.error->message, Catch::Contains("missing.txt"));
  }
}
