// PEP 440 versions: parsing, normalisation, rejection and ordering (checked against the
// `packaging` library's behaviour).

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/model/version.hpp"

using wheelfit::Errc;
using wheelfit::model::Version;

namespace {

constexpr auto v = &wheelfit::test::parse_ok<Version>;

/// Each version sorts strictly before the next.
void check_chain(std::initializer_list<std::string_view> chain) {
  for (auto it = chain.begin(); it + 1 != chain.end(); ++it) {
    CAPTURE(*it, *(it + 1));
    CHECK(v(*it) < v(*(it + 1)));
  }
}

}  // namespace

TEST_CASE("Version::parse normalises PEP 440 spellings", "[model][version]") {
  struct Row {
    std::string input;
    std::string normalised;
  };
  const std::vector<Row> rows{
      {"1.0", "1.0"},
      {"1", "1"},
      {"1.2.3.4.5", "1.2.3.4.5"},
      {"v1.0", "1.0"},
      {"V1.0", "1.0"},
      {"  1.0\t\n", "1.0"},
      {"\r\n v2.1 \f", "2.1"},
      {"01.02.0003", "1.2.3"},
      {"0000000000000000000001", "1"},
      {"999999999999999999", "999999999999999999"},
      // epochs
      {"1!2.0", "1!2.0"},
      {"0!2.0", "2.0"},
      {"v1!2.0", "1!2.0"},
      // pre-releases and their alternate spellings
      {"1.0a1", "1.0a1"},
      {"1.0alpha1", "1.0a1"},
      {"1.0ALPHA1", "1.0a1"},
      {"1.0.a1", "1.0a1"},
      {"1.0-a1", "1.0a1"},
      {"1.0_a_1", "1.0a1"},
      {"1.0a-1", "1.0a1"},
      {"1.0a", "1.0a0"},
      {"1.0a-", "1.0a0"},
      {"1.0b2", "1.0b2"},
      {"1.0beta2", "1.0b2"},
      {"1.0B2", "1.0b2"},
      {"1.0c1", "1.0rc1"},
      {"1.0rc1", "1.0rc1"},
      {"1.0RC1", "1.0rc1"},
      {"1.0rc-1", "1.0rc1"},
      {"1.0pre1", "1.0rc1"},
      {"1.0preview1", "1.0rc1"},
      {"1.0-preview.2", "1.0rc2"},
      // post-releases, implicit and spelled
      {"1.0-1", "1.0.post1"},
      {"1.0post", "1.0.post0"},
      {"1.0.post1", "1.0.post1"},
      {"1.0-post-4", "1.0.post4"},
      {"1.0.post.1", "1.0.post1"},
      {"1.0.post-", "1.0.post0"},
      {"1.0rev2", "1.0.post2"},
      {"1.0.rev", "1.0.post0"},
      {"1.0r3", "1.0.post3"},
      {"1.0-r", "1.0.post0"},
      {"1.0POST1", "1.0.post1"},
      {"1.0a1-1", "1.0a1.post1"},
      // dev releases
      {"1.0.dev", "1.0.dev0"},
      {"1.0dev1", "1.0.dev1"},
      {"1.0-dev1", "1.0.dev1"},
      {"1.0_DEV_2", "1.0.dev2"},
      {"1.0dev-", "1.0.dev0"},
      {"1.dev0", "1.dev0"},
      // everything at once
      {"1.0a.post.dev", "1.0a0.post0.dev0"},
      {"1!2.0rc1.post2.dev3+abc.4", "1!2.0rc1.post2.dev3+abc.4"},
      {"1!2.0-RC-1_POST_2-DEV-3+ABC-4", "1!2.0rc1.post2.dev3+abc.4"},
      // local labels: lower case, '-' and '_' become '.', numeric segments lose leading zeros
      {"1.0+AbC-1_2", "1.0+abc.1.2"},
      {"1.0+a-b_c.d", "1.0+a.b.c.d"},
      {"1.0+01", "1.0+1"},
      {"1.0+01.0abc", "1.0+1.0abc"},
      {"0.2+cu128torch2.8", "0.2+cu128torch2.8"},
      {"0.2+CU128Torch2.10", "0.2+cu128torch2.10"},
      {"1.0+123456789012345678901234567890", "1.0+123456789012345678901234567890"},
  };
  for (const auto& [input, normalised] : rows) {
    CAPTURE(input);
    auto parsed = Version::parse(input);
    REQUIRE(parsed.has_value());
    CHECK(parsed->str() == normalised);
    // The normal form parses back to itself.
    auto again = Version::parse(parsed->str());
    REQUIRE(again.has_value());
    CHECK(again->str() == normalised);
    CHECK(*again == *parsed);
  }
}

