// packages.json as a mirror writes it: relative wheel urls, and the farm's other fields kept.
#include <catch2/catch.hpp>

#include "wheelfit/index/links.hpp"

using namespace wheelfit;

TEST_CASE("packages.json: a relative url resolves against packages.json's own URL", "[index][packages_json]") {
  struct Row {
    std::string url, source, expected;
  };
  const std::vector<Row> rows = {
      {"files/a-1.0-py3-none-any.whl", "http://m.example/simple/packages.json", "http://m.example/simple/files/a-1.0-py3-none-any.whl"},
      {"../files/a.whl", "http://m.example/simple/packages.json", "http://m.example/files/a.whl"},
      {"/files/a.whl", "https://m.example/simple/packages.json", "https://m.example/files/a.whl"},
      {"https://github.com/o/r/releases/download/t/a%2Bb.whl", "http://m.example/packages.json",
       "https://github.com/o/r/releases/download/t/a%2Bb.whl"},
  };
  for (const auto& r : rows) {
    INFO(r.url);
    const std::string body = R"({"schema": 1, "repo": "o/r", "packages": {"a": {"wheels": [{"filename": "a.whl", "url": ")" + r.url +
                             R"("}]}}})";
    auto pj = index::parse_packages_json(body, r.source);
    REQUIRE(pj);
    CHECK(pj->packages.at("a").wheels.at(0).url == r.expected);
  }
}

TEST_CASE("packages.json: the farm's other string fields are kept in order", "[index][packages_json]") {
  const std::string body = R"({"schema": 1, "packages": {"cumm": {"torch_free": true, "wheels": [
      {"filename": "cumm-0.8.2+cu128torch2.11-cp312-cp312-linux_x86_64.whl", "version": "0.8.2", "cuda": "12.8",
       "torch": "2.11", "python": "312", "abi": "cp", "platform": "linux", "size": 12, "url": "https://h/x.whl",
       "sha256": null}]}}})";
  auto pj = index::parse_packages_json(body, "https://h/packages.json");
  REQUIRE(pj);
  const auto& w = pj->packages.at("cumm").wheels.at(0);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"version", "0.8.2"}, {"cuda", "12.8"}, {"torch", "2.11"}, {"python", "312"}, {"abi", "cp"}, {"platform", "linux"}};
  CHECK(w.fields == expected);  // "size" is not a string: not kept
  CHECK_FALSE(w.sha256);
}
