// The registry without plugin files: entries, descriptor checks, detection calls, index choice,
// the policy a backend judges with (make_policy), and the plugin authors' helpers
// (plugin_support.hpp), in-process.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "plugins/test_plugin.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
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

TEST_CASE("read_descriptor checks the version first, then size, fields, name, policy and functions", "[registry]") {
  struct Row {
    const char* what;
    void (*edit)(wheelfit_backend_v2&);
    Errc code;
    const char* message;
  };
  auto row = GENERATE(values<Row>({
      {"another ABI version (and nothing else read)",
       [](wheelfit_backend_v2& d) {
         d.abi_version = 7;
         d.size = 0;
         d.name = nullptr;
       },
       Errc::unsupported, "x.so: built for wheelfit backend ABI 7; this wheelfit reads ABI 2"},
      {"the previous ABI, 1 (both versions named)",
       [](wheelfit_backend_v2& d) {
         d.abi_version = 1;
         d.policy_json = nullptr;
         d.parse_target = nullptr;
       },
       Errc::unsupported, "x.so: built for wheelfit backend ABI 1; this wheelfit reads ABI 2"},
      {"a smaller size", [](wheelfit_backend_v2& d) { d.size = 12; }, Errc::invalid_input,
       "x.so: descriptor size 12 is smaller than wheelfit_backend_v2"},
      {"a NULL name", [](wheelfit_backend_v2& d) { d.name = nullptr; }, Errc::invalid_input,
       "x.so: descriptor field 'name' is NULL"},
      {"a NULL policy", [](wheelfit_backend_v2& d) { d.policy_json = nullptr; }, Errc::invalid_input,
       "x.so: descriptor field 'policy_json' is NULL"},
      {"an empty policy", [](wheelfit_backend_v2& d) { d.policy_json = ""; }, Errc::invalid_input,
       "x.so: descriptor field 'policy_json' is empty"},
      {"an empty name", [](wheelfit_backend_v2& d) { d.name = ""; }, Errc::invalid_input, "x.so: the backend name is empty"},
      {"an upper-case name", [](wheelfit_backend_v2& d) { d.name = "Cuda"; }, Errc::invalid_input,
       "x.so: backend name 'Cuda' is not"},
      {"a NULL parse_target", [](wheelfit_backend_v2& d) { d.parse_target = nullptr; }, Errc::invalid_input,
       "x.so: descriptor function 'parse_target' is NULL (required)"},
      {"a NULL parse_target_list", [](wheelfit_backend_v2& d) { d.parse_target_list = nullptr; }, Errc::invalid_input,
       "x.so: descriptor function 'parse_target_list' is NULL (required)"},
      {"a NULL match_targets", [](wheelfit_backend_v2& d) { d.match_targets = nullptr; }, Errc::invalid_input,
       "x.so: descriptor function 'match_targets' is NULL (required)"},
  }));
  CAPTURE(row.what);
  auto d = test_plugin::descriptor("ok");
  REQUIRE(registry::read_descriptor(&d, "x.so"));  // valid before the edit
  row.edit(d);
  auto r = registry::read_descriptor(&d, "x.so");
  REQUIRE_FALSE(r);
  CHECK(r.error().is(row.code));
  CHECK_THAT(r.error().message, Catch::StartsWith(row.message));
}

namespace {
const char* read_code_ok(const char*, const unsigned char*, std::size_t) { return R"({"list": "", "entries": {}})"; }
const char* variant_properties_ok(const char*) { return R"({"properties": {}})"; }
}  // namespace

