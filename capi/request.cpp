// The C API's request parser (request.hpp): the keys of the option table (wheelfit/api/options.hpp)
// set the request through the table's setters; the structured keys (configs, envs, machine,
// machines, wheel) are read here.
#include "capi/request.hpp"

#include <string_view>
#include <utility>

#include <boost/json.hpp>

#include "wheelfit/api/options.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/transports/credentials.hpp"
#include "wheelfit/transports/negotiate.hpp"

namespace wheelfit::capi {
namespace {

namespace json = boost::json;
namespace opt = api::options;

// The transports' parsers of the values the core cannot read itself (proxy auth, host lists).
constexpr opt::Parsers kParsers{&transports::parse_proxy_auth, &transports::parse_host_list};

const json::value& require(const json::value& v, bool ok, const std::string& key, const char* what) {
  if (!ok) throw BadRequest{"request." + key + ": expected " + what};
  return v;
}

std::string string_of(const json::value& v, const std::string& key) {
  require(v, v.is_string(), key, "a string");
  return std::string(v.get_string());
}

std::vector<std::string> strings_of(const json::value& v, const std::string& key) {
  require(v, v.is_array(), key, "an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.get_array().size(); ++i) out.push_back(string_of(v.get_array()[i], key + "[" + std::to_string(i) + "]"));
  return out;
}

long number_of(const json::value& v, const std::string& key, long lo, long hi) {
  require(v, v.is_int64(), key, "an integer");
  const auto n = v.get_int64();
  if (n < lo || n > hi) throw BadRequest{"request." + key + ": " + std::to_string(n) + " is not in " + std::to_string(lo) + "-" + std::to_string(hi)};
  return static_cast<long>(n);
}

// The value of `key` read as its row's kind (toggle: true or false; number: an integer in the
// row's range; a file: a non-empty string; the rest: a string read by api::options::parse_text).
opt::Value value_of(const opt::Option& row, const json::value& v, const std::string& key) {
  opt::Value out;
  if (row.kind == opt::Kind::toggle) {
    require(v, v.is_bool(), key, "true or false");
    out.on = v.get_bool();
    return out;
  }
  if (row.kind == opt::Kind::number) {
    out.number = number_of(v, key, row.lo, row.hi);
    return out;
  }
  std::string text = string_of(v, key);
  if (row.kind == opt::Kind::file && text.empty()) throw BadRequest{"request." + key + ": give a file"};
  auto parsed = opt::parse_text(row, std::move(text), "request." + key, kParsers);
  if (!parsed) throw BadRequest{parsed.error().message};
  return std::move(*parsed);
}

// A key of the option table that `request` takes and that sets the network options (or, with
// `resolve`, the resolve request); false for any other key.
bool table_key(const std::string& key, const json::value& v, unsigned request, net::HttpOptions& net,
               api::ResolveRequest* resolve) {
  const opt::Option* row = opt::find_key(key, request);
  if (!row || row->kind == opt::Kind::structured || !(row->network || (resolve && row->resolve))) return false;
  opt::Value value = value_of(*row, v, key);
  if (row->network) row->network(net, value, "request." + key);
  else row->resolve(*resolve, value);
  return true;
}

[[noreturn]] void unknown_key(const std::string& key, std::string_view known) {
  throw BadRequest{"request: unknown key '" + key + "' (known: " + std::string(known) + ")"};
}

machine::Machine machine_of(const json::value& v, const std::string& key) {
  require(v, v.is_object(), key, "an object of profile keys");
  auto m = machine::parse_machine_profile(json::serialize(v), "request." + key);
  if (!m) throw BadRequest{m.error().message};
  return std::move(*m);
}

const json::object& object_of(const json::value& doc) {
  if (!doc.is_object()) throw BadRequest{"request: expected a JSON object"};
  return doc.get_object();
}

// "machines": [{"name": "a", "machine": {...profile...}}, ...].
std::vector<api::FleetMachine> fleet_of(const json::value& v, const std::string& key) {
  require(v, v.is_array() && !v.get_array().empty(), key, "a non-empty array of {name, machine}");
  std::vector<api::FleetMachine> fleet;
  for (std::size_t i = 0; i < v.get_array().size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    const json::value& e = require(v.get_array()[i], v.get_array()[i].is_object(), at, "an object");
    std::optional<std::string> name;
    std::optional<machine::Machine> m;
    for (const auto& ekv : e.get_object()) {
      const std::string ekey(ekv.key());
      if (ekey == "name") name = string_of(ekv.value(), at + ".name");
      else if (ekey == "machine") m = machine_of(ekv.value(), at + ".machine");
      else throw BadRequest{"request." + at + ": unknown key '" + ekey + "' (known: name, machine)"};
    }
    if (!name || name->empty() || !m) throw BadRequest{"request." + at + ": give a name and a machine"};
    fleet.push_back({std::move(*name), std::move(*m)});
  }
  return fleet;
}

// "envs": [{"name", "python", "packages"}, ...].
std::vector<api::EnvRequest> envs_of(const json::value& v, const std::string& key) {
  require(v, v.is_array(), key, "an array of {name, python, packages}");
  std::vector<api::EnvRequest> envs;
  for (std::size_t i = 0; i < v.get_array().size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    const json::value& e = require(v.get_array()[i], v.get_array()[i].is_object(), at, "an object");
    api::EnvRequest env;
    for (const auto& ekv : e.get_object()) {
      const std::string ekey(ekv.key());
      if (ekey == "name") env.name = string_of(ekv.value(), at + ".name");
      else if (ekey == "python") env.python = string_of(ekv.value(), at + ".python");
      else if (ekey == "packages") env.packages = strings_of(ekv.value(), at + ".packages");
      else throw BadRequest{"request." + at + ": unknown key '" + ekey + "' (known: name, python, packages)"};
    }
    envs.push_back(std::move(env));
  }
  return envs;
}

}  // namespace

void refuse_nul_bytes(const json::value& v, const std::string& key) {
  const std::string where = key.empty() ? "request" : "request." + key;
  if (const auto* s = v.if_string(); s && std::string_view(*s).find('\0') != std::string_view::npos) {
    throw BadRequest{where + ": holds a NUL byte (\\u0000)"};
  }
  if (const auto* a = v.if_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) refuse_nul_bytes((*a)[i], key + "[" + std::to_string(i) + "]");
  } else if (const auto* o = v.if_object()) {
    for (const auto& kv : *o) {
      const std::string_view name = kv.key();
      if (name.find('\0') != std::string_view::npos) throw BadRequest{where + ": a key holds a NUL byte (\\u0000)"};
      refuse_nul_bytes(kv.value(), key.empty() ? std::string(name) : key + "." + std::string(name));
    }
  }
}

api::ResolveRequest resolve_request_of(const json::value& doc, std::optional<std::vector<api::FleetMachine>>& fleet) {
  api::ResolveRequest r;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    const json::value& v = kv.value();
    if (key == "configs") r.configs = strings_of(v, key);
    else if (key == "envs") r.envs = envs_of(v, key);
    else if (key == "machine") r.machine = machine_of(v, key);
    else if (key == "machines") fleet = fleet_of(v, key);
    else if (!table_key(key, v, opt::kResolve, r.network, &r)) unknown_key(key, kResolveKeys);
  }
  if (r.offline && !r.use_cache) throw BadRequest{"request: offline reads only the cache; it does not go with no_cache"};
  if (r.configs.empty() && r.envs.empty()) throw BadRequest{"request: give configs or envs"};
  if (fleet && r.machine) throw BadRequest{"request: machine and machines do not go together (give one)"};
  return r;
}

