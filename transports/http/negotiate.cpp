// Negotiate (RFC 4559) with a proxy: the challenges, base64, the legs of one exchange and the
// texts of its failures. No GSS-API call here: the context comes from a Gss (negotiate_gss.cpp).
#include "wheelfit/transports/negotiate.hpp"

#include <algorithm>
#include <array>

#include "wheelfit/util/text.hpp"

namespace wheelfit::transports {

std::string_view proxy_auth_name(ProxyAuth auth) noexcept {
  switch (auth) {
    case ProxyAuth::automatic: return "auto";
    case ProxyAuth::basic: return "basic";
    case ProxyAuth::negotiate: return "negotiate";
    case ProxyAuth::none: return "none";
  }
  return "auto";
}

Expected<ProxyAuth> parse_proxy_auth(std::string_view text, std::string_view source) {
  for (const ProxyAuth a : {ProxyAuth::automatic, ProxyAuth::basic, ProxyAuth::negotiate, ProxyAuth::none}) {
    if (util::iequals(util::trim(text), proxy_auth_name(a))) return a;
  }
  return unexpected(Errc::invalid_input, std::string(source) + ": '" + std::string(text) +
                                             "' is not a proxy authentication method (auto, basic, negotiate, none)");
}

namespace {

#ifdef _WIN32
// Windows: SSPI (negotiate_sspi.cpp), the logged-on user's ticket.
constexpr std::string_view kApi = "SSPI";
constexpr std::string_view kNoCredential =
    ": log on with a domain account (SSPI uses the logged-on user's Kerberos ticket; `klist` lists it)";
#else
constexpr std::string_view kApi = "GSS-API";
constexpr std::string_view kNoCredential = ": run kinit (the ticket cache is KRB5CCNAME, else the default cache)";
#endif

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Each challenge of the values ("Negotiate abc=", "Basic realm=\"x\""), trimmed. A comma inside
// a quoted auth-param is not a separator; an auth-param ("realm=x") after a comma belongs to the
// challenge before it.
std::vector<std::string_view> challenges(const std::vector<std::string>& values) {
  std::vector<std::string_view> out;
  for (const std::string& v : values) {
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= v.size(); ++i) {
      if (i < v.size() && v[i] == '"') quoted = !quoted;
      if (i < v.size() && (quoted || v[i] != ',')) continue;
      const std::string_view part = util::trim(std::string_view(v).substr(start, i - start));
      start = i + 1;
      if (part.empty()) continue;
      const std::size_t space = part.find(' ');
      const std::string_view word = part.substr(0, space);
      if (word.find('=') != std::string_view::npos && !out.empty()) continue;  // an auth-param
      out.push_back(part);
    }
  }
  return out;
}

std::string_view challenge_scheme(std::string_view challenge) { return challenge.substr(0, challenge.find(' ')); }

}  // namespace

std::optional<std::string> negotiate_challenge(const std::vector<std::string>& proxy_authenticate) {
  for (const std::string_view c : challenges(proxy_authenticate)) {
    if (!util::iequals(challenge_scheme(c), "Negotiate")) continue;
    const std::size_t space = c.find(' ');
    return std::string(space == std::string_view::npos ? std::string_view() : util::trim(c.substr(space + 1)));
  }
  return std::nullopt;
}

std::string offered_schemes(const std::vector<std::string>& proxy_authenticate) {
  std::vector<std::string_view> seen;
  std::string out;
  for (const std::string_view c : challenges(proxy_authenticate)) {
    const std::string_view s = challenge_scheme(c);
    if (std::any_of(seen.begin(), seen.end(), [s](std::string_view x) { return util::iequals(x, s); })) continue;
    seen.push_back(s);
    out += (out.empty() ? "" : ", ") + std::string(s);
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t chunk = 0;
    for (std::size_t k = 0; k < 3; ++k) chunk = chunk << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(chunk >> (18 - 6 * k)) & 0x3f] : '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) value[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t chunk = 0;
    int pad = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        ++pad;
        chunk <<= 6;
        continue;
      }
      const int v = value[static_cast<unsigned char>(c)];
      if (v < 0 || pad > 0) return std::nullopt;
      chunk = chunk << 6 | static_cast<std::uint32_t>(v);
    }
    for (int k = 0; k < 3 - pad; ++k) out += static_cast<char>((chunk >> (16 - 8 * k)) & 0xff);
  }
  return out;
}