TEST_CASE("read_descriptor copies every field of a good descriptor", "[registry]") {
  auto d = test_plugin::descriptor("good-1_x", "{}");  // the policy is only text to the registry
  d.size = sizeof(wheelfit_backend_v2) + 16;  // a later minor revision appended fields: fine
  d.description = "desc";
  d.index_url = "https://example.test/i/";
  d.index_env = "ENV";
  d.releases_repo = "o/r";
  d.detect = &detect_ok;
  auto r = registry::read_descriptor(&d, "/p/good.so");
  REQUIRE(r);
  CHECK(r->name == "good-1_x");
  CHECK(r->description == "desc");
  CHECK(r->index_url == "https://example.test/i/");
  CHECK(r->index_env == "ENV");
  CHECK(r->releases_repo == "o/r");
  CHECK(r->policy_json == "{}");
  CHECK(r->origin == "/p/good.so");
  CHECK(r->has_detection);
  CHECK(r->targets.parse_target == d.parse_target);
  CHECK(r->targets.parse_target_list == d.parse_target_list);
  CHECK(r->targets.match_targets == d.match_targets);
  CHECK(r->targets.read_device_code == nullptr);  // optional
  CHECK_FALSE(registry::read_descriptor(nullptr, "n.so"));

  SECTION("read_device_code is copied when given") {
    d.read_device_code = &read_code_ok;
    auto with_code = registry::read_descriptor(&d, "/p/good.so");
    REQUIRE(with_code);
    CHECK(with_code->targets.read_device_code == &read_code_ok);
  }
  SECTION("variant_properties (revision 1) is read only when the size covers it") {
    d.size = sizeof(wheelfit_backend_v2);
    d.variant_properties = &variant_properties_ok;
    auto with_variants = registry::read_descriptor(&d, "/p/good.so");
    REQUIRE(with_variants);
    CHECK(with_variants->targets.variant_properties == &variant_properties_ok);
    // A plugin built against the first revision: its descriptor ends after read_device_code;
    // whatever follows in memory is not read, and it still loads.
    d.size = static_cast<std::uint32_t>(WHEELFIT_BACKEND_V2_MIN_SIZE);
    auto first = registry::read_descriptor(&d, "/p/old.so");
    REQUIRE(first);
    CHECK(first->targets.variant_properties == nullptr);
    d.size = static_cast<std::uint32_t>(WHEELFIT_BACKEND_V2_MIN_SIZE - 1);
    CHECK_FALSE(registry::read_descriptor(&d, "/p/old.so"));
  }
}

// ---- make_policy / device_rules ----

TEST_CASE("make_policy wires the backend's target functions into its built-in policy", "[registry]") {
  const auto& cuda = test::cuda_backend();
  auto policy = registry::make_policy(cuda, std::nullopt);
  REQUIRE(policy);
  CHECK(policy->source() == cuda.origin + " (built-in policy)");
  CHECK(policy->notation().key == "cuda");
  REQUIRE(policy->rules() != nullptr);
  auto t = policy->rules()->parse_target("sm_90");
  REQUIRE(t);
  CHECK(*t == "9.0");
  auto bad = policy->rules()->parse_target("banana");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().is(Errc::invalid_input));
  auto list = policy->rules()->parse_list("8.0 9.0+PTX");
  REQUIRE(list);
  auto m = policy->rules()->match(*list, "9.0");
  REQUIRE(m);
  CHECK(m->kind == semantics::DeviceRules::Match::Kind::native);
  auto jit = policy->rules()->match(*list, "10.0");
  REQUIRE(jit);
  CHECK(jit->kind == semantics::DeviceRules::Match::Kind::jit);
  auto none = policy->rules()->match(*list, "7.5");
  REQUIRE(none);
  CHECK(none->kind == semantics::DeviceRules::Match::Kind::none);
  CHECK_FALSE(policy->rules()->match(*list, "banana"));  // -1 from the plugin: an error

  SECTION("the same as device_rules gives") {
    auto rules = registry::device_rules(cuda);
    REQUIRE(rules != nullptr);
    CHECK(rules->parse_target("sm_86").value() == "8.6");
  }
}

