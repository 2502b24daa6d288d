// PEP 427 wheel names, PEP 425 python/abi ranking and PEP 600 platform fit.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/model/wheel.hpp"
#include "support/model_support.hpp"

using namespace wheelfit::model;
using wheelfit::Errc;
using Kind = PlatformTag::Kind;

namespace {

using wheelfit::test::nv;

constexpr auto wheel = &wheelfit::test::parse_ok<WheelName>;

// A wheel with the given python-abi-platform tag triple.
WheelName tagged(const std::string& tags) { return wheel("pkg-1.0-" + tags + ".whl"); }

PythonTarget py(std::string_view version, bool free_threaded = false) { return PythonTarget{nv(version), free_threaded}; }

PlatformTarget linux_x86(std::optional<std::string> glibc = "2.35") {
  return PlatformTarget{Os::linux_, "x86_64", glibc ? std::optional<NumericVersion>(nv(*glibc)) : std::nullopt};
}
PlatformTarget linux_arm(std::string_view glibc = "2.39") { return PlatformTarget{Os::linux_, "aarch64", nv(glibc)}; }
PlatformTarget windows_x86() { return PlatformTarget{Os::windows, "x86_64", std::nullopt}; }

/// CHECKs which of the fit's demands pass: the OS, the CPU, the glibc floor.
void check_demands(const PlatformFit& f, bool os, bool cpu, bool glibc) {
  CHECK(f.os_ok == os);
  CHECK(f.cpu_ok == cpu);
  CHECK(f.glibc_ok == glibc);
}

}  // namespace

TEST_CASE("WheelName::parse splits PEP 427 names", "[model][wheel]") {
  SECTION("a farm wheel with a compressed platform tag set") {
    const WheelName w =
        wheel("cumesh_vb-1.0+cu128torch2.8-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl");
    CHECK(w.filename == "cumesh_vb-1.0+cu128torch2.8-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl");
    CHECK(w.distribution == "cumesh_vb");
    CHECK(w.name == "cumesh-vb");
    CHECK(w.version.str() == "1.0+cu128torch2.8");
    CHECK(w.version.local() == "cu128torch2.8");
    CHECK_FALSE(w.build.has_value());
    CHECK(w.python_tags == std::vector<std::string>{"cp312"});
    CHECK(w.abi_tags == std::vector<std::string>{"cp312"});
    REQUIRE(w.platforms.size() == 2);
    CHECK(w.platforms[0].tag == "manylinux_2_27_x86_64");
    CHECK(w.platforms[0].libc == nv("2.27"));
    CHECK(w.platforms[1].tag == "manylinux_2_28_x86_64");
    CHECK(w.platforms[1].libc == nv("2.28"));
  }
  SECTION("a build tag") {
    const WheelName w = wheel("torch-2.8.0-1-cp312-cp312-win_amd64.whl");
    REQUIRE(w.build.has_value());
    CHECK(*w.build == "1");
    CHECK(w.version.str() == "2.8.0");
    CHECK(wheel("foo-1.0-20240101_ab.c-py3-none-any.whl").build == std::optional<std::string>("20240101_ab.c"));
  }
  SECTION("compressed python and abi sets expand in order") {
    const WheelName w = wheel("six-1.16.0-py2.py3-none-any.whl");
    CHECK(w.python_tags == std::vector<std::string>{"py2", "py3"});
    CHECK(w.abi_tags == std::vector<std::string>{"none"});
    REQUIRE(w.platforms.size() == 1);
    CHECK(w.platforms[0].kind == Kind::any);
    const WheelName m = wheel("m-1.0-cp311.cp312-cp311.abi3-manylinux1_x86_64.manylinux2014_x86_64.whl");
    CHECK(m.python_tags == std::vector<std::string>{"cp311", "cp312"});
    CHECK(m.abi_tags == std::vector<std::string>{"cp311", "abi3"});
    REQUIRE(m.platforms.size() == 2);
    CHECK(m.platforms[0].libc == nv("2.5"));
    CHECK(m.platforms[1].libc == nv("2.17"));
  }
  SECTION("abi3, none and the free-threaded cp313t abi") {
    CHECK(wheel("x-1.0-cp38-abi3-manylinux_2_17_x86_64.whl").abi_tags == std::vector<std::string>{"abi3"});
    CHECK(wheel("x-1.0-py3-none-any.whl").abi_tags == std::vector<std::string>{"none"});
    const WheelName ft = wheel("x-1.0-cp313-cp313t-manylinux_2_28_x86_64.whl");
    CHECK(ft.python_tags == std::vector<std::string>{"cp313"});
    CHECK(ft.abi_tags == std::vector<std::string>{"cp313t"});
  }
  SECTION("names, versions and tags as written; the name normalised") {
    const WheelName w = wheel("Flash.Attn-2.7.4.post1-CP312-CP312-Win_AMD64.whl");
    CHECK(w.distribution == "Flash.Attn");
    CHECK(w.name == "flash-attn");
    CHECK(w.version.post() == std::optional<std::uint64_t>(1));
    CHECK(w.python_tags == std::vector<std::string>{"CP312"});
    CHECK(w.platforms[0].tag == "Win_AMD64");
    CHECK(w.platforms[0].kind == Kind::windows);
    CHECK(w.platforms[0].cpu_arch == "x86_64");
  }
  SECTION("every farm wheel name parses") {
    for (const std::string& name : std::vector<std::string>{
             "cc_torch-0.2+cu128torch2.11-cp312-cp312-manylinux_2_24_aarch64.manylinux_2_28_aarch64.whl",
             "cubvh-0.1.2+cu128torch2.8-cp312-cp312-win_amd64.whl",
             "cumm-0.8.2+cu128torch2.10-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
             "custom_rasterizer_hy3d2-0.1+cu128torch2.8-cp312-cp312-win_amd64.whl",
             "diff_gaussian_rasterization-0.0.0+cu128torch2.11-cp312-cp312-manylinux_2_24_aarch64.manylinux_2_28_aarch64.whl",
             "dpvo_cuda-0.0.0+cu128torch2.11-cp312-cp312-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl",
             "flash_attn-2.8.3+cu124torch24-cp310-cp310-linux_x86_64.whl"}) {
      CAPTURE(name);
      auto w = WheelName::parse(name);
      REQUIRE(w.has_value());
      CHECK_FALSE(w->version.local().empty());
      CHECK(w->platforms.front().kind != Kind::unknown);
    }
  }
}

