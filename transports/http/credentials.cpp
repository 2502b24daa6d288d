// Where credentials come from and where they may go (credentials.hpp). Pure decisions, apart
// from add_credentials_from_env, which reads the environment and the netrc file.
#include "wheelfit/transports/credentials.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "wheelfit/util/log.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/user_folders.hpp"

#ifdef _WIN32
#include <map>

#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::transports {
namespace {

constexpr std::string_view kAllowFlag = "--allow-insecure-host";
constexpr std::string_view kAllowEnv = "WHEELFIT_ALLOW_INSECURE_HOST";
constexpr std::uintmax_t kMaxNetrcBytes = 1u << 20;  // a netrc is a few lines; more is not one

constexpr std::array<std::string_view, 11> kRedirectSafe = {
    "accept", "accept-language", "user-agent", "range", "if-range", "if-match", "if-none-match",
    "if-modified-since", "if-unmodified-since", "cache-control", "pragma"};

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// HTTP Basic for userinfo; "token@host" (pip's form for a single-part token) is the user "token"
// with an empty password (RFC 7617: user-id ":" password).
std::string basic_for(const std::string& userinfo) {
  return basic_auth(userinfo.find(':') == std::string::npos ? userinfo + ":" : userinfo);
}

// "host" or "[v6]" as an allow-list entry names it.
std::string host_text(const Url& url) { return url.ipv6 ? "[" + url.host + "]" : url.host; }

// The netrc file to read: NETRC, else util::default_netrc ($HOME/.netrc; on Windows curl's
// .netrc or _netrc in %HOME% or %USERPROFILE%); `named` when NETRC chose it.
std::optional<std::string> netrc_path(const std::function<const char*(const char*)>& getenv, bool& named) {
  if (const char* n = getenv("NETRC"); n && *n) {
    named = true;
    return std::string(n);
  }
  named = false;
  const auto reader = [&](std::string_view name) -> std::optional<std::string> {
    const char* v = getenv(std::string(name).c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto path = util::default_netrc(reader);
  if (!path) return std::nullopt;
  const auto text = path->u8string();
  return std::string(text.begin(), text.end());
}

void load_netrc(Credentials& c, const std::function<const char*(const char*)>& getenv) {
  bool named = false;
  const auto path = netrc_path(getenv, named);
  if (!path) return;
#ifdef _WIN32
  const auto st = util::win::info_of(util::win::from_utf8(*path), true);
  const bool missing = !st, regular = st && st->type == std::filesystem::file_type::regular;
  const bool shared = false;  // an ACL, not mode bits: the folder's (the user profile is the user's)
#else
  struct stat st {};
  const bool missing = ::stat(path->c_str(), &st) != 0, regular = S_ISREG(st.st_mode), shared = (st.st_mode & 077) != 0;
#endif
  if (missing) {
    if (named) log::warn("NETRC names " + *path + ", which does not exist; no netrc credentials are used");
    return;
  }
  const std::string where = named ? *path + " (NETRC)" : *path;
  if (!regular) {
    log::warn("the netrc " + where + " is not a regular file; not used");
    return;
  }
  // Read as a regular file only, under a limit: the path may have been swapped for a FIFO since
  // the stat, and a FIFO would block every command forever.
  auto text = util::read_file(*path, kMaxNetrcBytes, "a netrc");
  if (!text) {
    log::warn("the netrc " + where + " cannot be read (" + text.error().message + "); not used");
    return;
  }
  auto parsed = parse_netrc(*text, *path);
  if (!parsed) {
    log::warn("the netrc is not used: " + parsed.error().message);
    return;
  }
  if (shared) {
    log::warn("the netrc " + where + " holds passwords and is readable by group or others: chmod 600 it");
  }
  c.netrc = std::move(*parsed);
  c.netrc_source = *path;
}

}  // namespace

Expected<std::vector<std::string>> parse_host_list(std::string_view list, std::string_view source) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const std::size_t end = std::min(list.find_first_of(", \t\r\n"), list.size());
    const std::string_view entry = list.substr(0, end);
    list.remove_prefix(std::min(end + 1, list.size()));
    if (entry.empty()) continue;
    const auto bad = [&](const std::string& why) {
      return unexpected(Errc::invalid_input, std::string(source) + ": '" + redact(entry) + "' is not a host or " +
                                                 "HOST:PORT (" + why + ")");
    };
    if (entry.find_first_of("/@?#") != std::string_view::npos) return bad("no scheme, path or user");
    auto url = parse_url("http://" + std::string(entry) + "/");
    if (!url) return bad("IPv6 addresses in brackets, such as [::1]:8443");
    const bool has_port = url->ipv6 ? entry.find("]:") != std::string_view::npos : entry.find(':') != std::string_view::npos;
    out.push_back(host_text(*url) + (has_port ? ":" + std::to_string(url->port) : std::string()));
  }
  return out;
}

