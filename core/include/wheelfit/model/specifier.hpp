#pragma once
// PEP 440 version specifiers ("<3.13,>=3.10", "~=3.10", "==3.*", "!=3.11.*"): what a
// `data-requires-python` attribute or a PEP 691 `requires-python` field says.
// Operators: ~= == != <= >= < > === (the last compares the text exactly). "==X.*" and
// "!=X.*" match by prefix. Local labels are ignored on the candidate version, as PEP 440 says
// for every operator but "==" with a local label and "===".

#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/version.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::model {

class SpecifierSet {
 public:
  /// Comma-separated clauses; whitespace anywhere is ignored; an empty text matches everything.
  /// Errc::invalid_input quoting `text` for an unknown operator, a bad version, "~=3" (needs two
  /// release parts), ".*" after an operator other than == and !=.
  static Expected<SpecifierSet> parse(std::string_view text);

  /// True when `v` satisfies every clause.
  [[nodiscard]] bool contains(const Version& v) const;
  [[nodiscard]] const std::string& str() const noexcept { return text_; }

 private:
  struct Clause {
    std::string op;
    Version version;
    std::string raw;   ///< the version text as written (for ===)
    bool wildcard = false;
  };
  std::vector<Clause> clauses_;
  std::string text_;
};

}  // namespace wheelfit::model
