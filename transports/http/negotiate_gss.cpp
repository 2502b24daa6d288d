// system_gss(): the GSS-API of MIT Kerberos (libgssapi_krb5), SPNEGO over the Kerberos
// mechanism, the user's default credential. The only file that includes <gssapi/gssapi.h>; every
// GSS-API object is released by a RAII holder, on every path. Windows: negotiate_sspi.cpp.
#ifndef _WIN32
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "wheelfit/transports/negotiate.hpp"

namespace wheelfit::transports {

namespace {

// SPNEGO: 1.3.6.1.5.5.2 (RFC 4178).
gss_OID_desc kSpnego = {6, const_cast<char*>("\x2b\x06\x01\x05\x05\x02")};

// A GSS-API object (a name, a credential, a buffer it allocated), released by `release` unless
// still empty (a buffer is always handed back: releasing an empty one is a no-op).
template <class Handle, OM_uint32 (*release)(OM_uint32*, Handle*)>
struct Held {
  Handle h{};
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() {
    OM_uint32 minor = 0;
    if constexpr (std::is_pointer_v<Handle>) {
      if (h == nullptr) return;
    }
    release(&minor, &h);
  }
};

using Name = Held<gss_name_t, gss_release_name>;
using Credential = Held<gss_cred_id_t, gss_release_cred>;
using Buffer = Held<gss_buffer_desc, gss_release_buffer>;

std::string text_of(const Buffer& buffer) {
  return buffer.h.length ? std::string(static_cast<const char*>(buffer.h.value), buffer.h.length) : "";
}

// The Kerberos mechanism: 1.2.840.113554.1.2.2 (RFC 1964).
gss_OID_desc kKrb5 = {9, const_cast<char*>("\x2a\x86\x48\x86\xf7\x12\x01\x02\x02")};

// GSS-API's words for a status: the routine error (major), then the mechanism's (minor). MIT's
// "Unspecified GSS failure. Minor code may provide more information" is left out when the minor
// code does; NUL bytes (SPNEGO ends a text with one) are dropped.
std::string status_text(OM_uint32 major, OM_uint32 minor) {
  std::string out;
  const auto add = [&out](OM_uint32 code, int type) {
    OM_uint32 context = 0;
    do {
      OM_uint32 m = 0;
      Buffer text;
      if (GSS_ERROR(gss_display_status(&m, code, type, GSS_C_NO_OID, &context, &text.h))) break;
      std::string s = text_of(text);
      std::erase(s, '\0');
      while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.pop_back();
      if (!s.empty() && out.find(s) == std::string::npos) out += (out.empty() ? "" : ": ") + s;
    } while (context != 0);
  };
  const bool unspecified = GSS_ROUTINE_ERROR(major) == GSS_S_FAILURE && minor != 0;
  if (!unspecified) add(major, GSS_C_GSS_CODE);
  if (minor != 0) add(minor, GSS_C_MECH_CODE);
  if (out.empty() && unspecified) add(major, GSS_C_GSS_CODE);
  return out.empty() ? "GSS-API status " + std::to_string(major) : out;
}

// The default initiator credential of the Kerberos mechanism; an expired one (lifetime 0) is
// GSS_S_CREDENTIALS_EXPIRED.
OM_uint32 acquire_kerberos(Credential& cred, OM_uint32& minor, OM_uint32& lifetime) {
  gss_OID_set_desc mechs{1, &kKrb5};
  const OM_uint32 major =
      gss_acquire_cred(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &cred.h, nullptr, &lifetime);
  return !GSS_ERROR(major) && lifetime == 0 ? GSS_S_CREDENTIALS_EXPIRED : major;
}

// Why that credential cannot be had ("No Kerberos credentials available (default cache:
// FILE:/tmp/krb5cc_1000)"), or "" when it can: SPNEGO's own words for a missing ticket
// ("cannot find mechanisms to negotiate") do not say so.
std::string kerberos_credential_problem() {
  OM_uint32 minor = 0;
  OM_uint32 lifetime = 0;
  Credential cred;
  const OM_uint32 major = acquire_kerberos(cred, minor, lifetime);
  return GSS_ERROR(major) ? status_text(major, minor) : std::string();
}

// Failures that a fresh ticket (kinit) cures: no cache, an empty one, an expired ticket.
bool wants_credential(OM_uint32 major, const std::string& text) {
  const OM_uint32 routine = GSS_ROUTINE_ERROR(major);
  return routine == GSS_S_NO_CRED || routine == GSS_S_CREDENTIALS_EXPIRED || routine == GSS_S_DEFECTIVE_CREDENTIAL ||
         text.find("redentials cache") != std::string::npos || text.find("xpired") != std::string::npos ||
         text.find("No Kerberos credentials") != std::string::npos;
}

GssStep failure(OM_uint32 major, OM_uint32 minor) {
  GssStep s;
  s.state = GssStep::State::failed;
  s.error = status_text(major, minor);
  if (GSS_ROUTINE_ERROR(major) == GSS_S_NO_CRED) {
    const std::string why = kerberos_credential_problem();
    if (!why.empty()) s.error = why;
  }
  s.no_credential = wants_credential(major, s.error);
  s.unknown_service = s.error.find("not found in Kerberos database") != std::string::npos;
  return s;
}

class MitContext final : public GssContext {
 public:
  explicit MitContext(std::string service) : service_(std::move(service)) {}
  ~MitContext() override {
    OM_uint32 minor = 0;
    if (ctx_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &ctx_, GSS_C_NO_BUFFER);
  }
  MitContext(const MitContext&) = delete;
  MitContext& operator=(const MitContext&) = delete;

