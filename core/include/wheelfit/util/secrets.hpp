#pragma once
// Keeping secrets out of what wheelfit prints and stores: redaction of free text (messages,
// logs), credential-free URLs (reports, JSON, pixi.toml, cache keys and entries), and private
// folders for what is kept on disk.
//
// What counts as a secret (README "Credentials"):
// - URL userinfo: the password of "scheme://user:password@host" (the user name stays in redacted
//   text, so a reader sees whose credentials were used), or a bare "scheme://token@host";
// - the values of credential headers: Authorization and Proxy-Authorization (the scheme word,
//   "Basic" / "Bearer" / "Negotiate", stays), WWW-Authenticate and Proxy-Authenticate (a
//   server's token or parameters after the scheme word; a bare "Negotiate" stays), Cookie, Set-Cookie, X-Api-Key, Private-Token, Job-Token,
//   X-Auth-Token, X-JFrog-Art-Api;
// - the values of credential query parameters, by name (ASCII case-insensitive): access_token,
//   api_key, api-key, apikey, auth, auth_token, client_secret, id_token, job_token, jwt, passwd,
//   password, private_token, refresh_token, secret, session_token, sig, signature, token,
//   X-Amz-Credential, X-Amz-Security-Token, X-Amz-Signature, X-Goog-Credential, X-Goog-Signature;
// - GitHub and GitLab token shapes anywhere in text ("ghp_..." and its kin, "github_pat_...",
//   "glpat-..."), and "Negotiate <token>" (20 or more base64 characters) anywhere in text.
// Thread safety: all functions are pure except create_private_directories (the file system).

#include <filesystem>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// Whether a query parameter of this name carries a credential (the list above).
[[nodiscard]] bool is_credential_param(std::string_view name) noexcept;

/// Whether a request or response header of this name carries a credential (the list above).
[[nodiscard]] bool is_credential_header(std::string_view name) noexcept;

/// `text` with every secret above replaced by "***". Linear in the text's size; run it before
/// any truncation (a secret cut in half is no longer recognised).
[[nodiscard]] std::string redact(std::string_view text);

/// The URL as it may be written down: userinfo removed and credential query parameters dropped
/// whole (a query left empty loses its '?'); the fragment and everything else kept as written.
/// Text without "://" comes back unchanged.
[[nodiscard]] std::string strip_credentials(std::string_view url);

/// The URL without its userinfo ("https://u:p@h/x?q" -> "https://h/x?q"); everything else as
/// written. Text without "://" comes back unchanged.
[[nodiscard]] std::string without_userinfo(std::string_view url);

/// Creates `dir` and every missing parent with mode 0700 (before the umask), then makes `dir`
/// itself 0700 when it exists more open than that (its parents are left as they are: they may be
/// shared, such as --cache-dir /tmp). Errc::io_error naming the folder and the system error.
Expected<void> create_private_directories(const std::filesystem::path& dir);

}  // namespace wheelfit::util
