// The C API (wheelfit/wheelfit.h): JSON requests parsed into the façade's request structs,
// results rendered as the CLI renders them. Nothing C++ crosses: every exception is caught here.
#include "wheelfit/wheelfit.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "wheelfit/machine/machine.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/register.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/wheelfit.hpp"

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "unknown"
#endif

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

// The caller's copy of `text` (malloc: wheelfit_free releases it); NULL when memory ran out.
char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

int error_out(int code, const std::string& message, char** result) noexcept {
  try {
    *result = copy_out(json::serialize(json::object{{"error", json::object{{"exit_code", code}, {"message", message}}}}) + "\n");
  } catch (...) {
    *result = nullptr;  // out of memory: the code still says what happened
  }
  return code;
}

struct BadRequest {
  std::string message;
};

const json::value& require(const json::value& v, bool ok, const std::string& key, const char* what) {
  if (!ok) throw BadRequest{"request." + key + ": expected " + what};
  return v;
}

std::string string_of(const json::value& v, const std::string& key) {
  require(v, v.is_string(), key, "a string");
  return std::string(v.get_string());
}

// Refuses a string of the request (a key or a value, at any depth) that holds a NUL byte: the
// C side of a path or a header would stop at it ("/etc/passwd\u0000.toml" opens /etc/passwd).
// `key` is the JSON path below the request ("configs[0]"; "" for the request itself).
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

#ifdef _WIN32
// The folder beside this library: plugins\ beside wheelfit.dll (the zip), else <build>/plugins
// (the DLL is in <build>/lib). The DLL is the module holding wheelfit_version.
fs::path plugins_beside_library() {
  HMODULE self = nullptr;
  if (!::GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            reinterpret_cast<LPCWSTR>(&wheelfit_version), &self)) {
    return {};
  }
  std::wstring name(MAX_PATH, L'\0');
  for (;;) {  // a long path: grow until it fits
    const DWORD n = ::GetModuleFileNameW(self, name.data(), static_cast<DWORD>(name.size()));
    if (n == 0) return {};
    if (n < name.size()) {
      name.resize(n);
      break;
    }
    name.resize(name.size() * 2);
  }
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::path(name), ec).parent_path();
  if (fs::is_directory(dir / "plugins", ec)) return dir / "plugins";
  return dir.parent_path() / "plugins";
}
#else
// The folder beside this library: <prefix>/lib/wheelfit/plugins, else <build>/plugins.
fs::path plugins_beside_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&wheelfit_version), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(fs::path(info.dli_fname), ec), ec).parent_path();
  if (fs::is_directory(dir / "wheelfit" / "plugins", ec)) return dir / "wheelfit" / "plugins";
  return dir.parent_path() / "plugins";
}
#endif

// retries / timeout / speed_limit / speed_time / max_time / jobs / user_agent / proxy_auth / cert / client_cert
// into `net`; false when `key` is none of them.
// The request keys that each set one optional string of the request: true when `key` is one.
template <class Request>
bool string_key(Request& r, const std::string& key, const json::value& v,
                std::initializer_list<std::pair<std::string_view, std::optional<std::string> Request::*>> keys) {
  for (const auto& [name, member] : keys) {
    if (key != name) continue;
    r.*member = string_of(v, key);
    return true;
  }
  return false;
}

