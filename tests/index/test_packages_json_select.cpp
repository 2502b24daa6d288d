// packages.json read for the requested projects only (parse_packages_json(body, source, only),
// decision 0020): it fails where the whole read fails (syntax anywhere, truncation, depth, the
// top level, a record's key or kind) with the same message, reads the requested records as the
// whole read does, and leaves the inside of the others unchecked. Compared with the whole read on
// generated documents, on a generated farm and on the real cuda-wheels snapshot ([fixtures]).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/links.hpp"

using namespace wheelfit;
using index::PackagesJson;
using index::parse_packages_json;

namespace {

constexpr std::string_view kSource = "https://h.example/packages.json";
const std::string kShaA(64, 'a');

/// The whole read (`whole`, or read here), with its packages restricted to `only` (PEP 503 names).
Expected<PackagesJson> whole_restricted(std::string_view body, const std::vector<std::string>& only,
                                        const Expected<PackagesJson>* whole = nullptr) {
  auto pj = whole ? *whole : parse_packages_json(body, kSource);
  if (!pj) return pj;
  std::erase_if(pj->packages, [&](const auto& kv) { return std::find(only.begin(), only.end(), kv.first) == only.end(); });
  pj->build_lookup();
  return pj;
}

/// Both reads agree: the same error message, or the same repo, records, wheels and digests.
void check_same(const Expected<PackagesJson>& selective, const Expected<PackagesJson>& whole) {
  REQUIRE(selective.has_value() == whole.has_value());
  if (!whole) {
    CHECK(selective.error().message == whole.error().message);
    CHECK(selective.error().code == whole.error().code);
    return;
  }
  CHECK(selective->repo == whole->repo);
  REQUIRE(selective->packages.size() == whole->packages.size());
  for (const auto& [name, entry] : whole->packages) {
    CAPTURE(name);
    REQUIRE(selective->packages.count(name) == 1);
    const auto& got = selective->packages.at(name);
    CHECK(got.torch_free == entry.torch_free);
    REQUIRE(got.wheels.size() == entry.wheels.size());
    for (std::size_t i = 0; i < entry.wheels.size(); ++i) {
      CHECK(got.wheels[i].filename == entry.wheels[i].filename);
      CHECK(got.wheels[i].url == entry.wheels[i].url);
      CHECK(got.wheels[i].sha256 == entry.wheels[i].sha256);
      CHECK(got.wheels[i].fields == entry.wheels[i].fields);
      CHECK(selective->sha256_for(entry.wheels[i].url, entry.wheels[i].filename) ==
            whole->sha256_for(entry.wheels[i].url, entry.wheels[i].filename));
    }
  }
}

void check_agree(std::string_view body, const std::vector<std::string>& only, const Expected<PackagesJson>* whole = nullptr) {
  check_same(parse_packages_json(body, kSource, only), whole_restricted(body, only, whole));
}

std::string doc(const std::string& packages, const std::string& head = R"("schema": 1, "repo": "o/r", )") {
  return "{" + head + R"("packages": {)" + packages + "}}";
}
std::string record(const std::string& name, const std::string& wheels = "", bool torch_free = false) {
  return "\"" + name + R"(": {"torch_free": )" + (torch_free ? "true" : "false") + R"(, "wheels": [)" + wheels + "]}";
}
std::string wheel(const std::string& file, const std::string& sha = kShaA, const std::string& extra = "") {
  return R"({"filename": ")" + file + R"(", "url": "https://h.example/)" + file + R"(", "sha256": ")" + sha + "\"" +
         extra + "}";
}

const std::string kCumm = record("cumm", wheel("cumm-1.0-cp312-cp312-linux_x86_64.whl") + ", " +
                                             wheel("cumm-1.1-cp312-cp312-linux_x86_64.whl", std::string(64, 'B')),
                                 true);
const std::string kOther = record("other", wheel("other-1.0-py3-none-any.whl"));

/// A random document of `n` records: keys with escapes and non-ASCII, wheels with extra members
/// of every kind (nested too) and members the reader does not know, in random order.
std::string random_document(std::mt19937& rng, std::size_t n, std::vector<std::string>& names) {
  auto pick = [&](std::size_t k) { return static_cast<std::size_t>(rng() % k); };
  const std::vector<std::string> extras = {R"("size": 12)", R"("torch": "2.8")", R"("cuda": null)",
                                           R"("meta": {"a": [1, 2.5e3, {"b": [[], {}]}], "c": "\u00e9\"x"})",
                                           R"("python": "312")", R"("yanked": false)", R"("n": -7)",
                                           R"("big": 18446744073709551615)"};
  std::string packages;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = "pkg" + std::to_string(i) + (i % 3 == 0 ? "_x" : i % 3 == 1 ? "-y\\u00e9" : ".z");
    names.push_back(name);
    std::string wheels;
    for (std::size_t w = pick(4); w > 0; --w) {
      std::string extra;
      for (std::size_t e = pick(3); e > 0; --e) extra += ", " + extras[pick(extras.size())];
      const std::string sha = pick(4) == 0 ? std::string(64, "0123456789abcdefABCDEF"[pick(22)]) : kShaA;
      if (!wheels.empty()) wheels += ", ";
      wheels += wheel("w" + std::to_string(i) + "-" + std::to_string(w) + "-py3-none-any.whl", sha, extra);
    }
    if (!packages.empty()) packages += ", ";
    packages += record(name, wheels, pick(2) == 0);
  }
  const std::string head = pick(2) == 0 ? R"("repo": "o/r", "schema": 1, "junk": [1, {"packages": {"x": 1}}], )"
                                         : R"("schema": 1, "extra": {"k": [null]}, )";
  return doc(packages, head);
}

}  // namespace

