// ROCm gfx targets: the target-id grammar, target lists and the runs-on-device rule.
#include <catch2/catch.hpp>

#include <string>

#include "wheelfit/backends/rocm_targets.hpp"

namespace rocm = wheelfit::backends::rocm;

namespace {

struct Good {
  const char* text;
  const char* canonical;
};

struct Bad {
  const char* text;
  const char* says;  // a part of the error
};

const auto parse_target = [](const char* text) { return rocm::parse_target(text); };
const auto parse_target_list = [](const char* text) { return rocm::parse_target_list(text); };

/// `parse` accepts each row's text, writing it in the row's canonical form.
template <class Parse, std::size_t N>
void check_accepts(const Parse& parse, const Good (&table)[N]) {
  for (const auto& row : table) {
    CAPTURE(row.text);
    const auto r = parse(row.text);
    CHECK(r.ok);
    CHECK(r.canonical == row.canonical);
    CHECK(r.error.empty());
  }
}

/// `parse` refuses each row's text, saying why (and `hint`, when given, in every error).
template <class Parse, std::size_t N>
void check_refuses(const Parse& parse, const Bad (&table)[N], const char* hint = nullptr) {
  for (const auto& row : table) {
    CAPTURE(row.text);
    const auto r = parse(row.text);
    CHECK_FALSE(r.ok);
    CHECK(r.canonical.empty());
    CHECK_THAT(r.error, Catch::Contains(row.says));
    if (hint) CHECK_THAT(r.error, Catch::Contains(hint));
  }
}

}  // namespace

TEST_CASE("parse_target accepts gfx targets and canonicalises them", "[rocm][targets]") {
  const Good table[] = {
      {"gfx90a", "gfx90a"},
      {"gfx803", "gfx803"},
      {"gfx942", "gfx942"},
      {"gfx1030", "gfx1030"},
      {"gfx1100", "gfx1100"},
      {"GFX90A", "gfx90a"},
      {"  gfx90a\t\n", "gfx90a"},
      {"gfx90a:xnack-", "gfx90a:xnack-"},
      {"gfx90a:xnack+", "gfx90a:xnack+"},
      {"gfx90a:sramecc+", "gfx90a:sramecc+"},
      {"gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"},
      {"gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-"},
      {"Gfx942:XNACK+:SRAMECC-", "gfx942:sramecc-:xnack+"},
      {"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"},
      {" AMDGCN-AMD-AMDHSA--gfx1100 ", "gfx1100"},
      {"gfx9-generic", "gfx9-generic"},
      {"gfx9-4-generic", "gfx9-4-generic"},
      {"gfx10-1-generic", "gfx10-1-generic"},
      {"gfx10-3-generic", "gfx10-3-generic"},
      {"gfx11-generic", "gfx11-generic"},
      {"gfx12-generic", "gfx12-generic"},
      {"gfx9-generic:xnack-", "gfx9-generic:xnack-"},
      {"gfx13-generic", "gfx13-generic"},  // the shape of a generic processor, not yet in the table
  };
  check_accepts(parse_target, table);
}

TEST_CASE("parse_target rejects what is not a gfx target, saying why", "[rocm][targets]") {
  const Bad table[] = {
      {"", "no gfx target given"},
      {"   ", "no gfx target given"},
      {"sm_80", "not a gfx target"},
      {"90a", "not a gfx target"},
      {":xnack+", "not a gfx target"},
      {"gfx", "is not a gfx processor"},
      {"gfx9", "is not a gfx processor"},
      {"gfx90", "\"gfx90\" is not a gfx processor"},
      {"gfx90z", "is not a gfx processor"},
      {"gfx10300", "is not a gfx processor"},
      {"gfxa0a", "is not a gfx processor"},
      {"gfx-generic", "is not a gfx processor"},
      {"gfx9--generic", "is not a gfx processor"},
      {"gfx9-generic-", "is not a gfx processor"},
      {"gfx9-x-generic", "is not a gfx processor"},
      {"gfx9-", "is not a gfx processor"},
      {"gfx90a xnack-", "is not a gfx processor"},
      {"amdgcn-amd-amdhsa-gfx90a", "not a gfx target"},
      {"amdgcn-amd-amdhsa--", "not a gfx target"},
      {"gfx90a:", "empty target feature"},
      {"gfx90a::xnack-", "empty target feature"},
      {"gfx90a:xnack", "target feature \"xnack\" needs \"+\" or \"-\""},
      {"gfx90a:xnack*", "needs \"+\" or \"-\""},
      {"gfx90a:xnack+:xnack-", "\"xnack\" is given twice"},
      {"gfx90a:sramecc-:sramecc-", "\"sramecc\" is given twice"},
      {"gfx90a:cumode+", "unknown target feature \"cumode\""},
      {"gfx90a:+", "unknown target feature \"\""},
      {"gfx90a;gfx1030", "is not a gfx processor"},
  };
  check_refuses(parse_target, table, "write a gfx target such as gfx90a or gfx90a:xnack-");
}

