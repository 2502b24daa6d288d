#include "wheelfit/util/json_kind.hpp"

#include <boost/json/value.hpp>

namespace wheelfit::util {

std::string_view json_kind_name(const boost::json::value& v) noexcept {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: return "a number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "a value";
}

}  // namespace wheelfit::util