TEST_CASE("WheelName::parse reads PEP 825 variant labels", "[model][wheel][variants]") {
  struct Row {
    std::string name;
    std::optional<std::string> build, label;
    std::string platform;
  };
  // PEP 825's own examples, PyTorch's variant wheels, and the six-field ambiguity: a third field
  // starting with a digit is a build tag, anything else makes the last field a label.
  for (const Row& r : std::initializer_list<Row>{
           {"numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64.whl", std::nullopt, std::nullopt, "musllinux_1_2_x86_64"},
           {"numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl", std::nullopt, "x86_64_v3", "musllinux_1_2_x86_64"},
           {"numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-null.whl", std::nullopt, "null", "musllinux_1_2_x86_64"},
           {"torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl", std::nullopt, "cuda12.8", "manylinux_2_28_x86_64"},
           {"torch-2.9.0-1-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl", "1", "cuda13.0", "manylinux_2_28_x86_64"},
           {"torch-2.9.0-1a-cp312-cp312-manylinux_2_28_x86_64.whl", "1a", std::nullopt, "manylinux_2_28_x86_64"},
           {"foo-1.0-py3-none-any-abcdefghijklmnop.whl", std::nullopt, "abcdefghijklmnop", "any"},
       }) {
    CAPTURE(r.name);
    auto w = WheelName::parse(r.name);
    REQUIRE(w.has_value());
    CHECK(w->build == r.build);
    CHECK(w->variant_label == r.label);
    REQUIRE(w->platforms.size() == 1);
    CHECK(w->platforms.front().tag == r.platform);
  }
}

