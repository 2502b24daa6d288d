#pragma once
// NumericVersion: a dotted run of non-negative integers ("2.35", "12.8", "580.65.06", "3.12").
// Used for the machine's facts (glibc, CUDA line, driver, Python, compute capability) and for
// combo halves. Trailing zero components compare equal ("2.8" == "2.8.0"); the text is kept as
// written for display. Not PEP 440: use model::Version for package versions.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::model {

class NumericVersion {
 public:
  NumericVersion() = default;
  explicit NumericVersion(std::vector<std::uint32_t> parts);

  /// Parses "N(.N)*" with at most 8 components, each at most 9 digits. Anything else
  /// (empty, a sign, letters, "1..2", a trailing dot) is Errc::invalid_input naming `text`.
  static Expected<NumericVersion> parse(std::string_view text);

  [[nodiscard]] const std::vector<std::uint32_t>& parts() const noexcept { return parts_; }
  [[nodiscard]] std::uint32_t major() const noexcept { return at(0); }
  [[nodiscard]] std::uint32_t minor() const noexcept { return at(1); }
  [[nodiscard]] std::uint32_t at(std::size_t i) const noexcept { return i < parts_.size() ? parts_[i] : 0; }
  [[nodiscard]] bool empty() const noexcept { return parts_.empty(); }
  /// The first `n` components (padding with zeros): truncated(2) of 2.8.1 is 2.8.
  [[nodiscard]] NumericVersion truncated(std::size_t n) const;
  /// The text as parse() read it ("580.65.06" stays "580.65.06"); for a version built from
  /// components (or by truncated()), the components joined by dots. Zero padding is not added.
  [[nodiscard]] std::string str() const;
  /// Components concatenated without dots: "12.8" -> "128" (CUDA tags such as cu128).
  [[nodiscard]] std::string nodot() const;

  friend std::strong_ordering operator<=>(const NumericVersion& a, const NumericVersion& b) noexcept;
  friend bool operator==(const NumericVersion& a, const NumericVersion& b) noexcept {
    return (a <=> b) == std::strong_ordering::equal;
  }

 private:
  std::vector<std::uint32_t> parts_;
  std::string text_;  ///< as parsed; empty when built from components
};

}  // namespace wheelfit::model
