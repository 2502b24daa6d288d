// The registry without plugin files: entries, descriptor checks, detection calls, index choice,
// and the plugin authors' helpers (plugin_support.hpp), in-process.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <stdexcept>
#include <string>

#include "wheelfit/registry/plugin_support.hpp"
#include "wheelfit/registry/registry.hpp"

using namespace wheelfit;
using registry::BackendInfo;
using registry::Registry;

namespace {

BackendInfo info(std::string name, std::string origin = "test") {
  BackendInfo b;
  b.name = std::move(name);
  b.index_url = "https://example.test/wheels/";
  b.index_env = "WHEELFIT_TEST_INDEX";
  b.origin = std::move(origin);
  return b;
}

}  // namespace

TEST_CASE("Registry::add registers, finds and lists backends in name order", "[registry]") {
  Registry reg;
  REQUIRE(reg.add(info("zeta")));
  REQUIRE(reg.add(info("alpha")));
  CHECK(reg.names() == std::vector<std::string>{"alpha", "zeta"});
  REQUIRE(reg.find("alpha") != nullptr);
  CHECK(reg.find("alpha")->index_url == "https://example.test/wheels/");
  CHECK(reg.find("beta") == nullptr);
  const auto all = reg.backends();
  REQUIRE(all.size() == 2);
  CHECK(all[0]->name == "alpha");
  CHECK(all[1]->name == "zeta");

  SECTION("a second backend of the same name is refused, naming both origins; the first stays") {
    auto r = reg.add(info("alpha", "second.so"));
    REQUIRE_FALSE(r);
    CHECK(r.error().is(Errc::invalid_input));
    CHECK_THAT(r.error().message, Catch::Contains("second.so") && Catch::Contains("test"));
    CHECK(reg.find("alpha")->origin == "test");
  }
  SECTION("names outside [a-z0-9_-] are refused") {
    for (const char* bad : {"", "CUDA", "cu da", "cuda/x", "é"}) {
      CAPTURE(bad);
      auto r = reg.add(info(bad));
      REQUIRE_FALSE(r);
      CHECK(r.error().is(Errc::invalid_input));
    }
    CHECK(reg.add(info(std::string(64, 'a'))));
    CHECK_FALSE(reg.add(info(std::string(65, 'a'))));
  }
  SECTION("a moved registry keeps its backends") {
    Registry other = std::move(reg);
    CHECK(other.names() == std::vector<std::string>{"alpha", "zeta"});
  }
}

TEST_CASE("Registry::detect: unknown backend, no detection", "[registry]") {
  Registry reg;
  REQUIRE(reg.add(info("plain")));
  auto unknown = reg.detect("nope");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().is(Errc::not_found));
  auto none = reg.detect("plain");
  REQUIRE_FALSE(none);
  CHECK(none.error().is(Errc::unsupported));
  CHECK(none.error().message == "backend plain has no detection");
  CHECK_FALSE(reg.find("plain")->has_detection);
}

namespace {
const char* detect_ok() { return "{}"; }
}  // namespace

TEST_CASE("read_descriptor checks the version first, then size, fields and name", "[registry]") {
  struct Row {
    const char* what;
    void (*edit)(wheelfit_backend_v1&);
    Errc code;
    const char* message;
  };
  auto row = GENERATE(values<Row>({
      {"another ABI version (and nothing else read)",
       [](wheelfit_backend_v1& d) {
         d.abi_version = 7;
         d.size = 0;
         d.name = nullptr;
       },
       Errc::unsupported, "x.so: built for wheelfit backend ABI 7; this wheelfit reads ABI 1"},
      {"a smaller size", [](wheelfit_backend_v1& d) { d.size = 12; }, Errc::invalid_input,
       "x.so: descriptor size 12 is smaller than wheelfit_backend_v1"},
      {"a NULL name", [](wheelfit_backend_v1& d) { d.name = nullptr; }, Errc::invalid_input,
       "x.so: descriptor field 'name' is NULL"},
      {"a NULL policy", [](wheelfit_backend_v1& d) { d.policy_json = nullptr; }, Errc::invalid_input,
       "x.so: descriptor field 'policy_json' is NULL"},
      {"an empty name", [](wheelfit_backend_v1& d) { d.name = ""; }, Errc::invalid_input, "x.so: the backend name is empty"},
      {"an upper-case name", [](wheelfit_backend_v1& d) { d.name = "Cuda"; }, Errc::invalid_input,
       "x.so: backend name 'Cuda' is not"},
  }));
  CAPTURE(row.what);
  auto d = plugin::descriptor_v1("ok");
  row.edit(d);
  auto r = registry::read_descriptor(&d, "x.so");
  REQUIRE_FALSE(r);
  CHECK(r.error().is(row.code));
  CHECK_THAT(r.error().message, Catch::StartsWith(row.message));
}