bool network_key(const std::string& key, const json::value& v, wheelfit::transports::HttpOptions& net) {
  if (key == "cert" || key == "client_cert") {
    std::string path = string_of(v, key);
    if (path.empty()) throw BadRequest{"request." + key + ": give a file"};
    (key == "cert" ? net.ca_file : net.client_cert) = std::move(path);
    (key == "cert" ? net.ca_source : net.client_cert_source) = "request." + key;
  } else if (key == "user_agent") {
    net.user_agent = string_of(v, key);
    const bool control = std::any_of(net.user_agent.begin(), net.user_agent.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (net.user_agent.empty() || control) {
      throw BadRequest{"request.user_agent: must be one non-empty line without control characters"};
    }
  } else if (key == "proxy_auth") {
    auto auth = wheelfit::transports::parse_proxy_auth(string_of(v, key), "request.proxy_auth");
    if (!auth) throw BadRequest{auth.error().message};
    net.proxy_auth = *auth;
  } else if (key == "retries") {
    net.retry.retries = static_cast<int>(number_of(v, key, 0, 20));
  } else if (key == "timeout") {
    const auto s = std::chrono::seconds(number_of(v, key, 1, 3600));
    net.connect_timeout = s;
    net.idle_timeout = s;
  } else if (key == "speed_limit") {
    net.speed_limit = static_cast<std::uint64_t>(number_of(v, key, 0, 1L << 30));
  } else if (key == "speed_time") {
    net.speed_time = std::chrono::seconds(number_of(v, key, 1, 3600));
  } else if (key == "max_time") {  // the call starts now
    net.max_time = wheelfit::transports::MaxTime::from_now(std::chrono::seconds(number_of(v, key, 1, 86400)), "request.max_time");
  } else if (key == "allow_insecure_host") {
    auto hosts = wheelfit::transports::parse_host_list(string_of(v, key), "request.allow_insecure_host");
    if (!hosts) throw BadRequest{hosts.error().message};
    net.credentials.insecure_hosts = std::move(*hosts);
  } else if (key == "jobs") {
    net.jobs = static_cast<unsigned>(number_of(v, key, 1, 64));
    net.per_host = net.jobs;
  } else {
    return false;
  }
  return true;
}

wheelfit::machine::Machine machine_of(const json::value& v, const std::string& key) {
  require(v, v.is_object(), key, "an object of profile keys");
  auto m = wheelfit::machine::parse_machine_profile(json::serialize(v), "request." + key);
  if (!m) throw BadRequest{m.error().message};
  return std::move(*m);
}

const json::object& object_of(const json::value& doc) {
  if (!doc.is_object()) throw BadRequest{"request: expected a JSON object"};
  return doc.get_object();
}

// "machines": [{"name": "a", "machine": {...profile...}}, ...].
std::vector<wheelfit::api::FleetMachine> fleet_of(const json::value& v, const std::string& key) {
  require(v, v.is_array() && !v.get_array().empty(), key, "a non-empty array of {name, machine}");
  std::vector<wheelfit::api::FleetMachine> fleet;
  for (std::size_t i = 0; i < v.get_array().size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    const json::value& e = require(v.get_array()[i], v.get_array()[i].is_object(), at, "an object");
    std::optional<std::string> name;
    std::optional<wheelfit::machine::Machine> m;
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

// A resolve request; "machines" goes to `fleet` (then the call is a fleet resolve).
wheelfit::api::ResolveRequest request_of(const json::value& doc, std::optional<std::vector<wheelfit::api::FleetMachine>>& fleet) {
  wheelfit::api::ResolveRequest r;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    const json::value& v = kv.value();
    if (key == "configs") {
      r.configs = strings_of(v, key);
    } else if (key == "envs") {
      require(v, v.is_array(), key, "an array of {name, python, packages}");
      for (std::size_t i = 0; i < v.get_array().size(); ++i) {
        const std::string at = key + "[" + std::to_string(i) + "]";
        const json::value& e = require(v.get_array()[i], v.get_array()[i].is_object(), at, "an object");
        wheelfit::api::EnvRequest env;
        for (const auto& ekv : e.get_object()) {
          const std::string ekey(ekv.key());
          if (ekey == "name") env.name = string_of(ekv.value(), at + ".name");
          else if (ekey == "python") env.python = string_of(ekv.value(), at + ".python");
          else if (ekey == "packages") env.packages = strings_of(ekv.value(), at + ".packages");
          else throw BadRequest{"request." + at + ": unknown key '" + ekey + "' (known: name, python, packages)"};
        }
        r.envs.push_back(std::move(env));
      }
    } else if (key == "machine") {
      r.machine = machine_of(v, key);
    } else if (key == "machines") {
      fleet = fleet_of(v, key);
    } else if (string_key(r, key, v, {{"index", &wheelfit::api::ResolveRequest::index},
                                      {"backend", &wheelfit::api::ResolveRequest::backend},
                                      {"policy", &wheelfit::api::ResolveRequest::policy_file},
                                      {"cache_dir", &wheelfit::api::ResolveRequest::cache_dir},
                                      {"releases_repo", &wheelfit::api::ResolveRequest::releases_repo},
                                      {"combo", &wheelfit::api::ResolveRequest::combo}})) {
    } else if (key == "cache_max_size") {
      auto size = wheelfit::util::parse_size(string_of(v, key));
      if (!size) throw BadRequest{"request.cache_max_size: " + size.error().message};
      r.cache_max_size = *size;
    } else if (key == "offline" || key == "no_cache" || key == "inspect" || key == "no_fallback") {
      require(v, v.is_bool(), key, "true or false");
      const bool on = v.get_bool();
      if (key == "offline") r.offline = on;
      else if (key == "inspect") r.inspect = on;
      else if (key == "no_cache") r.use_cache = !on;
      else r.fallback = !on;
    } else if (network_key(key, v, r.network)) {
    } else {
      throw BadRequest{"request: unknown key '" + key + "' (known: configs, envs, machine, machines, index, backend, policy, offline, "
                       "no_cache, cache_dir, cache_max_size, retries, timeout, speed_limit, speed_time, max_time, jobs, user_agent, "
                       "proxy_auth, allow_insecure_host, "
                       "cert, client_cert, releases_repo, inspect, combo, no_fallback)"};
    }
  }
  if (r.offline && !r.use_cache) throw BadRequest{"request: offline reads only the cache; it does not go with no_cache"};
  if (r.configs.empty() && r.envs.empty()) throw BadRequest{"request: give configs or envs"};
  if (fleet && r.machine) throw BadRequest{"request: machine and machines do not go together (give one)"};
  return r;
}

wheelfit::api::ExplainRequest explain_request_of(const json::value& doc) {
  wheelfit::api::ExplainRequest r;
  bool wheel = false;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    const json::value& v = kv.value();
    if (key == "wheel") {
      r.wheel = string_of(v, key);
      wheel = true;
    } else if (key == "machine") {
      r.machine = machine_of(v, key);
    } else if (string_key(r, key, v, {{"python", &wheelfit::api::ExplainRequest::python},
                                      {"policy", &wheelfit::api::ExplainRequest::policy_file}})) {
    } else if (key == "jobs" || !network_key(key, v, r.network)) {  // one wheel: no jobs to share
      throw BadRequest{"request: unknown key '" + key + "' (known: wheel, machine, python, policy, retries, timeout, speed_limit, "
                       "speed_time, max_time, user_agent, "
                       "proxy_auth, allow_insecure_host, cert, client_cert)"};
    }
  }
  if (!wheel) throw BadRequest{"request.wheel: missing (a .whl file, its URL, or a wheel file name)"};
  return r;
}

wheelfit::api::DetectRequest detect_request_of(const json::value& doc) {
  wheelfit::api::DetectRequest r;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    if (key == "python") r.python = string_of(kv.value(), key);
    else if (key == "backend") r.backend = string_of(kv.value(), key);
    else throw BadRequest{"request: unknown key '" + key + "' (known: python, backend)"};
  }
  return r;
}

