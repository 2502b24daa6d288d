#pragma once
// How error messages name the kind of a JSON value ("a string", "an array", ...). Boost.JSON is
// only declared here, so including this header does not pull Boost into an embedder's build.
#include <string_view>

namespace boost::json {
class value;
}  // namespace boost::json

namespace wheelfit::util {

/// "null", "a boolean", "a number", "a string", "an array" or "an object".
std::string_view json_kind_name(const boost::json::value& v) noexcept;

}  // namespace wheelfit::util
