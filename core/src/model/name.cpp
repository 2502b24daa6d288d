#include "wheelfit/model/name.hpp"

namespace wheelfit::model {
namespace {

constexpr bool is_sep(char c) noexcept { return c == '-' || c == '_' || c == '.'; }
constexpr bool is_alnum(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
constexpr char to_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

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
