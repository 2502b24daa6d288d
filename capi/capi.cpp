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
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "wheelfit/machine/machine.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/register.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/api.hpp"
#include "capi/request.hpp"

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "unknown"
#endif

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using wheelfit::capi::BadRequest;
using wheelfit::capi::refuse_nul_bytes;

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
// call first needs them (the one registration; a program's net::default_registry() is left
// to the program). Thread-safe: a function-local static.
const wheelfit::net::Registry& library_transports() {
  static const auto registry = [] {
    auto reg = std::make_unique<wheelfit::net::Registry>();
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
    auto request = wheelfit::capi::resolve_request_of(doc, fleet);
    if (fleet) return with_backends(std::move(request), [&fleet](const auto& r) { return wheelfit::api::resolve_fleet(r, *fleet); }, out);
    return with_backends(std::move(request), [](const auto& r) { return wheelfit::api::resolve(r); }, out);
  });
}

int wheelfit_explain_json(const char* request_json, char** result_json) {
  return guarded(request_json, result_json, [](const json::value& doc, char** out) {
    return with_backends(wheelfit::capi::explain_request_of(doc), [](const auto& r) { return wheelfit::api::explain(r); }, out);
  });
}

int wheelfit_detect_json(const char* request_json, char** result_json) {
  return guarded(request_json, result_json, [](const json::value& doc, char** out) {
    wheelfit::api::DetectRequest request = wheelfit::capi::detect_request_of(doc);
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
    return with_backends(wheelfit::capi::doctor_request_of(doc), [](const auto& r) { return wheelfit::api::doctor(r); }, out);
  });
}

void wheelfit_free(char* p) { std::free(p); }

}  // extern "C"
