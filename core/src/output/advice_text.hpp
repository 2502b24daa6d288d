#pragma once
// The advice of an unresolved resolve (resolve::Advice) in the human report and the JSON.
#include <ostream>

#include <boost/json/object.hpp>

#include "wheelfit/resolve/resolver.hpp"

namespace wheelfit::output::detail {

/// At most three suggestions (combos that keep the Python first), or the near misses with the
/// package that rules each out.
void write_advice(std::ostream& os, const resolve::Resolution& r);

/// {"combos_searched", "suggestions": [...every one...], "near_misses": [...]}.
boost::json::object advice_json(const resolve::Resolution& r);

}  // namespace wheelfit::output::detail
