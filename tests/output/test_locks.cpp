// requirements.txt and pylock.toml from picked wheels (output/locks.hpp): pinned by digest, an
// unhashed wheel left out and named, PEP 751's keys; a variant wheel's metadata inlined as PEP 825
// requires (issue 32, item 8c).
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <toml++/toml.h>

#include <functional>

#include "support/test_support.hpp"
#include "wheelfit/output/locks.hpp"
#include "wheelfit/util/safe_text.hpp"

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
  const std::string by_index = *wheelfit::output::requirements_txt(wheels, true, {"made for h100"});
  CHECK(by_index == "# made for h100\n"
                    "flash-attn==2.8.3+cu128torch2.8 --hash=sha256:" + std::string(64, 'a') + "\n"
                    "# not locked: cumm-0.8.2-cp312-cp312-linux_x86_64.whl (its index publishes no sha256; install it "
                    "yourself, knowingly)\n");
  const std::string direct = *wheelfit::output::requirements_txt(wheels, false, {});
  CHECK(direct.starts_with("flash-attn @ https://h/files/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl --hash=sha256:"));
  CHECK(wheelfit::output::requirements_txt({}, true, {})->empty());
}

TEST_CASE("pylock_toml is PEP 751: lock-version, created-by, packages with hashed wheels", "[output][locks]") {
  auto wheels = locks_sample();
  wheels[1].sha256 = std::string(64, 'b');
  const std::string text = *wheelfit::output::pylock_toml(wheels, std::string("==3.12.*"), {"for h100"});
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
  const std::string text = *wheelfit::output::pylock_toml(locks_sample(), std::nullopt, {});
  CHECK(text.find("# not locked: cumm-0.8.2") != std::string::npos);
  const auto doc = toml::parse(text);
  CHECK(doc["packages"].as_array()->size() == 1);
  CHECK_FALSE(doc.contains("requires-python"));
}

