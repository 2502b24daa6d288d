#pragma once
// Model values for test tables, from text known to be valid.

#include <string_view>

#include "wheelfit/model/numeric_version.hpp"

namespace wheelfit::test {

/// The NumericVersion `text` spells ("12.8"); throws (failing the test) when it does not parse.
inline model::NumericVersion nv(std::string_view text) { return model::NumericVersion::parse(text).value(); }

}  // namespace wheelfit::test
