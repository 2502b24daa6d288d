// PEP 825 variants: the variants.json reader (both schema versions, an unknown one, malformed
// files) and the variant ordering, on PEP 825's own examples.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

#include "support/checks.hpp"
#include "wheelfit/model/variant.hpp"

using namespace wheelfit;
using model::VariantOrder;
using model::VariantSupport;

namespace {

// PEP 825's index-level example (foo-1.2.3-variants.json), in schema 0.1.1 (only the namespace
// priorities) and in 0.0.3 (feature and property priorities too).
const std::string var_pep_0_1 = R"({
  "$schema": "https://packaging.python.org/en/latest/_static/peps/825/v0.1.1.json",
  "default-priorities": {"namespace": ["x86_64", "aarch64", "blas_lapack"]},
  "variants": {
    "x8664v3_openblas": {"blas_lapack": {"library": ["openblas"]}, "x86_64": {"level": ["v3"]}},
    "x8664v4_mkl": {"blas_lapack": {"library": ["mkl"]}, "x86_64": {"level": ["v4"]}},
    "null": {}
  }
})";

const std::string var_pep_0_0 = R"({
  "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
  "default-priorities": {
    "namespace": ["x86_64", "aarch64", "blas_lapack"],
    "feature": {"blas_lapack": ["library"]},
    "property": {"blas_lapack": {"library": ["mkl", "openblas"]}}
  },
  "providers": {"x86_64": {"requires": ["provider-variant-x86-64 >=0.0.1"], "plugin-api": "provider_variant_x86_64.plugin:X8664Plugin"}},
  "static-properties": {"priority": {"level": ["high", "low"]}},
  "variants": {
    "x8664v3_openblas": {"blas_lapack": {"library": ["openblas"]}, "x86_64": {"level": ["v3"]}},
    "x8664v4_mkl": {"blas_lapack": {"library": ["mkl"]}, "x86_64": {"level": ["v4"]}}
  }
})";

// A machine whose CPU is x86-64-v`level` and that has both BLAS libraries, OpenBLAS preferred.
VariantSupport var_machine(int level) {
  VariantSupport s;
  std::vector<std::string> levels;
  for (int l = level; l >= 1; --l) levels.push_back("v" + std::to_string(l));
  s.set_namespace("x86_64", {{"level", levels}}, "test x86_64 provider");
  s.set_namespace("blas_lapack", {{"library", {"openblas", "mkl"}}}, "test blas provider");
  return s;
}

model::VariantsFile var_parse(const std::string& text) {
  auto f = model::parse_variants_json(text, "https://example.test/foo-1.2.3-variants.json");
  INFO((f ? "" : f.error().message));
  REQUIRE(f.has_value());
  return std::move(*f);
}

// Labels sorted by PEP 825's order, the incompatible ones left out.
std::vector<std::string> var_ranked(const model::VariantsFile& f, const VariantSupport& s) {
  const VariantOrder order(&f, s);
  std::vector<std::pair<std::string, VariantOrder::Verdict>> ok;
  for (const auto& [label, props] : f.variants) {
    auto v = order.judge(label);
    if (v.compatible) ok.emplace_back(label, std::move(v));
  }
  std::sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) {
    return model::compare_variants(a.first, &a.second, b.first, &b.second) < 0;
  });
  std::vector<std::string> out;
  for (const auto& [label, v] : ok) out.push_back(label);
  return out;
}

}  // namespace

TEST_CASE("parse_variants_json reads schema 0.1.1 and 0.0.3", "[model][variants]") {
  const auto f1 = var_parse(var_pep_0_1);
  CHECK(f1.schema.str() == "0.1.1");
  CHECK(f1.namespace_order == std::vector<std::string>{"x86_64", "aarch64", "blas_lapack"});
  REQUIRE(f1.variants.size() == 3);
  CHECK(model::property_strings(f1.variants.at("x8664v3_openblas")) ==
        std::vector<std::string>{"blas_lapack :: library :: openblas", "x86_64 :: level :: v3"});
  CHECK(f1.variants.at("null").empty());
  CHECK(f1.feature_order.empty());

  const auto f0 = var_parse(var_pep_0_0);
  CHECK(f0.schema.str() == "0.0.3");
  CHECK(f0.feature_order.at("blas_lapack") == std::vector<std::string>{"library"});
  CHECK(f0.value_order.at("blas_lapack").at("library") == std::vector<std::string>{"mkl", "openblas"});
  CHECK(model::property_strings(f0.static_properties) == std::vector<std::string>{"priority :: level :: high", "priority :: level :: low"});
}