TEST_CASE("WheelName::parse rejects malformed names", "[model][wheel]") {
  wheelfit::test::check_rejects_quoting([](std::string_view name) { return WheelName::parse(name); }, {
      {"", "does not end in \".whl\""},
      {"foo-1.0-py3-none-any", "does not end in \".whl\""},
      {"foo-1.0-py3-none-any.zip", "does not end in \".whl\""},
      {"foo-1.0-py3-none-any.tar.gz", "does not end in \".whl\""},
      {"foo-1.0-py3-none-any.WHL", "does not end in \".whl\""},
      {".whl", "1 '-'-separated fields"},
      {"foo-1.0-py3-any.whl", "4 '-'-separated fields"},
      {"foo-1.0.whl", "2 '-'-separated fields"},
      {"foo-bar-1.0-1-py3-none-any.whl", "invalid version: 'bar'"},
      {"foo-1.0-1-2-py3-none-any-x.whl", "8 '-'-separated fields"},
      {"-1.0-py3-none-any.whl", "distribution name is empty"},
      {"_foo-1.0-py3-none-any.whl", "invalid distribution name '_foo'"},
      {"foo_-1.0-py3-none-any.whl", "invalid distribution name 'foo_'"},
      {"f o o-1.0-py3-none-any.whl", "invalid distribution name"},
      {"foo!-1.0-py3-none-any.whl", "invalid distribution name"},
      {"foo--py3-none-any.whl", "version is empty"},
      {"foo-one-py3-none-any.whl", "invalid version"},
      {"foo-1..0-py3-none-any.whl", "invalid version"},
      {"foo-1.0+-py3-none-any.whl", "invalid version"},
      {"foo-1.0+a..b-py3-none-any.whl", "invalid version"},
      {"foo-1234567890123456789-py3-none-any.whl", "more than 18 digits"},
      {"foo- 1.0-py3-none-any.whl", "whitespace"},
      {"foo-1.0--py3-none-any.whl", "build tag is empty"},
      {"foo-1.0-abc-py3-none-any-cu128.whl", "does not start with a digit"},
      {"foo-1.0-1-py3-none-any-.whl", "the variant label is empty"},
      {"foo-1.0-py3-none-any-CU128.whl", "the variant label 'CU128' holds characters other than 0-9, a-z"},
      {"foo-1.0-py3-none-any-cu12-8.whl", "the build tag 'py3' does not start with a digit"},
      {"foo-1.0-py3-none-any-abcdefghijklmnopq.whl", "longer than 16 characters"},
      {"foo-1.0-1-py3-none-any-x+y.whl", "the variant label 'x+y'"},
      {"foo-1.0-1 2-py3-none-any.whl", "build tag"},
      {"foo-1.0--none-any.whl", "python tag field is empty"},
      {"foo-1.0-py3--any.whl", "abi tag field is empty"},
      {"foo-1.0-py3-none-.whl", "platform tag field is empty"},
      {"foo-1.0-py2..py3-none-any.whl", "python tag set 'py2..py3' has an empty tag"},
      {"foo-1.0-py3-none-any..linux_x86_64.whl", "empty tag"},
      {"foo-1.0-py3.-none-any.whl", "empty tag"},
      {"foo-1.0-py3-none-any .whl", "platform tag 'any '"},
      {"foo-1.0-py3-no+ne-any.whl", "abi tag 'no+ne'"},
  });
}

