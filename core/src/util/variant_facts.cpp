#include "wheelfit/util/variant_facts.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "wheelfit/util/json_kind.hpp"

namespace wheelfit::util {

namespace json = boost::json;

namespace {

/// `what` ("the facts' \"gpus\"") holds `v` where `wanted` belongs.
Unexpected wrong_kind(const std::string& what, std::string_view wanted, const json::value& v) {
  return unexpected(Errc::invalid_input, what + " is " + std::string(json_kind_name(v)) + ", not " + std::string(wanted));
}

std::string key_name(std::string_view key) { return "the facts' \"" + std::string(key) + "\""; }

}  // namespace

Expected<VariantFacts> read_variant_facts(std::string_view text) {
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec) return unexpected(Errc::invalid_input, "the facts are not JSON: " + ec.message());
  const auto* o = doc.if_object();
  if (!o) return unexpected(Errc::invalid_input, "the facts are " + std::string(json_kind_name(doc)) + ", not a JSON object");
  VariantFacts facts;
  for (auto [key, slot] : {std::pair{"driver_version", &facts.driver_version}, std::pair{"driver_line", &facts.driver_line}}) {
    const auto* v = o->if_contains(key);
    if (!v || v->is_null()) continue;
    if (!v->is_string()) return wrong_kind(key_name(key), "a string", *v);
    *slot = std::string(v->get_string());
  }
  if (const auto* v = o->if_contains("gpus"); v && !v->is_null()) {
    const auto* a = v->if_array();
    if (!a) return wrong_kind(key_name("gpus"), "an array of device targets", *v);
    facts.gpus.emplace();
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto& item = (*a)[i];
      if (!item.is_string()) return wrong_kind("item " + std::to_string(i + 1) + " of " + key_name("gpus"), "a device target (a string)", item);
      facts.gpus->emplace_back(item.get_string());
    }
  }
  return facts;
}

}  // namespace wheelfit::util
