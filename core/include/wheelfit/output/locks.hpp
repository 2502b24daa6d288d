#pragma once
// Lock files other installers read: pip's `--require-hashes` requirements.txt and PEP 751's
// pylock.toml (uv installs from it), written from the wheels a resolve picked. Every line pins one
// file by its sha256; a wheel whose digest is unknown is not locked (the text says which).
//
// A value that its reader would take as something else is refused, never written (decision 0021):
// on a requirements line, a URL, name or version that is not one token of printable ASCII, or
// holds "${" (pip expands ${NAME} from the installer's environment); in either file, a comment
// that is not one line (pip's reader breaks lines at '\f', '\v', U+0085, U+2028, ... too) or a
// value that is not UTF-8. Errc::invalid_input names the file, the wheel and the value.
//
// Thread safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::output {

/// One wheel to lock.
struct LockedWheel {
  std::string name = {};      ///< PEP 503 normalised project name
  std::string version = {};   ///< exact, with its local label ("2.8.3+cu128torch2.8")
  std::string filename = {};  ///< the wheel's file name
  /// Where it is: an absolute URL, or (relative) a path from the lock file's folder.
  std::string location = {};
  bool relative = false;
  std::optional<std::uint64_t> size = {};
  std::optional<std::string> sha256 = {};  ///< lower-case hex
  /// A variant wheel (PEP 825): its label, and its package version's combined variant metadata
  /// (the index's {name}-{version}-variants.json, as served), which pylock.toml inlines.
  std::optional<std::string> variant_label = {};
  std::optional<std::string> variants_json = {};
};

/// requirements.txt for `pip install --require-hashes --no-deps -r`: one line per wheel,
/// `name==version --hash=sha256:HEX` when `by_index` (the installer's --index-url serves the
/// file), else `name @ URL --hash=sha256:HEX`. `comments` open the file ("# " each). A wheel
/// without a digest is left out, named in a comment (pip refuses an unhashed line in that mode).
/// Refuses the values above (the whole text: no line is left out for it).
Expected<std::string> requirements_txt(const std::vector<LockedWheel>& wheels, bool by_index, const std::vector<std::string>& comments);

/// pylock.toml (PEP 751, lock-version 1.0): created-by, requires-python when given, and one
/// [[packages]] per wheel with name, version and wheels = [{name, url or path, size, hashes}];
/// a variant wheel's [packages.variants-json] inlines its variant metadata as PEP 825 requires:
/// every key of the variants file converted to TOML ("$schema" kept), `variants` holding the
/// wheel's label only (the labels of wheels not listed may be left out), each label an inline
/// table. A wheel without a digest is left out, named in a comment (PEP 751 requires hashes).
/// Refuses the values above (the whole text), and variant metadata that is not a JSON object,
/// lists no entry for the label, or holds what TOML cannot carry (a null, an integer beyond 64
/// bits), naming the wheel and the JSON path.
Expected<std::string> pylock_toml(const std::vector<LockedWheel>& wheels, const std::optional<std::string>& requires_python,
                        const std::vector<std::string>& comments);

/// How a lock file carries a value, for lock_value_problem.
enum class LockValue {
  requirement_token,  ///< a bare token of a requirements line: a URL, a name, a version
  toml_string,        ///< a TOML string (quoted and escaped): any UTF-8
  comment,            ///< a "# " comment line of either format
};
/// Why `value` cannot be written as `kind`; "" when it can (the rules above).
std::string lock_value_problem(std::string_view value, LockValue kind);
/// Errc::invalid_input "<file>: <what> '<value, escaped>' <why>; not written" when `value` cannot
/// be written as `kind`.
Expected<void> check_lock_value(std::string_view file, std::string_view what, std::string_view value, LockValue kind);

}  // namespace wheelfit::output
