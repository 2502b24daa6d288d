#pragma once
// Private to the façade (core/src/api): what its calls share.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/inspect/source.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api::detail {

/// `r` as a failed call: the exit code and an Error (Errc::unsupported for "no index", else
/// invalid_input) with `message`, redacted (util::redact: whatever it quotes, no secret).
template <class Result>
Result failed(Result r, int code, const std::string& message) {
  r.exit_code = code;
  r.error = Error(code == kExitNoIndex ? Errc::unsupported : Errc::invalid_input, util::redact(message));
  return r;
}

/// The policy `explain` and `doctor` judge `m` by: the judging backend's (or `policy_file`),
/// checked to read the machine's device targets.
Expected<semantics::Policy> judging_policy_for(const registry::Registry& reg, const machine::Machine& m,
                                              const std::optional<std::string>& policy_file);

/// The transport registry a call uses: `given`, else net::default_registry().
const net::Registry& transports_of(const net::Registry* given);
/// The HTTP cache's root: `dir` when given, else the cache's default folder/http (beside
/// interpreters/, the detection cache). The error says how to name one, or that `transports`
/// has no cache registered.
Expected<std::filesystem::path> http_cache_root(const std::optional<std::string>& dir, const net::Registry& transports);
/// The cache's size cap: `given`, else WHEELFIT_CACHE_MAX_SIZE (util::parse_size; an error naming
/// the variable), else net::kDefaultCacheMaxSize.
Expected<std::uint64_t> cache_max_size(const std::optional<std::uint64_t>& given);

/// The process environment variable, if set.
std::optional<std::string> env(const char* name);

/// The http(s) URL `url` without its userinfo, which goes to `net.credentials` for the URL's
/// origin (source `what`), as does `token` (a bearer token, WHEELFIT_INDEX_TOKEN) when given and
/// not blank: the http rules of `transports` (HttpRules::take_credentials), which read the
/// environment's credentials into `net` first (netrc, hosts allowed insecure) when
/// `net.credentials_from_env`. Errc::invalid_input when such a credential would go over plain
/// http to a host not allowed insecure, or the token holds a control character. `url` as it is
/// when no http rules are registered (then no transport sends a credential).
Expected<std::string> take_credentials(const std::string& url, const std::string& what,
                                       const std::optional<std::string>& token, net::HttpOptions& net,
                                       const net::Registry& transports);
/// http:// or https://.
bool is_remote(std::string_view s);
/// A wheel's bytes: a URL (Range requests through `remote`), a file:// URL or a path.
Expected<std::unique_ptr<inspect::ByteSource>> open_wheel(const std::string& where, net::Transport* remote);
/// `given` when not null; else the default plugin folders loaded into `owned` (files skipped are
/// logged). An error when no plugin folder can be used.
Expected<const registry::Registry*> backends_of(const registry::Registry* given, std::unique_ptr<registry::Registry>& owned);
/// This machine, detected as `wheelfit detect` shows it, with the loaded backends' detection.
/// `backend`, when a name a profile takes, picks whose detected facts are taken. `torch_lib`,
/// when given, is set to the installed torch's library folder when the machine's torch is that
/// torch (read from its dist-info, not overridden), else "".
Expected<machine::Machine> detect_this_machine(const registry::Registry& reg, const std::optional<std::string>& python,
                                               const std::optional<std::string>& backend, std::string* torch_lib = nullptr);
/// The machine a call judges: `given` (plus the env overrides when asked), else detected
/// (`torch_lib` as detect_this_machine sets it; "" for a given machine).
Expected<machine::Machine> machine_of(const registry::Registry& reg, const std::optional<machine::Machine>& given,
                                      bool env_overrides, const std::optional<std::string>& python,
                                      const std::optional<std::string>& backend, std::string* torch_lib = nullptr);
/// The installed torch's own targets, read from its library in `lib_dir` (torch/lib), for
/// resolve::Inputs::torch_archs; nullopt when `lib_dir` is "" or the machine's torch names no
/// combo (a CPU build). A library that cannot be read is a warning naming it and why (then the
/// policy's row judges torch).
std::optional<resolve::TorchArchs> installed_torch_archs(const std::string& lib_dir, const machine::Machine& m,
                                                         const semantics::Policy& policy, std::vector<std::string>& warnings);

/// What a result's reports read besides its resolution (resolve.cpp).
output::ReportContext report_context(const ResolveResult& r);

/// FleetResult::write_json (fleet_output.cpp); `close` false: without the object's closing brace
/// and newline, for the keys a download or a mirror adds after the fleet's (no re-parse).
std::size_t write_fleet_json(const FleetResult& f, const TextSink& sink, bool close);

/// What `write` gives its sink, as one string (json() and report() of a result that streams).
template <class Write>
std::string collected(const Write& write) {
  std::string out;
  write([&out](std::string_view piece) { out += piece; });
  return out;
}

/// api::resolve (fleet.cpp): the fleet of one, `request.machine` as given (nullopt: this machine
/// detected); a failure of the request is the result's error.
ResolveResult resolve_one(const ResolveRequest& request);

/// A machine's status class, from its exit code (fleet.cpp): "resolved", "unresolved", "no index",
/// "unreadable index", "bad input" or "internal error": the fleet's summary column, and what a
/// mirror's mirror.json publishes (never the message, which names local paths).
std::string status_class(const ResolveResult& r);

}  // namespace wheelfit::api::detail