// Issue 31: a value its reader would take as more than one token, line or value is refused, and
// nothing is written (decision 0021).
TEST_CASE("requirements_txt refuses a value pip would read as more than one token", "[output][locks][hostile]") {
  struct Row {
    const char* what;
    bool by_index;
    std::function<void(LockedWheel&)> change;
    std::vector<std::string> parts;
  };
  const std::string evil = "evil @ http://127.0.0.1/evil-1.0-py3-none-any.whl --hash=sha256:" + std::string(64, 'e');
  const std::vector<Row> rows = {
      {"LF in the URL", false, [&](LockedWheel& w) { w.location = "https://h/a.whl\n" + evil; },
       {"requirements.txt: the URL of 'flash_attn-", "'https://h/a.whl\\x0aevil @ ", "holds a control character (0x0a at byte 15)"}},
      {"form feed in the URL", false, [&](LockedWheel& w) { w.location = "https://h/a.whl\f" + evil; }, {"(0x0c at byte 15)"}},
      {"U+2028 in the URL", false, [&](LockedWheel& w) { w.location = "https://h/a.whl\xe2\x80\xa8" + evil; },
       {"not ASCII and not percent-encoded (0xe2 at byte 15)"}},
      {"NEL in the URL", false, [](LockedWheel& w) { w.location = "https://h/a.whl\xc2\x85x"; }, {"(0xc2 at byte 15)"}},
      {"a second digest", false, [](LockedWheel& w) { w.location = "https://h/a.whl --hash=sha256:" + std::string(64, 'f'); },
       {"holds whitespace (0x20 at byte 15)"}},
      {"${NAME} in the URL", false, [](LockedWheel& w) { w.location = "https://h/${AWS_SECRET_ACCESS_KEY}/a.whl"; },
       {"holds '${', which pip expands from the installer's environment"}},
      {"bytes that are not UTF-8", false, [](LockedWheel& w) { w.location = "https://h/a\xff.whl"; }, {"'https://h/a?.whl'", "0xff"}},
      {"a space in the version", true, [](LockedWheel& w) { w.version = "1.0 --hash=sha256:x"; }, {"the version of", "holds whitespace"}},
      {"${ in the version", true, [](LockedWheel& w) { w.version = "1.0${X}"; }, {"the version of", "'${'"}},
      {"an empty name", true, [](LockedWheel& w) { w.name.clear(); }, {"the name of", "is empty"}},
      {"a digest with a space", false, [](LockedWheel& w) { *w.sha256 = "a b"; }, {"the sha256 of", "holds whitespace"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    auto wheels = locks_sample();
    row.change(wheels[0]);
    const auto text = wheelfit::output::requirements_txt(wheels, row.by_index, {"made for h100"});
    REQUIRE_FALSE(text);
    CHECK(text.error().is(wheelfit::Errc::invalid_input));
    for (const auto& part : row.parts) CHECK_THAT(text.error().message, Catch::Contains(part));
    CHECK_THAT(text.error().message, Catch::Contains("the file is not written"));
    CHECK(wheelfit::util::one_line_problem(text.error().message).empty());
  }
}

TEST_CASE("requirements_txt and pylock_toml refuse a comment that is not one line", "[output][locks][hostile]") {
  const std::vector<std::string> comments = {"a\nflash-attn @ http://evil/x.whl", "a\rb", "a\fb", "a\vb", "a\x1c" "b", "a\xc2\x85" "b",
                                             "a\xe2\x80\xa8" "b", "a\xe2\x80\xa9" "b", "a\x1b[2Jb", "a\xff"};
  for (const auto& c : comments) {
    CAPTURE(c);
    for (const auto& text : {wheelfit::output::requirements_txt(locks_sample(), true, {"fine", c}),
                             wheelfit::output::pylock_toml(locks_sample(), std::nullopt, {"fine", c})}) {
      REQUIRE_FALSE(text);
      CHECK_THAT(text.error().message, Catch::Contains(": a comment 'a"));
    }
  }
  SECTION("an unlocked wheel's file name goes into a comment too") {
    auto wheels = locks_sample();
    wheels[1].filename = "cumm-0.8.2\xe2\x80\xa8" "evil @ http://h/e.whl --hash=sha256:e.whl";
    for (const auto& text : {wheelfit::output::requirements_txt(wheels, true, {}), wheelfit::output::pylock_toml(wheels, std::nullopt, {})}) {
      REQUIRE_FALSE(text);
      CHECK_THAT(text.error().message, Catch::Contains("holds a line break (U+2028 at byte 22)"));
    }
  }
}

TEST_CASE("pylock_toml refuses a value that is not UTF-8, and writes any other escaped", "[output][locks][hostile]") {
  auto wheels = locks_sample();
  wheels[1].sha256 = std::string(64, 'b');
  SECTION("not UTF-8: refused (toml++ would write another character)") {
    for (auto* field : {&wheels[0].location, &wheels[0].filename, &wheels[0].version, &wheels[1].name}) {
      auto copy = wheels;
      *field += "\xff";
      const auto text = wheelfit::output::pylock_toml(wheels, std::nullopt, {});
      REQUIRE_FALSE(text);
      CHECK_THAT(text.error().message, Catch::StartsWith("pylock.toml: the ") && Catch::Contains("is not UTF-8"));
      wheels = copy;
    }
  }
  SECTION("a URL with a line break is one TOML string, read back as written") {
    wheels[0].location = "https://h/a.whl\n[[packages]]\nname = \"evil\"\xe2\x80\xa8";
    const auto text = wheelfit::output::pylock_toml(wheels, std::nullopt, {});
    REQUIRE(text);
    const auto doc = toml::parse(*text);
    REQUIRE(doc["packages"].as_array()->size() == 2);
    CHECK(doc["packages"][0]["wheels"][0]["url"].value<std::string>() == wheels[0].location);
  }
}

namespace {

// A TOML node read back as the JSON value it was converted from.
boost::json::value lk_json_of(const toml::node& n) {
  if (const auto* t = n.as_table()) {
    boost::json::object o;
    for (const auto& [k, v] : *t) o[std::string(k.str())] = lk_json_of(v);
    return o;
  }
  if (const auto* a = n.as_array()) {
    boost::json::array out;
    for (const auto& v : *a) out.push_back(lk_json_of(v));
    return out;
  }
  if (const auto* s = n.as_string()) return boost::json::string(s->get());
  if (const auto* b = n.as_boolean()) return b->get();
  if (const auto* i = n.as_integer()) return i->get();
  if (const auto* f = n.as_floating_point()) return f->get();
  FAIL("a TOML type a variants file cannot give");
  return nullptr;
}

LockedWheel lk_variant_wheel(const std::string& label, const std::string& variants_json) {
  LockedWheel w{"foo", "1.2.3", "foo-1.2.3-cp312-cp312-linux_x86_64-" + label + ".whl",
                "https://h/foo-1.2.3-cp312-cp312-linux_x86_64-" + label + ".whl", false, 10, std::string(64, 'a')};
  w.variant_label = label;
  w.variants_json = variants_json;
  return w;
}

}  // namespace

TEST_CASE("pylock_toml inlines a variant wheel's variant metadata, $schema kept, its own label only", "[output][locks][variants]") {
  struct Row {
    const char* what;
    std::string file;  // tests/data/variants
    std::string label;
  };
  const Row rows[] = {
      {"PEP 825's example (0.1.1)", "foo-1.2.3-variants.json", "x86_64_v3_openblas"},
      {"the null variant", "foo-1.2.3-variants.json", "null"},
      {"PyTorch's 0.0.3 file: providers, booleans, static-properties and priorities kept", "torch-2.9.0-variants.json", "cuda12.8"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const std::string body = wheelfit::test::read_file(wheelfit::test::source_dir() / "tests/data/variants" / row.file);
    const auto text = wheelfit::output::pylock_toml({lk_variant_wheel(row.label, body)}, std::nullopt, {});
    INFO((text ? *text : text.error().message));
    REQUIRE(text);
    const auto doc = toml::parse(*text);
    const auto* inlined = doc["packages"][0]["variants-json"].as_table();
    REQUIRE(inlined != nullptr);
    // What was written reads back as the file, its variants cut to the wheel's label.
    auto expected = boost::json::parse(body);
    auto& variants = expected.as_object()["variants"].as_object();
    expected.as_object()["variants"] = boost::json::object{{row.label, variants.at(row.label)}};
    CHECK(lk_json_of(*inlined) == expected);
    CHECK((*inlined)["$schema"].value<std::string>() == std::string(expected.at("$schema").as_string()));
    // Not the pointer of PEP 817's form.
    CHECK_FALSE(inlined->contains("url"));
    CHECK_FALSE(inlined->contains("path"));
    CHECK_FALSE(inlined->contains("hashes"));
    // The label's entry is an inline table, as in PEP 825's example.
    CHECK(text->find("[packages.variants-json.variants." ) == std::string::npos);
  }
  SECTION("a wheel without variant metadata has no table") {
    auto plain = lk_variant_wheel("null", "{}");
    plain.variant_label.reset();
    plain.variants_json.reset();
    const auto doc = toml::parse(*wheelfit::output::pylock_toml({plain}, std::nullopt, {}));
    CHECK_FALSE(doc["packages"][0].as_table()->contains("variants-json"));
  }
}

TEST_CASE("pylock_toml refuses variant metadata it cannot inline, naming the wheel and the JSON path", "[output][locks][variants][hostile]") {
  const std::string head = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json", )";
  struct Row {
    const char* what;
    std::string json;
    std::vector<std::string> parts;
  };
  const Row rows[] = {
      {"a null", head + R"("default-priorities": {"namespace": null}, "variants": {"v": {}}})",
       {"holds a null, which TOML has no form for (at $.default-priorities.namespace)"}},
      {"a null in an array", head + R"("x": [1, null], "variants": {"v": {}}})", {"(at $.x[1])"}},
      {"an integer beyond 64 bits", head + R"("x": 18446744073709551615, "variants": {"v": {}}})",
       {"holds an integer beyond TOML's 64 bits (at $.x)"}},
      {"no entry for the label", head + R"("variants": {"w": {}}})", {"lists no variant 'v' (at $.variants)"}},
      {"no variants at all", head + "\"x\": 1}", {"lists no variant 'v'"}},
      {"not JSON", "{\"$schema\": ", {"is not a JSON object (at $)"}},
      {"not an object", "[1, 2]", {"is not a JSON object (at $)"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto text = wheelfit::output::pylock_toml({lk_variant_wheel("v", row.json)}, std::nullopt, {});
    REQUIRE_FALSE(text);
    CHECK(text.error().is(wheelfit::Errc::invalid_input));
    CHECK_THAT(text.error().message, Catch::StartsWith("pylock.toml: the variant metadata of 'foo-1.2.3-cp312-cp312-linux_x86_64-v.whl' "));
    for (const auto& part : row.parts) CHECK_THAT(text.error().message, Catch::Contains(part));
    CHECK_THAT(text.error().message, Catch::EndsWith("so the file is not written"));
  }
}
