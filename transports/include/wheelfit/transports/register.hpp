#pragma once
// The built-in transports, registered into a transport registry (core's net/registry.hpp)
// by one explicit call at start-up: the wheelfit executable, the C API library and an embedder
// that wants them call it once, as they load the backend plugins.

#include "wheelfit/net/registry.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::transports {

/// Registers into `registry`:
/// - transports: "file" (file:// URLs and plain paths), "http" (http://, https://);
/// - decorators: "cache" (order 10: the on-disk HTTP cache, when StackOptions::cache is set);
/// - services: the http rules (credentials, proxy plan, trust store, hosts allowed over http) and
///   the cache's housekeeping. (The GitHub Releases failover is the index component's:
///   index/releases.hpp.)
/// Errc::invalid_input when any of them is registered already (a second call), naming it.
Expected<void> register_transports(net::Registry& registry);

}  // namespace wheelfit::transports
