#pragma once
// Reads a backend's variant_properties answer (plugin_abi.h) back in tests: one namespace's
// features in their order (the order is their priority), the per-device lists, the notes, or
// the error. Header-only; the test folders that include it link Boost::json.

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/registry/plugin_abi.h"

namespace wheelfit::test {

using StringLists = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct VariantAnswer {
  std::string error;               ///< the answer's "error"; "" when it has none
  bool has_namespace = false;      ///< properties names the namespace (maybe with no feature)
  StringLists features;            ///< properties[ns]: feature -> values, in the answer's order
  std::vector<std::pair<std::string, StringLists>> devices;  ///< "<ns> :: <feature>" -> target -> values
  std::vector<std::string> notes;
};

inline std::vector<std::string> json_strings(const boost::json::value& v) {
  std::vector<std::string> out;
  for (const auto& item : v.as_array()) out.emplace_back(item.as_string());
  return out;
}

inline StringLists json_string_lists(const boost::json::value& v) {
  StringLists out;
  for (const auto& [key, value] : v.as_object()) out.emplace_back(std::string(key), json_strings(value));
  return out;
}

/// The answer `json` for namespace `ns`; throws (failing the test) when it is not the shape
/// plugin_abi.h gives.
inline VariantAnswer read_variant_answer(std::string_view json, std::string_view ns) {
  const auto doc = boost::json::parse(json).as_object();
  VariantAnswer a;
  if (const auto* e = doc.if_contains("error")) {
    a.error = std::string(e->as_string());
    return a;
  }
  const auto& properties = doc.at("properties").as_object();
  if (const auto* p = properties.if_contains(ns)) {
    a.has_namespace = true;
    a.features = json_string_lists(*p);
  }
  if (const auto* d = doc.if_contains("devices")) {
    for (const auto& [key, value] : d->as_object()) a.devices.emplace_back(std::string(key), json_string_lists(value));
  }
  if (const auto* n = doc.if_contains("notes")) a.notes = json_strings(*n);
  return a;
}

/// The answer of a descriptor's C function variant_properties for `facts` (nullptr passes NULL).
inline VariantAnswer call_variant_properties(const wheelfit_backend_v2& d, const char* facts, std::string_view ns) {
  const char* answer = d.variant_properties(facts);
  return read_variant_answer(answer ? answer : "", ns);
}

/// `provider` (facts JSON in, answer JSON out) answers each row's facts (its input) with an
/// error that holds every part of the row (checks.hpp's Refusal).
template <class Provider>
void check_variant_refusals(const Provider& provider, const std::vector<Refusal>& rows) {
  for (const auto& row : rows) {
    CAPTURE(row.input);
    const std::string error = read_variant_answer(provider(row.input), "").error;
    for (const auto& part : row.parts) CHECK_THAT(error, Catch::Contains(part));
  }
}

}  // namespace wheelfit::test