TEST_CASE("read_descriptor copies every field of a good descriptor", "[registry]") {
  auto d = plugin::descriptor_v1("good-1_x");
  d.size = sizeof(wheelfit_backend_v1) + 16;  // a later minor revision appended fields: fine
  d.description = "desc";
  d.index_url = "https://example.test/i/";
  d.index_env = "ENV";
  d.releases_repo = "o/r";
  d.torch_label = "gd";
  d.torch_index_pattern = "https://example.test/t/{cuda_nodot}";
  d.policy_json = "{}";
  d.detect = &detect_ok;
  auto r = registry::read_descriptor(&d, "/p/good.so");
  REQUIRE(r);
  CHECK(r->name == "good-1_x");
  CHECK(r->description == "desc");
  CHECK(r->index_url == "https://example.test/i/");
  CHECK(r->index_env == "ENV");
  CHECK(r->releases_repo == "o/r");
  CHECK(r->torch_label == "gd");
  CHECK(r->torch_index_pattern == "https://example.test/t/{cuda_nodot}");
  CHECK(r->policy_json == "{}");
  CHECK(r->origin == "/p/good.so");
  CHECK(r->has_detection);
  CHECK_FALSE(registry::read_descriptor(nullptr, "n.so"));
}

TEST_CASE("choose_index: --index, then the backend's env var, then its default", "[registry]") {
  auto b = info("fake");
  struct Row {
    std::optional<std::string> cli, env;
    std::string url, origin;
  };
  auto row = GENERATE(values<Row>({
      {std::nullopt, std::nullopt, "https://example.test/wheels/", "default for fake"},
      {std::nullopt, std::string("/mirror"), "/mirror/", "env WHEELFIT_TEST_INDEX"},
      {std::nullopt, std::string("  "), "https://example.test/wheels/", "default for fake"},
      {std::string("/cli/"), std::string("/mirror"), "/cli/", "--index"},
  }));
  auto r = registry::choose_index(b, row.cli, row.env);
  REQUIRE(r);
  CHECK(r->url == row.url);
  CHECK(r->origin == row.origin);

  SECTION("no index published and none given") {
    b.index_url.clear();
    auto none = registry::choose_index(b, std::nullopt, std::nullopt);
    REQUIRE_FALSE(none);
    CHECK(none.error().is(Errc::unsupported));
    CHECK_THAT(none.error().message, Catch::Contains("WHEELFIT_TEST_INDEX"));
  }
  SECTION("an empty --index is a usage error") {
    auto empty = registry::choose_index(b, std::string(""), std::nullopt);
    REQUIRE_FALSE(empty);
    CHECK(empty.error().is(Errc::usage));
  }
}

TEST_CASE("SkipReason names", "[registry]") {
  CHECK(registry::to_string(registry::SkipReason::abi_mismatch) == "abi_mismatch");
  CHECK(registry::to_string(registry::SkipReason::not_plugin_name) == "not_plugin_name");
  CHECK(registry::to_string(registry::SkipReason::duplicate_name) == "duplicate_name");
}

// ---- plugin_support.hpp ----

namespace {
std::string fine() { return R"({"present": true})"; }
std::string throws_std() { throw std::runtime_error("bad \"probe\"\n\ttab \x01"); }
std::string throws_int() { throw 42; }
}  // namespace

TEST_CASE("plugin_support: detect_entry keeps every exception inside the plugin", "[registry][plugins]") {
  CHECK(std::string(plugin::detect_entry<&fine>()) == R"({"present": true})");

  const auto std_error = boost::json::parse(plugin::detect_entry<&throws_std>()).as_object();
  CHECK(std_error.at("present") == false);
  CHECK(std_error.at("error").as_string() == "detection failed: bad \"probe\"\n\ttab \x01");

  const auto other = boost::json::parse(plugin::detect_entry<&throws_int>()).as_object();
  CHECK(other.at("present") == false);
  CHECK_THAT(std::string(other.at("error").as_string()), Catch::Contains("not a std::exception"));

  // The text stays valid until the next call of the same detect.
  const char* first = plugin::detect_entry<&fine>();
  CHECK(std::string(first) == R"({"present": true})");
}

TEST_CASE("plugin_support: json_escape and descriptor_v1", "[registry][plugins]") {
  CHECK(plugin::json_escape("a\"b\\c\nd\x1f") == "a\\\"b\\\\c\\nd\\u001f");
  CHECK(plugin::json_escape("gfx90a · ü") == "gfx90a · ü");
  constexpr auto d = plugin::descriptor_v1("x");
  static_assert(d.abi_version == WHEELFIT_BACKEND_ABI_VERSION);
  static_assert(d.size == sizeof(wheelfit_backend_v1));
  CHECK(std::string(d.index_url).empty());
  CHECK(d.detect == nullptr);
  auto r = registry::read_descriptor(&d, "x.so");
  REQUIRE(r);
  CHECK_FALSE(r->has_detection);
}
