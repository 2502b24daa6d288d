// system_gss() on Windows: SSPI's Negotiate package (secur32), the logged-on user's own
// credential (no kinit; docs/decisions/0034). The same interface and behaviour as the GSS-API
// path of negotiate_gss.cpp (Linux): each step a token for "HTTP/<proxy host>", mutual
// authentication asked; failures in Windows' words (FormatMessageW) with the status's name.
// Every handle is released by a RAII holder, on every path.
#ifdef _WIN32

#define SECURITY_WIN32
#include <windows.h>
#include <security.h>

#include <string>

#include "win_text.hpp"
#include "wheelfit/transports/negotiate.hpp"

namespace wheelfit::transports {

namespace {

constexpr wchar_t kPackage[] = L"Negotiate";

// The statuses a user meets, by name (wine's FormatMessageW knows few of them).
std::string status_name(SECURITY_STATUS s) {
  switch (static_cast<unsigned long>(s)) {
    case 0x80090303UL: return "SEC_E_TARGET_UNKNOWN";
    case 0x80090304UL: return "SEC_E_INTERNAL_ERROR";
    case 0x80090305UL: return "SEC_E_SECPKG_NOT_FOUND";
    case 0x80090308UL: return "SEC_E_INVALID_TOKEN";
    case 0x8009030CUL: return "SEC_E_LOGON_DENIED";
    case 0x8009030DUL: return "SEC_E_UNKNOWN_CREDENTIALS";
    case 0x8009030EUL: return "SEC_E_NO_CREDENTIALS";
    case 0x80090311UL: return "SEC_E_NO_AUTHENTICATING_AUTHORITY";
    case 0x80090317UL: return "SEC_E_CONTEXT_EXPIRED";
    case 0x80090322UL: return "SEC_E_WRONG_PRINCIPAL";
    case 0x80090324UL: return "SEC_E_TIME_SKEW";
    case 0x80090341UL: return "SEC_E_KDC_UNABLE_TO_REFER";
    case 0x80090348UL: return "SEC_E_NO_KERB_KEY";
    default: return "";
  }
}

// "InitializeSecurityContextW: No credentials are available in the security package
// (SEC_E_NO_CREDENTIALS, 0x8009030E)"; without Windows' words (wine): "...: SEC_E_NO_CREDENTIALS
// (0x8009030E)".
std::string status_text(const char* call, SECURITY_STATUS s) {
  const auto code = static_cast<unsigned long>(s);
  const std::string name = status_name(s);
  const std::string words = detail::system_message(code);
  if (words.empty()) return std::string(call) + ": " + (name.empty() ? "SSPI status" : name) + " (" + detail::hex_code(code) + ")";
  return std::string(call) + ": " + words + " (" + (name.empty() ? "" : name + ", ") + detail::hex_code(code) + ")";
}

// Failures that a fresh logon (a ticket) cures.
bool wants_credential(SECURITY_STATUS s) {
  return s == SEC_E_NO_CREDENTIALS || s == SEC_E_LOGON_DENIED || s == SEC_E_UNKNOWN_CREDENTIALS ||
         s == SEC_E_CONTEXT_EXPIRED;
}

GssStep failure(const char* call, SECURITY_STATUS s) {
  GssStep out;
  out.state = GssStep::State::failed;
  out.error = status_text(call, s);
  out.no_credential = wants_credential(s);
  out.unknown_service = s == SEC_E_TARGET_UNKNOWN || s == SEC_E_WRONG_PRINCIPAL;
  return out;
}

// An outbound credential handle of the Negotiate package for the logged-on user.
struct Credential {
  CredHandle h{};
  bool held = false;
  TimeStamp expiry{};
  Credential() = default;
  Credential(const Credential&) = delete;
  Credential& operator=(const Credential&) = delete;
  ~Credential() {
    if (held) FreeCredentialsHandle(&h);
  }
  SECURITY_STATUS acquire() {
    const SECURITY_STATUS s = AcquireCredentialsHandleW(nullptr, const_cast<wchar_t*>(kPackage), SECPKG_CRED_OUTBOUND, nullptr,
                                                        nullptr, nullptr, nullptr, &h, &expiry);
    held = s == SEC_E_OK;
    return s;
  }
};

// The package's largest token: output buffers are the caller's (wine's Kerberos package does
// not support ISC_REQ_ALLOCATE_MEMORY).
SECURITY_STATUS max_token(unsigned long& size) {
  PSecPkgInfoW info = nullptr;
  const SECURITY_STATUS s = QuerySecurityPackageInfoW(const_cast<wchar_t*>(kPackage), &info);
  if (s != SEC_E_OK) return s;
  size = info->cbMaxToken;
  FreeContextBuffer(info);
  return SEC_E_OK;
}

class SspiContext final : public GssContext {
 public:
  // "HTTP@proxy.example" (GSS-API's host-based form) -> the SPN "HTTP/proxy.example".
  explicit SspiContext(const std::string& service) {
    std::string spn = service;
    if (const std::size_t at = spn.find('@'); at != std::string::npos) spn[at] = '/';
    target_ = detail::wide_of(spn);
  }
  ~SspiContext() override {
    if (have_context_) DeleteSecurityContext(&context_);
  }
  SspiContext(const SspiContext&) = delete;
  SspiContext& operator=(const SspiContext&) = delete;

