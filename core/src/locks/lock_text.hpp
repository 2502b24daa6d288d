#pragma once
// What the three lock readers share (locks/read.hpp): the words of their messages, the checks of a
// digest, a file name and a path, and a by-version pin. Private to core/src/locks.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "wheelfit/locks/read.hpp"

namespace wheelfit::locks::detail {

/// `text` as a message carries it: URL userinfo dropped, secrets redacted, one line, shortened.
std::string plain(std::string_view text);
/// `value` as a message quotes it: URL userinfo dropped, secrets redacted, one line, shortened,
/// in single quotes.
std::string shown(std::string_view value);

/// Errc::invalid_input "<file>:<line>: <what>".
Error bad(std::string_view file, std::size_t line, const std::string& what);

/// `hex` as a lower-case sha256, or an error naming `of` and the value: not 64 hex digits.
Expected<std::string> sha256_of(std::string_view hex, std::string_view file, std::size_t line, std::string_view of);

/// The PEP 503 normalised form of `raw`, or an error naming it: not a PEP 508 project name.
Expected<std::string> project_name(std::string_view raw, std::string_view file, std::size_t line);

/// The file name `location` names: a URL's last path segment, percent-decoded (`url`), or a
/// path's last segment ('/' or '\\'). An error when that is no file name: empty, ".", "..", or
/// holding '/', '\\' or a control character.
Expected<std::string> file_name_of(std::string_view location, bool url, std::string_view file, std::size_t line);
/// The same checks on a file name the lock gives (pylock's wheel `name`).
Expected<void> check_file_name(std::string_view name, std::string_view file, std::size_t line);

/// An error when `path` leaves the lock's folder: absolute ('/', '\\'), a drive letter ("C:"),
/// a UNC or device prefix. A relative path with ".." is accepted.
Expected<void> check_inside(std::string_view path, std::string_view file, std::size_t line);

/// The value of a URL fragment's "sha256=" parameter (pip's "#sha256=HEX", "#egg=x&sha256=HEX").
std::optional<std::string_view> fragment_sha256(std::string_view url);

/// Whether `filename` ends in ".whl" (ASCII case-insensitively).
bool is_wheel_file(std::string_view filename);

/// Whether `location` starts with a VCS scheme pip knows ("git+", "hg+", "svn+", "bzr+").
bool is_vcs(std::string_view location);

/// The version a specifier pins when it pins exactly one: "===X" -> X, "==X" (a valid PEP 440
/// version, no '*') -> X; nullopt for anything else (a range, a wildcard, several clauses).
std::optional<std::string> exact_pin(std::string_view spec);

/// Checks `entry.filename` as a wheel file name (model::WheelName) of the project `entry.name`,
/// and gives `entry.version` the file name's version (as written there) when the lock pins none.
/// Errors name the file name: not a wheel name, or a wheel of another project.
Expected<void> check_wheel(Entry& entry, std::string_view file);

/// Warnings with the line they name, put in line order at the end.
struct Warnings {
  std::vector<std::pair<std::size_t, std::string>> items;
  void add(std::string_view file, std::size_t line, const std::string& what);
  std::vector<std::string> sorted();
};

/// The readers, over text already checked for size, NUL bytes and UTF-8.
Expected<LockFile> parse_requirements(std::string_view text, std::string_view file);
Expected<LockFile> parse_pylock(const toml::table& doc, std::string_view file);
Expected<LockFile> parse_pixi(const toml::table& doc, std::string_view file);
/// Whether a TOML document holds a [pypi-dependencies] table where pixi reads one.
bool has_pypi_dependencies(const toml::table& doc);

// TOML values of a table, each checked for its type: nullopt when absent, an error naming
// "<file>:<line>: <where> <key>" when present as another type.
std::size_t line_of(const toml::node& node);
Expected<std::optional<std::string>> string_at(const toml::table& t, std::string_view key, std::string_view file,
                                               const std::string& where);
const toml::table* table_at(const toml::table& t, std::string_view key);

}  // namespace wheelfit::locks::detail