TEST_CASE("parse_platform_tag understands PEP 600/656, Windows and macOS tags", "[model][wheel]") {
  struct Row {
    std::string tag, cpu;
    std::optional<std::string> libc;  ///< glibc, musl or macOS version
  };
  // Each tag parses to `kind` on `os`, with the row's CPU and libc.
  const auto check = [](Kind kind, std::optional<Os> os, std::initializer_list<Row> rows) {
    for (const Row& row : rows) {
      CAPTURE(row.tag);
      const PlatformTag t = parse_platform_tag(row.tag);
      CHECK(t.tag == row.tag);
      CHECK(t.kind == kind);
      CHECK(t.os == os);
      CHECK(t.cpu_arch == row.cpu);
      CHECK(t.libc.has_value() == row.libc.has_value());
      if (t.libc && row.libc) CHECK(t.libc->str() == *row.libc);
    }
  };
  check(Kind::any, std::nullopt, {{"any", "", std::nullopt}});
  check(Kind::manylinux, Os::linux_,
        {{"manylinux_2_28_x86_64", "x86_64", "2.28"},
         {"manylinux_2_17_aarch64", "aarch64", "2.17"},
         {"manylinux_2_31_armv7l", "armv7l", "2.31"},
         {"manylinux1_x86_64", "x86_64", "2.5"},
         {"manylinux1_i686", "i686", "2.5"},
         {"manylinux2010_x86_64", "x86_64", "2.12"},
         {"manylinux2010_i686", "i686", "2.12"},
         {"manylinux2014_x86_64", "x86_64", "2.17"},
         {"manylinux2014_aarch64", "aarch64", "2.17"},
         {"MANYLINUX_2_28_X86_64", "x86_64", "2.28"}});
  check(Kind::musllinux, Os::linux_, {{"musllinux_1_2_x86_64", "x86_64", "1.2"}, {"musllinux_1_1_aarch64", "aarch64", "1.1"}});
  check(Kind::linux_plain, Os::linux_, {{"linux_x86_64", "x86_64", std::nullopt}, {"linux_aarch64", "aarch64", std::nullopt}});
  check(Kind::windows, Os::windows,
        {{"win_amd64", "x86_64", std::nullopt}, {"win_arm64", "aarch64", std::nullopt}, {"win32", "i686", std::nullopt}});
  check(Kind::macos, Os::macos,
        {{"macosx_11_0_arm64", "aarch64", "11.0"},
         {"macosx_10_9_x86_64", "x86_64", "10.9"},
         {"macosx_10_9_universal2", "universal2", "10.9"}});
  // unknown shapes: kept, never compatible
  for (const char* tag : {"", "manylinux_2_x86_64", "manylinux_x_28_x86_64", "manylinux_2_28_", "manylinux_2_1234567890_x86_64",
                          "manylinux1_", "linux_", "win_", "macosx_11_arm64", "freebsd_13_x86_64", "android_21_arm64_v8a",
                          "anyx", "linux x86_64"}) {
    check(Kind::unknown, std::nullopt, {{tag, "", std::nullopt}});
  }
}

TEST_CASE("parse_python_tag reads the implementation and version", "[model][wheel]") {
  struct Row {
    std::string tag;
    std::string impl;
    std::optional<std::vector<std::uint32_t>> version;
  };
  const std::vector<Row> rows{
      {"cp312", "cp", std::vector<std::uint32_t>{3, 12}},
      {"cp310", "cp", std::vector<std::uint32_t>{3, 10}},
      {"cp31", "cp", std::vector<std::uint32_t>{3, 1}},  // 3.1, never 3.10
      {"cp38", "cp", std::vector<std::uint32_t>{3, 8}},
      {"py3", "py", std::vector<std::uint32_t>{3}},
      {"py312", "py", std::vector<std::uint32_t>{3, 12}},
      {"py2", "py", std::vector<std::uint32_t>{2}},
      {"pp310", "pp", std::vector<std::uint32_t>{3, 10}},
      {"CP312", "cp", std::vector<std::uint32_t>{3, 12}},
      {"cp313t", "cp", std::nullopt},  // free-threading is an ABI flag, not a python tag
      {"cp", "cp", std::nullopt},
      {"312", "", std::nullopt},
      {"", "", std::nullopt},
      {"cp3_12", "cp", std::nullopt},
      {"cp31234567890", "cp", std::nullopt},  // a minor of 10 digits
  };
  for (const auto& row : rows) {
    CAPTURE(row.tag);
    const auto t = parse_python_tag(row.tag);
    CHECK(t.tag == row.tag);
    CHECK(t.impl == row.impl);
    REQUIRE(t.version.has_value() == row.version.has_value());
    if (row.version) CHECK(t.version->parts() == *row.version);
  }
}

TEST_CASE("PythonTarget::tag", "[model][wheel]") {
  CHECK(py("3.12").tag() == "cp312");
  CHECK(py("3.10").tag() == "cp310");
  CHECK(py("3.13", true).tag() == "cp313t");
  CHECK(py("3.12.4").tag() == "cp312");
}

