// api::resolve through a transport registry of the test's own: an index under a scheme the test
// registers (mem://; its wheels link to https, a scheme an index may link to), read with no caller
// transport, and an index whose scheme nobody reads (exit 2, naming it and the registered ones).
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>

#include "support/backend_support.hpp"
#include "support/memory_transport.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

namespace {

// The index behind mem://: one PEP 503 page; anything else is a 404.
std::shared_ptr<test::MemoryOrigin> mem_index() {
  std::string body = "<html><body>\n";
  for (const char* f : {"pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl",
                        "pkg_a-1.0+cu126torch2.7-cp312-cp312-manylinux_2_28_x86_64.whl"}) {
    body += "<a href=\"https://files.test/" + std::string(f) + "#sha256=" + std::string(64, 'c') + "\">" + f + "</a>\n";
  }
  auto origin = std::make_shared<test::MemoryOrigin>();
  origin->serve("mem://wheels/simple/pkg-a/", body + "</body></html>\n");
  return origin;
}

api::ResolveRequest mem_request(const net::Registry& transports, std::string index) {
  api::ResolveRequest r;
  r.envs = {{"demo", "3.12", {"pkg-a"}}};
  r.machine = test::h100();
  r.env_overrides = false;
  r.index = std::move(index);
  r.backends = &test::shipped_backends();
  r.transports = &transports;
  return r;
}

}  // namespace

TEST_CASE("api::resolve composes its stack through the request's transport registry", "[transport][registry][facade]") {
  const auto origin = mem_index();
  net::Registry transports;
  REQUIRE(transports.add_transport({"mem", {"mem"}, [origin](const net::StackOptions&) -> Expected<std::unique_ptr<net::Transport>> {
                                      return test::MemoryOrigin::transport_over(origin);
                                    }}));

  const auto r = api::resolve(mem_request(transports, "mem://wheels/simple/"));
  INFO(r.report());
  REQUIRE(r.exit_code == api::kExitResolved);
  REQUIRE(r.resolution);
  REQUIRE(r.resolution->picks.size() == 1);
  CHECK(r.resolution->picks[0].url == "https://files.test/pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(r.index_url == "mem://wheels/simple/");
  CHECK(origin->requests().size() >= 1);
  CHECK_FALSE(r.trust);  // no http rules registered: no trust store to report

  SECTION("a scheme no registered transport reads is exit 2, naming it and the registered ones") {
    const auto bad = api::resolve(mem_request(transports, "gopher://wheels/simple/"));
    CHECK(bad.exit_code == api::kExitBadInput);
    REQUIRE(bad.error);
    CHECK(bad.error->message == "--index: no transport reads the scheme 'gopher' (gopher://wheels/simple/); registered: mem");
  }
}
