// The error categories (docs/STYLE.md, lesson 8: "a test checks every message"): wheelfit's Errc
// (core/src/util/expected.cpp) and the transport's NetErrc (core/src/net/transport.cpp), each
// enumerator with its own non-empty message, the categories' names, values outside the enums,
// is_transient's classification, and how an Error composes its message.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/error_category.hpp"
#include "wheelfit/util/expected.hpp"

using namespace wheelfit;
using net::NetErrc;

namespace {

struct CategoryRow {
  std::error_code code;
  const char* message;
};

// Every enumerator with the message it must read (a new enumerator gets a row here, a message in
// its category's table, and a new last enumerator in the static_assert beside that table).
const std::vector<CategoryRow>& core_rows() {
  static const std::vector<CategoryRow> rows = {
      {Errc::invalid_input, "invalid input"}, {Errc::not_found, "not found"},   {Errc::io_error, "I/O error"},
      {Errc::too_large, "input too large"},   {Errc::unsupported, "unsupported"}, {Errc::usage, "usage error"},
  };
  return rows;
}

const std::vector<CategoryRow>& net_rows() {
  static const std::vector<CategoryRow> rows = {
      {NetErrc::connect_failed, "connection failed"},
      {NetErrc::connect_timeout, "connect timed out"},
      {NetErrc::reset, "connection reset"},
      {NetErrc::truncated, "response truncated"},
      {NetErrc::idle_timeout, "read timed out"},
      {NetErrc::deadline, "deadline exceeded"},
      {NetErrc::tls_handshake, "TLS handshake failed"},
      {NetErrc::certificate, "certificate verification failed"},
      {NetErrc::http_status, "HTTP error status"},
      {NetErrc::rate_limited, "rate limited"},
      {NetErrc::proxy, "proxy refused"},
      {NetErrc::redirect, "redirect refused"},
      {NetErrc::protocol, "malformed response"},
      {NetErrc::offline, "not in the cache (offline)"},
      {NetErrc::too_slow, "transfer too slow"},
  };
  return rows;
}

void check_rows(const std::vector<CategoryRow>& rows, const std::error_category& category, int last) {
  REQUIRE(rows.size() == static_cast<std::size_t>(last));  // one row per enumerator, 1..last
  std::set<std::string> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    CAPTURE(row.message);
    CHECK(row.code.value() == static_cast<int>(i) + 1);
    CHECK(&row.code.category() == &category);
    CHECK(row.code.message() == row.message);
    CHECK_FALSE(row.code.message().empty());
    CHECK(seen.insert(row.code.message()).second);  // distinct
    CHECK(static_cast<bool>(row.code));             // not success
  }
}

}  // namespace

TEST_CASE("Errc: every enumerator has its own message in the category \"wheelfit\"", "[util][errors]") {
  check_rows(core_rows(), core_category(), static_cast<int>(Errc::usage));
  CHECK(std::string(core_category().name()) == "wheelfit");
  CHECK(make_error_code(Errc::not_found) == std::error_code(Errc::not_found));
}

TEST_CASE("NetErrc: every enumerator has its own message in the category \"wheelfit.transport\"", "[util][errors]") {
  check_rows(net_rows(), net::net_category(), static_cast<int>(NetErrc::too_slow));
  CHECK(std::string(net::net_category().name()) == "wheelfit.transport");
  CHECK(net::make_error_code(NetErrc::reset) == std::error_code(NetErrc::reset));
}

TEST_CASE("error categories: values outside the enums read as unknown, and the categories never compare equal",
          "[util][errors]") {
  struct Row {
    const std::error_category* category;
    int value;
    const char* message;
  };
  const std::vector<Row> rows = {
      {&core_category(), 0, "unknown wheelfit error"},
      {&core_category(), -1, "unknown wheelfit error"},
      {&core_category(), static_cast<int>(Errc::usage) + 1, "unknown wheelfit error"},
      {&net::net_category(), 0, "unknown transport error"},
      {&net::net_category(), -7, "unknown transport error"},
      {&net::net_category(), static_cast<int>(NetErrc::too_slow) + 1, "unknown transport error"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.category->name(), row.value);
    CHECK(row.category->message(row.value) == row.message);
  }
  CHECK(core_category() != net::net_category());
  // The same number in each category is a different error.
  CHECK(std::error_code(Errc::not_found) != std::error_code(static_cast<NetErrc>(static_cast<int>(Errc::not_found))));
  CHECK_FALSE(Error(Errc::invalid_input, "x").is(Errc::not_found));
  CHECK_FALSE(net::is(net::net_error(NetErrc::reset, "x"), NetErrc::truncated));
  CHECK(net::is(net::net_error(NetErrc::reset, "x"), NetErrc::reset));
}

