// What wheelfit writes, read back (issue 35): output::requirements_txt, pylock_toml and
// pixi_manifest from known wheels, then parse_lock, keep each wheel's name, version, file name,
// URL or path, sha256 and size.
#include <catch2/catch.hpp>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/locks/read.hpp"
#include "wheelfit/output/locks.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;
using output::LockedWheel;

namespace {

std::vector<LockedWheel> sample() {
  return {
      {"flash-attn", "2.8.3+cu128torch2.8", "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
       "https://tok:en@h/files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl", false, 10, std::string(64, 'a')},
      {"cumm", "0.8.2", "cumm-0.8.2-cp312-cp312-linux_x86_64.whl", "../../files/cumm-0.8.2-cp312-cp312-linux_x86_64.whl", true,
       std::uint64_t{1} << 40, std::string(64, 'b')},
      {"spconv", "2.3.8", "spconv-2.3.8-cp312-cp312-linux_x86_64.whl", "https://h/files/spconv-2.3.8-cp312-cp312-linux_x86_64.whl",
       false, std::nullopt, std::string(64, 'c')},
      // No digest: neither writer locks it, and the reader sees a comment.
      {"unhashed", "1.0", "unhashed-1.0-py3-none-any.whl", "https://h/files/unhashed-1.0-py3-none-any.whl", false, 5, std::nullopt},
  };
}

}  // namespace

TEST_CASE("requirements_txt read back: by URL and by index", "[locks][round-trip]") {
  const auto wheels = sample();
  for (const bool by_index : {false, true}) {
    CAPTURE(by_index);
    const auto text = output::requirements_txt({wheels[0], wheels[2], wheels[3]}, by_index, {"made for h100"});
    REQUIRE(text);
    auto lock = locks::parse_lock(*text, "requirements.txt");
    REQUIRE(lock);
    CHECK(lock->format == locks::Format::requirements);
    CHECK(lock->warnings.empty());
    REQUIRE(lock->entries.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      const auto& w = wheels[i * 2];
      const auto& e = lock->entries[i];
      CHECK(e.name == w.name);
      CHECK(e.version == w.version);
      CHECK(e.sha256 == w.sha256);
      CHECK(e.line == i + 2);
      CHECK(e.filename == (by_index ? "" : w.filename));
      CHECK(e.url == (by_index ? "" : w.location));
    }
  }
}

TEST_CASE("pylock_toml read back: URL and relative path, size, sha256", "[locks][round-trip]") {
  const auto wheels = sample();
  const auto text = output::pylock_toml(wheels, std::string(">=3.12"), {"for h100"});
  REQUIRE(text);
  auto lock = locks::parse_lock(*text, "views/h100/pylock.toml");
  REQUIRE(lock);
  CHECK(lock->format == locks::Format::pylock);
  CHECK(lock->path == "views/h100/pylock.toml");
  CHECK(lock->warnings.empty());
  REQUIRE(lock->entries.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& w = wheels[i];
    const auto& e = lock->entries[i];
    CAPTURE(w.filename);
    CHECK(e.name == w.name);
    CHECK(e.version == w.version);
    CHECK(e.filename == w.filename);
    CHECK(e.url == (w.relative ? "" : w.location));
    CHECK(e.path == (w.relative ? w.location : ""));
    CHECK(e.sha256 == w.sha256);
    CHECK(e.size == w.size);
    CHECK(e.line > 0);
  }
  CHECK(lock->entries[0].line < lock->entries[1].line);
}

TEST_CASE("pylock_toml read back: a variant wheel (PEP 825) and its inlined metadata", "[locks][round-trip]") {
  LockedWheel w{.name = "x", .version = "1.0", .filename = "x-1.0-cp312-cp312-linux_x86_64-cu128.whl",
                .location = "https://h/files/x-1.0-cp312-cp312-linux_x86_64-cu128.whl", .sha256 = std::string(64, 'd')};
  w.variant_label = "cu128";
  w.variants_json = R"({"$schema": "https://variants.wheelnext.dev/v0.0.3.json", "default-priorities": {"namespace": ["nvidia"]},
                       "variants": {"cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}}, "cu126": {}}})";
  const auto text = output::pylock_toml({w}, std::nullopt, {});
  REQUIRE(text);
  auto lock = locks::parse_lock(*text, "pylock.toml");
  REQUIRE(lock);
  REQUIRE(lock->entries.size() == 1);
  CHECK(lock->entries[0].filename == w.filename);
  CHECK(lock->entries[0].version == "1.0");
  CHECK(lock->entries[0].sha256 == w.sha256);
  CHECK(lock->warnings.empty());
}

TEST_CASE("pixi_manifest read back: the picks by URL with their digest, or by version from an index", "[locks][round-trip]") {
  const std::string x86 = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  const std::string sha(64, 'e');
  auto ws = test::workspace({"flash-attn"}, "3.12");
  const auto m = test::h100();
  const auto snap = test::snapshot({{"flash-attn", {{"flash_attn-2.8.3+cu128torch2.8-" + x86, "", sha}}}});
  auto r = resolve::resolve({ws, m, test::cuda_policy(), snap, "cuda"});
  REQUIRE(r);
  REQUIRE(r->ok());
  const output::ReportContext ctx{.machine = m, .workspace = ws, .index_url = snap.base_url, .index_origin = "--index",
                                  .policy_source = "built-in"};
  SECTION("by URL") {
    auto text = output::pixi_manifest(*r, ctx);
    REQUIRE(text);
    auto lock = locks::parse_lock(*text, "pixi.toml");
    REQUIRE(lock);
    CHECK(lock->format == locks::Format::pixi);
    REQUIRE(lock->entries.size() == 1);
    const auto& e = lock->entries[0];
    const auto& pick = r->picks.at(0);
    CHECK(e.name == "flash-attn");
    CHECK(e.version == "2.8.3+cu128torch2.8");
    CHECK(e.filename == pick.filename);
    CHECK(e.url == pick.url + "#sha256=" + sha);
    CHECK(e.sha256 == sha);
    // The torch family's pins ("==2.8.*") pin no one wheel.
    CHECK_FALSE(lock->warnings.empty());
    for (const auto& w : lock->warnings) CHECK(test::contains(w, "pins no one version"));
  }
  SECTION("by version, from a mirror's index") {
    auto text = output::pixi_manifest(*r, ctx, {.index = "https://mirror.test/views/h100/simple/", .torch_from_index = true});
    REQUIRE(text);
    auto lock = locks::parse_lock(*text, "pixi.toml");
    REQUIRE(lock);
    REQUIRE(lock->entries.size() == 1);
    CHECK(lock->entries[0].version == "2.8.3+cu128torch2.8");
    CHECK(lock->entries[0].filename.empty());
    CHECK(lock->entries[0].index == "https://mirror.test/views/h100/simple/");
    CHECK(lock->index == "https://mirror.test/views/h100/simple/");
  }
}