TEST_CASE("Version::parse fills every component", "[model][version]") {
  SECTION("a full version") {
    const Version x = v("3!1.02.3rc4.post5.dev6+Ubuntu-7");
    CHECK(x.epoch() == 3);
    CHECK(x.release() == std::vector<std::uint64_t>{1, 2, 3});
    REQUIRE(x.pre().has_value());
    CHECK(x.pre()->kind == Version::PreKind::rc);
    CHECK(x.pre()->number == 4);
    CHECK(x.post() == std::optional<std::uint64_t>(5));
    CHECK(x.dev() == std::optional<std::uint64_t>(6));
    CHECK(x.local() == "ubuntu.7");
  }
  SECTION("a final release has no optional parts") {
    const Version x = v("2.8.0");
    CHECK(x.epoch() == 0);
    CHECK(x.release() == std::vector<std::uint64_t>{2, 8, 0});
    CHECK_FALSE(x.pre().has_value());
    CHECK_FALSE(x.post().has_value());
    CHECK_FALSE(x.dev().has_value());
    CHECK(x.local().empty());
  }
  SECTION("pre-release kinds") {
    CHECK(v("1a1").pre()->kind == Version::PreKind::a);
    CHECK(v("1alpha1").pre()->kind == Version::PreKind::a);
    CHECK(v("1b1").pre()->kind == Version::PreKind::b);
    CHECK(v("1beta1").pre()->kind == Version::PreKind::b);
    CHECK(v("1c1").pre()->kind == Version::PreKind::rc);
    CHECK(v("1pre1").pre()->kind == Version::PreKind::rc);
    CHECK(v("1preview1").pre()->kind == Version::PreKind::rc);
    CHECK(v("1rc1").pre()->kind == Version::PreKind::rc);
  }
  SECTION("'r' is a post-release, 'rc' a pre-release") {
    CHECK(v("1.0r1").post() == std::optional<std::uint64_t>(1));
    CHECK_FALSE(v("1.0r1").pre().has_value());
    CHECK(v("1.0rc1").pre().has_value());
    CHECK_FALSE(v("1.0rc1").post().has_value());
  }
  SECTION("the largest accepted number") {
    CHECK(v("999999999999999999").release().front() == 999999999999999999ULL);
    CHECK(v("1.0.post999999999999999999").post() == std::optional<std::uint64_t>(999999999999999999ULL));
  }
}

