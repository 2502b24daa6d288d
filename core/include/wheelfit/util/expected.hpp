#pragma once
// wheelfit::Error and wheelfit::Expected<T>: the result type of every parser, loader and probe.
//
// Anticipated failures (bad input, a missing file, a page that is not on the index) are values,
// never exceptions. An Error carries a std::error_code (so callers branch on the kind) and a
// message written for a human that names the input and what was wrong with it.
// Exceptions are reserved for bugs (Expected::value() on an error throws std::logic_error).

#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace wheelfit {

/// The kinds of failure the core reports. Transports add their own category (issue 4).
enum class Errc {
  invalid_input = 1,   ///< malformed text: a version, a wheel name, HTML, JSON, TOML
  not_found,           ///< the thing does not exist (a file, a package page: "not published")
  io_error,            ///< reading or writing failed
  too_large,           ///< an input exceeded a documented limit
  unsupported,         ///< well-formed but not something wheelfit handles (a URL scheme, a schema)
  usage,               ///< a command line or configuration mistake
};

}  // namespace wheelfit

template <>
struct std::is_error_code_enum<wheelfit::Errc> : std::true_type {};

namespace wheelfit {

const std::error_category& core_category() noexcept;
inline std::error_code make_error_code(Errc e) noexcept { return {static_cast<int>(e), core_category()}; }

struct Error {
  std::error_code code;
  std::string message;  ///< names the input and the problem, e.g. "cfg.toml: [cuda] packages: ..."

  Error() = default;
  Error(std::error_code c, std::string m) : code(c), message(std::move(m)) {}
  Error(Errc c, std::string m) : code(make_error_code(c)), message(std::move(m)) {}

  [[nodiscard]] bool is(Errc c) const noexcept { return code == make_error_code(c); }
  /// Returns a copy with "<context>: " prefixed to the message.
  [[nodiscard]] Error with_context(const std::string& context) const {
    return Error(code, context + ": " + message);
  }
};

/// Marks an error value for construction of Expected<T>: `return unexpected(Errc::..., "...")`.
struct Unexpected {
  Error error;
};
inline Unexpected unexpected(Error e) { return Unexpected{std::move(e)}; }
inline Unexpected unexpected(Errc c, std::string m) { return Unexpected{Error(c, std::move(m))}; }

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Expected(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}  // NOLINT
  Expected(Error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { check(); return std::get<0>(v_); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  [[nodiscard]] const Error& error() const& {
    if (has_value()) throw std::logic_error("wheelfit::Expected::error() on a value");
    return std::get<1>(v_);
  }
  [[nodiscard]] Error&& error() && {
    if (has_value()) throw std::logic_error("wheelfit::Expected::error() on a value");
    return std::get<1>(std::move(v_));
  }

 private:
  void check() const {
    if (!has_value()) throw std::logic_error("wheelfit::Expected::value() on an error: " + std::get<1>(v_).message);
  }
  std::variant<T, Error> v_;
};

/// Expected<void>: success or an Error.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Unexpected u) : err_(std::move(u.error)), ok_(false) {}  // NOLINT
  Expected(Error e) : err_(std::move(e)), ok_(false) {}  // NOLINT
  [[nodiscard]] bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  [[nodiscard]] const Error& error() const& {
    if (ok_) throw std::logic_error("wheelfit::Expected<void>::error() on success");
    return err_;
  }

 private:
  Error err_;
  bool ok_ = true;
};

}  // namespace wheelfit