TEST_CASE("make_policy: a policy file replaces the data but keeps the backend's rules", "[registry]") {
  test::TempDir tmp;
  const std::string path = (tmp / "policy.json").string();
  auto file_policy = [&](std::string_view linux_row) {
    return std::string(R"({
  "format": 2,
  "version": "from-a-file",
  "backend": {
    "line": {"key": "cuda", "prefix": "cu", "name": "CUDA"},
    "combo_labels": ["cu{line:nodot}torch{torch}"],
    "torch_labels": ["cu{line:nodot}"],
    "torch_index": "https://example.test/whl/cu{line_nodot}",
    "device": {"name": "GPU arch", "prefix": "sm "},
    "driver": {"rule": "unknown"}
  },
  "arch_policy": {"linux": {"12.8": ")") + std::string(linux_row) + R"("}},
  "arch_exceptions": {}, "packages": {}, "pytorch_matrix": {}, "torch_family": {}, "pypi_line": {},
  "fallback": {"x86_64": {"line": "12.8", "torch": "2.8"}}
})";
  };
  test::write_file(path, file_policy("8.0  9.0+ptx"));
  auto policy = registry::make_policy(test::cuda_backend(), path);
  REQUIRE(policy);
  CHECK(policy->source() == path);
  CHECK(policy->version() == "from-a-file");
  CHECK(policy->torch_index_pattern() == "https://example.test/whl/cu{line_nodot}");
  REQUIRE(policy->rules() != nullptr);
  CHECK(policy->rules()->parse_target("sm_90").value() == "9.0");
  // The file's list went through the backend's parse_target_list: canonical, as the built-in one.
  const auto combo = policy->fallback_combo("x86_64");
  REQUIRE(combo);
  CHECK(policy->combo_str(*combo) == "cu12.8/torch2.8");
  const auto row = policy->platform_arch_list(*combo, "linux");
  REQUIRE(row);
  CHECK(row->list == "8.0;9.0+PTX");

  SECTION("a list the backend's grammar refuses is an error naming the file") {
    test::write_file(path, file_policy("8.0;banana"));
    auto refused = registry::make_policy(test::cuda_backend(), path);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().is(Errc::invalid_input));
    CHECK_THAT(refused.error().message, Catch::Contains(path) && Catch::Contains("arch_policy.linux.12.8"));
  }
  SECTION("a missing file") {
    auto missing = registry::make_policy(test::cuda_backend(), (tmp / "nope.json").string());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().is(Errc::not_found));
  }
}