TEST_CASE("Version::parse rejects malformed versions", "[model][version]") {
  // Each message quotes the input and says what was wrong.
  wheelfit::test::check_rejects_quoting([](std::string_view text) { return Version::parse(text); }, {
      {"", "empty"},
      {"   ", "whitespace"},
      {"abc", "release number"},
      {"v", "release number"},
      {"vv1.0", "release number"},
      {".1", "release number"},
      {"-1", "release number"},
      {"+1", "release number"},
      {"a1", "release number"},
      {"1..2", "unexpected '.'"},
      {"1.0.", "unexpected '.'"},
      {"1.0-", "unexpected '-'"},
      {"1.0-1-1", "unexpected '-'"},
      {"1.0.-1", "unexpected '.'"},
      {"1.0--1", "unexpected '-'"},
      {"1.0abc", "unexpected 'b'"},
      {"1.0.0.0.x", "unexpected '.'"},
      {"1.0 a1", "unexpected ' '"},
      {"1 .0", "unexpected ' '"},
      {"1,0", "unexpected ','"},
      {"1.0\n1", "unexpected"},
      {"1!", "after the epoch"},
      {"1!v2", "after the epoch"},
      {"!1", "release number"},
      {"1!2!3", "unexpected '!'"},
      {"1.0+", "local label after '+' is empty"},
      {"1.0+a..b", "empty segment"},
      {"1.0+.a", "empty segment"},
      {"1.0+a.", "ends with a separator"},
      {"1.0+a-", "ends with a separator"},
      {"1.0+a b", "' '"},
      {"1.0+a/b", "'/'"},
      {"1.0+local+x", "'+'"},
      {"1.0+ü", "letters, digits"},
      {"1234567890123456789", "more than 18 digits"},
      {"1.1234567890123456789", "more than 18 digits"},
      {"1234567890123456789!1.0", "more than 18 digits"},
      {"1.0a1234567890123456789", "more than 18 digits"},
      {"1.0.post1234567890123456789", "more than 18 digits"},
      {"1.0-1234567890123456789", "more than 18 digits"},
      {"1.0.dev1234567890123456789", "more than 18 digits"},
      {"18446744073709551616", "more than 18 digits"},  // 2^64: would wrap to 0
  });
}