TEST_CASE("parse_target_list splits on ';' and whitespace, keeps order, drops duplicates", "[rocm][targets]") {
  const Good table[] = {
      {"gfx90a", "gfx90a"},
      {"gfx90a;gfx1030", "gfx90a;gfx1030"},
      {"gfx1030;gfx90a", "gfx1030;gfx90a"},
      {"gfx90a gfx942\tgfx1100\ngfx1201", "gfx90a;gfx942;gfx1100;gfx1201"},
      {" gfx90a ; gfx1030 ;", "gfx90a;gfx1030"},
      {";;gfx90a;;", "gfx90a"},
      {"gfx90a;GFX90A;amdgcn-amd-amdhsa--gfx90a", "gfx90a"},
      {"gfx90a:xnack-:sramecc+;gfx90a:sramecc+:xnack-;gfx90a", "gfx90a:sramecc+:xnack-;gfx90a"},
      {"gfx9-4-generic;gfx942:xnack+", "gfx9-4-generic;gfx942:xnack+"},
  };
  check_accepts(parse_target_list, table);
}

TEST_CASE("parse_target_list rejects an empty list and names a bad entry", "[rocm][targets]") {
  const Bad table[] = {
      {"", "empty target list"},
      {" ; \t;", "empty target list"},
      {"sm_80", "entry 1 of the target list: \"sm_80\": not a gfx target"},
      {"gfx90a;gfx1030;sm_86", "entry 3 of the target list: \"sm_86\""},
      {";gfx90a;;gfx90a:xnack", "entry 2 of the target list: \"gfx90a:xnack\""},
      {"gfx90a,gfx1030", "entry 1 of the target list: \"gfx90a,gfx1030\""},
  };
  check_refuses(parse_target_list, table);
}