TEST_CASE("parse_variants_json refuses unknown format versions and malformed files", "[model][variants]") {
  const auto parse = [](const std::string& text) { return model::parse_variants_json(text, "https://example.test/x-1-variants.json"); };
  const std::string prio = R"("default-priorities": {"namespace": ["a"]})";
  struct Row {
    std::string text;
    Errc code;
    std::string part;
  };
  for (const Row& r : std::initializer_list<Row>{
           {R"({"$schema": "https://x/peps/825/v1.0.0.json", )" + prio + R"(, "variants": {}})", Errc::unsupported,
            "format version 1.0.0 is not one this wheelfit reads"},
           {R"({"$schema": "https://x/peps/825/v0.2.0.json", )" + prio + R"(, "variants": {}})", Errc::unsupported, "0.2.0"},
           {R"({)" + prio + R"(, "variants": {}})", Errc::unsupported, "$schema: missing"},
           {R"({"$schema": "https://x/schema.json", )" + prio + R"(, "variants": {}})", Errc::unsupported, "names no format version"},
           {R"({"$schema": 3, )" + prio + R"(, "variants": {}})", Errc::invalid_input, "$schema: not a string"},
           {"{", Errc::invalid_input, "invalid JSON"},
           {"[]", Errc::invalid_input, "not a JSON object"},
           {R"({"$schema": "https://x/v0.1.1.json", "variants": {}})", Errc::invalid_input, "default-priorities: missing"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + "}", Errc::invalid_input, "variants: missing"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"CU": {}}})", Errc::invalid_input,
            "variants.CU: the variant label 'CU'"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"x": {"a": {"f": "v"}}}})", Errc::invalid_input,
            "variants.x.a.f: not an array of strings"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"x": {"a": {"f": []}}}})", Errc::invalid_input,
            "variants.x.a.f: no values"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"x": {"a": {"f": ["V!"]}}}})", Errc::invalid_input,
            "'V!' is not a variant value"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"x": {"a-b": {"f": ["v"]}}}})", Errc::invalid_input,
            "'a-b' is not a variant namespace"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"x": {"b": {"f": ["v"]}}}})", Errc::invalid_input,
            "namespace 'b' is not listed in default-priorities.namespace"},
           {R"({"$schema": "https://x/v0.1.1.json", )" + prio + R"(, "variants": {"null": {"a": {"f": ["v"]}}}})", Errc::invalid_input,
            "the null variant has properties"},
       }) {
    CAPTURE(r.text);
    wheelfit::test::check_error(parse(r.text), r.code, {"https://example.test/x-1-variants.json", r.part});
  }
}

TEST_CASE("PEP 825 ordering: the best supported value of each feature, by namespace, feature, value", "[model][variants]") {
  const auto f1 = var_parse(var_pep_0_1);
  // An x86-64-v4 machine: both variants fit; v4 is its best level, so x8664v4_mkl comes first.
  CHECK(var_ranked(f1, var_machine(4)) == std::vector<std::string>{"x8664v4_mkl", "x8664v3_openblas", "null"});
  // A v3 machine: only the v3 variant (and null).
  CHECK(var_ranked(f1, var_machine(3)) == std::vector<std::string>{"x8664v3_openblas", "null"});
  // A v2 machine: null alone.
  CHECK(var_ranked(f1, var_machine(2)) == std::vector<std::string>{"null"});

  // Why the v4 variant fails on a v3 machine: the property, and what is supported.
  const auto s3 = var_machine(3);
  const auto v = VariantOrder(&f1, s3).judge("x8664v4_mkl");
  CHECK_FALSE(v.compatible);
  REQUIRE(v.failures.size() == 1);
  CHECK(v.failures[0].wheel == "x86_64 :: level :: v4");
  CHECK(v.failures[0].machine == "not supported: test x86_64 provider supports v3, v2, v1");
}

