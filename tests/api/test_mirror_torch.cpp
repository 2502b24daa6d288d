// api::mirror with_torch (wheelfit/api.hpp: MirrorRequest, MirrorResult::torch_choices) on a
// farm with real files and a torch index on disk: each torch page's links are parsed once and each
// choice made once per distinct (torch index, pin, Python, platform), however many machines share
// it; every machine's view still gets its family.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "support/torch_index.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

TEST_CASE("api::mirror with_torch: one choice per distinct (index, pin, Python, platform), every view its family",
          "[facade][mirror][torch]") {
  const test::TempDir tmp;
  REQUIRE(test::write_torch_test_farm(tmp / "farm"));
  test::write_torch_index(tmp / "torch");

  struct Case {
    const char* name;
    std::size_t twins;       ///< machines equal in every fact
    bool other_platform;     ///< and one on another glibc (another platform)
    std::size_t choices;     ///< 3 pins per distinct (Python, platform)
  };
  const Case cases[] = {{"one machine", 1, false, 3}, {"eight identical machines", 8, false, 3},
                        {"eight identical machines and one on another glibc", 8, true, 6}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    api::MirrorRequest req;
    req.resolve.envs = {{"demo", std::nullopt, {"cc_torch", "cubvh"}}};
    req.resolve.env_overrides = false;
    req.resolve.index = (tmp / "farm").string();
    req.resolve.use_cache = false;
    req.resolve.backends = &test::shipped_backends();
    for (std::size_t i = 0; i < c.twins; ++i) req.fleet.push_back({"m" + std::to_string(i), test::h100()});
    if (c.other_platform) req.fleet.push_back({"newer-glibc", test::h100_with({{"glibc", "2.39"}})});
    req.out = (tmp / ("out-" + std::to_string(req.fleet.size()) + (c.other_platform ? "b" : "a"))).string();
    req.with_torch = true;
    req.torch_index = (tmp / "torch").string() + "/cu{line_nodot}";
    const auto r = api::mirror(req);
    INFO(r.report());
    REQUIRE(r.exit_code == 0);
    CHECK(r.torch_choices == c.choices);
    for (const auto& m : req.fleet) {
      CAPTURE(m.name);
      const std::string locks = test::read_file(std::filesystem::path(req.out) / "current" / "machines" / m.name / "requirements.txt");
      CHECK_THAT(locks, Catch::Contains("torch==2.8.1+cu128 --hash=sha256:"));
      CHECK_THAT(locks, Catch::Contains("torchvision==0.23.0+cu128 --hash=sha256:"));
    }
  }
}