TEST_CASE("make_policy: the test plugin's functions, and a backend without functions", "[registry]") {
  auto d = test_plugin::descriptor("tp");
  auto tp = registry::read_descriptor(&d, "tp.so");
  REQUIRE(tp);
  auto policy = registry::make_policy(*tp, std::nullopt);
  REQUIRE(policy);
  CHECK(policy->source() == "tp.so (built-in policy)");
  CHECK(policy->version() == "test-1");
  CHECK(policy->notation().prefix == "ts");
  CHECK(policy->rules()->parse_target(" TS1 ").value() == "ts1");
  CHECK(policy->rules()->parse_list("a; B ;;c+jit").value() == "a;b;c+jit");
  CHECK(policy->rules()->match("a;c+jit", "c")->kind == semantics::DeviceRules::Match::Kind::jit);
  CHECK(policy->rules()->match("a;c+jit", "c")->via == "c+jit");
  CHECK_FALSE(policy->rules()->parse_list(" ; "));

  SECTION("a BackendInfo without target functions has no rules and no policy") {
    BackendInfo bare = info("bare");
    bare.policy_json = test_plugin::kMinimalPolicy;
    CHECK(registry::device_rules(bare) == nullptr);
    auto none = registry::make_policy(bare, std::nullopt);
    REQUIRE_FALSE(none);
    CHECK(none.error().is(Errc::invalid_input));
    CHECK_THAT(none.error().message, Catch::Contains("supplies no target functions"));
  }
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
      // An http(s) index's query stays last: the '/' ends the path (a folder keeps '?' as a name).
      {std::string("https://i.test/simple?token=X"), std::nullopt, "https://i.test/simple/?token=X", "--index"},
      {std::string("https://i.test/simple/?token=X"), std::nullopt, "https://i.test/simple/?token=X", "--index"},
      {std::nullopt, std::string("http://i.test?k=v "), "http://i.test/?k=v", "env WHEELFIT_TEST_INDEX"},
      {std::string("/srv/a?b"), std::nullopt, "/srv/a?b/", "--index"},
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

TEST_CASE("plugin_support: json_escape and descriptor_v2", "[registry][plugins]") {
  CHECK(plugin::json_escape("a\"b\\c\nd\x1f") == "a\\\"b\\\\c\\nd\\u001f");
  CHECK(plugin::json_escape("gfx90a · ü") == "gfx90a · ü");
  constexpr auto d = plugin::descriptor_v2("x");
  static_assert(d.abi_version == WHEELFIT_BACKEND_ABI_VERSION);
  static_assert(d.abi_version == 2u);
  static_assert(d.size == sizeof(wheelfit_backend_v2));
  CHECK(std::string(d.index_url).empty());
  CHECK(std::string(d.policy_json).empty());
  CHECK(d.detect == nullptr);
  CHECK(d.parse_target == nullptr);
  CHECK(d.read_device_code == nullptr);
  // Not yet a backend: policy_json and the target functions are required.
  auto empty = registry::read_descriptor(&d, "x.so");
  REQUIRE_FALSE(empty);
  CHECK_THAT(empty.error().message, Catch::Contains("policy_json"));
  auto full = test_plugin::descriptor("x");
  auto r = registry::read_descriptor(&full, "x.so");
  REQUIRE(r);
  CHECK_FALSE(r->has_detection);
}

namespace {
plugin::Parsed parse_ok(std::string_view t) { return {true, "<" + std::string(t) + ">"}; }
plugin::Parsed parse_no(std::string_view) { return {false, "is not one"}; }
plugin::Parsed parse_throws(std::string_view) { throw std::runtime_error("boom"); }
plugin::Coverage cover_jit(std::string_view list, std::string_view) { return {2, std::string(list)}; }
plugin::Coverage cover_throws(std::string_view, std::string_view) { throw 42; }
std::string code_ok(std::string_view section, const unsigned char*, std::size_t size) {
  return R"({"list": ")" + std::string(section) + ":" + std::to_string(size) + R"(", "entries": {}})";
}
std::string code_throws(std::string_view, const unsigned char*, std::size_t) { throw std::runtime_error("bad \"bytes\""); }
}  // namespace

TEST_CASE("plugin_support: parse_entry, match_entry and device_code_entry keep exceptions inside", "[registry][plugins]") {
  int ok = -1;
  CHECK(std::string(plugin::parse_entry<&parse_ok>("a", &ok)) == "<a>");
  CHECK(ok == 1);
  CHECK(std::string(plugin::parse_entry<&parse_ok>(nullptr, &ok)) == "<>");
  CHECK(std::string(plugin::parse_entry<&parse_no>("a", &ok)) == "is not one");
  CHECK(ok == 0);
  ok = 1;
  CHECK_THAT(std::string(plugin::parse_entry<&parse_throws>("a", &ok)), Catch::Contains("exception"));
  CHECK(ok == 0);

  const char* via = nullptr;
  CHECK(plugin::match_entry<&cover_jit>("l", "t", &via) == 2);
  CHECK(std::string(via) == "l");
  CHECK(plugin::match_entry<&cover_throws>("l", "t", &via) == -1);
  CHECK_THAT(std::string(via), Catch::Contains("exception"));

  const unsigned char bytes[3] = {1, 2, 3};
  CHECK(std::string(plugin::device_code_entry<&code_ok>(".sec", bytes, 3)) == R"({"list": ".sec:3", "entries": {}})");
  const auto err = boost::json::parse(plugin::device_code_entry<&code_throws>(".sec", bytes, 3)).as_object();
  CHECK(err.at("error").as_string() == "bad \"bytes\"");
}

TEST_CASE("Registry::builtin_policy reads a backend's policy once and shares it, an error too", "[registry]") {
  Registry reg;
  auto d = test_plugin::descriptor("tp");
  auto tp = registry::read_descriptor(&d, "tp.so");
  REQUIRE(tp);
  REQUIRE(reg.add(*tp));
  BackendInfo bare = info("bare");  // no target functions: make_policy refuses it
  bare.policy_json = test_plugin::kMinimalPolicy;
  REQUIRE(reg.add(bare));

  auto first = reg.builtin_policy("tp");
  REQUIRE(first);
  CHECK((*first)->source() == "tp.so (built-in policy)");
  CHECK((*first)->version() == "test-1");
  auto again = reg.builtin_policy("tp");
  REQUIRE(again);
  CHECK(again->get() == first->get());  // the same object: read once

  for (int i = 0; i < 2; ++i) {  // the error is kept, and said the same each time
    auto none = reg.builtin_policy("bare");
    REQUIRE_FALSE(none);
    CHECK(none.error().is(Errc::invalid_input));
    CHECK_THAT(none.error().message, Catch::Contains("supplies no target functions"));
  }
  auto unknown = reg.builtin_policy("nope");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().is(Errc::not_found));
  CHECK_THAT(unknown.error().message, Catch::Contains("'nope'"));

  SECTION("threads asking at once get the one policy") {
    Registry fresh;
    REQUIRE(fresh.add(*tp));
    std::vector<const semantics::Policy*> seen(4, nullptr);
    {
      std::vector<std::jthread> threads;
      for (std::size_t t = 0; t < seen.size(); ++t) {
        threads.emplace_back([&, t] {
          auto p = fresh.builtin_policy("tp");
          if (p) seen[t] = p->get();
        });
      }
    }
    REQUIRE(seen[0] != nullptr);
    for (const auto* p : seen) CHECK(p == seen[0]);
  }
}