TEST_CASE("PEP 825 ordering: default-priorities come before the supported order (schema 0.0.3)", "[model][variants]") {
  // The file prefers mkl over openblas; on an x86-64-v3 machine with only the v3 variant's level
  // supported, the level decides first, then the library.
  const auto f0 = var_parse(var_pep_0_0);
  CHECK(var_ranked(f0, var_machine(4)) == std::vector<std::string>{"x8664v4_mkl", "x8664v3_openblas"});
  // Same level for both: the library decides, by the file's property priority (mkl first) over
  // the provider's order (openblas first).
  auto f = f0;
  f.variants.at("x8664v4_mkl") = {{"blas_lapack", {{"library", {"mkl"}}}}, {"x86_64", {{"level", {"v3"}}}}};
  CHECK(var_ranked(f, var_machine(3)) == std::vector<std::string>{"x8664v4_mkl", "x8664v3_openblas"});
}

TEST_CASE("PEP 825 ordering: ties, prefixes, null and non-variant wheels", "[model][variants]") {
  const auto f = var_parse(R"({"$schema": "https://x/v0.1.1.json",
    "default-priorities": {"namespace": ["a", "b"]},
    "variants": {"ab": {"a": {"f": ["1"]}, "b": {"g": ["1"]}}, "a": {"a": {"f": ["1"]}},
                 "a2": {"a": {"f": ["1"]}}, "many": {"a": {"f": ["2", "1"]}}}})");
  VariantSupport s;
  s.set_namespace("a", {{"f", {"1", "2"}}}, "test");
  s.set_namespace("b", {{"g", {"1"}}}, "test");
  // "ab" has a's key and one more: the longer wins; "a" and "a2" and "many" tie (each one's best
  // value of a :: f is 1): by label.
  CHECK(var_ranked(f, s) == std::vector<std::string>{"ab", "a", "a2", "many"});
  const VariantOrder order(&f, s);
  const auto va = order.judge("a");
  const auto vn = order.judge("null");
  CHECK(vn.compatible);
  CHECK(model::compare_variants(std::string("a"), &va, std::string("null"), &vn) < 0);
  CHECK(model::compare_variants(std::string("null"), &vn, std::nullopt, nullptr) < 0);
  CHECK(model::compare_variants(std::nullopt, nullptr, std::nullopt, nullptr) == 0);
}

TEST_CASE("a variant is incompatible when a namespace has no provider or its file is missing", "[model][variants]") {
  const auto f = var_parse(var_pep_0_1);
  VariantSupport only_cpu;
  only_cpu.set_namespace("x86_64", {{"level", {"v4", "v3"}}}, "test");
  const auto v = VariantOrder(&f, only_cpu).judge("x8664v4_mkl");
  CHECK_FALSE(v.compatible);
  REQUIRE(v.failures.size() == 1);
  CHECK(v.failures[0].wheel == "blas_lapack :: library :: mkl");
  CHECK(v.failures[0].machine == "no provider for namespace 'blas_lapack' on this machine");

  CHECK(VariantOrder(&f, only_cpu).judge("nolabel").failures.at(0).machine == "not listed in https://example.test/foo-1.2.3-variants.json");

  // No file (unreadable, unknown format): every label but null fails with the reason.
  const VariantOrder none(nullptr, only_cpu, "x-1-variants.json: format version 2.0.0 is not one this wheelfit reads");
  CHECK(none.judge("null").compatible);
  const auto nv = none.judge("x8664v4_mkl");
  CHECK_FALSE(nv.compatible);
  CHECK(nv.failures.at(0).machine.find("format version 2.0.0") != std::string::npos);
}

TEST_CASE("static-properties supply ahead-of-time namespaces; the machine's own lists win", "[model][variants]") {
  const auto f = var_parse(R"({"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
    "default-priorities": {"namespace": ["priority", "x86_64"]},
    "static-properties": {"priority": {"level": ["high", "mid", "low"]}},
    "variants": {"lo": {"priority": {"level": ["low"]}}, "hi": {"priority": {"level": ["high"]}},
                 "none": {"priority": {"level": ["zero"]}}}})");
  VariantSupport s;
  CHECK(var_ranked(f, s) == std::vector<std::string>{"hi", "lo"});
  // A profile that names the namespace replaces the file's static list.
  s.set_namespace("priority", {{"level", {"low", "zero"}}}, "profile m.toml");
  s.overridden.insert("priority");
  CHECK(var_ranked(f, s) == std::vector<std::string>{"lo", "none"});
}