TEST_CASE("Version ordering follows PEP 440", "[model][version]") {
  SECTION("the PEP 440 summary list, extended, is strictly increasing") {
    // Each entry sorts strictly after the one before it (packaging agrees on every pair).
    const std::vector<std::string> sorted{
        "0.9",
        "1.dev0",
        "1.0.dev456",
        "1.0a1.dev0",
        "1.0a1",
        "1.0a1.post1.dev1",
        "1.0a1.post1",
        "1.0a2.dev456",
        "1.0a12.dev456",
        "1.0a12",
        "1.0b1.dev456",
        "1.0b2",
        "1.0b2.post345.dev456",
        "1.0b2.post345",
        "1.0rc1.dev456",
        "1.0rc1",
        "1.0",
        "1.0+abc.5",
        "1.0+abc.7",
        "1.0+abc.7.a",
        "1.0+abc.7.1",
        "1.0+5",
        "1.0+10",
        "1.0.post1.dev0",
        "1.0.post456.dev34",
        "1.0.post456",
        "1.0.15",
        "1.1.dev1",
        "1.1",
        "1.9",
        "1.10",
        "1.10.1",
        "2.0a1",
        "2.0",
        "999999999999999998",
        "999999999999999999",
        "1!0.1.dev0",
        "1!0.1",
        "2!0.0.1",
    };
    std::vector<Version> vs;
    for (const auto& s : sorted) vs.push_back(v(s));
    for (std::size_t i = 0; i < vs.size(); ++i) {
      for (std::size_t j = 0; j < vs.size(); ++j) {
        CAPTURE(sorted[i], sorted[j]);
        if (i < j) CHECK(vs[i] < vs[j]);
        if (i == j) CHECK(vs[i] == vs[j]);
        if (i > j) CHECK(vs[i] > vs[j]);
      }
    }
    SECTION("and sorting a shuffled copy restores it") {
      std::vector<Version> shuffled = vs;
      std::mt19937 rng(42);
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      std::sort(shuffled.begin(), shuffled.end());
      for (std::size_t i = 0; i < vs.size(); ++i) {
        CAPTURE(sorted[i]);
        CHECK(shuffled[i].str() == vs[i].str());
      }
    }
  }

  SECTION("the header's chain: dev < pre-dev < pre < final < final+local < post") {
    check_chain({"1.0.dev0", "1.0a1.dev0", "1.0a1", "1.0", "1.0+local", "1.0.post1"});
  }

  SECTION("a dev-only release sorts before every pre-release of the same release") {
    CHECK(v("1.0.dev999") < v("1.0a0"));
    CHECK(v("1.0.dev999") < v("1.0a0.dev0"));
    CHECK(v("1.0.dev1") > v("0.9.post9"));
  }

  SECTION("post-releases: post-dev sits between the final release and the post-release") {
    check_chain({"1.0rc1.post1", "1.0", "1.0.post0.dev0", "1.0.post0"});
    check_chain({"1.0.post1", "1.0.post2", "1.0.1"});
  }

  SECTION("pre-release kinds order a < b < rc, whatever the spelling") {
    CHECK(v("1.0alpha9") < v("1.0b1"));
    CHECK(v("1.0beta9") < v("1.0c1"));
    CHECK(v("1.0c1") == v("1.0rc1"));
    CHECK(v("1.0pre1") == v("1.0preview1"));
    CHECK(v("1.0a2") < v("1.0a10"));
  }

  SECTION("numeric comparison of release components, trailing zeros ignored") {
    CHECK(v("1.9") < v("1.10"));
    CHECK(v("1.10") > v("1.9.9"));
    CHECK(v("2.10") > v("2.9"));
    CHECK(v("1.0") == v("1.0.0"));
    CHECK(v("1.0") == v("1.0.0.0"));
    CHECK(v("1") == v("1.0"));
    CHECK(v("1.00") == v("1.0"));
    CHECK(v("1.0.0.1") > v("1.0"));
    CHECK(v("1.0.1") > v("1.0.0.9"));
  }

  SECTION("epochs dominate everything") {
    CHECK(v("1!0.1") > v("2.0"));
    CHECK(v("1!0.1") > v("9999.0.post9"));
    CHECK(v("0!2.0") == v("2.0"));
  }

  SECTION("local labels") {
    CHECK(v("1.0") < v("1.0+0"));                     // no label sorts first
    CHECK(v("1.0+abc") < v("1.0+1"));                 // numeric segment > alphanumeric
    CHECK(v("1.0+z") < v("1.0+0"));
    CHECK(v("1.0+2") < v("1.0+10"));                  // integers, not strings
    CHECK(v("1.0+a10") < v("1.0+a9"));                // alphanumeric: lexicographic
    CHECK(v("1.0+abc") < v("1.0+abc.1"));             // a prefix sorts first
    CHECK(v("1.0+abc") < v("1.0+abc.a"));
    CHECK(v("1.0+01") == v("1.0+1"));
    CHECK(v("1.0+ABC") == v("1.0+abc"));
    CHECK(v("1.0+a-b") == v("1.0+a_b"));
    CHECK(v("1.0+a.b") == v("1.0+a-b"));
    CHECK(v("1.0+99999999999999999999") < v("1.0+100000000000000000000"));  // longer than uint64
    CHECK(v("0.2+cu128torch2.8") < v("0.2+cu128torch2.10"));
    CHECK(v("0.2+cu128torch2.8") != v("0.2+cu128torch2.80"));
    CHECK(v("1.0+local") < v("1.0.post0"));           // post compares before local
    CHECK(v("1.0+local") < v("1.0.0.1"));
  }

  SECTION("operator== agrees with <=> and str() need not be equal") {
    const Version a = v("1.0");
    const Version b = v("1.0.0");
    CHECK(a == b);
    CHECK((a <=> b) == std::strong_ordering::equal);
    CHECK(a.str() != b.str());
  }
}

TEST_CASE("Version helpers: is_prerelease and public_version", "[model][version]") {
  SECTION("is_prerelease is true for pre and dev releases only") {
    struct Row {
      std::string input;
      bool pre;
    };
    const std::vector<Row> rows{
        {"1.0", false},       {"1.0.post1", false}, {"1.0+cu128", false}, {"1.0a1", true},
        {"1.0rc1", true},     {"1.0.dev0", true},   {"1.0.post1.dev1", true}, {"1.0c1+local", true},
    };
    for (const auto& row : rows) {
      CAPTURE(row.input);
      CHECK(v(row.input).is_prerelease() == row.pre);
    }
  }
  SECTION("public_version drops the local label and nothing else") {
    const Version x = v("1!2.0rc1.post2.dev3+cu128torch2.8");
    const Version p = x.public_version();
    CHECK(p.str() == "1!2.0rc1.post2.dev3");
    CHECK(p.local().empty());
    CHECK(x.local() == "cu128torch2.8");
    CHECK(p < x);
    CHECK(p == v("1!2.0rc1.post2.dev3"));
  }
}
