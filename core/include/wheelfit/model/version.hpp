#pragma once
// PEP 440 versions: epoch, release, pre (a/b/rc), post, dev, local label; normalised parsing
// (case, separators, "alpha"/"c"/"pre"/"preview"/"rev"/"r" spellings, implicit post "1.0-1",
// leading "v", surrounding whitespace) and the total ordering the spec defines:
//   dev < pre < (final) < post, "1.0.dev0" < "1.0a1.dev0" < "1.0a1" < "1.0" < "1.0+local" < "1.0.post1"
// Local labels compare segment by segment: numeric segments compare as integers and sort after
// alphanumeric ones; a shorter label that is a prefix of a longer one sorts first.
// Release components compare with trailing zeros ignored ("1.0" == "1.0.0").

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::model {

class Version {
 public:
  enum class PreKind { a, b, rc };
  struct Pre {
    PreKind kind;
    std::uint64_t number;
  };

  /// Parses `text` per PEP 440 (including the normalisations above). Errors are
  /// Errc::invalid_input with a message that quotes `text` and says which part was wrong.
  /// Numbers longer than 18 digits (leading zeros not counted) are rejected (invalid_input),
  /// never wrapped. Numeric local-label segments are kept as text and compare exactly at any
  /// length; like packaging, normalisation drops their leading zeros ("+01" -> "+1").
  static Expected<Version> parse(std::string_view text);

  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] const std::vector<std::uint64_t>& release() const noexcept { return release_; }
  [[nodiscard]] const std::optional<Pre>& pre() const noexcept { return pre_; }
  [[nodiscard]] const std::optional<std::uint64_t>& post() const noexcept { return post_; }
  [[nodiscard]] const std::optional<std::uint64_t>& dev() const noexcept { return dev_; }
  /// Normalised local label without '+', segments joined by '.', lower case ("cu128torch2.8").
  [[nodiscard]] const std::string& local() const noexcept { return local_; }

  /// True for pre-releases and dev releases (what pip excludes unless nothing else fits).
  [[nodiscard]] bool is_prerelease() const noexcept { return pre_.has_value() || dev_.has_value(); }
  /// This version without its local label.
  [[nodiscard]] Version public_version() const;
  /// Normalised form: "1!2.0rc1.post2.dev3+abc.4" (epoch shown only when non-zero).
  [[nodiscard]] std::string str() const;

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == std::strong_ordering::equal; }

 private:
  std::uint64_t epoch_ = 0;
  std::vector<std::uint64_t> release_;
  std::optional<Pre> pre_;
  std::optional<std::uint64_t> post_;
  std::optional<std::uint64_t> dev_;
  std::string local_;
};

}  // namespace wheelfit::model