TEST_CASE("packages.json for some projects fails where the whole read fails, with its message", "[index][packages-json-select]") {
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  struct Row {
    std::string what, body;
  };
  const std::vector<Row> rows = {
      {"empty", ""},
      {"truncated inside an unrequested record", doc(kOther + ", " + kCumm).substr(0, 60)},
      {"truncated after the last record", doc(kOther + ", " + kCumm).substr(0, doc(kOther + ", " + kCumm).size() - 1)},
      {"a trailing comma in an unrequested record", doc(R"("other": {"wheels": [1,]}, )" + kCumm)},
      {"invalid UTF-8 in an unrequested string", doc("\"other\": {\"wheels\": [\"\xff\"]}, " + kCumm)},
      {"a bad escape in an unrequested key", doc(R"("o\q": {"wheels": []}, )" + kCumm)},
      {"nesting past the depth limit in an unrequested record", doc(R"("other": {"wheels": )" + deep + "}, " + kCumm)},
      {"nesting past the depth limit in an unknown member", "{\"schema\": 1, \"x\": " + deep + ", \"packages\": {}}"},
      {"data after the document", doc(kCumm) + " x"},
      {"the top level an array", "[" + doc(kCumm) + "]"},
      {"no schema", doc(kCumm, "")},
      {"schema 2", doc(kCumm, R"("schema": 2, )")},
      {"schema a string", doc(kCumm, R"("schema": "1", )")},
      {"repo a number", doc(kCumm, R"("schema": 1, "repo": 5, )")},
      {"no packages", R"({"schema": 1})"},
      {"packages an array", R"({"schema": 1, "packages": [)" + kCumm.substr(7) + "]}"},
      {"an unrequested record an array", doc(R"("other": [], )" + kCumm)},
      {"an unrequested record a string", doc(R"("other": "x", )" + kCumm)},
      {"an unrequested record with an empty name", doc(R"("": {"wheels": []}, )" + kCumm)},
      {"two unrequested keys of one project", doc(R"("Foo_Bar": {"wheels": []}, "foo-bar": {"wheels": []}, )" + kCumm)},
      {"a requested record's torch_free a string", doc(R"("cumm": {"torch_free": "yes", "wheels": []})")},
      {"a requested record's wheels missing", doc(R"("cumm": {"torch_free": true})")},
      {"a requested wheel's sha256 short", doc(record("cumm", wheel("c-1.whl", "abc")))},
      {"a requested wheel's url a number", doc(R"("cumm": {"wheels": [{"filename": "c", "url": 2.8}]})")},
      {"a requested wheel not an object", doc(R"("cumm": {"wheels": [7]})")},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what, row.body);
    const auto selective = parse_packages_json(row.body, kSource, {"cumm"});
    REQUIRE_FALSE(selective);
    CHECK_THAT(selective.error().message, Catch::StartsWith(std::string(kSource) + ": "));
    check_same(selective, whole_restricted(row.body, {"cumm"}));
  }
}

TEST_CASE("packages.json for some projects: every truncation of a document fails as the whole read does",
          "[index][packages-json-select]") {
  const std::string body = doc(kOther + ", " + kCumm + R"(, "e\u00e9": {"wheels": [], "n": [1.5e300, -2, true, null]})");
  REQUIRE(parse_packages_json(body, kSource, {"cumm"}));
  for (std::size_t n = 0; n < body.size(); ++n) {
    CAPTURE(n);
    check_same(parse_packages_json(body.substr(0, n), kSource, {"cumm"}), whole_restricted(body.substr(0, n), {"cumm"}));
  }
}

TEST_CASE("packages.json for some projects: repeated keys read as the whole read reads them", "[index][packages-json-select]") {
  const std::vector<std::string> bodies = {
      doc(kCumm + ", " + record("cumm", wheel("cumm-2.0-py3-none-any.whl"))),  // the last one holds
      doc(kOther + ", " + kCumm + ", " + kOther),
      R"({"schema": 2, "schema": 1, "packages": {)" + kCumm + "}}",
      R"({"schema": 1, "packages": [], "packages": {)" + kCumm + "}}",
      R"({"schema": 1, "packages": {)" + kCumm + R"(}, "packages": {}})",
      R"({"schema": 1, "repo": 1, "repo": "a", "packages": {)" + kCumm + "}}",
      doc(R"("cumm": {"wheels": [], "wheels": [)" + wheel("c-1.whl") + "]}"),
  };
  for (const auto& body : bodies) {
    CAPTURE(body);
    check_agree(body, {"cumm"});
    check_agree(body, {"other"});
  }
}

