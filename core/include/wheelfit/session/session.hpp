#pragma once
// The session: the decisions every command makes before and around its own work, the same way
// for each: which backends are loaded, which one judges a machine and with which policy, which
// machine (given, with the env overrides, or detected), which transport registry, whose
// credentials go where, which cache folder and cap, how a wheel's bytes are opened, and
// `--inspect`'s hook. The façade (wheelfit/api.hpp) calls these; so may an embedder that builds
// its own command. Nothing here knows a request or a result type of the façade.
//
// Thread safety: every function may run on any thread; those that read the environment read it
// as it is at the call.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/inspect/source.hpp"
#include "wheelfit/machine/detect.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/net/options.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::session {

/// The backend a machine with no other word is judged by (judging_backend).
inline constexpr std::string_view kDefaultBackend = "cuda";

// --- Environment, transports, credentials, cache -------------------------------------------------

/// The process environment variable, if set.
std::optional<std::string> env(const char* name);
/// The transport registry a call uses: `given`, else net::default_registry().
const net::Registry& transports_of(const net::Registry* given);
/// The http(s) URL `url` without its userinfo, which goes to `net.credentials` for the URL's
/// origin (source `what`), as does `token` (a bearer token, WHEELFIT_INDEX_TOKEN) when given and
/// not blank: the http rules of `transports` (HttpRules::take_credentials), which read the
/// environment's credentials into `net` first (netrc, hosts allowed insecure) when
/// `net.credentials_from_env`. Errc::invalid_input when such a credential would go over plain
/// http to a host not allowed insecure, or the token holds a control character. `url` as it is
/// when no http rules are registered (then no transport sends a credential).
Expected<std::string> take_credentials(const std::string& url, const std::string& what, const std::optional<std::string>& token,
                                       net::HttpOptions& net, const net::Registry& transports);
/// The HTTP cache's root: `dir` when given, else the cache's default folder/http (beside
/// interpreters/, the detection cache). The error says how to name one, or that `transports`
/// has no cache registered.
Expected<std::filesystem::path> http_cache_root(const std::optional<std::string>& dir, const net::Registry& transports);
/// The cache's size cap: `given`, else WHEELFIT_CACHE_MAX_SIZE (util::parse_size; an error naming
/// the variable), else net::kDefaultCacheMaxSize.
Expected<std::uint64_t> cache_max_size(const std::optional<std::uint64_t>& given);
/// A wheel's bytes: through `remote` (Range requests) when given, the caller having asked the
/// URL's scheme facts (net::SchemeFacts::remote); else a file:// URL or a path.
Expected<std::unique_ptr<inspect::ByteSource>> open_wheel(const std::string& where, net::Transport* remote);

// --- Backends, policy, machine ---------------------------------------------------------------------

/// `given` when not null; else the default plugin folders loaded into `owned` (files skipped are
/// logged). An error when no plugin folder can be used.
Expected<const registry::Registry*> backends_of(const registry::Registry* given, std::unique_ptr<registry::Registry>& owned);
/// The loaded backend whose torch-label grammar names `local_label` ("cu128" -> "cuda").
std::optional<std::string> backend_of_torch_label(const registry::Registry& registry, std::string_view local_label);
/// The backend a call judges with: `name`, else the one the machine's torch label names, else
/// the machine's backend, else kDefaultBackend (a cpu machine too, with a warning). An unknown
/// name is Errc::invalid_input listing the loaded ones.
Expected<const registry::BackendInfo*> judging_backend(const registry::Registry& registry, const std::optional<std::string>& name,
                                                       const machine::Machine& m);
/// The policy a call judges with: `file`, else WHEELFIT_POLICY, else the backend's own data;
/// with the backend's device rules either way. Errors name the source ("--policy", ...).
Expected<semantics::Policy> judging_policy(const registry::BackendInfo& backend, const std::optional<std::string>& file);
/// The policy `explain` and `doctor` judge `m` by: the judging backend's (or `policy_file`),
/// checked to read the machine's device targets.
Expected<semantics::Policy> judging_policy_for(const registry::Registry& reg, const machine::Machine& m,
                                               const std::optional<std::string>& policy_file);
/// Every loaded backend's detection as (name, detect JSON); a backend whose detect() call fails
/// outside its JSON gets {"present": false, "error": ...}.
machine::BackendPayloads detect_backends(const registry::Registry& registry);
/// This machine, detected as `wheelfit detect` shows it, with the loaded backends' detection.
/// `backend`, when a name a profile takes, picks whose detected facts are taken. `torch_lib`,
/// when given, is set to the installed torch's library folder when the machine's torch is that
/// torch (read from its dist-info, not overridden), else "".
Expected<machine::Machine> detect_this_machine(const registry::Registry& reg, const std::optional<std::string>& python,
                                               const std::optional<std::string>& backend, std::string* torch_lib = nullptr);
/// The machine a call judges: `given` (plus the env overrides when asked), else detected
/// (`torch_lib` as detect_this_machine sets it; "" for a given machine).
Expected<machine::Machine> machine_of(const registry::Registry& reg, const std::optional<machine::Machine>& given, bool env_overrides,
                                      const std::optional<std::string>& python, const std::optional<std::string>& backend,
                                      std::string* torch_lib = nullptr);
/// The installed torch's own targets, read from its library in `lib_dir` (torch/lib), for
/// resolve::Inputs::torch_archs; nullopt when `lib_dir` is "" or the machine's torch names no
/// combo (a CPU build). A library that cannot be read is a warning naming it and why (then the
/// policy's row judges torch).
std::optional<resolve::TorchArchs> installed_torch_archs(const std::string& lib_dir, const machine::Machine& m,
                                                         const semantics::Policy& policy, std::vector<std::string>& warnings);

// --- resolve --inspect -----------------------------------------------------------------------------

/// `resolve --inspect`: reads each would-be pick's wheel (Range requests for http(s), else the
/// file) and rejects it when its binaries fail gpu_arch, glibc, cpu_arch, os, the line (the
/// driver) or python (the env's) on machine `m`, or a variant wheel's own variant.json fails the
/// variant demand (as `explain` judges it, against the torch the resolver judged its
/// abi_dependency with; a warning when it gives the label other properties than the index's
/// variants file); torch is left to the combo. A wheel that cannot be read is kept, with a
/// warning. `policy` must outlive the hook.
resolve::InspectHook make_inspect_hook(const machine::Machine& m, const semantics::Policy& policy, const net::HttpOptions& net,
                                       const net::Registry& transports);

}  // namespace wheelfit::session