namespace {
const char* read_code_at_ok(const char*, std::uint64_t, wheelfit_section_read_fn, void*) { return R"({"list": "", "entries": {}})"; }
std::string code_at_throws(std::string_view, std::uint64_t, wheelfit_section_read_fn, void*) { throw std::runtime_error("walk"); }
}  // namespace

TEST_CASE("read_device_code_at (revision 3) is read only when the size covers it", "[registry][cuda][fatbin]") {
  auto d = test_plugin::descriptor("good", "{}");
  d.size = sizeof(wheelfit_backend_v2);
  d.read_device_code_at = &read_code_at_ok;
  auto with = registry::read_descriptor(&d, "/p/good.so");
  REQUIRE(with);
  CHECK(with->targets.read_device_code_at == &read_code_at_ok);
  // A plugin built against revision 2 ends after describe_target_list: still loads, without it.
  d.size = static_cast<std::uint32_t>(offsetof(wheelfit_backend_v2, read_device_code_at));
  auto old = registry::read_descriptor(&d, "/p/old.so");
  REQUIRE(old);
  CHECK(old->targets.read_device_code_at == nullptr);
  CHECK(old->targets.describe_target_list == d.describe_target_list);
  // The C++ helper keeps an exception inside the plugin.
  const auto err = boost::json::parse(plugin::device_code_at_entry<&code_at_throws>(".sec", 3, nullptr, nullptr)).as_object();
  CHECK(err.at("error").as_string() == "walk");
}

TEST_CASE("a backend without read_device_code_at gets the section whole through read_device_code", "[registry][cuda][fatbin]") {
  registry::BackendInfo cuda = test::cuda_backend();
  cuda.targets.read_device_code_at = nullptr;  // as a plugin of revision 2 loads
  auto rules = registry::device_rules(cuda);
  REQUIRE(rules != nullptr);
  // sm_80 SASS and compute_90 PTX in one container (test/inspect/binary_writer.hpp's layout).
  std::string section("\x50\xed\x55\xba\x01\x00\x10\x00", 8);
  const auto entry = [](std::uint16_t kind, std::uint32_t arch) {
    std::string e(64, '\0');
    e[0] = static_cast<char>(kind);
    e[4] = 64;
    e[28] = static_cast<char>(arch);
    e[40] = 0x11;
    return e;
  };
  const std::string body = entry(2, 80) + entry(1, 90);
  for (int i = 0; i < 8; ++i) section.push_back(static_cast<char>((body.size() >> (8 * i)) & 0xff));
  section += body;
  std::vector<std::pair<std::uint64_t, std::size_t>> reads;
  const semantics::DeviceRules::SectionRead read = [&](std::uint64_t offset, std::size_t length, unsigned char* out) -> Expected<void> {
    reads.emplace_back(offset, length);
    std::memcpy(out, section.data() + offset, length);
    return {};
  };
  auto code = rules->read_code_at(".nv_fatbin", section.size(), read);
  REQUIRE(code);
  CHECK(code->list == "8.0;9.0ptx");
  CHECK(reads == std::vector<std::pair<std::uint64_t, std::size_t>>{{0, section.size()}});  // one read, whole
  // With the plugin's own walk: headers only.
  reads.clear();
  auto streamed = registry::device_rules(test::cuda_backend())->read_code_at(".nv_fatbin", section.size(), read);
  REQUIRE(streamed);
  CHECK(streamed->list == code->list);
  CHECK(reads.size() == 4);  // a padding probe, the container header, two entry headers
}
