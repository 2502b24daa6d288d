#pragma once
// The advice (resolve::Advice) in the human report and the JSON: of an unresolved resolve, and
// the torch that runs when the machine's own cannot.
#include <ostream>

#include <boost/json/object.hpp>

#include "wheelfit/resolve/resolver.hpp"

namespace wheelfit::output::detail {

/// The torch that runs when the machine's own cannot (Advice::torch); then, unresolved, at most
/// three suggestions (combos that keep the Python first), or the near misses with the package
/// that rules each out, and the combos set aside because their torch cannot run here.
void write_advice(std::ostream& os, const resolve::Resolution& r);

/// Unresolved: {"combos_searched", "suggestions": [...every one...], "near_misses": [...]}; and
/// "advice": {"torch": {...} or null, "set_aside": [{"combo", "reason"}]}.
boost::json::object advice_json(const resolve::Resolution& r);

}  // namespace wheelfit::output::detail