TEST_CASE("packages.json for some projects: an unrequested record's inside is not checked (decision 0020)",
          "[index][packages-json-select]") {
  const std::vector<std::string> records = {
      R"("other": {"torch_free": "yes", "wheels": []})",
      R"("other": {"torch_free": true})",
      R"("other": {"wheels": {}})",
      R"("other": {"wheels": [7]})",
      R"("other": {"wheels": [{"filename": 1, "url": "u"}]})",
      R"("other": {"wheels": [{"filename": "o-1.whl"}]})",
      record("other", wheel("o-1.whl", "xyz")),
  };
  for (const auto& r : records) {
    const std::string body = doc(r + ", " + kCumm);
    CAPTURE(body);
    REQUIRE_FALSE(parse_packages_json(body, kSource));  // the whole read refuses it
    const auto pj = parse_packages_json(body, kSource, {"cumm"});
    REQUIRE(pj);
    CHECK(pj->packages.size() == 1);
    CHECK(pj->packages.at("cumm").wheels.size() == 2);
    CHECK(pj->sha256_for("", "cumm-1.1-cp312-cp312-linux_x86_64.whl") == std::string(64, 'b'));
    // Asked for, the same record is refused with the whole read's words.
    check_same(parse_packages_json(body, kSource, {"cumm", "other"}), parse_packages_json(body, kSource));
  }
}

TEST_CASE("packages.json for some projects: names are PEP 503 normalised, unknown ones ignored", "[index][packages-json-select]") {
  const std::string body = doc(record("Foo_Bar.baz", wheel("f-1.whl")) + ", " + kCumm + ", " + kOther);
  const auto pj = parse_packages_json(body, kSource, {"foo-bar-baz", "CUMM", "missing"});
  REQUIRE(pj);
  CHECK(pj->repo == "o/r");
  REQUIRE(pj->packages.size() == 2);
  CHECK(pj->packages.count("foo-bar-baz") == 1);
  CHECK(pj->packages.at("cumm").torch_free);
  CHECK_FALSE(pj->sha256_for("", "other-1.0-py3-none-any.whl"));  // not asked for: not read
  const auto none = parse_packages_json(body, kSource, {});
  REQUIRE(none);
  CHECK(none->packages.empty());
  CHECK(none->repo == "o/r");
}

TEST_CASE("packages.json for some projects agrees with the whole read on generated documents", "[index][packages-json-select]") {
  std::mt19937 rng(23);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> names;
    const std::string body = random_document(rng, 1 + rng() % 12, names);
    CAPTURE(round, body);
    REQUIRE(parse_packages_json(body, kSource));
    std::vector<std::string> only;
    for (const auto& n : names) {
      if (rng() % 2 == 0) continue;
      auto normal = parse_packages_json(doc(record(n)), kSource);  // the key's PEP 503 name, as the reader spells it
      REQUIRE(normal);
      only.push_back(normal->packages.begin()->first);
    }
    check_agree(body, only);
  }
}

TEST_CASE("packages.json for some projects agrees with the whole read on a generated farm", "[index][packages-json-select]") {
  test::TempDir tmp;
  farmgen::FarmOptions opts;
  opts.out = tmp / "farm";
  REQUIRE(farmgen::generate_farm(opts, test::cuda_policy()));
  const std::string body = test::read_file(opts.out / "packages.json");
  auto whole = parse_packages_json(body, kSource);
  REQUIRE(whole);
  std::vector<std::string> all;
  for (const auto& [name, entry] : whole->packages) all.push_back(name);
  REQUIRE(all.size() >= 40);
  check_agree(body, all, &whole);
  check_agree(body, {all.front(), all[all.size() / 2], all.back()}, &whole);
  for (const auto& name : all) check_agree(body, {name}, &whole);
}

TEST_CASE("packages.json for some projects agrees with the whole read on the cuda-wheels snapshot",
          "[index][packages-json-select][fixtures]") {
  const std::string body = test::read_file(test::farm_index_dir() / "packages.json");
  auto whole = parse_packages_json(body, kSource);
  REQUIRE(whole);
  std::vector<std::string> all;
  for (const auto& [name, entry] : whole->packages) all.push_back(name);
  REQUIRE(all.size() == 38);
  check_agree(body, all, &whole);
  for (const auto& name : all) check_agree(body, {name}, &whole);
  std::mt19937 rng(4);
  for (int round = 0; round < 10; ++round) {
    std::vector<std::string> some;
    std::sample(all.begin(), all.end(), std::back_inserter(some), 1 + rng() % all.size(), rng);
    check_agree(body, some, &whole);
  }
}
