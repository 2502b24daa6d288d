#pragma once
// The GSS-API seam behind Negotiate (Kerberos) proxy authentication (docs/decisions/0017): an
// interface of the core, so that HttpOptions (options.hpp) carries one as a plain value. The http
// transport implements it with MIT Kerberos (system_gss(), the http transport's negotiate.hpp) and
// drives it; tests give a fake through HttpOptions::gss. No token or password is ever part of an
// error, a log line or a report.

#include <memory>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::net {

/// What one call of gss_init_sec_context gave.
struct GssStep {
  enum class State { complete, continue_needed, failed };
  State state = State::failed;
  std::string token;  ///< the output token (raw bytes) for the peer; may be empty
  std::string error;  ///< failed: GSS-API's own words ("No credentials cache found (filename: ...)")
  /// failed for want of a usable credential (no cache, no ticket, an expired one): "run kinit"
  bool no_credential = false;
  /// failed because the KDC does not know the service ("Server ... not found in Kerberos database")
  bool unknown_service = false;
};

/// One GSS-API security context (one authentication). Used by one thread at a time; it may be
/// a thread other than the one that made it.
class GssContext {
 public:
  virtual ~GssContext() = default;
  GssContext(const GssContext&) = delete;
  GssContext& operator=(const GssContext&) = delete;

  /// The next step: `input` is the peer's last token (raw bytes; empty on the first step).
  /// Blocking: the first step may ask the KDC for a service ticket.
  GssStep step(std::string_view input) { return step_impl(input); }

 protected:
  GssContext() = default;

 private:
  virtual GssStep step_impl(std::string_view input) = 0;
};

/// The GSS-API library. Thread safety: start() and credential() may be called from any thread.
class Gss {
 public:
  virtual ~Gss() = default;
  Gss(const Gss&) = delete;
  Gss& operator=(const Gss&) = delete;

  /// A context for the host-based service `service` ("HTTP@proxy.example"): SPNEGO, mutual
  /// authentication asked, the default initiator credential.
  std::unique_ptr<GssContext> start(const std::string& service) { return start_impl(service); }
  /// The default credential as `wheelfit doctor` shows it ("alice@TEST.LOCAL, valid for 9 h 59
  /// min"), or the error with GSS-API's words ("No credentials cache found ...: run kinit").
  Expected<std::string> credential() { return credential_impl(); }

 protected:
  Gss() = default;

 private:
  virtual std::unique_ptr<GssContext> start_impl(const std::string& service) = 0;
  virtual Expected<std::string> credential_impl() = 0;
};

}  // namespace wheelfit::net
