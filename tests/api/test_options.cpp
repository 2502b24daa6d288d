// The option table (wheelfit/api/options.hpp): its rows are consistent, the usage text is built
// from them, and the values of the kinds the core reads are checked with the right messages.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "wheelfit/api/options.hpp"
#include "wheelfit/transports/credentials.hpp"
#include "wheelfit/transports/negotiate.hpp"
#include "wheelfit/api.hpp"

namespace opt = wheelfit::api::options;

namespace {

constexpr opt::Parsers kParsers{&wheelfit::transports::parse_proxy_auth, &wheelfit::transports::parse_host_list};

const opt::Option& row_of(std::string_view flag) {
  const opt::Option* row = opt::find_flag(flag);
  REQUIRE(row != nullptr);
  return *row;
}

}  // namespace

TEST_CASE("the option table's rows are consistent", "[options]") {
  std::set<std::string_view> flags;
  for (const opt::Option& row : opt::table()) {
    CAPTURE(row.flag, row.json_key, row.env);
    CHECK((!row.flag.empty() || !row.json_key.empty() || !row.env.empty()));
    if (!row.flag.empty()) {
      CHECK(row.flag.starts_with("--"));
      CHECK(flags.insert(row.flag).second);  // each flag once
      CHECK(row.commands != 0);
    }
    if (!row.alias.empty()) CHECK(flags.insert(row.alias).second);
    if (!row.json_key.empty()) CHECK(row.requests != 0);
    if (row.cli_reads_env) CHECK(!row.env.empty());
    if (row.kind == opt::Kind::number) CHECK(row.lo <= row.hi);
    if (row.kind == opt::Kind::file) CHECK(!row.empty_hint.empty());
    CHECK((row.complete == opt::Complete::words) == !row.words.empty());
    CHECK((row.repeatable & ~row.commands) == 0u);
    CHECK_FALSE((row.network && row.resolve));  // one target per row
    if (row.kind == opt::Kind::toggle) CHECK(row.network == nullptr);
  }
}

TEST_CASE("the option table: a JSON key is one row per request", "[options]") {
  for (const unsigned request : {opt::kResolve, opt::kExplain, opt::kDetect, opt::kDoctor}) {
    std::set<std::string_view> keys;
    for (const opt::Option& row : opt::table()) {
      if (row.json_key.empty() || !(row.requests & request)) continue;
      CAPTURE(request, row.json_key);
      CHECK(keys.insert(row.json_key).second);
      CHECK(opt::find_key(row.json_key, request) == &row);
    }
  }
}

TEST_CASE("find_flag and find_key find rows by flag, alias and key", "[options]") {
  CHECK(opt::find_flag("-o") == opt::find_flag("--output"));
  CHECK(opt::find_flag("-d") == opt::find_flag("--dir"));
  CHECK(opt::find_flag("--bogus") == nullptr);
  CHECK(opt::find_flag("") == nullptr);  // the rows without a flag are not found by ""
  CHECK(opt::find_key("retries", opt::kExplain) == opt::find_flag("--retries"));
  CHECK(opt::find_key("jobs", opt::kExplain) == nullptr);  // one wheel: no jobs to share
  CHECK(opt::find_key("python", opt::kResolve) == nullptr);
  CHECK(opt::find_key("bogus", opt::kResolve) == nullptr);
  CHECK(opt::find_key("", opt::kResolve) == nullptr);
}

TEST_CASE("the usage text prints every row's help lines, each in its section", "[options]") {
  const std::string usage = opt::usage();
  CHECK(usage.starts_with("usage: wheelfit <command> [options]\n"));
  CHECK(usage.ends_with("            with another sha256\n"));
  for (const opt::Option& row : opt::table()) {
    CAPTURE(row.flag);
    bool helped = false;
    for (const opt::Help& h : row.help) {
      if (h.section == opt::Section::none) continue;
      helped = true;
      CHECK(h.text.ends_with("\n"));
      CHECK(usage.find(h.text) != std::string::npos);
      CHECK(h.text.find(row.flag) != std::string_view::npos);  // the lines name their option
    }
    // Every flag of the CLI is in the usage; the rows without a flag (the C API's keys, a
    // variable) need not be.
    CHECK(helped == !row.flag.empty());
  }
}

TEST_CASE("parse_text reads each kind and names the source in its error", "[options]") {
  struct Row {
    std::string_view flag;
    std::string text;
    std::string error;  // "" when the value is good
  };
  const auto row = GENERATE(values<Row>({
      {"--index", "https://example.org/simple", ""},
      {"--cache-max-size", "500M", ""},
      {"--cache-max-size", "lots", "--cache-max-size: "},
      {"--cert", "", "--cert: give a CA bundle (PEM) or a folder of hashed certificates"},
      {"--client-cert", "", "--client-cert: give a PEM file with the certificate and its key"},
      {"--user-agent", "ok/1.0", ""},
      {"--user-agent", "two\r\nlines", "--user-agent: must be one non-empty line without control characters"},
      {"--user-agent", "", "--user-agent: must be one non-empty line without control characters"},
      {"--proxy-auth", "negotiate", ""},
      {"--proxy-auth", "kerberos", "--proxy-auth"},
      {"--allow-insecure-host", "a.example,b.example:8080", ""},
      {"--allow-insecure-host", "http://a.example/path", "--allow-insecure-host"},
  }));
  CAPTURE(row.flag, row.text);
  auto v = opt::parse_text(row_of(row.flag), row.text, row.flag, kParsers);
  if (row.error.empty()) {
    REQUIRE(v);
    CHECK(v->text == row.text);
  } else {
    REQUIRE_FALSE(v);
    CHECK_THAT(v.error().message, Catch::StartsWith(row.error));
  }
}

TEST_CASE("the table's setters set the request and the network options", "[options]") {
  wheelfit::api::ResolveRequest request;
  opt::Value v;
  v.number = 7;
  row_of("--jobs").network(request.network, v, "--jobs");
  CHECK(request.network.jobs == 7u);
  CHECK(request.network.per_host == 7u);
  v.text = "ca.pem";
  row_of("--cert").network(request.network, v, "request.cert");
  CHECK(request.network.ca_file == "ca.pem");
  CHECK(request.network.ca_source == "request.cert");
  opt::Value on;
  on.on = true;
  row_of("--no-cache").resolve(request, on);
  row_of("--no-fallback").resolve(request, on);
  CHECK_FALSE(request.use_cache);
  CHECK_FALSE(request.fallback);
  opt::Value size;
  size.size = 1024;
  row_of("--cache-max-size").resolve(request, size);
  CHECK(request.cache_max_size == 1024u);
}
