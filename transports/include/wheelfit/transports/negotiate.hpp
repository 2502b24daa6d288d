#pragma once
// Negotiate (SPNEGO, RFC 4559) authentication to a proxy: the Kerberos ticket of the user's
// credential cache (KRB5CCNAME, else the default cache), as GSS-API makes it into a token for the
// service "HTTP@<proxy host>", sent as `Proxy-Authorization: Negotiate <base64>` (docs/decisions/0017).
//
// Three layers, so that all but the first are tested without a KDC:
// - Gss / GssContext: the GSS-API calls (system_gss(): MIT Kerberos, negotiate_gss.cpp); tests give
//   a fake through HttpOptions::gss;
// - ProxyNegotiation: the exchange with one proxy over one connection (the challenges, the legs,
//   the mutual-authentication check, the error texts), pure apart from its GssContext;
// - the http transport: when to start one, on which connection, under which deadline.
// No token or password is ever part of an error, a log line or a report.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/gss.hpp"
#include "wheelfit/net/options.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::transports {

/// How the http transport authenticates to a proxy (options.hpp).
using net::ProxyAuth;

/// "auto", "basic", "negotiate", "none".
[[nodiscard]] std::string_view proxy_auth_name(ProxyAuth auth) noexcept;

/// Parses "auto" / "basic" / "negotiate" / "none" (ASCII case-insensitive). Errc::invalid_input
/// naming `source` (the flag or variable) and the values otherwise.
Expected<ProxyAuth> parse_proxy_auth(std::string_view text, std::string_view source);

/// The GSS-API seam (the core's gss.hpp).
using net::Gss;
using net::GssContext;
using net::GssStep;

/// The system's GSS-API: MIT Kerberos (libgssapi_krb5), the Kerberos mechanism under SPNEGO.
std::shared_ptr<Gss> system_gss();

/// The Negotiate challenge among a response's Proxy-Authenticate values (each may list several
/// challenges, comma-separated): nullopt when none offers Negotiate; "" for a bare
/// "Negotiate"; else its token (base64, as sent).
[[nodiscard]] std::optional<std::string> negotiate_challenge(const std::vector<std::string>& proxy_authenticate);

/// The schemes the values offer, in order, each once: "Negotiate, NTLM, Basic" ("" for none).
[[nodiscard]] std::string offered_schemes(const std::vector<std::string>& proxy_authenticate);

/// Base64 (RFC 4648, padded) of raw bytes, and back (nullopt for text that is not base64).
[[nodiscard]] std::string base64_encode(std::string_view bytes);
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

/// The client side of Negotiate with one proxy over one connection (RFC 4559 sections 4-5).
/// Each sentence it returns as an error continues "proxy <host:port> " (the transport adds that
/// and the URL), says that the proxy asked for Negotiate (Kerberos) and what GSS-API answered.
/// Lifetime: shares the Gss; its context may outlive it on another thread (shared_ptr).
class ProxyNegotiation {
 public:
  static constexpr int kMaxLegs = 5;  ///< tokens sent on one connection before giving up

  /// For the proxy `proxy_host` (the proxy URL's host, as written: the service is
  /// "HTTP@<proxy_host>").
  ProxyNegotiation(std::shared_ptr<Gss> gss, std::string proxy_host);

  [[nodiscard]] const std::string& service() const noexcept { return service_; }
  [[nodiscard]] int legs() const noexcept { return legs_; }

  /// Before the next step: the raw input for it, given the 407's Negotiate challenge (nullopt: a
  /// token sent before any challenge). Errors: the proxy answered our token with a bare
  /// "Negotiate" (it refused the ticket), a token that is not base64, a context already
  /// complete, more than kMaxLegs legs.
  Expected<std::string> next_input(std::optional<std::string_view> challenge);
  /// The context to step with that input (made at the first call).
  std::shared_ptr<GssContext> context();
  /// After the step: the Proxy-Authorization value "Negotiate <base64>", or the error with
  /// GSS-API's words and what to do ("run kinit").
  Expected<std::string> header_after(GssStep step);
  /// The proxy's answer was not a 407: its final token (`final_token`, base64) is checked when
  /// one came (mutual authentication: a token the context does not accept fails); none (squid's
  /// 200 carries none) is accepted. Steps the context in the calling thread (no KDC involved).
  Expected<void> finish(std::optional<std::string_view> final_token);
  /// next_input + step + header_after in the calling thread.
  Expected<std::string> respond(std::optional<std::string_view> challenge);

  /// The error for a step that did not finish within the request's time ("... no answer from
  /// GSS-API within 10000 ms (is the KDC reachable?)").
  [[nodiscard]] std::string timeout_text(std::string_view limit) const;

 private:
  std::string asked() const;

  std::shared_ptr<Gss> gss_;
  std::string service_;
  std::shared_ptr<GssContext> context_;
  int legs_ = 0;
  bool complete_ = false;
};

}  // namespace wheelfit::transports
