#include "wheelfit/util/expected.hpp"

#include <iterator>

#include "wheelfit/util/error_category.hpp"

namespace wheelfit {
namespace {
// By Errc value, from 1; a new enumerator adds its message here (tests/util/test_error_categories.cpp
// checks every one has its own).
// invalid_input, not_found, io_error, too_large, unsupported, usage:
constexpr const char* kCoreMessages[] = {"invalid input", "not found", "I/O error", "input too large", "unsupported",
                                         "usage error"};
static_assert(std::size(kCoreMessages) == static_cast<std::size_t>(Errc::usage));
}  // namespace

const std::error_category& core_category() noexcept {
  static const util::TableCategory category("wheelfit", kCoreMessages, "unknown wheelfit error");
  return category;
}
}  // namespace wheelfit