TEST_CASE("python_rank: which wheels load into which interpreter", "[model][wheel]") {
  struct Row {
    std::string tags;  // python-abi-platform
    std::string python;
    bool free_threaded;
    bool fits;
  };
  const std::vector<Row> rows{
      {"cp312-cp312-any", "3.12", false, true},
      {"cp312-cp312-any", "3.11", false, false},
      {"cp312-cp312-any", "3.13", false, false},
      // substring traps: cp31 is Python 3.1
      {"cp31-cp31-any", "3.10", false, false},
      {"cp31-none-any", "3.10", false, false},
      {"cp31-none-any", "3.1", false, true},
      {"cp31-cp31m-any", "3.1", false, true},
      {"cp310-cp310-any", "3.1", false, false},
      {"cp310-cp310-any", "3.10", false, true},
      {"cp310-cp310-any", "3.11", false, false},
      {"cp31-abi3-any", "3.10", false, false},  // cp31-abi3 is 3.1, and abi3 starts at 3.2
      // abi3
      {"cp38-abi3-any", "3.12", false, true},
      {"cp38-abi3-any", "3.8", false, true},
      {"cp38-abi3-any", "3.7", false, false},
      {"cp38-abi3-any", "3.13", true, false},  // free-threaded builds have no stable ABI
      {"cp32-abi3-any", "3.12", false, true},
      {"cp313-abi3-any", "3.13", true, false},
      // free-threaded
      {"cp313-cp313t-any", "3.13", true, true},
      {"cp313-cp313t-any", "3.13", false, false},
      {"cp313-cp313-any", "3.13", true, false},
      {"cp313-cp313-any", "3.13", false, true},
      {"cp313-none-any", "3.13", true, true},
      {"py3-none-any", "3.13", true, true},
      // pure python
      {"py3-none-any", "3.12", false, true},
      {"py3-none-any", "3.8", false, true},
      {"py2.py3-none-any", "3.12", false, true},
      {"py2-none-any", "3.12", false, false},
      {"py312-none-any", "3.12", false, true},
      {"py311-none-any", "3.12", false, true},
      {"py313-none-any", "3.12", false, false},
      {"py30-none-any", "3.12", false, true},
      {"py3-abi3-any", "3.12", false, false},
      {"cp312-none-any", "3.12", false, true},
      {"cp311-none-any", "3.12", false, false},
      // before 3.8 the CPython ABI carries the pymalloc 'm'
      {"cp37-cp37m-any", "3.7", false, true},
      {"cp37-cp37-any", "3.7", false, false},
      {"cp38-cp38m-any", "3.8", false, false},
      // other implementations never match
      {"pp310-pypy310_pp73-any", "3.10", false, false},
      {"pp310-none-any", "3.10", false, false},
      {"ip27-none-any", "2.7", false, false},
      // case-insensitive tags
      {"CP312-CP312-any", "3.12", false, true},
      {"cp312-ABI3-any", "3.12", false, true},
  };
  for (const auto& row : rows) {
    CAPTURE(row.tags, row.python, row.free_threaded);
    CHECK(python_rank(tagged(row.tags), py(row.python, row.free_threaded)).has_value() == row.fits);
  }
}

TEST_CASE("python_rank orders (python, abi) pairs as pip does", "[model][wheel]") {
  SECTION("CPython 3.12") {
    // Strictly better first.
    const std::vector<std::string> order{
        "cp312-cp312-any", "cp312-abi3-any", "cp312-none-any", "cp311-abi3-any", "cp38-abi3-any",
        "cp32-abi3-any",   "py312-none-any", "py3-none-any",   "py311-none-any", "py30-none-any",
    };
    const PythonTarget t = py("3.12");
    std::vector<int> ranks;
    for (const auto& tags : order) {
      CAPTURE(tags);
      const auto r = python_rank(tagged(tags), t);
      REQUIRE(r.has_value());
      ranks.push_back(*r);
    }
    CHECK(ranks.front() == 0);
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      CAPTURE(order[i - 1], order[i]);
      CHECK(ranks[i - 1] < ranks[i]);
    }
  }
  SECTION("free-threaded 3.13t: own ABI, then cp313-none, then pure python") {
    const PythonTarget t = py("3.13", true);
    const auto own = python_rank(tagged("cp313-cp313t-any"), t);
    const auto none = python_rank(tagged("cp313-none-any"), t);
    const auto pure = python_rank(tagged("py3-none-any"), t);
    REQUIRE(own.has_value());
    REQUIRE(none.has_value());
    REQUIRE(pure.has_value());
    CHECK(*own == 0);
    CHECK(*own < *none);
    CHECK(*none < *pure);
  }
  SECTION("a wheel offering several pairs gets the best one") {
    const PythonTarget t = py("3.12");
    const WheelName multi = tagged("cp312.py3-cp312.none-any");
    CHECK(python_rank(multi, t) == std::optional<int>(0));
    const WheelName abi3_or_pure = tagged("cp39.py3-abi3.none-any");
    CHECK(python_rank(abi3_or_pure, t) == python_rank(tagged("cp39-abi3-any"), t));
    // On 3.8 the cp39 half does not apply; the py3-none half does.
    CHECK(python_rank(abi3_or_pure, py("3.8")) == python_rank(tagged("py3-none-any"), py("3.8")));
  }
}