TEST_CASE("the every-device rule: each GPU must be served by one of a variant's values", "[model][variants]") {
  const auto f = var_parse(R"({"$schema": "https://x/v0.1.1.json",
    "default-priorities": {"namespace": ["nvidia"]},
    "variants": {"sm90": {"nvidia": {"sm_arch": ["90_real"]}}, "sm8090": {"nvidia": {"sm_arch": ["80_real", "90_real"]}}}})");
  VariantSupport s;
  s.device_prefix = "sm ";
  // The provider judged the highest GPU (9.0); the machine also has an 8.0 GPU.
  s.set_namespace("nvidia", {{"sm_arch", {"90_real", "90_virtual", "80_virtual"}}}, "the cuda backend's provider");
  s.devices["nvidia :: sm_arch"] = {{"9.0", {"90_real", "90_virtual", "80_virtual"}}, {"8.0", {"80_real", "80_virtual"}}};
  CHECK(var_ranked(f, s) == std::vector<std::string>{"sm8090"});
  const auto v = VariantOrder(&f, s).judge("sm90");
  REQUIRE(v.failures.size() == 1);
  CHECK(v.failures[0].machine.find("not every GPU is served: sm 8.0 runs none of them") != std::string::npos);
  CHECK(v.failures[0].machine.find("judges the highest GPU") != std::string::npos);
}

TEST_CASE("abi_dependency :: torch: variantlib's order, the major first", "[model][variants]") {
  CHECK(model::abi_dependency_torch("2.9.0") == model::FeatureValues{{"torch", {"2", "2.9", "2.9.0"}}});
  CHECK(model::abi_dependency_torch("2.8") == model::FeatureValues{{"torch", {"2", "2.8"}}});
  CHECK(model::abi_dependency_torch("2.9.1+cu128") == model::FeatureValues{{"torch", {"2", "2.9", "2.9.1"}}});
}

TEST_CASE("parse_variant_properties reads a profile's object and writes it back", "[model][variants]") {
  const std::string text = R"({"nvidia":{"sm_arch":["90_real","80_real"],"cuda_version_lower_bound":["12.8"]}})";
  auto p = model::parse_variant_properties(text, "m.json");
  REQUIRE(p.has_value());
  CHECK(model::property_strings(*p) == std::vector<std::string>{"nvidia :: sm_arch :: 90_real", "nvidia :: sm_arch :: 80_real",
                                                                "nvidia :: cuda_version_lower_bound :: 12.8"});
  CHECK(model::variant_properties_json(*p) == text);
  wheelfit::test::check_error(model::parse_variant_properties(R"({"nvidia": ["x"]})", "m.json"), Errc::invalid_input,
                              {"m.json", "nvidia: not an object"});
}

namespace {

// A variants file (schema 0.1.1, namespace "a") of `labels` labels, each with one value of one
// feature, and the parts the caps count: `namespaces` namespaces in a label, `features` features
// in one of its namespaces, `values` values of one feature, `order` namespaces in
// default-priorities.namespace.
std::string var_sized(std::size_t labels, std::size_t namespaces, std::size_t features, std::size_t values, std::size_t order) {
  std::string ns_list = "\"a\"";
  for (std::size_t i = 1; i < order; ++i) ns_list += ", \"n" + std::to_string(i) + "\"";
  std::string first = "\"a\": {\"f\": [\"1\"";
  for (std::size_t i = 1; i < values; ++i) first += ", \"" + std::to_string(i + 1) + "\"";
  first += "]";
  for (std::size_t i = 1; i < features; ++i) first += ", \"f" + std::to_string(i) + "\": [\"1\"]";
  first += "}";
  for (std::size_t i = 1; i < namespaces; ++i) first += ", \"n" + std::to_string(i) + "\": {\"f\": [\"1\"]}";
  std::string variants = "\"l0\": {" + first + "}";
  for (std::size_t i = 1; i < labels; ++i) variants += ", \"l" + std::to_string(i) + "\": {\"a\": {\"f\": [\"1\"]}}";
  return R"({"$schema": "https://x/v0.1.1.json", "default-priorities": {"namespace": [)" + ns_list + R"(]}, "variants": {)" +
         variants + "}}";
}

}  // namespace

