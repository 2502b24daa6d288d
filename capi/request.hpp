#pragma once
// The C API's request parser (capi.cpp's calls; tests/fuzz/fuzz_capi.cpp): a JSON request into
// the façade's request struct, its keys read through the option table (wheelfit/api/options.hpp).
// Private to capi/ and its tests: not installed.
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "wheelfit/api.hpp"

namespace wheelfit::capi {

/// A request that cannot be used: the message names the key ("request.retries: ..."); exit 2.
struct BadRequest {
  std::string message;
};

/// Throws BadRequest for a string of the request (a key or a value, at any depth) that holds a
/// NUL byte: the C side of a path or a header would stop at it. `key` is the JSON path below the
/// request ("configs[0]"; "" for the request itself).
void refuse_nul_bytes(const boost::json::value& v, const std::string& key);

/// The known keys of each request, as its "unknown key" message lists them.
inline constexpr std::string_view kResolveKeys =
    "configs, envs, machine, machines, index, backend, policy, offline, no_cache, cache_dir, cache_max_size, retries, timeout, "
    "speed_limit, speed_time, max_time, jobs, user_agent, proxy_auth, allow_insecure_host, cert, client_cert, releases_repo, "
    "inspect, combo, no_fallback";
inline constexpr std::string_view kExplainKeys =
    "wheel, machine, python, policy, retries, timeout, speed_limit, speed_time, max_time, user_agent, proxy_auth, "
    "allow_insecure_host, cert, client_cert";
inline constexpr std::string_view kDetectKeys = "python, backend";
inline constexpr std::string_view kDoctorKeys = "python, site, machine, policy";

/// A resolve request; "machines" goes to `fleet` (then the call is a fleet resolve). Throws
/// BadRequest: not an object, an unknown key, a value of the wrong kind or out of range, no
/// configs or envs, offline with no_cache, machine with machines.
api::ResolveRequest resolve_request_of(const boost::json::value& doc, std::optional<std::vector<api::FleetMachine>>& fleet);
/// An explain request (BadRequest as above; "wheel" is required).
api::ExplainRequest explain_request_of(const boost::json::value& doc);
/// A detect request (BadRequest as above).
api::DetectRequest detect_request_of(const boost::json::value& doc);
/// A doctor request (BadRequest as above).
api::DoctorRequest doctor_request_of(const boost::json::value& doc);

}  // namespace wheelfit::capi