wheelfit::api::DoctorRequest doctor_request_of(const json::value& doc) {
  wheelfit::api::DoctorRequest r;
  for (const auto& kv : object_of(doc)) {
    const std::string key(kv.key());
    const json::value& v = kv.value();
    if (key == "machine") r.machine = machine_of(v, key);
    else if (key == "python") r.python = string_of(v, key);
    else if (key == "site") r.site = string_of(v, key);
    else if (key == "policy") r.policy_file = string_of(v, key);
    else throw BadRequest{"request: unknown key '" + key + "' (known: python, site, machine, policy)"};
  }
  return r;
}

// The plugin folders a C API call loads: WHEELFIT_PLUGIN_PATH's, then the one beside the library.
wheelfit::registry::PluginLoadReport load_backends(wheelfit::registry::Registry& reg) {
  const auto env_path = wheelfit::util::environment_utf8("WHEELFIT_PLUGIN_PATH");
  return wheelfit::registry::load_plugins(
      reg, wheelfit::registry::plugin_dirs(env_path ? std::optional<std::string_view>(*env_path) : std::nullopt,
                                           plugins_beside_library()));
}

// Runs `call` on the parsed request, turning every failure into the error object.
template <class Call>
int guarded(const char* request_json, char** result_json, Call&& call) noexcept {
  if (!result_json) return wheelfit::api::kExitBadInput;
  *result_json = nullptr;
  try {
    if (!request_json) return error_out(wheelfit::api::kExitBadInput, "request: NULL", result_json);
    json::error_code ec;
    const json::value doc = json::parse(request_json, ec);
    if (ec) return error_out(wheelfit::api::kExitBadInput, std::string("request: not JSON: ") + ec.message(), result_json);
    refuse_nul_bytes(doc, "");
    return call(doc, result_json);
  } catch (const BadRequest& e) {
    return error_out(wheelfit::api::kExitBadInput, e.message, result_json);
  } catch (const std::exception& e) {
    return error_out(wheelfit::api::kExitInternal, std::string("internal error: ") + e.what(), result_json);
  } catch (...) {
    return error_out(wheelfit::api::kExitInternal, "internal error: an exception that is not a std::exception", result_json);
  }
}