TEST_CASE("parse_variants_json caps namespaces, features, values and labels", "[model][variants]") {
  using model::kMaxVariantFeatures, model::kMaxVariantLabels, model::kMaxVariantNamespaces, model::kMaxVariantValues;
  const std::string src = "https://example.test/x-1-variants.json";
  // At each cap: read.
  auto at_caps = model::parse_variants_json(
      var_sized(kMaxVariantLabels, kMaxVariantNamespaces, kMaxVariantFeatures, kMaxVariantValues, kMaxVariantNamespaces), src);
  INFO((at_caps ? "" : at_caps.error().message));
  REQUIRE(at_caps.has_value());
  CHECK(at_caps->variants.size() == kMaxVariantLabels);
  // One over: refused, naming the file, the JSON path, the count and the cap.
  struct Row {
    std::string text, part;
  };
  const std::size_t L = kMaxVariantLabels, N = kMaxVariantNamespaces, F = kMaxVariantFeatures, V = kMaxVariantValues;
  for (const Row& r : std::initializer_list<Row>{
           {var_sized(L + 1, 1, 1, 1, 1), "variants: 1025 labels, more than the 1024 a variants file may list"},
           {var_sized(1, N + 1, 1, 1, N + 1), "default-priorities.namespace: 65 names, more than the 64 a file may order"},
           {var_sized(1, 1, F + 1, 1, 1), "variants.l0.a: 65 features, more than the 64 a namespace may have"},
           {var_sized(1, 1, 1, V + 1, 1), "variants.l0.a.f: 257 values, more than the 256 a feature may have"},
           {R"({"$schema": "https://x/v0.0.3.json", "default-priorities": {"namespace": ["a"], "feature": {"a": [)" +
                [] {
                  std::string s = "\"f0\"";
                  for (int i = 1; i <= 64; ++i) s += ", \"f" + std::to_string(i) + "\"";
                  return s;
                }() + R"(]}}, "variants": {}})",
            "default-priorities.feature.a: 65 names, more than the 64 a namespace may have"},
       }) {
    CAPTURE(r.part);
    wheelfit::test::check_error(model::parse_variants_json(r.text, src), Errc::invalid_input, {src, r.part, "a cap of this reader"});
  }
  // A properties object with more namespaces than a label may name (a profile's, a provider's).
  std::string wide = "{";
  for (std::size_t i = 0; i <= N; ++i) wide += (i ? ", \"n" : "\"n") + std::to_string(i) + "\": {\"f\": [\"1\"]}";
  wheelfit::test::check_error(model::parse_variant_properties(wide + "}", "m.json"), Errc::invalid_input,
                              {"m.json", "65 namespaces, more than the 64 a properties object may name"});
}

