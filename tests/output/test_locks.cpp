// requirements.txt and pylock.toml from picked wheels (output/locks.hpp): pinned by digest, an
// unhashed wheel left out and named, PEP 751's keys.
#include <catch2/catch.hpp>

#include <toml++/toml.h>

#include "wheelfit/output/locks.hpp"

using wheelfit::output::LockedWheel;

namespace {

std::vector<LockedWheel> locks_sample() {
  LockedWheel a{"flash-attn", "2.8.3+cu128torch2.8", "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
                "https://h/files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl", false, 10, std::string(64, 'a')};
  LockedWheel b{"cumm", "0.8.2", "cumm-0.8.2-cp312-cp312-linux_x86_64.whl", "../../files/cumm-0.8.2-cp312-cp312-linux_x86_64.whl",
                true, std::nullopt, std::nullopt};
  return {a, b};
}

}  // namespace

TEST_CASE("requirements_txt pins each wheel by digest, by index or by URL", "[output][locks]") {
  const auto wheels = locks_sample();
  const std::string by_index = wheelfit::output::requirements_txt(wheels, true, {"made for h100"});
  CHECK(by_index == "# made for h100\n"
                    "flash-attn==2.8.3+cu128torch2.8 --hash=sha256:" + std::string(64, 'a') + "\n"
                    "# not locked: cumm-0.8.2-cp312-cp312-linux_x86_64.whl (its index publishes no sha256; install it "
                    "yourself, knowingly)\n");
  const std::string direct = wheelfit::output::requirements_txt(wheels, false, {});
  CHECK(direct.starts_with("flash-attn @ https://h/files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl --hash=sha256:"));
  CHECK(wheelfit::output::requirements_txt({}, true, {}).empty());
}

TEST_CASE("pylock_toml is PEP 751: lock-version, created-by, packages with hashed wheels", "[output][locks]") {
  auto wheels = locks_sample();
  wheels[1].sha256 = std::string(64, 'b');
  const std::string text = wheelfit::output::pylock_toml(wheels, std::string("==3.12.*"), {"for h100"});
  CHECK(text.starts_with("# for h100\n"));
  const auto doc = toml::parse(text);
  CHECK(doc["lock-version"].value<std::string>() == "1.0");
  CHECK(doc["created-by"].value<std::string>() == "wheelfit");
  CHECK(doc["requires-python"].value<std::string>() == "==3.12.*");
  const auto* packages = doc["packages"].as_array();
  REQUIRE(packages);
  REQUIRE(packages->size() == 2);
  const auto& first = *packages->get(0)->as_table();
  CHECK(first["name"].value<std::string>() == "flash-attn");
  CHECK(first["version"].value<std::string>() == "2.8.3+cu128torch2.8");
  const auto& wheel = *first["wheels"].as_array()->get(0)->as_table();
  CHECK(wheel["url"].value<std::string>() == wheels[0].location);
  CHECK_FALSE(wheel.contains("path"));
  CHECK(wheel["size"].value<std::int64_t>() == 10);
  CHECK(wheel["hashes"]["sha256"].value<std::string>() == std::string(64, 'a'));
  const auto& second = *(*packages->get(1)->as_table())["wheels"].as_array()->get(0)->as_table();
  CHECK(second["path"].value<std::string>() == "../../files/cumm-0.8.2-cp312-cp312-linux_x86_64.whl");
  CHECK_FALSE(second.contains("size"));
}

TEST_CASE("pylock_toml leaves out a wheel without a digest and says so", "[output][locks]") {
  const std::string text = wheelfit::output::pylock_toml(locks_sample(), std::nullopt, {});
  CHECK(text.find("# not locked: cumm-0.8.2") != std::string::npos);
  const auto doc = toml::parse(text);
  CHECK(doc["packages"].as_array()->size() == 1);
  CHECK_FALSE(doc.contains("requires-python"));
}