// The library's transports: the built-ins, registered into a registry of the library's own when a
// call first needs them (the one registration; a program's transport::default_registry() is left
// to the program). Thread-safe: a function-local static.
const wheelfit::transport::Registry& library_transports() {
  static const auto registry = [] {
    auto reg = std::make_unique<wheelfit::transport::Registry>();
    if (auto done = wheelfit::transports::register_transports(*reg); !done) throw std::runtime_error(done.error().message);
    if (auto done = wheelfit::policies::register_format(); !done) throw std::runtime_error(done.error().message);
    return reg;
  }();
  return *registry;
}

// Loads the plugins into a registry of the call's own, hands it and the library's transports to
// `request`, runs `call`.
template <class Request, class Call>
int with_backends(Request request, Call&& call, char** out) {
  wheelfit::registry::Registry reg;
  auto report = load_backends(reg);
  if (!report.ok()) return error_out(wheelfit::api::kExitBadInput, "backend plugins: " + report.error->message, out);
  request.backends = &reg;
  request.transports = &library_transports();
  const auto result = call(request);
  *out = copy_out(result.json());
  return result.exit_code;
}

}  // namespace

extern "C" {

const char* wheelfit_version(void) { return WHEELFIT_VERSION; }

int wheelfit_resolve_json(const char* request_json, char** result_json) {
  return guarded(request_json, result_json, [](const json::value& doc, char** out) {
    std::optional<std::vector<wheelfit::api::FleetMachine>> fleet;
    auto request = request_of(doc, fleet);
    if (fleet) return with_backends(std::move(request), [&fleet](const auto& r) { return wheelfit::api::resolve_fleet(r, *fleet); }, out);
    return with_backends(std::move(request), [](const auto& r) { return wheelfit::api::resolve(r); }, out);
  });
}

int wheelfit_explain_json(const char* request_json, char** result_json) {
  return guarded(request_json, result_json, [](const json::value& doc, char** out) {
    return with_backends(explain_request_of(doc), [](const auto& r) { return wheelfit::api::explain(r); }, out);
  });
}

int wheelfit_detect_json(const char* request_json, char** result_json) {
  return guarded(request_json, result_json, [](const json::value& doc, char** out) {
    wheelfit::api::DetectRequest request = detect_request_of(doc);
    wheelfit::registry::Registry reg;
    (void)load_backends(reg);  // a folder that cannot be used leaves the backends' facts unknown
    request.backends = &reg;
    const auto result = wheelfit::api::detect(request);
    *out = copy_out(result.json());
    return result.exit_code;
  });
}

int wheelfit_doctor_json(const char* request_json, char** result_json) {
  return guarded(request_json, result_json, [](const json::value& doc, char** out) {
    return with_backends(doctor_request_of(doc), [](const auto& r) { return wheelfit::api::doctor(r); }, out);
  });
}

void wheelfit_free(char* p) { std::free(p); }

}  // extern "C"
