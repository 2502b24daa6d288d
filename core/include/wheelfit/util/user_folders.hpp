#pragma once
// Where wheelfit keeps its files for a user, per platform: the cache folder (the HTTP cache, the
// interpreter cache) and the default netrc. docs/decisions/0032-windows-files.md has the choices.
//
// Thread safety: reentrant (the environment is read through the given reader).

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace wheelfit::util {

/// Reads an environment variable (nullopt = unset); machine::Getenv has the same shape.
using EnvReader = std::function<std::optional<std::string>(std::string_view)>;

/// The process environment as UTF-8 on every platform (native_text.hpp's environment_utf8, as an
/// EnvReader).
[[nodiscard]] std::optional<std::string> env_utf8(std::string_view name);

/// The folder wheelfit's caches go under, the first that applies:
///  - $XDG_CACHE_HOME/wheelfit when XDG_CACHE_HOME is an absolute path (on Windows too: a choice
///    made on purpose, as in MSYS2 shells and the tests);
///  - POSIX: $HOME/.cache/wheelfit when HOME is an absolute path;
///  - Windows: <the LocalAppData known folder>\wheelfit (SHGetKnownFolderPath, e.g.
///    C:\Users\<name>\AppData\Local\wheelfit), else %LOCALAPPDATA%\wheelfit.
/// nullopt when none does (no_cache_root_reason() says why, for messages).
[[nodiscard]] std::optional<std::filesystem::path> user_cache_root(const EnvReader& getenv);
[[nodiscard]] std::string_view no_cache_root_reason() noexcept;

/// The netrc read when NETRC is not set. POSIX: $HOME/.netrc. Windows, as curl does: the home is
/// %HOME%, else %USERPROFILE%; its .netrc, else its _netrc when only that one exists (.netrc
/// when neither does). nullopt without a home.
[[nodiscard]] std::optional<std::filesystem::path> default_netrc(const EnvReader& getenv);

}  // namespace wheelfit::util