TEST_CASE("util::TableCategory: a message per value from 1, the unknown one outside", "[util][errors]") {
  static constexpr const char* kMessages[] = {"one", "two"};
  const util::TableCategory category("test.table", kMessages, "neither");
  const std::vector<std::pair<int, std::string>> rows = {{1, "one"}, {2, "two"}, {0, "neither"}, {3, "neither"}, {-1, "neither"}};
  for (const auto& [value, message] : rows) {
    CAPTURE(value);
    CHECK(category.message(value) == message);
  }
  CHECK(std::string(category.name()) == "test.table");
}

TEST_CASE("is_transient: which failures a retry may cure", "[util][errors][transport]") {
  struct Row {
    NetErrc code;
    bool transient;
  };
  const std::vector<Row> rows = {
      {NetErrc::connect_failed, true}, {NetErrc::connect_timeout, true}, {NetErrc::reset, true},
      {NetErrc::truncated, true},      {NetErrc::idle_timeout, true},    {NetErrc::deadline, false},
      {NetErrc::tls_handshake, true},  {NetErrc::certificate, false},    {NetErrc::http_status, false},
      {NetErrc::rate_limited, false},  {NetErrc::proxy, false},          {NetErrc::redirect, false},
      {NetErrc::protocol, false},      {NetErrc::offline, false},        {NetErrc::too_slow, true},
  };
  REQUIRE(rows.size() == net_rows().size());
  for (const auto& row : rows) {
    CAPTURE(net::make_error_code(row.code).message());
    CHECK(net::is_transient(net::net_error(row.code, "x")) == row.transient);
  }
  for (const auto& core : core_rows()) {  // no core error is a network failure
    CAPTURE(core.message);
    CHECK_FALSE(net::is_transient(Error(core.code, "x"), 503));
  }
}

TEST_CASE("is_transient: an HTTP status is retried only for 408, 429, 5xx gateway errors and 520-527",
          "[util][errors][transport]") {
  const std::vector<std::pair<int, bool>> rows = {
      {0, false},   {200, false}, {304, false}, {400, false}, {401, false}, {403, false}, {404, false},
      {407, false}, {408, true},  {410, false}, {429, true},  {500, true},  {501, false}, {502, true},
      {503, true},  {504, true},  {505, false}, {519, false}, {520, true},  {527, true},  {528, false},
  };
  for (const auto& [status, transient] : rows) {
    CAPTURE(status);
    CHECK(net::is_transient(net::net_error(NetErrc::http_status, "x"), status) == transient);
    CHECK_FALSE(net::is_transient(net::net_error(NetErrc::certificate, "x"), status));
  }
}

TEST_CASE("Error: the message is the caller's, with_context prefixes \"<context>: \" and keeps the code",
          "[util][errors]") {
  const Error e(Errc::invalid_input, "'x' is not a version");
  CHECK(e.message == "'x' is not a version");
  CHECK(e.is(Errc::invalid_input));
  const Error outer = e.with_context("cfg.toml").with_context("workspace");
  CHECK(outer.message == "workspace: cfg.toml: 'x' is not a version");
  CHECK(outer.is(Errc::invalid_input));
  CHECK(e.message == "'x' is not a version");  // the original is untouched

  const Error net = net::net_error(NetErrc::reset, "h.test:443: connection reset by peer").with_context("pkg");
  CHECK(net.message == "pkg: h.test:443: connection reset by peer");
  CHECK(net::is(net, NetErrc::reset));
  CHECK(net::is_transient(net));

  const Expected<int> failed = unexpected(Errc::not_found, "gone");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == "gone");
  CHECK_THROWS_WITH(failed.value(), "wheelfit::Expected::value() on an error: gone");
  const Expected<void> ok;
  CHECK_THROWS_AS(ok.error(), std::logic_error);
}
