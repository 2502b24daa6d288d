// Secrets out of outputs (secrets.hpp): one linear pass per kind of secret, no regular
// expressions, so redacting a long message costs about as much as copying it.
#include "wheelfit/util/secrets.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "wheelfit/util/text.hpp"

#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::util {
namespace {

constexpr std::string_view kHidden = "***";

constexpr std::array<std::string_view, 24> kCredentialParams = {
    "access_token", "api_key", "api-key", "apikey", "auth", "auth_token", "client_secret", "id_token",
    "job_token", "jwt", "passwd", "password", "private_token", "refresh_token", "secret", "session_token",
    "sig", "signature", "token", "x-amz-credential", "x-amz-security-token", "x-amz-signature",
    "x-goog-credential", "x-goog-signature"};

struct HeaderRule {
  std::string_view name;
  bool keeps_scheme;  ///< "Bearer ***": the scheme word says which credential, not what it was
  bool challenge;     ///< a server's challenge: a value of one word ("Negotiate") is only its scheme
};
constexpr std::array<HeaderRule, 11> kCredentialHeaders = {{{"authorization", true, false},
                                                           {"proxy-authorization", true, false},
                                                           {"www-authenticate", true, true},
                                                           {"proxy-authenticate", true, true},
                                                           {"cookie", false, false},
                                                           {"set-cookie", false, false},
                                                           {"x-api-key", false, false},
                                                           {"private-token", false, false},
                                                           {"job-token", false, false},
                                                           {"x-auth-token", false, false},
                                                           {"x-jfrog-art-api", false, false}}};

// A Negotiate (SPNEGO) token written anywhere: "Negotiate " and at least this many base64 bytes.
constexpr std::size_t kMinNegotiateToken = 20;

// Token shapes: GitHub (classic, OAuth, user-to-server, server-to-server, refresh; fine-grained)
// and GitLab personal access tokens. A prefix counts only with at least this many token bytes
// after it, so that prose mentioning "ghp_" is left alone.
constexpr std::array<std::string_view, 7> kTokenPrefixes = {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"};
constexpr std::size_t kMinTokenBody = 16;

constexpr bool is_alnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
constexpr bool is_name_char(char c) noexcept { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }
constexpr bool is_token_char(char c) noexcept { return is_alnum(c) || c == '_' || c == '-'; }

// Where the authority or a query value of a URL written in prose ends.
constexpr bool ends_url_text(char c) noexcept {
  return c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' ||
         static_cast<unsigned char>(c) <= 0x20;
}

const HeaderRule* header_rule(std::string_view name) noexcept {
  for (const auto& r : kCredentialHeaders) {
    if (iequals(r.name, name)) return &r;
  }
  return nullptr;
}

// Where the authority of a URL written in prose ends. Unlike ends_url_text, a quote or backtick
// does not end it: a URL parser takes them in the userinfo, so a password may hold one.
constexpr bool ends_authority_text(char c) noexcept {
  return c == '/' || c == '?' || c == '#' || c == '"' || c == '<' || c == '>' || static_cast<unsigned char>(c) <= 0x20;
}

// "scheme://user:password@host" -> "scheme://user:***@host"; "scheme://token@host" -> "***@host".
void redact_userinfo(std::string& s) {
  for (std::size_t p = s.find("://"); p != std::string::npos; p = s.find("://", p + 3)) {
    const std::size_t start = p + 3;
    std::size_t end = start;
    while (end < s.size() && !ends_authority_text(s[end])) ++end;
    const std::size_t at = std::string_view(s).substr(start, end - start).rfind('@');
    if (at == std::string_view::npos || at == 0) continue;
    const std::size_t colon = std::string_view(s).substr(start, at).find(':');
    const std::size_t from = colon == std::string_view::npos ? start : start + colon + 1;
    s.replace(from, start + at - from, kHidden);
  }
}

// "Authorization: Bearer abc" -> "Authorization: Bearer ***"; "Cookie: a=b" -> "Cookie: ***".
// Each ':' is looked at once, with the header-name characters just before it.
void redact_headers(std::string& s) {
  for (std::size_t colon = s.find(':'); colon != std::string::npos; colon = s.find(':', colon + 1)) {
    std::size_t begin = colon;
    while (begin > 0 && (is_alnum(s[begin - 1]) || s[begin - 1] == '-')) --begin;
    const HeaderRule* rule = header_rule(std::string_view(s).substr(begin, colon - begin));
    if (!rule) continue;
    std::size_t v = colon + 1;
    while (v < s.size() && (s[v] == ' ' || s[v] == '\t')) ++v;
    std::size_t end = v;
    while (end < s.size() && s[end] != '\r' && s[end] != '\n') ++end;
    if (rule->keeps_scheme) {
      const std::size_t space = std::string_view(s).substr(v, end - v).find(' ');
      if (space != std::string_view::npos) {
        v += space + 1;
      } else if (rule->challenge) {
        v = end;
      }
    }
    if (end > v) s.replace(v, end - v, kHidden);
    colon = v;
  }
}

// "?token=abc&x=1" -> "?token=***&x=1" (also after '&' and ';').
void redact_query(std::string& s) {
  for (std::size_t p = s.find_first_of("?&;"); p != std::string::npos; p = s.find_first_of("?&;", p + 1)) {
    std::size_t eq = p + 1;
    while (eq < s.size() && is_name_char(s[eq])) ++eq;
    if (eq >= s.size() || s[eq] != '=' || !is_credential_param(std::string_view(s).substr(p + 1, eq - p - 1))) continue;
    std::size_t end = eq + 1;
    while (end < s.size() && s[end] != '&' && s[end] != ';' && !ends_url_text(s[end])) ++end;
    if (end > eq + 1) s.replace(eq + 1, end - eq - 1, kHidden);
    p = eq;
  }
}

// "Negotiate YIIC..." -> "Negotiate ***", wherever it is written (a token outside a header line).
void redact_negotiate_tokens(std::string& s) {
  constexpr std::string_view kWord = "negotiate ";
  const auto is_base64 = [](char c) { return is_alnum(c) || c == '+' || c == '/' || c == '='; };
  for (std::size_t i = 0; i + kWord.size() < s.size(); ++i) {
    if (!iequals(std::string_view(s).substr(i, kWord.size()), kWord)) continue;
    const std::size_t start = i + kWord.size();
    std::size_t end = start;
    while (end < s.size() && is_base64(s[end])) ++end;
    if (end - start >= kMinNegotiateToken) s.replace(start, end - start, kHidden);
    i = start;
  }
}

// "ghp_<36 characters>" -> "***".
void redact_token_shapes(std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != 'g' || (i > 0 && is_token_char(s[i - 1]))) continue;
    for (std::string_view prefix : kTokenPrefixes) {
      if (std::string_view(s).substr(i, prefix.size()) != prefix) continue;
      std::size_t end = i + prefix.size();
      while (end < s.size() && is_token_char(s[end])) ++end;
      if (end - i - prefix.size() >= kMinTokenBody) s.replace(i, end - i, kHidden);
      break;
    }
  }
}

