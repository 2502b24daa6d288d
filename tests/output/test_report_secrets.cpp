// The report, the JSON and pixi.toml carry no secret: URLs written without userinfo or credential
// query parameters (pixi.toml gets URLs the installer authenticates itself), and notes and
// warnings redacted, whatever the index handed out.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <toml++/toml.h>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/output/report.hpp"

using namespace wheelfit;

namespace {

const std::string kWheel = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
const std::vector<std::string> kSecrets = {"WHEEL-PW", "SIG-SECRET", "IDX-PW", "IDX-TOKEN", "WARN-SECRET", "NOTE-PW"};

struct ReportSecretsFixture {
  config::Workspace ws = test::workspace({"flash-attn"}, "3.12");
  machine::Machine m;
  index::IndexSnapshot snap;

  explicit ReportSecretsFixture(const std::string& gpu) : m(test::h100()) {
    m.gpus = std::vector<std::string>{gpu};
    const std::string href = "https://bob:WHEEL-PW@files.test/dl/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-"
                             "manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl?X-Amz-Signature=SIG-SECRET&X-Amz-Date=1";
    snap = test::snapshot({{"flash-attn", {{kWheel, href, std::string(64, 'e')}}}});
    snap.projects.at("flash-attn").page.links[0].filename = kWheel;
  }
  [[nodiscard]] output::ReportContext context() const {
    return {.machine = m,
            .workspace = ws,
            .index_url = "https://alice:IDX-PW@example.test/simple/?token=IDX-TOKEN",
            .index_origin = "--index",
            .policy_source = "built-in",
            .failover_note = "the Releases API at https://carol:NOTE-PW@api.test answered"};
  }
  resolve::Resolution resolution() const {
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.torch_archs = test::torch_built_for(m.gpus->front());  // the machine's torch runs there: the wheel is judged
    auto r = resolve::resolve(in);
    REQUIRE(r);
    r->warnings.push_back("a proxy said: Authorization: Bearer WARN-SECRET");
    return std::move(*r);
  }
};

void check_clean(const std::string& text) {
  for (const auto& s : kSecrets) {
    CAPTURE(s);
    CHECK_THAT(text, !Catch::Contains(s));
  }
}

}  // namespace

TEST_CASE("a resolved run's report, JSON and pixi.toml hold no secret", "[output][secrets]") {
  ReportSecretsFixture f("9.0");
  const auto r = f.resolution();
  const auto ctx = f.context();
  REQUIRE(r.ok());
  const std::string human = output::human_report(r, ctx);
  const std::string json = output::json_report(r, ctx);
  auto pixi = output::pixi_manifest(r, ctx);
  REQUIRE(pixi);
  check_clean(human);
  check_clean(json);
  check_clean(*pixi);

  CHECK_THAT(human, Catch::Contains("index:   https://example.test/simple/ (--index)"));
  const auto doc = boost::json::parse(json).as_object();
  CHECK(doc.at("index").at("url") == "https://example.test/simple/");
  const std::string clean_url = "https://files.test/dl/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-"
                                "manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl?X-Amz-Date=1";
  CHECK(doc.at("packages").at(0).at("url").as_string() == clean_url);
  CHECK_THAT(std::string(doc.at("warnings").as_array().back().as_string()), Catch::Contains("Bearer ***"));
  toml::table t = toml::parse(*pixi);
  CHECK(*t["feature"][f.ws.envs[0].name]["pypi-dependencies"]["flash-attn"]["url"].value<std::string>() ==
        clean_url + "#sha256=" + std::string(64, 'e'));
}

TEST_CASE("an unresolved run's report and JSON hold no secret either", "[output][secrets]") {
  ReportSecretsFixture f("6.1");  // no wheel covers the GPU
  const auto r = f.resolution();
  const auto ctx = f.context();
  REQUIRE_FALSE(r.ok());
  const std::string json = output::json_report(r, ctx);
  check_clean(output::human_report(r, ctx));
  check_clean(json);
  const auto doc = boost::json::parse(json).as_object();
  const auto& candidate = doc.at("unresolved").at(0).at("candidates").at(0);
  CHECK_THAT(std::string(candidate.at("url").as_string()), Catch::StartsWith("https://files.test/dl/"));
}
