#pragma once
// Credentials the way pip, uv and curl users keep them, and the rule for where they may go.
//
// Sources, first match wins, per request URL (and again per redirect hop):
// 1. userinfo in the request URL itself ("https://user:password@host/...");
// 2. an OriginCredential for the URL's origin (scheme + host + port): what the façade split off
//    the index URL (userinfo), or the index token (WHEELFIT_INDEX_TOKEN) as a bearer token;
// 3. the netrc entry for the URL's host (NETRC, else ~/.netrc; netrc.hpp), HTTP Basic.
// A credential goes only to its own origin (a netrc entry: its own host), and only over https,
// unless the host is named as allowed insecure (--allow-insecure-host / WHEELFIT_ALLOW_INSECURE_HOST,
// "HOST" or "HOST:PORT", like pip's --trusted-host). Userinfo in a URL that may not carry it is
// an error for that request; another source that may not is skipped with a warning (once per
// origin, by the transport). Nothing here does I/O except add_credentials_from_env (reads the
// environment and the netrc file). Thread safety: the functions are pure otherwise.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/transports/net_policy.hpp"
#include "wheelfit/transports/netrc.hpp"

namespace wheelfit::transports {

/// The credentials the rules apply to (options.hpp: plain structs of the core).
using net::Credentials;
using net::OriginCredential;

/// Splits a host list ("a.test, 10.0.0.5:8080 [::1]:8443": commas and/or white space) into
/// lower-cased entries. Errc::invalid_input naming `source` and the entry for one that is not a
/// host or host:port (a scheme, a path, userinfo, a bad port).
Expected<std::vector<std::string>> parse_host_list(std::string_view list, std::string_view source);

/// Whether `url`'s host (with its port, when the entry names one) is in `hosts`.
bool insecure_host_allowed(const std::vector<std::string>& hosts, const Url& url);

/// Whether a credential may be sent to `url`: https, or a host allowed insecure.
bool may_send_credentials(const Credentials& credentials, const Url& url);

/// Adds what the environment holds to `credentials`: WHEELFIT_ALLOW_INSECURE_HOST (a bad entry is
/// a warning and skipped) and the netrc: NETRC names the file, else $HOME/.netrc. A netrc that
/// cannot be read (NETRC naming a missing file) or parsed is a warning naming the file and line,
/// and is not used; a missing ~/.netrc is normal. One readable by group or others is used, with
/// a warning. `getenv` defaults to the process environment.
void add_credentials_from_env(Credentials& credentials,
                              const std::function<const char*(const char*)>& getenv = nullptr);

/// The Authorization a request to `url` carries.
struct AuthChoice {
  std::string header;     ///< "Basic ..." / "Bearer ...", or "" for none
  std::string source;     ///< "the URL", the OriginCredential's source, or the netrc file
  bool from_url = false;  ///< the URL's own userinfo
  bool refused = false;   ///< a credential exists but `url` is plain http to a host not allowed
};
AuthChoice choose_authorization(const Credentials& credentials, const Url& url);

/// Why a refused credential was not sent ("not sending the credentials from <source> to
/// http://host:port over plain http: use https, or allow the host with --allow-insecure-host
/// host (WHEELFIT_ALLOW_INSECURE_HOST)"); names no secret.
std::string refusal_message(const AuthChoice& choice, const Url& url);

/// Request headers that may follow a redirect to another origin: a fixed list of headers known
/// to carry no credential (Accept, Accept-Language, User-Agent, Range, If-Range, If-Match,
/// If-None-Match, If-Modified-Since, If-Unmodified-Since, Cache-Control, Pragma). Every other
/// header (Authorization, Proxy-Authorization, Cookie, any custom token header) is dropped.
bool survives_cross_origin_redirect(std::string_view header_name);

}  // namespace wheelfit::transports