TEST_CASE("platform_fit says which platform demand fails", "[model][wheel]") {
  SECTION("manylinux floor above the machine's glibc fails glibc only") {
    const PlatformFit f = platform_fit(parse_platform_tag("manylinux_2_28_x86_64"), linux_x86("2.27"));
    CHECK(f.os_ok);
    CHECK(f.cpu_ok);
    CHECK_FALSE(f.glibc_ok);
    CHECK(f.glibc_checked);
    CHECK_FALSE(f.ok());
  }
  SECTION("manylinux floor at or below the machine's glibc fits") {
    CHECK(platform_fit(parse_platform_tag("manylinux_2_28_x86_64"), linux_x86("2.28")).ok());
    CHECK(platform_fit(parse_platform_tag("manylinux_2_28_x86_64"), linux_x86("2.35")).ok());
    CHECK(platform_fit(parse_platform_tag("manylinux1_x86_64"), linux_x86("2.5")).ok());
    CHECK_FALSE(platform_fit(parse_platform_tag("manylinux2014_x86_64"), linux_x86("2.12")).ok());
    CHECK(platform_fit(parse_platform_tag("manylinux_2_9_x86_64"), linux_x86("2.10")).ok());  // 2.9 < 2.10
  }
  SECTION("unknown glibc: the floor is not checked and does not fail") {
    const PlatformFit f = platform_fit(parse_platform_tag("manylinux_2_39_x86_64"), linux_x86(std::nullopt));
    CHECK(f.glibc_ok);
    CHECK_FALSE(f.glibc_checked);
    CHECK(f.ok());
  }
  SECTION("an x86_64 wheel on an aarch64 host fails cpu_arch only") {
    const PlatformFit f = platform_fit(parse_platform_tag("manylinux_2_28_x86_64"), linux_arm("2.39"));
    CHECK(f.os_ok);
    CHECK_FALSE(f.cpu_ok);
    CHECK(f.glibc_ok);
    CHECK(f.glibc_checked);
    CHECK(platform_fit(parse_platform_tag("manylinux_2_28_aarch64"), linux_arm("2.39")).ok());
  }
  SECTION("the target's CPU spelling is normalised") {
    PlatformTarget t = linux_x86();
    t.cpu_arch = "AMD64";
    CHECK(platform_fit(parse_platform_tag("manylinux_2_17_x86_64"), t).ok());
  }
  SECTION("a Windows wheel on Linux fails os, and cpu when it differs") {
    const PlatformFit same_cpu = platform_fit(parse_platform_tag("win_amd64"), linux_x86());
    check_demands(same_cpu, false, true, true);
    CHECK_FALSE(same_cpu.glibc_checked);
    check_demands(platform_fit(parse_platform_tag("win_amd64"), linux_arm()), false, false, true);
  }
  SECTION("Windows tags on Windows") {
    CHECK(platform_fit(parse_platform_tag("win_amd64"), windows_x86()).ok());
    CHECK_FALSE(platform_fit(parse_platform_tag("win32"), windows_x86()).cpu_ok);
    CHECK_FALSE(platform_fit(parse_platform_tag("win_arm64"), windows_x86()).cpu_ok);
    CHECK(platform_fit(parse_platform_tag("win_arm64"), PlatformTarget{Os::windows, "ARM64", std::nullopt}).ok());
    const PlatformFit linux_on_win = platform_fit(parse_platform_tag("manylinux_2_17_x86_64"), windows_x86());
    CHECK_FALSE(linux_on_win.os_ok);
    CHECK(linux_on_win.cpu_ok);
  }
  SECTION("linux_x86_64 fits, ranked below every manylinux tag") {
    const PlatformFit plain = platform_fit(parse_platform_tag("linux_x86_64"), linux_x86());
    CHECK(plain.ok());
    CHECK_FALSE(plain.glibc_checked);
    for (const std::string& tag : std::vector<std::string>{"manylinux1_x86_64", "manylinux2010_x86_64",
                                                           "manylinux2014_x86_64", "manylinux_2_28_x86_64",
                                                           "manylinux_2_35_x86_64"}) {
      CAPTURE(tag);
      const PlatformFit m = platform_fit(parse_platform_tag(tag), linux_x86("2.35"));
      CHECK(m.ok());
      CHECK(m.rank < plain.rank);
    }
  }
  SECTION("a higher manylinux floor ranks better; any ranks last") {
    const std::vector<std::string> better_first{"manylinux_2_35_x86_64", "manylinux_2_28_x86_64",
                                                "manylinux_2_27_x86_64", "manylinux2014_x86_64",
                                                "manylinux_2_9_x86_64",  "manylinux1_x86_64",
                                                "linux_x86_64",          "any"};
    for (std::size_t i = 1; i < better_first.size(); ++i) {
      CAPTURE(better_first[i - 1], better_first[i]);
      const PlatformFit a = platform_fit(parse_platform_tag(better_first[i - 1]), linux_x86("2.35"));
      const PlatformFit b = platform_fit(parse_platform_tag(better_first[i]), linux_x86("2.35"));
      CHECK(a.ok());
      CHECK(b.ok());
      CHECK(a.rank < b.rank);
    }
    CHECK(platform_fit(parse_platform_tag("manylinux2014_x86_64"), linux_x86()).rank ==
          platform_fit(parse_platform_tag("manylinux_2_17_x86_64"), linux_x86()).rank);
  }
  SECTION("musllinux never fits a glibc machine: the glibc demand fails") {
    const PlatformFit f = platform_fit(parse_platform_tag("musllinux_1_2_x86_64"), linux_x86("2.39"));
    check_demands(f, true, true, false);
    CHECK(f.glibc_checked);
    CHECK_FALSE(platform_fit(parse_platform_tag("musllinux_1_2_x86_64"), linux_x86(std::nullopt)).ok());
  }
  SECTION("any fits everywhere") {
    for (const PlatformTarget& t : {linux_x86(), linux_arm(), windows_x86(), linux_x86(std::nullopt)}) {
      const PlatformFit f = platform_fit(parse_platform_tag("any"), t);
      CHECK(f.ok());
      CHECK_FALSE(f.glibc_checked);
    }
  }
  SECTION("unknown tags never fit") {
    for (const std::string& tag : std::vector<std::string>{"freebsd_13_x86_64", "", "manylinux_2_x86_64"}) {
      CAPTURE(tag);
      CHECK_FALSE(platform_fit(parse_platform_tag(tag), linux_x86()).ok());
    }
  }
  SECTION("macOS: the arch, universal2 for both CPUs; the OS floor is not checked") {
    const PlatformTarget arm_mac{Os::macos, "arm64", std::nullopt};
    const PlatformTarget intel_mac{Os::macos, "x86_64", std::nullopt};
    const PlatformFit f = platform_fit(parse_platform_tag("macosx_11_0_arm64"), arm_mac);
    CHECK(f.ok());
    CHECK_FALSE(f.glibc_checked);
    CHECK_FALSE(platform_fit(parse_platform_tag("macosx_11_0_arm64"), intel_mac).cpu_ok);
    CHECK(platform_fit(parse_platform_tag("macosx_10_9_universal2"), arm_mac).ok());
    CHECK(platform_fit(parse_platform_tag("macosx_10_9_universal2"), intel_mac).ok());
    CHECK(platform_fit(parse_platform_tag("macosx_10_9_intel"), intel_mac).ok());
    CHECK_FALSE(platform_fit(parse_platform_tag("macosx_10_9_intel"), arm_mac).ok());
    CHECK_FALSE(platform_fit(parse_platform_tag("macosx_11_0_arm64"), linux_arm()).os_ok);
    // The native arch ranks before universal2 at the same floor; a higher floor ranks better.
    CHECK(platform_fit(parse_platform_tag("macosx_11_0_arm64"), arm_mac).rank <
          platform_fit(parse_platform_tag("macosx_11_0_universal2"), arm_mac).rank);
    CHECK(platform_fit(parse_platform_tag("macosx_14_0_arm64"), arm_mac).rank <
          platform_fit(parse_platform_tag("macosx_11_0_arm64"), arm_mac).rank);
  }
}

