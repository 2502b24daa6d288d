#pragma once
// Which certificates https trusts and which client certificate it presents, chosen the way pip,
// requests, curl and OpenSSL users already have them set (README "TLS"). The choice is a function
// of the options and the environment, tested as a table; the http transport loads it (every
// failure an error naming the file and the flag or variable it came from) and the façade reports
// it (the index line, the JSON `index.tls`).
//
// The order, first match wins (pip's own: its --cert / PIP_CERT before requests' variables,
// REQUESTS_CA_BUNDLE before CURL_CA_BUNDLE; OpenSSL's variables last, as the most general):
//   1. HttpOptions::ca_file / ca_dir (the CLI's --cert, the C API's "cert")
//   2. PIP_CERT, 3. REQUESTS_CA_BUNDLE, 4. CURL_CA_BUNDLE (each a PEM bundle, or a folder of
//      hashed certificates as requests accepts)
//   5. SSL_CERT_FILE and / or SSL_CERT_DIR (both when both are set; SSL_CERT_DIR may list
//      several folders separated by ':', by ';' on Windows)
//   6. the system store (OpenSSL's default file and folder; on Windows the ROOT and CA
//      certificate stores, docs/decisions/0034)
// Each replaces the system store; none adds to it. A variable set to "" counts as unset. On
// Windows the ROOT and CA stores are trusted beside 1-5 too (a CA deployed by group policy).
// Client certificate (mutual TLS): HttpOptions::client_cert (--client-cert), else SSL_CLIENT_CERT:
// one PEM file holding the certificate (and its chain) and its unencrypted private key.
// Thread safety: pure functions.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/transports/http_transport.hpp"

namespace wheelfit::transports {

/// The choice (options.hpp: plain structs of the core, as ResolveResult::trust reports it).
using net::TrustChoice;
using net::TrustLocation;

/// The variables read for the trust store, in the order they are tried.
const std::vector<std::string>& trust_variables();

/// The choice for `options` (the environment through `getenv`, the process's by default; read
/// only when options.ca_from_env). A bundle variable naming a folder is taken as a folder;
/// nothing is opened or checked here (loading does that).
TrustChoice choose_trust(const HttpOptions& options, const std::function<const char*(const char*)>& getenv = nullptr);

}  // namespace wheelfit::transports