 private:
  GssStep step_impl(std::string_view input) override {
    if (!credential_.held) {
      if (const SECURITY_STATUS s = credential_.acquire(); s != SEC_E_OK) return failure("AcquireCredentialsHandleW", s);
    }
    unsigned long size = 0;
    if (const SECURITY_STATUS s = max_token(size); s != SEC_E_OK) return failure("QuerySecurityPackageInfoW", s);
    std::string token(size, '\0');
    SecBuffer out_buffer{static_cast<unsigned long>(token.size()), SECBUFFER_TOKEN, token.data()};
    SecBufferDesc out_desc{SECBUFFER_VERSION, 1, &out_buffer};
    std::string in = std::string(input);
    SecBuffer in_buffer{static_cast<unsigned long>(in.size()), SECBUFFER_TOKEN, in.data()};
    SecBufferDesc in_desc{SECBUFFER_VERSION, 1, &in_buffer};
    unsigned long attributes = 0;
    TimeStamp expiry{};
    SECURITY_STATUS s = InitializeSecurityContextW(&credential_.h, have_context_ ? &context_ : nullptr, target_.data(),
                                                   ISC_REQ_MUTUAL_AUTH, 0, SECURITY_NATIVE_DREP, input.empty() ? nullptr : &in_desc,
                                                   0, &context_, &out_desc, &attributes, &expiry);
    if (s == SEC_I_COMPLETE_NEEDED || s == SEC_I_COMPLETE_AND_CONTINUE) {
      have_context_ = true;
      const SECURITY_STATUS c = CompleteAuthToken(&context_, &out_desc);
      if (c != SEC_E_OK) return failure("CompleteAuthToken", c);
      s = s == SEC_I_COMPLETE_NEEDED ? SEC_E_OK : SEC_I_CONTINUE_NEEDED;
    }
    if (s != SEC_E_OK && s != SEC_I_CONTINUE_NEEDED) return failure("InitializeSecurityContextW", s);
    have_context_ = true;
    GssStep step;
    step.state = s == SEC_I_CONTINUE_NEEDED ? GssStep::State::continue_needed : GssStep::State::complete;
    step.token = token.substr(0, out_buffer.cbBuffer);
    return step;
  }

  std::wstring target_;
  Credential credential_;
  CtxtHandle context_{};
  bool have_context_ = false;
};

// "valid for 9 h 59 min", "no expiry" (SSPI's "never" is the largest FILETIME).
std::string lifetime_text(const TimeStamp& expiry) {
  const auto end = static_cast<long long>(expiry.QuadPart);
  if (end <= 0 || end >= 0x7FFFFFFFFFFFFFFFLL - 1) return "no expiry";
  FILETIME now_ft{};
  GetSystemTimeAsFileTime(&now_ft);
  const long long now = static_cast<long long>(now_ft.dwHighDateTime) << 32 | now_ft.dwLowDateTime;
  if (end <= now) return "expired";
  const long long seconds = (end - now) / 10000000LL;
  const long long h = seconds / 3600;
  const long long min = seconds % 3600 / 60;
  return "valid for " + (h ? std::to_string(h) + " h " : std::string()) + std::to_string(min) + " min";
}

class Sspi final : public Gss {
 private:
  std::unique_ptr<GssContext> start_impl(const std::string& service) override {
    return std::make_unique<SspiContext>(service);
  }

  Expected<std::string> credential_impl() override {
    Credential cred;
    if (const SECURITY_STATUS s = cred.acquire(); s != SEC_E_OK) {
      return unexpected(Errc::not_found, status_text("AcquireCredentialsHandleW(Negotiate)", s) +
                                             (wants_credential(s) ? ": log on with a domain account" : ""));
    }
    SecPkgCredentials_NamesW names{};
    std::string who = "the logged-on user";
    if (QueryCredentialsAttributesW(&cred.h, SECPKG_CRED_ATTR_NAMES, &names) == SEC_E_OK && names.sUserName) {
      who = detail::utf8_of(names.sUserName);
      FreeContextBuffer(names.sUserName);
    }
    return who + " (SSPI Negotiate), " + lifetime_text(cred.expiry);
  }
};

}  // namespace

std::shared_ptr<Gss> system_gss() { return std::make_shared<Sspi>(); }

}  // namespace wheelfit::transports

#endif  // _WIN32