bool insecure_host_allowed(const std::vector<std::string>& hosts, const Url& url) {
  const std::string host = host_text(url);
  const std::string with_port = host + ":" + std::to_string(url.port);
  return std::any_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h == host || h == with_port; });
}

bool may_send_credentials(const Credentials& credentials, const Url& url) {
  return url.scheme == "https" || insecure_host_allowed(credentials.insecure_hosts, url);
}

void add_credentials_from_env(Credentials& credentials, const std::function<const char*(const char*)>& getenv_fn) {
#ifdef _WIN32
  // UTF-8 values (msvcrt's getenv answers in the ANSI code page); each kept until the next read of
  // the same variable on this thread.
  const std::function<const char*(const char*)> getenv =
      getenv_fn ? getenv_fn : [](const char* name) -> const char* {
    thread_local std::map<std::string, std::string> values;
    const auto v = util::env_utf8(name);
    return v ? (values[name] = *v).c_str() : nullptr;
  };
#else
  const std::function<const char*(const char*)> getenv =
      getenv_fn ? getenv_fn : [](const char* name) -> const char* { return std::getenv(name); };
#endif
  if (const char* allow = getenv(std::string(kAllowEnv).c_str()); allow && *allow) {
    auto hosts = parse_host_list(allow, kAllowEnv);
    if (hosts) {
      credentials.insecure_hosts.insert(credentials.insecure_hosts.end(), hosts->begin(), hosts->end());
    } else {
      log::warn(hosts.error().message + "; the variable is ignored");
    }
  }
  load_netrc(credentials, getenv);
}

AuthChoice choose_authorization(const Credentials& credentials, const Url& url) {
  AuthChoice c;
  if (!url.userinfo.empty()) {
    c.header = basic_for(url.userinfo);
    c.source = "the URL";
    c.from_url = true;
  } else {
    const std::string origin = url.origin();
    const auto given = std::find_if(credentials.origins.begin(), credentials.origins.end(), [&](const OriginCredential& o) {
      return o.origin == origin && (!o.userinfo.empty() || !o.token.empty());
    });
    if (given != credentials.origins.end()) {
      c.header = given->userinfo.empty() ? "Bearer " + given->token : basic_for(given->userinfo);
      c.source = given->source;
    } else if (const NetrcEntry* e = credentials.netrc ? credentials.netrc->find(url.host) : nullptr;
               e && (!e->login.empty() || !e->password.empty())) {
      c.header = basic_auth(e->login + ":" + e->password);
      c.source = credentials.netrc_source;
    }
  }
  if (has_control(c.header)) c.header.clear();  // a token with a line break would inject headers
  if (!c.header.empty() && !may_send_credentials(credentials, url)) {
    c.header.clear();
    c.refused = true;
  }
  return c;
}

std::string refusal_message(const AuthChoice& choice, const Url& url) {
  const std::string what = choice.from_url ? "the credentials in the URL" : "the credentials from " + choice.source;
  return "not sending " + what + " to " + url.origin() + " over plain http: use https, or allow the host with " +
         std::string(kAllowFlag) + " " + host_text(url) + " (" + std::string(kAllowEnv) + ")";
}

bool survives_cross_origin_redirect(std::string_view header_name) {
  return std::any_of(kRedirectSafe.begin(), kRedirectSafe.end(), [&](std::string_view s) { return util::iequals(s, header_name); });
}

}  // namespace wheelfit::transports
