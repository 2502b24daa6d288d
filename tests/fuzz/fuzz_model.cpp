// libFuzzer target: PEP 440 versions, PEP 427 wheel names (with PEP 825 labels), PEP 825
// variants.json files and their ordering. Besides "no crash", a parsed
// version must survive a round trip through its normalised text (parse(str()) == itself).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wheelfit/model/variant.hpp"
#include "wheelfit/model/version.hpp"
#include "wheelfit/model/wheel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = wheelfit::model::Version::parse(text);
  if (v) {
    const std::string norm = v->str();
    auto again = wheelfit::model::Version::parse(norm);
    if (!again || !(*again == *v) || again->str() != norm) {
      std::fprintf(stderr, "version round trip failed: '%s' -> '%s'\n", std::string(text).c_str(), norm.c_str());
      std::abort();
    }
  }
  auto w = wheelfit::model::WheelName::parse(text);
  if (w) (void)w->version.str();
  // A variants file: parsed, then every label judged against a fixed machine and ordered.
  if (auto f = wheelfit::model::parse_variants_json(text, "fuzz")) {
    wheelfit::model::VariantSupport s;
    s.set_namespace("a", {{"f", {"1", "2"}}}, "fuzz");
    const wheelfit::model::VariantOrder order(&*f, s);
    std::optional<std::string> prev;
    wheelfit::model::VariantOrder::Verdict prev_v;
    for (const auto& [label, props] : f->variants) {
      auto v = order.judge(label);
      if (prev && v.compatible && prev_v.compatible) (void)wheelfit::model::compare_variants(prev, &prev_v, label, &v);
      prev = label;
      prev_v = std::move(v);
    }
  }
  return 0;
}
