#pragma once
// An std::error_category whose messages come from a table: what wheelfit's error enums (Errc in
// util/expected.hpp, net::NetErrc in net/transport.hpp) share. Enumerator `value`
// reads messages[value - 1] (the enums start at 1, 0 being success); any other value reads
// `unknown`. The table and the strings must outlive the category (string literals in a static
// array). Thread safety: immutable; name() and message() may be called from any thread.

#include <cstddef>
#include <span>
#include <string>
#include <system_error>

namespace wheelfit::util {

class TableCategory final : public std::error_category {
 public:
  TableCategory(const char* name, std::span<const char* const> messages, const char* unknown) noexcept
      : name_(name), messages_(messages), unknown_(unknown) {}
  [[nodiscard]] const char* name() const noexcept override { return name_; }
  [[nodiscard]] std::string message(int ev) const override {
    if (ev < 1 || static_cast<std::size_t>(ev) > messages_.size()) return unknown_;
    return messages_[static_cast<std::size_t>(ev) - 1];
  }

 private:
  const char* name_;
  std::span<const char* const> messages_;
  const char* unknown_;
};

}  // namespace wheelfit::util