namespace {

// The ordering as PEP 825 words it, by linear search over the merged lists (the reference the
// maps must agree with): the key of each compatible label; nullopt for an incompatible one.
std::optional<std::vector<std::array<int, 3>>> var_reference_key(const model::VariantsFile& f, const VariantSupport& s,
                                                                  const std::string& label) {
  const auto index_of = [](const std::vector<std::string>& l, const std::string& x) {
    auto it = std::find(l.begin(), l.end(), x);
    return it == l.end() ? -1 : static_cast<int>(it - l.begin());
  };
  const auto add_missing = [&](std::vector<std::string>& l, const std::vector<std::string>& more) {
    for (const auto& m : more)
      if (index_of(l, m) < 0) l.push_back(m);
  };
  std::vector<std::string> namespaces = f.namespace_order;
  add_missing(namespaces, {"abi_dependency"});
  std::vector<std::array<int, 3>> key;
  for (const auto& [ns, features] : f.variants.at(label)) {
    const bool from_file = !s.overridden.count(ns) && model::has_namespace(f.static_properties, ns);
    const auto& from = from_file ? f.static_properties : s.properties;
    auto supplier = std::find_if(from.begin(), from.end(), [&](const auto& e) { return e.first == ns; });
    if (supplier == from.end()) return std::nullopt;
    std::vector<std::string> feature_order;
    if (auto fo = f.feature_order.find(ns); fo != f.feature_order.end()) feature_order = fo->second;
    for (const auto& [feature, supported] : supplier->second) add_missing(feature_order, {feature});
    for (const auto& [feature, values] : features) {
      const std::vector<std::string>* sup = nullptr;
      for (const auto& e : supplier->second)
        if (e.first == feature && !sup) sup = &e.second;
      if (!sup) return std::nullopt;
      std::vector<std::string> order;
      if (auto vo = f.value_order.find(ns); vo != f.value_order.end() && vo->second.count(feature)) order = vo->second.at(feature);
      add_missing(order, *sup);
      int best = -1;
      for (std::size_t i = 0; i < order.size() && best < 0; ++i)
        if (index_of(values, order[i]) >= 0 && index_of(*sup, order[i]) >= 0) best = static_cast<int>(i);
      if (best < 0) return std::nullopt;
      key.push_back({index_of(namespaces, ns), index_of(feature_order, feature), best});
    }
  }
  std::sort(key.begin(), key.end());
  return key;
}

}  // namespace

TEST_CASE("PEP 825 ordering: the maps agree with a linear search on a large generated table", "[model][variants]") {
  // Deterministic (a fixed linear congruential sequence): 4 namespaces, the file ordering some
  // features and values (with repeats, and values nobody supports), static-properties for one
  // namespace, a machine list overriding another; 400 labels of 1-4 properties each.
  std::uint32_t seed = 12345;
  const auto next = [&](std::uint32_t n) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % n;
  };
  const auto vals = [&](std::size_t n) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(std::to_string(next(12)));
    return out;
  };
  model::VariantsFile f;
  f.source = "https://example.test/big-1-variants.json";
  f.namespace_order = {"b", "a", "c", "b", "d"};
  f.feature_order["a"] = {"g", "f", "g"};
  f.value_order["a"]["f"] = {"7", "3", "11", "3", "5"};
  f.value_order["b"]["h"] = {"2", "9"};
  f.static_properties = {{"c", {{"k", vals(6)}}}, {"d", {{"m", vals(4)}}}};
  VariantSupport s;
  s.set_namespace("a", {{"f", vals(8)}, {"g", vals(5)}, {"f", vals(3)}}, "test a");
  s.set_namespace("b", {{"h", vals(7)}}, "test b");
  s.set_namespace("d", {{"m", vals(5)}}, "profile");
  s.overridden.insert("d");
  s.set_namespace("abi_dependency", model::abi_dependency_torch("2.8.0"), "torch 2.8.0");
  const std::vector<std::pair<std::string, std::vector<std::string>>> features{
      {"a", {"f", "g", "x"}}, {"b", {"h"}}, {"c", {"k"}}, {"d", {"m"}}, {"abi_dependency", {"torch"}}};
  for (int i = 0; i < 400; ++i) {
    model::VariantProperties p;
    for (std::uint32_t n = next(4) + 1; n > 0; --n) {
      const auto& [ns, names] = features[next(static_cast<std::uint32_t>(features.size()))];
      if (model::has_namespace(p, ns)) continue;
      std::vector<std::string> v = ns == "abi_dependency" ? std::vector<std::string>{next(2) ? "2.8" : "2.9"} : vals(next(3) + 1);
      p.emplace_back(ns, model::FeatureValues{{names[next(static_cast<std::uint32_t>(names.size()))], v}});
    }
    f.variants.emplace("l" + std::to_string(i), std::move(p));
  }
  const VariantOrder order(&f, s);
  std::size_t compatible = 0;
  for (const auto& [label, props] : f.variants) {
    CAPTURE(label, model::property_strings(props));
    const auto v = order.judge(label);
    const auto reference = var_reference_key(f, s, label);
    REQUIRE(v.compatible == reference.has_value());
    if (reference) CHECK(v.key == *reference);
    compatible += v.compatible;
  }
  // Both kinds occur.
  CHECK(compatible > 20);
  CHECK(compatible < f.variants.size() - 20);
}
