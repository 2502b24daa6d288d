#pragma once
// Assertions shared by the table-driven tests: rows of "this text in, that text out", and a
// failed Expected checked for its code and the parts of its message. Each helper captures what
// a failure needs to name its row (the input, the message).

#include <catch2/catch.hpp>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::test {

/// One row of a table of text in, text out (a parser, a decoder, a formatter).
struct TextCase {
  std::string_view input, expected;
};

/// One row of a table whose input is built at run time or whose result is not text (a list):
/// the row owns both.
template <class Out>
struct CaseOf {
  std::string input;
  Out expected;
};

/// CHECKs `f(row.input) == row.expected` for every row (a TextCase or a CaseOf), the input
/// captured. `f` may REQUIRE on the way (a parse that must succeed before its result is compared).
template <class Rows, class F>
void check_each(const Rows& rows, F&& f) {
  for (const auto& row : rows) {
    CAPTURE(row.input);
    CHECK(f(row.input) == row.expected);
  }
}

/// Runs `check(row)` on every row, the row's position captured: the table runner for rows that
/// take more than one input or check more than one result (check_each is the one-in, one-out case).
template <class Rows, class Check>
void check_rows(const Rows& rows, Check&& check) {
  std::size_t row_number = 0;
  for (const auto& row : rows) {
    CAPTURE(row_number);
    check(row);
    ++row_number;
  }
}

/// One row of a table whose rows either succeed or fail: `result` holds `*expected` when the row
/// has a value, else it failed with a message holding `part` (the message captured).
template <class T, class U>
void check_outcome(const Expected<T>& result, const std::optional<U>& expected, std::string_view part) {
  if (expected) {
    REQUIRE(result.has_value());
    CHECK(*result == *expected);
    return;
  }
  REQUIRE_FALSE(result.has_value());
  CAPTURE(result.error().message);
  CHECK(contains(result.error().message, part));
}

/// One row of a table of inputs a parser rejects: a part of the error's message, and its code
/// (invalid_input unless the row names another).
struct ErrorCase {
  std::string input;
  std::string part;
  Errc code = Errc::invalid_input;
};

/// One row of a table of inputs a parser refuses, with the parts its error message must hold.
struct Refusal {
  std::string input;
  std::vector<std::string> parts;
};

/// REQUIREs that `result` failed, then CHECKs its code and that its message holds each of
/// `parts`, the message captured. Returns the message for checks of its own.
template <class T, class Parts>
const std::string& check_error_parts(const Expected<T>& result, Errc code, const Parts& parts) {
  REQUIRE_FALSE(result.has_value());
  const std::string& message = result.error().message;
  CAPTURE(message);
  CHECK(result.error().is(code));
  for (const auto& part : parts) {
    CAPTURE(part);
    CHECK(contains(message, part));
  }
  return message;
}

template <class T>
const std::string& check_error(const Expected<T>& result, Errc code, std::initializer_list<std::string_view> parts = {}) {
  return check_error_parts(result, code, parts);
}

/// `parse` refuses each row's input: an error of `code` whose message holds every part of
/// `common` and of the row, the input captured.
template <class Parse>
void check_refusals(Parse&& parse, const std::vector<std::string>& common, const std::vector<Refusal>& rows,
                    Errc code = Errc::invalid_input) {
  for (const Refusal& row : rows) {
    CAPTURE(row.input);
    std::vector<std::string> parts = common;
    parts.insert(parts.end(), row.parts.begin(), row.parts.end());
    check_error_parts(parse(row.input), code, parts);
  }
}

/// `parse` rejects each row's input: an error of the row's code whose message holds the row's
/// part and, in single quotes, the input itself; the input captured.
template <class Parse>
void check_rejects_quoting(Parse&& parse, const std::vector<ErrorCase>& rows) {
  for (const ErrorCase& row : rows) {
    CAPTURE(row.input);
    check_error(parse(row.input), row.code, {"'" + row.input + "'", row.part});
  }
}

/// T::parse(text), REQUIREd to succeed (the text and the error shown when it does not).
template <class T>
T parse_ok(std::string_view text) {
  auto parsed = T::parse(text);
  INFO("parsing '" << std::string(text) << "'" << (parsed ? "" : ": " + parsed.error().message));
  REQUIRE(parsed.has_value());
  return std::move(parsed).value();
}

/// `check_error` for a row of an ErrorCase table (the caller captures the row's input).
template <class T>
const std::string& check_error(const Expected<T>& result, const ErrorCase& row) {
  return check_error(result, row.code, {row.part});
}

}  // namespace wheelfit::test