 private:
  GssStep step_impl(std::string_view input) override {
    OM_uint32 minor = 0;
    OM_uint32 major = 0;
    if (name_.h == GSS_C_NO_NAME) {
      gss_buffer_desc text{service_.size(), service_.data()};
      major = gss_import_name(&minor, &text, GSS_C_NT_HOSTBASED_SERVICE, &name_.h);
      if (GSS_ERROR(major)) return failure(major, minor);
    }
    gss_buffer_desc in{input.size(), const_cast<char*>(input.data())};
    Buffer out;
    major = gss_init_sec_context(&minor, GSS_C_NO_CREDENTIAL, &ctx_, name_.h, &kSpnego, GSS_C_MUTUAL_FLAG, 0,
                                 GSS_C_NO_CHANNEL_BINDINGS, input.empty() ? GSS_C_NO_BUFFER : &in, nullptr, &out.h,
                                 nullptr, nullptr);
    if (GSS_ERROR(major)) return failure(major, minor);
    GssStep s;
    s.state = (major & GSS_S_CONTINUE_NEEDED) ? GssStep::State::continue_needed : GssStep::State::complete;
    s.token = text_of(out);
    return s;
  }

  std::string service_;
  Name name_;
  gss_ctx_id_t ctx_ = GSS_C_NO_CONTEXT;
};

std::string lifetime_text(OM_uint32 seconds) {
  if (seconds == GSS_C_INDEFINITE) return "no expiry";
  const auto h = seconds / 3600;
  const auto min = seconds % 3600 / 60;
  return "valid for " + (h ? std::to_string(h) + " h " : std::string()) + std::to_string(min) + " min";
}

class MitGss final : public Gss {
 public:
  MitGss() = default;

 private:
  std::unique_ptr<GssContext> start_impl(const std::string& service) override {
    return std::make_unique<MitContext>(service);
  }

  Expected<std::string> credential_impl() override {
    OM_uint32 minor = 0;
    Credential cred;
    OM_uint32 lifetime = 0;
    OM_uint32 major = acquire_kerberos(cred, minor, lifetime);
    Name name;
    if (!GSS_ERROR(major)) major = gss_inquire_cred(&minor, cred.h, &name.h, nullptr, nullptr, nullptr);
    if (GSS_ERROR(major)) {
      const std::string text = status_text(major, minor);
      return unexpected(Errc::not_found, text + (wants_credential(major, text) ? ": run kinit" : ""));
    }
    Buffer shown;
    if (GSS_ERROR(gss_display_name(&minor, name.h, &shown.h, nullptr))) return lifetime_text(lifetime);
    return text_of(shown) + ", " + lifetime_text(lifetime);
  }
};

}  // namespace

std::shared_ptr<Gss> system_gss() { return std::make_shared<MitGss>(); }

}  // namespace wheelfit::transports

#endif  // !_WIN32
