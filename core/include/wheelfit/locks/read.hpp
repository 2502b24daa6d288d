#pragma once
// The lock files wheelfit writes, read back (issue 35; docs/decisions/0042-lock-readers.md):
// pip's requirements.txt, PEP 751's pylock.toml and pixi.toml, each as the wheels it pins, so that
// `wheelfit check LOCK...` can verify every locked wheel against the index and the machine.
//
// What each reader takes:
// - requirements: `name @ URL --hash=sha256:HEX` and `name==VERSION --hash=sha256:HEX` (also
//   `name===VERSION`, extras, a bare URL or path of a .whl), the options anywhere after the
//   requirement, line continuations with '\', comments (`#` at a line's start or after
//   whitespace), `--index-url` / `-i` (the first is the lock's index), `--extra-index-url` and the
//   other options of pip's file (skipped), environment markers after ';' (ignored). Several sha256
//   on one line: the first is `sha256`, the others `other_sha256` (pip accepts a file matching
//   any); other hash kinds are ignored. A URL's "#sha256=HEX" fragment counts as its hash when
//   the line gives none. A URL requirement's version is the wheel file name's.
// - pylock.toml: `lock-version` 1.x, `[[packages]]` with name, version, index and
//   `wheels = [{ name, url | path, size, hashes = { sha256 } }]`, one Entry per wheel; a
//   package's `sdist`, `archive`, `vcs` or `directory`, and a package without wheels, is a warning.
// - pixi.toml: the `[pypi-dependencies]` tables (top level, `[feature.<f>.…]`,
//   `[target.<t>.…]`, `[feature.<f>.target.<t>.…]`): `name = { url = "...#sha256=HEX" }`,
//   `{ path = "..." }`, `{ version = "==X", index = "..." }` or `name = "==X"`; a spec that pins
//   no one version (a range, "==2.8.*", "*", a git source) is a warning. `[pypi-options]
//   index-url` is the lock's index, else the first per-dependency `index`.
//
// Hostile input is an error, never a crash or a hang: text over 64 MiB, a NUL byte, text that
// is not UTF-8, malformed TOML, a TOML line of more than 1000 dotted key parts (toml++ recurses
// once per part and would overflow the stack), a name that is not a PEP 508 name, a sha256 that
// is not 64 hex digits, a size that is not a non-negative integer, a file name that is not one
// ('/', '\\', "..", a control character, after percent-decoding), a wheel file name that is not
// PEP 427 or names another project, and a path (pylock's or pixi's `path`, a requirements
// location without a scheme) that leaves the lock's folder (absolute, a drive letter, a UNC or
// root-relative prefix; a relative path with ".." stays: a mirror's view writes
// "../../files/x.whl"). Each is Errc::invalid_input "<name>:<line>: what" (Errc::too_large for
// the size, Errc::unsupported for a pylock lock-version other than 1.x); every value a message
// quotes is redacted first (URL userinfo dropped, credential parameters and token shapes
// replaced: util::redact), so no message holds a credential. The entries keep URLs as written:
// callers redact what they print.
// Parsing is linear in the text's size.
//
// Thread safety: pure functions (read_lock reads the file system).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::locks {

enum class Format { pixi, requirements, pylock };
/// "pixi", "requirements", "pylock".
std::string_view format_name(Format f);

/// The largest lock text read_lock and parse_lock take.
inline constexpr std::uintmax_t kMaxLockBytes = 64u << 20;

/// One locked wheel.
struct Entry {
  std::string name;                    ///< PEP 503 normalised project name (model/name.hpp)
  std::string version;                 ///< as pinned; "" when the lock says none
  /// The wheel's file name (a URL's last path segment percent-decoded, or pylock's name/path);
  /// "" for a by-index pin (`name==X`): the index names the file.
  std::string filename;
  std::string url;                     ///< as written, fragment included ("" for a path-only or by-index entry); may hold credentials: callers redact
  std::string path;                    ///< pylock / pixi `path`, a requirements line's relative location, as written ("" if none)
  std::optional<std::string> sha256;   ///< lower-case hex; nullopt when the lock gives none
  std::optional<std::uint64_t> size;
  std::size_t line = 0;                ///< 1-based line of the entry in the file (0 when unknown)
  /// Further sha256 the line allows (requirements with several --hash=sha256: pip accepts a file
  /// matching any of them and `sha256`), lower-case hex, in file order.
  std::vector<std::string> other_sha256 = {};
  /// The index this entry is pinned against ("" when the lock's own or none): pixi's per-dependency
  /// `index`, pylock's `packages.index`. May hold credentials.
  std::string index = {};
};

/// One lock file, read.
struct LockFile {
  std::string path;                    ///< as given
  Format format;
  std::vector<Entry> entries;          ///< in file order
  /// The index the lock names, if any (requirements --index-url; pixi pypi-options index-url, else
  /// the first per-dependency index). May hold credentials.
  std::optional<std::string> index;
  /// Lines skipped that hold no wheel pin (an sdist, a VCS URL, a range, an option that names
  /// another file), each "<file>:<line>: ...", redacted.
  std::vector<std::string> warnings;
};

/// Parses `text` (the file `name`, for messages and format detection). Format: `format` when
/// given, else by name (requirements*.txt / *.txt -> requirements, pylock.toml / pylock.*.toml ->
/// pylock, pixi.toml or any .toml with [pypi-dependencies] -> pixi), else by content (TOML with
/// lock-version or [[packages]] -> pylock, TOML with pypi-dependencies -> pixi, else
/// requirements). Errc::invalid_input naming "<name>:<line>: what" (see above).
Expected<LockFile> parse_lock(std::string_view text, std::string_view name, std::optional<Format> format = std::nullopt);

/// Reads the file (a regular file only: util::read_file; a FIFO, a folder, a missing file are
/// errors naming it; at most kMaxLockBytes) and parses it.
Expected<LockFile> read_lock(const std::string& path, std::optional<Format> format = std::nullopt);

}  // namespace wheelfit::locks
