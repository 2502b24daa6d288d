// The .netrc parser (transports/netrc.hpp): the forms curl accepts, as a table, and every way a
// file can be wrong, each an error naming the line and never the secret.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/checks.hpp"
#include "wheelfit/transports/netrc.hpp"

using namespace wheelfit;
using transports::parse_netrc;

namespace {

// "machine|login|password|account" per entry; "default|..." for a default entry.
std::vector<std::string> flat(const transports::Netrc& n) {
  std::vector<std::string> out;
  for (const auto& e : n.entries) {
    out.push_back((e.is_default ? std::string("default") : e.machine) + "|" + e.login + "|" + e.password + "|" + e.account);
  }
  return out;
}

}  // namespace

TEST_CASE("parse_netrc reads the forms curl accepts", "[transports][netrc]") {
  const std::vector<test::CaseOf<std::vector<std::string>>> rows = {
      {"", {}},
      {"   \n\t\n", {}},
      {"machine h.test login alice password s3cret\n", {"h.test|alice|s3cret|"}},
      {"machine H.Test\n  login alice\n  password s3cret\n  account acct\n", {"h.test|alice|s3cret|acct"}},
      {"machine a login x password y machine b login z password w", {"a|x|y|", "b|z|w|"}},
      {"machine a\r\nlogin x\r\npassword y\r\n", {"a|x|y|"}},
      {"default login anonymous password me@example.test", {"default|anonymous|me@example.test|"}},
      {"machine m password \"with space\" login \"q\\\"uote\"", {"m|q\"uote|with space|"}},
      {"machine m password \"a\\\\b\\tc\\nd\\re\\xf\"", {"m||a\\b\tc\nd\rexf|"}},
      {"machine m password \"\"", {"m|||"}},
      {"# comment line\n  # an indented comment\nmachine m login l password #p\n", {"m|l|#p|"}},
      {"machine m login l password p\nmacdef init\ncd /pub\nmachine x login y\n\nmachine n login k password q\n",
       {"m|l|p|", "n|k|q|"}},
      {"macdef last\nwhatever\n", {}},
      {"MACHINE m LOGIN l PASSWORD p", {"m|l|p|"}},
      {"machine m login machine password default", {"m|machine|default|"}},  // values are whatever follows
      {"machine m\n", {"m|||"}},
  };
  test::check_each(rows, [](const std::string& text) {
    auto n = parse_netrc(text, "t");
    REQUIRE(n);
    return flat(*n);
  });
}

TEST_CASE("parse_netrc refuses what is not a netrc, naming the line but never a token", "[transports][netrc]") {
  struct Row {
    std::string text;
    std::string says;
  };
  const std::vector<Row> rows = {
      {"login alice", "t:1: 'login' before any 'machine' or 'default'"},
      {"\n\npassword hunter2", "t:3: 'password' before any 'machine' or 'default'"},
      {"machine", "t:1: 'machine' has no value"},
      {"machine m login", "t:1: 'login' has no value"},
      {"machine m\npassword", "t:2: 'password' has no value"},
      {"machine m account", "'account' has no value"},
      {"macdef", "'macdef' has no value"},
      {"machine \"\" login l", "'machine' with an empty host name"},
      {"machine m login a login b", "t:1: 'login' given twice for one machine"},
      {"machine m password a\npassword hunter2", "t:2: 'password' given twice"},
      {"machine m login l passwd hunter2", "t:1: unexpected token where a keyword belongs"},
      {"machine m login l password hunter 2", "t:1: unexpected token"},  // an unquoted space
      {"machine m login l password p # trailing words", "unexpected token"},
      {"machine m \"login\" l", "unexpected token"},  // a quoted keyword is a value, not a keyword
      {"machine m password \"hunter2\nlogin l", "t:1: a quoted token is not closed on its line"},
      {"machine m password \"hunter2", "a quoted token is not closed"},
      {std::string("machine m\npassword hunter2\0", 27), "t:2: a NUL byte"},
      {std::string(transports::kMaxNetrcBytes + 1, ' '), "larger than"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text.substr(0, 80));
    auto n = parse_netrc(r.text, "t");
    REQUIRE_FALSE(n);
    CHECK(n.error().is(Errc::invalid_input));
    CHECK_THAT(n.error().message, Catch::Contains(r.says));
    CHECK_THAT(n.error().message, !Catch::Contains("hunter"));
  }
}

TEST_CASE("Netrc::find: the machine entry, else the default, case-insensitively", "[transports][netrc]") {
  auto n = parse_netrc("default login anon password a\n"
                       "machine idx.corp.test login alice password one\n"
                       "machine idx.corp.test login bob password two\n"
                       "machine other.test login carol password three\n",
                       "t");
  REQUIRE(n);
  struct Row {
    std::string host;
    std::string login;  // "" = no entry
  };
  const std::vector<Row> rows = {
      {"idx.corp.test", "alice"},  // the first entry for a host wins, as in curl
      {"IDX.Corp.TEST", "alice"},
      {"other.test", "carol"},
      {"unknown.test", "anon"},  // the default, although it comes first
      {"corp.test", "anon"},     // no suffix matching
  };
  for (const auto& r : rows) {
    CAPTURE(r.host);
    const auto* e = n->find(r.host);
    REQUIRE(e);
    CHECK(e->login == r.login);
  }
  auto without_default = parse_netrc("machine a.test login x password y", "t");
  REQUIRE(without_default);
  CHECK(without_default->find("b.test") == nullptr);
  CHECK(without_default->entries.front().line == 1);
}
