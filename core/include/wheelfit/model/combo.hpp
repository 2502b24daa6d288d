#pragma once
// A combo: the (accelerator line, torch major.minor) pair a compiled wheel is bound to. The line
// is the backend's (CUDA 12.8, ROCm 6.3); it may be empty for a backend without one. How a
// backend writes combos in local labels, and what its line is called, is the backend's policy
// data (semantics::Policy::parse_combo_label, combo_str).

#include "wheelfit/model/numeric_version.hpp"

namespace wheelfit::model {

struct Combo {
  NumericVersion line;   ///< major.minor (or the backend's own precision), e.g. 12.8; empty = none
  NumericVersion torch;  ///< major.minor, e.g. 2.8
  friend bool operator==(const Combo& a, const Combo& b) noexcept { return a.line == b.line && a.torch == b.torch; }
};

}  // namespace wheelfit::model
