#pragma once
// What the whole read of packages.json (packages_json.cpp) shares with the selective one
// (packages_json_select.cpp). Internal to wheelfit::index; not installed.

#include <string>
#include <string_view>

#include "json_reader.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::index::detail {

/// schema (required, the integer 1) and repo (an optional string, "" when absent or null), as
/// the top object holds them (nullptr: absent).
Expected<std::string> read_packages_header(const json::value* schema, const json::value* repo, const JsonReporter& r);

/// The record `v` under `key` of "packages", checked (an object, a project name of its own,
/// torch_free, wheels and each wheel's fields) and added to `out` under its PEP 503 name.
Expected<void> add_packages_entry(PackagesJson& out, std::string_view key, const json::value& v, const JsonReporter& r);

}  // namespace wheelfit::index::detail
