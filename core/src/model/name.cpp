#include "wheelfit/model/name.hpp"

#include "wheelfit/util/text.hpp"

namespace wheelfit::model {
namespace {

using util::ascii::is_alnum;
using util::ascii::is_sep;
using util::ascii::to_lower;

constexpr std::size_t kMaxNameLength = 200;

}  // namespace

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool in_sep_run = false;
  for (const char c : name) {
    if (is_sep(c)) {
      if (!in_sep_run) out += '-';
      in_sep_run = true;
    } else {
      out += to_lower(c);
      in_sep_run = false;
    }
  }
  return out;
}

bool is_valid_name(std::string_view name) noexcept {
  // PEP 508: ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$, case-insensitive.
  if (name.empty() || name.size() > kMaxNameLength) return false;
  if (!is_alnum(name.front()) || !is_alnum(name.back())) return false;
  for (const char c : name) {
    if (!is_alnum(c) && !is_sep(c)) return false;
  }
  return true;
}

}  // namespace wheelfit::model