ProxyNegotiation::ProxyNegotiation(std::shared_ptr<Gss> gss, std::string proxy_host)
    : gss_(std::move(gss)), service_("HTTP@" + std::move(proxy_host)) {}

std::string ProxyNegotiation::asked() const {
  return "asked for Negotiate (Kerberos) authentication (HTTP 407) for the service " + service_;
}

Expected<std::string> ProxyNegotiation::next_input(std::optional<std::string_view> challenge) {
  if (legs_ > 0 && challenge && challenge->empty()) {
    return unexpected(Errc::unsupported,
                      asked() + " and refused the Kerberos ticket wheelfit sent (HTTP 407 again): the proxy's "
                                "keytab does not hold the key of HTTP/<its host name>, or the ticket is not one it accepts");
  }
  if (legs_ >= kMaxLegs) {
    return unexpected(Errc::unsupported, asked() + " and did not accept it after " + std::to_string(legs_) + " tokens");
  }
  if (complete_ && challenge && !challenge->empty()) {
    return unexpected(Errc::unsupported, asked() + " and sent a token after " + std::string(kApi) + " had finished the context");
  }
  if (!challenge || challenge->empty()) return std::string();
  auto raw = base64_decode(*challenge);
  if (!raw) return unexpected(Errc::unsupported, asked() + " and sent a Negotiate token that is not base64");
  return std::move(*raw);
}

std::shared_ptr<GssContext> ProxyNegotiation::context() {
  if (!context_) context_ = gss_->start(service_);
  return context_;
}

Expected<std::string> ProxyNegotiation::header_after(GssStep step) {
  if (step.state == GssStep::State::failed) {
    std::string why = asked() + "; " + std::string(kApi) + " could not make a token: " + step.error;
    if (step.no_credential) why += kNoCredential;
    if (step.unknown_service) {
      why += ": the proxy's host name in the proxy URL must match its service principal (HTTP/<host>@REALM)";
    }
    return unexpected(Errc::unsupported, std::move(why));
  }
  if (step.token.empty()) {
    return unexpected(Errc::unsupported, asked() + "; " + std::string(kApi) + " finished without a token to send");
  }
  ++legs_;
  complete_ = step.state == GssStep::State::complete;
  return "Negotiate " + base64_encode(step.token);
}

Expected<void> ProxyNegotiation::finish(std::optional<std::string_view> final_token) {
  if (!final_token || final_token->empty() || !context_) return {};  // squid's 200: no token
  auto raw = base64_decode(*final_token);
  if (!raw) return unexpected(Errc::unsupported, asked() + "; its final Negotiate token is not base64");
  if (complete_) {
    return unexpected(Errc::unsupported, asked() + "; it sent a final token after the context was complete");
  }
  const GssStep step = context_->step(*raw);
  if (step.state != GssStep::State::complete) {
    return unexpected(Errc::unsupported, asked() + "; mutual authentication failed: " + std::string(kApi) + " did not accept the "
                                                   "proxy's final token" + (step.error.empty() ? "" : ": " + step.error));
  }
  complete_ = true;
  return {};
}

Expected<std::string> ProxyNegotiation::respond(std::optional<std::string_view> challenge) {
  auto input = next_input(challenge);
  if (!input) return input.error();
  return header_after(context()->step(*input));
}

std::string ProxyNegotiation::timeout_text(std::string_view limit) const {
  return asked() + "; " + std::string(kApi) + " gave no token within " + std::string(limit) + " (is the KDC reachable?)";
}

}  // namespace wheelfit::transports
