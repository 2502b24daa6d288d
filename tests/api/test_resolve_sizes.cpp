// resolve -o pylock.toml end to end through the façade (issue 35): a PEP 691 page's "size" reaches
// the lock file (PEP 751; uv refuses a wrong one), an HTML page's listing writes none, and a page
// whose size is no size is refused, never guessed around.
#include <catch2/catch.hpp>

#include "support/backend_support.hpp"
#include "support/memory_transport.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

namespace {

constexpr const char* kSizedWheel = "pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl";

const registry::Registry& sized_backends() {
  static const registry::Registry reg = [] {
    registry::Registry r;
    REQUIRE(r.add(test::cuda_backend()));
    return r;
  }();
  return reg;
}

/// A resolve of Pkg_A for an H100 against https://sized.test/simple/, whose pkg-a page is `body`.
api::ResolveResult resolve_sized(const std::string& body, const std::string& content_type) {
  auto memory = std::make_shared<test::MemoryTransport>();
  memory->origin().serve("https://sized.test/simple/pkg-a/", body, content_type);
  api::ResolveRequest r;
  r.envs = {{"demo", "3.12", {"Pkg_A"}}};
  r.machine = test::h100();
  r.env_overrides = false;
  r.index = "https://sized.test/simple/";
  r.transport = memory;
  r.backends = &sized_backends();
  return api::resolve(r);
}

std::string json_page(const std::string& size) {
  return R"({"meta":{"api-version":"1.1"},"name":"pkg-a","files":[{"filename":")" + std::string(kSizedWheel) +
         R"(","url":"https://files.test/)" + kSizedWheel + R"(","hashes":{"sha256":")" + std::string(64, 'a') + R"("},"size":)" +
         size + "}]}";
}

}  // namespace

TEST_CASE("resolve -o pylock.toml writes a PEP 691 page's size, an HTML page's listing none", "[facade][formats][size]") {
  const auto pylock = *api::output_format_for("pylock.toml", std::nullopt);
  SECTION("a JSON page with a size") {
    const auto r = resolve_sized(json_page("4321"), "application/vnd.pypi.simple.v1+json");
    INFO(r.report());
    REQUIRE(r.exit_code == api::kExitResolved);
    auto text = r.write_output(*pylock);
    REQUIRE(text);
    CHECK_THAT(*text, Catch::Contains("size = 4321"));
  }
  SECTION("a JSON page without one, and an HTML page: the same lock, no size") {
    const auto from_json = resolve_sized(json_page("null"), "application/vnd.pypi.simple.v1+json");
    const auto from_html = resolve_sized("<a href=\"https://files.test/" + std::string(kSizedWheel) + "#sha256=" + std::string(64, 'a') +
                                             "\">" + kSizedWheel + "</a>\n",
                                         "text/html");
    REQUIRE(from_json.exit_code == api::kExitResolved);
    REQUIRE(from_html.exit_code == api::kExitResolved);
    auto json_text = from_json.write_output(*pylock);
    auto html_text = from_html.write_output(*pylock);
    REQUIRE(json_text);
    REQUIRE(html_text);
    INFO(*html_text);
    CHECK(html_text->find("size =") == std::string::npos);
    CHECK(*json_text == *html_text);
  }
  SECTION("a size that is no size: the page is refused, not read around") {
    const auto r = resolve_sized(json_page("-5"), "application/vnd.pypi.simple.v1+json");
    CHECK(r.exit_code != api::kExitResolved);
    CHECK_THAT(r.report(), Catch::Contains("files[0].size: -5 is not a size in bytes"));
  }
}
