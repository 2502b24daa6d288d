#pragma once
// Helpers shared by the JSON readers of wheelfit::index (links_json.cpp: PEP 691 pages;
// packages_json.cpp: the farm's packages.json): errors naming the input and the JSON path of the
// offending value. Internal to wheelfit::index; not installed.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::index::detail {

namespace json = boost::json;

inline std::string_view as_view(const json::string& s) { return {s.data(), s.size()}; }

/// Builds "<source>: <path>: <what>" errors.
struct JsonReporter {
  std::string_view source;

  [[nodiscard]] Unexpected fail(std::string_view path, std::string_view what, Errc code = Errc::invalid_input) const;
  [[nodiscard]] Unexpected wrong_kind(std::string_view path, std::string_view expected, const json::value& got) const;
  /// "invalid JSON near offset N: <what the parser said>": a syntax error, a truncated body, nesting
  /// deeper than the parser's limit.
  [[nodiscard]] Unexpected invalid_json(std::size_t offset, const boost::system::error_code& ec) const;
};

/// A JSON path ("packages.cumm.wheels[2].sha256"), spelled out only when an error names it: a
/// large index is walked without building a path string per value. A child refers to its
/// parent, so it must not outlive it.
struct JsonPath {
  const JsonPath* parent = nullptr;
  std::string_view key;  ///< when !is_index
  std::size_t index = 0;
  bool is_index = false;

  [[nodiscard]] JsonPath operator/(std::string_view k) const { return JsonPath{this, k, 0, false}; }
  [[nodiscard]] JsonPath operator[](std::size_t i) const { return JsonPath{this, {}, i, true}; }
  [[nodiscard]] std::string str() const;
};

/// The whole document as a DOM, in one arena (a large index parses without a malloc per value).
Expected<json::value> parse_json(std::string_view body, const JsonReporter& r);

Expected<const json::object*> require_object(const json::value& v, const JsonPath& path, const JsonReporter& r);
/// A required string member.
Expected<std::string> required_string(const json::object& o, std::string_view key, const JsonPath& path,
                                      const JsonReporter& r);
/// An optional string member: absent or null is nullopt.
Expected<std::optional<std::string>> optional_string(const json::object& o, std::string_view key, const JsonPath& path,
                                                     const JsonReporter& r);
/// An optional sha256 member: 64 hex digits, returned lower-case.
Expected<std::optional<std::string>> optional_sha256(const json::object& o, std::string_view key, const JsonPath& path,
                                                     const JsonReporter& r);

}  // namespace wheelfit::index::detail