TEST_CASE("match applies the processor and feature rules of AMDGPUUsage", "[rocm][targets]") {
  struct Row {
    const char* list;
    const char* device;
    int how;
    const char* via;
  };
  const Row table[] = {
      // The processor must be the device's.
      {"gfx90a", "gfx90a", 1, "gfx90a"},
      {"gfx90a", "gfx942", 0, ""},
      {"gfx1030;gfx90a", "gfx90a:sramecc+:xnack-", 1, "gfx90a"},
      {"gfx906;gfx908", "gfx90a", 0, ""},
      {"GFX90A", " amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack- ", 1, "gfx90a"},
      // A feature left unspecified ("any") runs with either setting.
      {"gfx90a", "gfx90a:xnack+", 1, "gfx90a"},
      {"gfx90a:sramecc+", "gfx90a:sramecc+:xnack-", 1, "gfx90a:sramecc+"},
      // A specified feature needs the same setting on the device.
      {"gfx90a:xnack-", "gfx90a:sramecc+:xnack-", 1, "gfx90a:xnack-"},
      {"gfx90a:xnack+", "gfx90a:sramecc+:xnack-", 0, ""},
      {"gfx90a:sramecc-", "gfx90a:sramecc+:xnack-", 0, ""},
      {"gfx90a:xnack+;gfx90a:xnack-", "gfx90a:xnack-", 1, "gfx90a:xnack-"},
      // A device setting that is not known matches only "any".
      {"gfx90a:xnack-", "gfx90a", 0, ""},
      {"gfx90a:xnack-", "gfx90a:sramecc+", 0, ""},
      {"gfx90a:xnack-;gfx90a:xnack+", "gfx90a", 0, ""},
      {"gfx90a:xnack-;gfx90a", "gfx90a", 1, "gfx90a"},
      // Generic processors run on the members of their table row only.
      {"gfx9-generic", "gfx900", 1, "gfx9-generic"},
      {"gfx9-generic", "gfx906:sramecc-:xnack-", 1, "gfx9-generic"},
      {"gfx9-generic", "gfx90c", 1, "gfx9-generic"},
      {"gfx9-generic", "gfx908", 0, ""},
      {"gfx9-generic", "gfx90a", 0, ""},
      {"gfx9-generic", "gfx942", 0, ""},
      {"gfx9-4-generic", "gfx942:sramecc+:xnack-", 1, "gfx9-4-generic"},
      {"gfx9-4-generic", "gfx950", 1, "gfx9-4-generic"},
      {"gfx9-4-generic", "gfx940", 1, "gfx9-4-generic"},
      {"gfx9-4-generic", "gfx90a", 0, ""},
      {"gfx10-1-generic", "gfx1010", 1, "gfx10-1-generic"},
      {"gfx10-1-generic", "gfx1013", 1, "gfx10-1-generic"},
      {"gfx10-1-generic", "gfx1030", 0, ""},
      {"gfx10-3-generic", "gfx1030", 1, "gfx10-3-generic"},
      {"gfx10-3-generic", "gfx1036", 1, "gfx10-3-generic"},
      {"gfx10-3-generic", "gfx1100", 0, ""},
      {"gfx11-generic", "gfx1100", 1, "gfx11-generic"},
      {"gfx11-generic", "gfx1103", 1, "gfx11-generic"},
      {"gfx11-generic", "gfx1151", 1, "gfx11-generic"},
      {"gfx11-generic", "gfx1153", 1, "gfx11-generic"},
      {"gfx11-generic", "gfx1200", 0, ""},
      {"gfx12-generic", "gfx1200", 1, "gfx12-generic"},
      {"gfx12-generic", "gfx1201", 1, "gfx12-generic"},
      {"gfx12-generic", "gfx1250", 0, ""},
      {"gfx12-5-generic", "gfx1251", 1, "gfx12-5-generic"},
      {"gfx13-generic", "gfx1310", 0, ""},  // not in the table: claims nothing
      // Generic code objects obey the feature rule too.
      {"gfx9-4-generic:xnack+", "gfx942:sramecc+:xnack-", 0, ""},
      {"gfx9-4-generic:xnack-", "gfx942:sramecc+:xnack-", 1, "gfx9-4-generic:xnack-"},
      {"gfx9-4-generic:xnack-", "gfx942", 0, ""},
      // An exact processor is preferred over a generic one, then list order.
      {"gfx9-4-generic;gfx942", "gfx942:sramecc+:xnack-", 1, "gfx942"},
      {"gfx942;gfx9-4-generic", "gfx942:sramecc+:xnack-", 1, "gfx942"},
      {"gfx9-4-generic;gfx942:xnack+", "gfx942:sramecc+:xnack-", 1, "gfx9-4-generic"},
      {"gfx11-generic;gfx1100;gfx1100:sramecc-", "gfx1100", 1, "gfx1100"},
      {"gfx10-3-generic gfx1030", "gfx1030", 1, "gfx1030"},
  };
  for (const auto& row : table) {
    CAPTURE(row.list, row.device);
    const auto m = rocm::match(row.list, row.device);
    CHECK(m.how == row.how);
    CHECK(m.via == row.via);
  }
}

TEST_CASE("match reports a malformed list or device", "[rocm][targets]") {
  struct Row {
    const char* list;
    const char* device;
    const char* says;
  };
  const Row table[] = {
      {"", "gfx90a", "empty target list"},
      {"gfx90a;sm_80", "gfx90a", "entry 2 of the target list: \"sm_80\""},
      {"gfx90a", "", "device: no gfx target given"},
      {"gfx90a", "sm_80", "device: \"sm_80\": not a gfx target"},
      {"gfx90a", "gfx90a:xnack", "device: \"gfx90a:xnack\""},
      {"gfx90a", "gfx90a;gfx942", "device: \"gfx90a;gfx942\""},
      {"gfx9-4-generic", "gfx9-4-generic", "device: \"gfx9-4-generic\" is a generic processor"},
  };
  for (const auto& row : table) {
    CAPTURE(row.list, row.device);
    const auto m = rocm::match(row.list, row.device);
    CHECK(m.how == -1);
    CHECK_THAT(m.via, Catch::Contains(row.says));
  }
}
