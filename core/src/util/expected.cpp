#include "wheelfit/util/expected.hpp"

namespace wheelfit {
namespace {
class CoreCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "wheelfit"; }
  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::invalid_input: return "invalid input";
      case Errc::not_found: return "not found";
      case Errc::io_error: return "I/O error";
      case Errc::too_large: return "input too large";
      case Errc::unsupported: return "unsupported";
      case Errc::usage: return "usage error";
    }
    return "unknown wheelfit error";
  }
};
}  // namespace

const std::error_category& core_category() noexcept {
  static const CoreCategory category;
  return category;
}
}  // namespace wheelfit