Unexpected folder_error(const std::filesystem::path& dir, const std::string& what, const std::string& reason) {
  return unexpected(Errc::io_error, "folder " + dir.string() + " " + what + ": " + reason);
}

Unexpected folder_error(const std::filesystem::path& dir, const std::string& what) {
  return folder_error(dir, what, std::strerror(errno));
}

// mkdir -p, each folder it makes with mode 0700.
Expected<void> make_missing(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return {};
  const std::filesystem::path parent = dir.parent_path();
  if (!parent.empty() && parent != dir) {
    if (auto up = make_missing(parent); !up) return up;
  }
#ifdef _WIN32
  // No mode: the new folder inherits its parent's ACL (under %LOCALAPPDATA%, the user's alone).
  if (auto made = win::create_folder(dir); !made) return folder_error(dir, "cannot be created", made.error().message);
#else
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return folder_error(dir, "cannot be created");
#endif
  if (!std::filesystem::is_directory(dir, ec)) {
    errno = ENOTDIR;
    return folder_error(dir, "cannot be created");
  }
  return {};
}

}  // namespace

bool is_credential_param(std::string_view name) noexcept {
  return std::any_of(kCredentialParams.begin(), kCredentialParams.end(), [&](std::string_view k) { return iequals(k, name); });
}

bool is_credential_header(std::string_view name) noexcept { return header_rule(name) != nullptr; }

std::string redact(std::string_view text) {
  std::string out(text);
  redact_userinfo(out);
  redact_headers(out);
  redact_query(out);
  redact_token_shapes(out);
  redact_negotiate_tokens(out);
  return out;
}

std::string without_userinfo(std::string_view url) {
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return std::string(url);
  const std::size_t start = sep + 3;
  const std::size_t authority_end = std::min(url.find_first_of("/?#", start), url.size());
  const std::size_t at = url.substr(start, authority_end - start).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start)) + std::string(url.substr(start + at + 1));
}

std::string strip_credentials(std::string_view url) {
  if (url.find("://") == std::string_view::npos) return std::string(url);
  const std::string bare = without_userinfo(url);
  url = bare;
  const std::size_t authority_end = std::min(url.find_first_of("/?#", url.find("://") + 3), url.size());
  std::string out(url.substr(0, authority_end));
  const std::size_t hash = std::min(url.find('#', authority_end), url.size());
  const std::size_t query = std::min(url.find('?', authority_end), hash);
  out += url.substr(authority_end, query - authority_end);
  if (query < hash) {
    std::string kept;
    std::string_view rest = url.substr(query + 1, hash - query - 1);
    while (true) {
      const std::size_t amp = std::min(rest.find('&'), rest.size());
      const std::string_view param = rest.substr(0, amp);
      if (!param.empty() && !is_credential_param(param.substr(0, param.find('=')))) {
        kept += kept.empty() ? "?" : "&";
        kept += param;
      }
      if (amp == rest.size()) break;
      rest.remove_prefix(amp + 1);
    }
    out += kept;
  }
  out += url.substr(hash);
  return out;
}

Expected<void> create_private_directories(const std::filesystem::path& dir) {
  if (auto made = make_missing(dir); !made) return made;
#ifndef _WIN32  // on Windows the folder's ACL came from its parent; wheelfit does not rewrite ACLs
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return folder_error(dir, "cannot be read");
  if ((st.st_mode & 077) != 0 && st.st_uid == ::geteuid() && ::chmod(dir.c_str(), st.st_mode & 0700) != 0) {
    return folder_error(dir, "cannot be made private (mode 0700)");
  }
#endif
  return {};
}

}  // namespace wheelfit::util