TEST_CASE("best_platform_fit picks the best tag, or the least-failing one", "[model][wheel]") {
  SECTION("a compressed manylinux set fits when any member does") {
    const WheelName w = wheel("cumm-0.8.2+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl");
    // glibc 2.27: only the 2_24 member fits.
    const PlatformFit on_227 = best_platform_fit(w, linux_x86("2.27"));
    CHECK(on_227.ok());
    CHECK(on_227.rank == platform_fit(parse_platform_tag("manylinux_2_24_x86_64"), linux_x86("2.27")).rank);
    // glibc 2.35: both fit, the higher floor wins.
    const PlatformFit on_235 = best_platform_fit(w, linux_x86("2.35"));
    CHECK(on_235.ok());
    CHECK(on_235.rank == platform_fit(parse_platform_tag("manylinux_2_28_x86_64"), linux_x86("2.35")).rank);
    // glibc 2.17: neither; the report says glibc.
    const PlatformFit on_217 = best_platform_fit(w, linux_x86("2.17"));
    CHECK_FALSE(on_217.ok());
    check_demands(on_217, true, true, false);
  }
  SECTION("a fitting tag wins over a better-ranked failing one") {
    const WheelName w = wheel("x-1.0-cp312-cp312-manylinux_2_39_x86_64.linux_x86_64.whl");
    const PlatformFit f = best_platform_fit(w, linux_x86("2.35"));
    CHECK(f.ok());
    CHECK(f.rank == platform_fit(parse_platform_tag("linux_x86_64"), linux_x86("2.35")).rank);
  }
  SECTION("a wheel that fits nowhere reports the tag failing the fewest demands") {
    // On aarch64 Linux with glibc 2.17: win_amd64 fails os+cpu, the manylinux tag cpu+glibc,
    // the aarch64 tag glibc only.
    const WheelName w =
        wheel("x-1.0-cp312-cp312-win_amd64.manylinux_2_28_x86_64.manylinux_2_28_aarch64.whl");
    const PlatformFit f = best_platform_fit(w, linux_arm("2.17"));
    CHECK_FALSE(f.ok());
    check_demands(f, true, true, false);
  }
  SECTION("a Windows wheel on Linux") {
    const PlatformFit f = best_platform_fit(wheel("cubvh-0.1.2+cu128torch2.8-cp312-cp312-win_amd64.whl"), linux_x86());
    CHECK_FALSE(f.ok());
    CHECK_FALSE(f.os_ok);
    CHECK(f.cpu_ok);
  }
  SECTION("pure wheels fit everywhere") {
    CHECK(best_platform_fit(wheel("six-1.16.0-py2.py3-none-any.whl"), linux_arm()).ok());
    CHECK(best_platform_fit(wheel("six-1.16.0-py2.py3-none-any.whl"), windows_x86()).ok());
  }
}

