// The C API's request parser (capi/request.hpp): every key of the option table is taken by the
// requests the table says, and bad requests (unknown keys, wrong kinds, out of range) are refused
// with messages naming the key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include <boost/json.hpp>

#include "capi/request.hpp"
#include "wheelfit/api/options.hpp"

namespace json = boost::json;
namespace opt = wheelfit::api::options;
using wheelfit::capi::BadRequest;

namespace {

// Parses `text` as the request `request` (a Command bit); "" when it is taken, else the message.
std::string parse_as(unsigned request, const std::string& text) {
  try {
    const json::value doc = json::parse(text);
    wheelfit::capi::refuse_nul_bytes(doc, "");
    std::optional<std::vector<wheelfit::api::FleetMachine>> fleet;
    if (request == opt::kResolve) (void)wheelfit::capi::resolve_request_of(doc, fleet);
    else if (request == opt::kExplain) (void)wheelfit::capi::explain_request_of(doc);
    else if (request == opt::kDetect) (void)wheelfit::capi::detect_request_of(doc);
    else (void)wheelfit::capi::doctor_request_of(doc);
    return "";
  } catch (const BadRequest& e) {
    return e.message;
  }
}

// A good value for `row` as JSON text.
std::string good_value(const opt::Option& row) {
  if (row.json_key == "configs") return R"(["comfy-env.toml"])";
  if (row.json_key == "envs") return R"([{"name": "e", "packages": ["p"]}])";
  if (row.json_key == "machines") return R"([{"name": "a", "machine": {"os": "linux"}}])";
  if (row.json_key == "machine") return R"({"os": "linux"})";
  switch (row.kind) {
    case opt::Kind::toggle: return "false";
    case opt::Kind::number: return std::to_string(row.lo);
    case opt::Kind::size: return "\"1G\"";
    case opt::Kind::proxy_auth: return "\"basic\"";
    case opt::Kind::host_list: return "\"a.example\"";
    default: return "\"x\"";
  }
}

// What each request needs besides the key tested.
std::string base_of(unsigned request) {
  if (request == opt::kResolve) return R"("configs": ["comfy-env.toml"])";
  if (request == opt::kExplain) return R"("wheel": "torch-2.8.0-cp312-cp312-linux_x86_64.whl")";
  return "";
}

std::set<std::string> split_keys(std::string_view list) {
  std::set<std::string> out;
  while (!list.empty()) {
    const auto comma = list.find(", ");
    out.emplace(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 2);
  }
  return out;
}

}  // namespace

TEST_CASE("the C API takes every key the option table gives its request", "[capi][options]") {
  for (const unsigned request : {opt::kResolve, opt::kExplain, opt::kDetect, opt::kDoctor}) {
    for (const opt::Option& row : opt::table()) {
      if (row.json_key.empty() || !(row.requests & request)) continue;
      const std::string base = base_of(request);
      const bool is_base = base.find("\"" + std::string(row.json_key) + "\"") != std::string::npos;
      const std::string text = "{" + (is_base || base.empty() ? "" : base + ", ") + "\"" + std::string(row.json_key) +
                               "\": " + good_value(row) + "}";
      CAPTURE(request, text);
      const std::string error = parse_as(request, text);
      CHECK(error.find("unknown key") == std::string::npos);  // a machine profile may want more keys
      if (row.kind != opt::Kind::structured) CHECK(error == "");
    }
  }
}

TEST_CASE("the C API's known keys are the option table's", "[capi][options]") {
  struct Row {
    unsigned request;
    std::string_view known;
  };
  const auto row = GENERATE(values<Row>({{opt::kResolve, wheelfit::capi::kResolveKeys}, {opt::kExplain, wheelfit::capi::kExplainKeys},
                                         {opt::kDetect, wheelfit::capi::kDetectKeys}, {opt::kDoctor, wheelfit::capi::kDoctorKeys}}));
  std::set<std::string> from_table;
  for (const opt::Option& o : opt::table()) {
    if (!o.json_key.empty() && (o.requests & row.request)) from_table.emplace(o.json_key);
  }
  CHECK(split_keys(row.known) == from_table);
  CHECK(parse_as(row.request, R"({"bogus": 1})") ==
        "request: unknown key 'bogus' (known: " + std::string(row.known) + ")");
}

TEST_CASE("the C API refuses values of the wrong kind or out of range", "[capi][options]") {
  struct Row {
    unsigned request;
    std::string json;
    std::string message;
  };
  const auto row = GENERATE(values<Row>({
      {opt::kResolve, R"({"configs": ["c"], "retries": "3"})", "request.retries: expected an integer"},
      {opt::kResolve, R"({"configs": ["c"], "retries": 21})", "request.retries: 21 is not in 0-20"},
      {opt::kResolve, R"({"configs": ["c"], "jobs": 0})", "request.jobs: 0 is not in 1-64"},
      {opt::kResolve, R"({"configs": ["c"], "max_time": 86401})", "request.max_time: 86401 is not in 1-86400"},
      {opt::kResolve, R"({"configs": ["c"], "offline": 1})", "request.offline: expected true or false"},
      {opt::kResolve, R"({"configs": ["c"], "index": 5})", "request.index: expected a string"},
      {opt::kResolve, R"({"configs": ["c"], "cert": ""})", "request.cert: give a file"},
      {opt::kResolve, R"({"configs": ["c"], "user_agent": "a\nb"})",
       "request.user_agent: must be one non-empty line without control characters"},
      {opt::kResolve, R"({"configs": ["c"], "python": "3.12"})", "request: unknown key 'python'"},
      {opt::kResolve, R"({"configs": ["c"], "offline": true, "no_cache": true})",
       "request: offline reads only the cache; it does not go with no_cache"},
      {opt::kResolve, R"({"index": "x"})", "request: give configs or envs"},
      {opt::kResolve, R"({"configs": ["a\u0000b"]})", "request.configs[0]: holds a NUL byte (\\u0000)"},
      {opt::kResolve, R"([1])", "request: expected a JSON object"},
      {opt::kExplain, R"({"wheel": "w.whl", "jobs": 4})", "request: unknown key 'jobs'"},
      {opt::kExplain, R"({"wheel": "w.whl", "timeout": 0})", "request.timeout: 0 is not in 1-3600"},
      {opt::kExplain, R"({"python": "p"})", "request.wheel: missing"},
      {opt::kDetect, R"({"python": 3})", "request.python: expected a string"},
      {opt::kDoctor, R"({"site": []})", "request.site: expected a string"},
  }));
  CAPTURE(row.json);
  CHECK_THAT(parse_as(row.request, row.json), Catch::StartsWith(row.message));
}

TEST_CASE("the C API's table keys set the request as the CLI's flags do", "[capi][options]") {
  const json::value doc = json::parse(
      R"({"configs": ["c"], "jobs": 8, "no_fallback": true, "cache_max_size": "1GiB", "cert": "ca.pem", "max_time": 60})");
  std::optional<std::vector<wheelfit::api::FleetMachine>> fleet;
  const auto r = wheelfit::capi::resolve_request_of(doc, fleet);
  CHECK(r.network.jobs == 8u);
  CHECK_FALSE(r.fallback);
  CHECK(r.cache_max_size == std::uint64_t{1} << 30);
  CHECK(r.network.ca_source == "request.cert");
  REQUIRE(r.network.max_time);
  CHECK(r.network.max_time->source == "request.max_time");
  CHECK_FALSE(fleet);
}
