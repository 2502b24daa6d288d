// The CUDA backend's target lists: TORCH_CUDA_ARCH_LIST syntax and the coverage rule of SASS
// and PTX (backends/cuda/semantics/arch_list.cpp), and its target functions as the core sees them.

#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cctype>
#include <functional>
#include <set>
#include <thread>

#include "support/backend_support.hpp"
#include "wheelfit/backends/cuda_rules.hpp"
#include "support/model_support.hpp"

using wheelfit::Errc;
using wheelfit::model::NumericVersion;
namespace pol = wheelfit::backends::cuda;

namespace {

using wheelfit::test::nv;
pol::ArchList archs(std::string_view s) { return pol::ArchList::parse(s).value(); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// ArchList

TEST_CASE("ArchList::parse accepts TORCH_CUDA_ARCH_LIST syntax", "[backends][cuda][arch]") {
  struct Row {
    const char* text;
    const char* canonical;
    std::size_t count;
  };
  const Row rows[] = {
      {"7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", 6},
      {"8.0 8.6 8.9 9.0  12.0+PTX", "8.0;8.6;8.9;9.0;12.0+PTX", 5},  // double space (sageattention)
      {"8.0 9.0+PTX", "8.0;9.0+PTX", 2},
      {"9.0+ptx", "9.0+PTX", 1},                                         // case-insensitive suffix
      {"9.0+Ptx", "9.0+PTX", 1},
      {" 8.0 ;\t9.0; ", "8.0;9.0", 2},                                   // mixed separators
      {"5.0;6.0;7.0;7.5;8.0;8.6;9.0;", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", 7},  // trailing ';' (torch's own)
      {"9.0a", "9.0a", 1},                                               // arch-specific
      {"10.0f+PTX", "10.0f+PTX", 1},                                     // family-specific
      {"10.0A", "10.0a", 1},
      {"08.0;9.00", "8.0;9.0", 2},                                       // canonical spelling
      {"12.0", "12.0", 1},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    auto list = pol::ArchList::parse(r.text);
    REQUIRE(list);
    CHECK(list->str() == r.canonical);
    CHECK(list->targets().size() == r.count);
    // The canonical form parses back to itself.
    CHECK(pol::ArchList::parse(list->str())->str() == r.canonical);
  }
  auto l = archs("8.6 9.0+PTX");
  CHECK(l.targets()[0].cc == nv("8.6"));
  CHECK_FALSE(l.targets()[0].ptx);
  CHECK(l.targets()[1].ptx);
  CHECK(l.targets()[1].variant == '\0');
}

TEST_CASE("ArchList::parse rejects what is not an arch list, quoting it", "[backends][cuda][arch]") {
  struct Row {
    const char* text;
    const char* says;
  };
  const Row rows[] = {
      {"", "names no target"},
      {"   ", "names no target"},
      {";;", "names no target"},
      {"8", "'8' is not an arch target"},
      {"8.x", "'8.x' is not an arch target"},
      {"+PTX", "'+PTX' is not an arch target"},
      {"9.0+", "'9.0+' is not an arch target"},
      {"9.0+SASS", "'9.0+SASS' is not an arch target"},
      {"9.0+PTX+PTX", "'9.0+PTX+PTX'"},
      {"sm_86", "'sm_86'"},
      {"compute_90", "'compute_90'"},
      {"8.6.1", "'8.6.1'"},
      {"Ampere", "'Ampere'"},
      {"8.6,9.0", "'8.6,9.0'"},
      {"0.5", "'0.5'"},
      {"8.10", "'8.10'"},
      {"9.0b", "'9.0b'"},
      {"8.0;garbage;9.0", "'garbage'"},
      {"-8.0", "'-8.0'"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    auto list = pol::ArchList::parse(r.text);
    REQUIRE_FALSE(list);
    CHECK(list.error().is(Errc::invalid_input));
    CHECK_THAT(list.error().message, Catch::Contains(r.says));
    CHECK_THAT(list.error().message, Catch::Contains("'" + std::string(r.text) + "'"));  // the whole list
  }
}

TEST_CASE("ArchList::covers follows the SASS/PTX coverage rule (policies/README.md)", "[backends][cuda][arch]") {
  struct Row {
    const char* list;
    const char* gpu;
    bool covered;
    const char* via;  // the target that serves it ("" when not covered)
    bool jit;
  };
  const char* x86_128 = "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX";
  const char* x86_126 = "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX";
  const char* exc_128 = "7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX";
  const char* arm_128 = "8.0;9.0+PTX;10.0;12.0+PTX";
  const char* arm_130 = "8.0;9.0+PTX;10.0;11.0;12.0+PTX";
  const Row rows[] = {
      {x86_128, "6.1", false, "", false},   // GTX 1080 on cu128: nothing at or below in major 6, no PTX <= 6.1
      {x86_126, "6.1", true, "6.0", false}, // ... but cu126 carries 6.0 SASS
      {x86_128, "8.9", true, "8.6", false}, // RTX 4090: the highest SASS of major 8 at or below
      {x86_128, "8.7", true, "8.6", false},
      {x86_128, "8.0", true, "8.0", false},
      {x86_128, "12.1", true, "12.0", false},  // GB10 on the 12.0 cubin
      {x86_128, "12.0", true, "12.0", false},
      {x86_128, "10.3", true, "10.0", false},
      {x86_128, "9.0", true, "9.0", false},
      {x86_128, "7.0", false, "", false},   // Volta dropped from the cu128 row
      {exc_128, "7.0", true, "7.0", false}, // ... and added back by the 12.8/2.8 exception
      {x86_128, "7.5", true, "7.5", false},
      {x86_128, "13.0", true, "12.0", true},  // a future arch: the highest PTX below it
      {x86_126, "10.0", true, "9.0", true},   // Blackwell on cu126 via compute_90 JIT
      {x86_126, "12.0", true, "9.0", true},
      {x86_126, "3.5", false, "", false},
      {arm_130, "11.0", true, "11.0", false},  // Thor on 13.0 ARM: native
      {arm_130, "8.7", true, "8.0", false},    // Orin via the 8.0 cubin
      {arm_130, "10.0", true, "10.0", false},  // GB200
      // Thor on 12.8 ARM: coverage.txt says not covered, but compute_90 PTX JITs forward onto
      // sm_110 under the stated rule (see policies/README.md, "Thor and the 12.8 ARM list").
      {arm_128, "11.0", true, "9.0", true},
      {"8.0 9.0 10.0 12.0+PTX", "11.0", false, "", false},  // flash-attn 12.8: no PTX at or below 11.0
      {"8.0 8.6 8.9 9.0  12.0+PTX", "10.0", false, "", false},  // sageattention 12.8 on B200
      {"7.5;8.0;8.6;8.9;12.0", "9.0", false, "", false},        // nunchaku: no Hopper
      {"7.5;8.0;8.6;8.9;12.0", "12.1", true, "12.0", false},
      {"9.0a", "9.0", true, "9.0", false},
      {"9.0a", "9.1", false, "", false},       // arch-specific: exactly 9.0
      {"9.0a+PTX", "10.0", false, "", false},  // ... and its PTX does not JIT forward
      {"10.0f", "10.3", true, "10.0", false},  // family-specific: same major, minor >=
      {"10.0f+PTX", "11.0", false, "", false},
      {"8.0;8.6", "8.9", true, "8.6", false},
      {"8.6;8.0", "8.9", true, "8.6", false},  // order does not matter
      {"9.0+PTX;9.0", "9.0", true, "9.0", false},
      {x86_128, "8.6.1", true, "8.6", false},  // only major.minor counts
  };
  for (const auto& r : rows) {
    CAPTURE(r.list, r.gpu);
    const auto list = archs(r.list);
    CHECK(list.covers(nv(r.gpu)) == r.covered);
    const auto m = list.match(nv(r.gpu));
    REQUIRE(m.has_value() == r.covered);
    if (m) {
      CHECK(m->target.cc == nv(r.via));
      CHECK(m->jit == r.jit);
    }
  }
  CHECK_FALSE(archs("8.0").covers(NumericVersion{}));
}

// ---------------------------------------------------------------------------------------------
// The same rule through the plugin's target functions (what the resolver asks)

TEST_CASE("the CUDA target functions: grammar and coverage as the core sees them", "[backends][cuda][arch]") {
  const auto* rules = wheelfit::test::cuda_policy().rules();
  REQUIRE(rules != nullptr);
  struct Row {
    const char* text;
    const char* canonical;  // nullptr: refused
  };
  const Row targets[] = {{"9.0", "9.0"}, {"sm_90", "9.0"}, {"sm90", "9.0"}, {" SM_100 ", "10.0"}, {"8.6", "8.6"},
                         {"9", nullptr},  {"sm_9", nullptr}, {"gfx90a", nullptr}, {"", nullptr}, {"9.0.1", nullptr}};
  for (const auto& r : targets) {
    CAPTURE(r.text);
    auto t = rules->parse_target(r.text);
    REQUIRE(t.has_value() == (r.canonical != nullptr));
    if (t) CHECK(*t == r.canonical);
    else CHECK_THAT(t.error().message, Catch::StartsWith("is not a compute capability"));
  }
  auto native = rules->match("8.0;9.0+PTX", "9.0");
  REQUIRE(native);
  CHECK(native->kind == wheelfit::semantics::DeviceRules::Match::Kind::native);
  CHECK(native->via == "sm_90 SASS");  // as CUDA's tools name it
  auto jit = rules->match("8.0;9.0+PTX", "12.0");
  REQUIRE(jit);
  CHECK(jit->kind == wheelfit::semantics::DeviceRules::Match::Kind::jit);
  CHECK(jit->via == "compute_90 PTX");
  CHECK(rules->match("10.0f", "10.3")->via == "sm_100f SASS");
  auto none = rules->match("8.0;9.0", "12.0");
  REQUIRE(none);
  CHECK_FALSE(none->covers());
  CHECK_FALSE(rules->match("8.x", "9.0"));
  CHECK_FALSE(rules->parse_list("sm_86"));
  CHECK(*rules->parse_list("8.0 9.0+ptx") == "8.0;9.0+PTX");
}