api::ExplainRequest explain_request_of(const json::value& doc) {
  api::ExplainRequest r;
  bool wheel = false;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    const json::value& v = kv.value();
    if (key == "wheel") {
      r.wheel = string_of(v, key);
      wheel = true;
    } else if (key == "machine") {
      r.machine = machine_of(v, key);
    } else if (key == "python") {
      r.python = string_of(v, key);
    } else if (key == "policy") {
      r.policy_file = string_of(v, key);
    } else if (!table_key(key, v, opt::kExplain, r.network, nullptr)) {  // one wheel: no jobs to share
      unknown_key(key, kExplainKeys);
    }
  }
  if (!wheel) throw BadRequest{"request.wheel: missing (a .whl file, its URL, or a wheel file name)"};
  return r;
}

api::DetectRequest detect_request_of(const json::value& doc) {
  api::DetectRequest r;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    if (key == "python") r.python = string_of(kv.value(), key);
    else if (key == "backend") r.backend = string_of(kv.value(), key);
    else unknown_key(key, kDetectKeys);
  }
  return r;
}

api::DoctorRequest doctor_request_of(const json::value& doc) {
  api::DoctorRequest r;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    if (key == "machine") {
      r.machine = machine_of(kv.value(), key);
      continue;
    }
    // The string keys, each its field.
    std::optional<std::string>* field = key == "python" ? &r.python : key == "site" ? &r.site : key == "policy" ? &r.policy_file : nullptr;
    if (!field) unknown_key(key, kDoctorKeys);
    *field = string_of(kv.value(), key);
  }
  return r;
}

}  // namespace wheelfit::capi