TEST_CASE("compare_build_tags: PEP 427's (int, rest) order", "[model][wheel][build]") {
  struct Row {
    std::optional<std::string> lower, higher;  ///< higher sorts after lower; equal when both are the same order
    bool equal = false;
  };
  auto row = GENERATE(values<Row>({
      {"1", "2"},
      {"1", "1a"},
      {"3", "10"},
      {"9a", "10"},
      {"1_b", "1a"},  // the rest compares as a string: '_' < 'a'
      {"1a", "1b"},
      {std::nullopt, "0"},  // no build tag sorts as an empty tuple, before any
      {"99999999999999999999", "100000000000000000000"},  // digits compare as numbers of any length
      {"01", "1", true},
      {"7x", "007x", true},
      {"2", "2", true},
      {std::nullopt, std::nullopt, true},
  }));
  const std::string lower = row.lower.value_or("(none)"), higher = row.higher.value_or("(none)");
  CAPTURE(lower, higher);
  if (row.equal) {
    CHECK(compare_build_tags(row.lower, row.higher) == std::strong_ordering::equal);
  } else {
    CHECK(compare_build_tags(row.lower, row.higher) == std::strong_ordering::less);
    CHECK(compare_build_tags(row.higher, row.lower) == std::strong_ordering::greater);
  }
}
