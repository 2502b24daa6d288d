// parse_lock and read_lock (locks/read.hpp): the checks every format shares, which format a text
// is, then its reader (requirements.cpp, pylock.cpp, pixi.cpp).
#include "wheelfit/locks/read.hpp"

#include <algorithm>

#include "lock_text.hpp"
#include "wheelfit/util/toml_depth.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/safe_text.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::locks {

using detail::bad;

namespace {
constexpr std::pair<Format, std::string_view> kFormatNames[] = {
    {Format::pixi, "pixi"}, {Format::requirements, "requirements"}, {Format::pylock, "pylock"}};
}  // namespace

std::string_view format_name(Format f) { return util::name_of(kFormatNames, f); }

namespace {

/// The 1-based line of byte `offset` of `text`.
std::size_t line_at(std::string_view text, std::size_t offset) {
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

/// What no lock may be: over the size limit, holding a NUL byte, not UTF-8.
Expected<void> check_text(std::string_view text, std::string_view name) {
  if (text.size() > kMaxLockBytes) {
    return Error(Errc::too_large, std::string(name) + ": " + std::to_string(text.size()) + " bytes, over the " +
                                      std::to_string(kMaxLockBytes >> 20) + " MiB limit for a lock file");
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return bad(name, line_at(text, nul), "holds a NUL byte (at byte " + std::to_string(nul) + "): a lock file is text");
  }
  if (const std::size_t good = util::utf8_valid_prefix(text); good != text.size()) {
    return bad(name, line_at(text, good), "is not UTF-8 (at byte " + std::to_string(good) + ")");
  }
  return {};
}

/// The file name of `name`: after its last '/' or '\\'.
std::string_view base_name(std::string_view name) {
  const std::size_t slash = name.find_last_of("/\\");
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

/// The format a file's name gives, when it gives one.
std::optional<Format> format_by_name(std::string_view name) {
  const std::string base = util::ascii_lower(base_name(name));
  const std::string_view b = base;
  if (b.ends_with(".txt")) return Format::requirements;
  if (b == "pylock.toml" || (b.starts_with("pylock.") && b.ends_with(".toml"))) return Format::pylock;
  if (b == "pixi.toml") return Format::pixi;
  return std::nullopt;
}

/// Whether the first line that is neither blank nor a comment reads as TOML: a table header, or
/// `key = value` (a requirement's "==", ">=", "~=", "@" never is; an option line never is).
bool looks_like_toml(std::string_view text) {
  while (!text.empty()) {
    const std::size_t nl = std::min(text.find('\n'), text.size());
    const std::string_view line = util::trim(text.substr(0, nl));
    text.remove_prefix(std::min(nl + 1, text.size()));
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') return true;
    if (line.front() == '-') return false;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0 || (eq + 1 < line.size() && line[eq + 1] == '=')) return false;
    return std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
      return util::ascii::is_alnum(c) || c == '_' || c == '-' || c == '.' || c == '"' || c == '\'' || c == ' ' || c == '\t';
    });
  }
  return false;
}

/// toml++ recurses as deep as a dotted key has parts (util/toml_depth.hpp): such a line is refused.
Expected<void> check_key_depth(std::string_view text, std::string_view name) {
  if (const auto line = util::too_deep_toml_line(text)) {
    return bad(name, *line, "more than " + std::to_string(util::kMaxTomlKeyDots) + " dotted key parts on one line: too deep to read");
  }
  return {};
}

Expected<toml::table> parse_toml(std::string_view text, std::string_view name) {
  if (auto ok = check_key_depth(text, name); !ok) return ok.error();
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return bad(name, b.line, "TOML syntax error: " + detail::plain(e.description()) + " (column " + std::to_string(b.column) + ")");
  }
}

/// A TOML lock: pylock or pixi, by `format` or else by its keys.
Expected<LockFile> parse_toml_lock(std::string_view text, std::string_view name, std::optional<Format> format) {
  auto doc = parse_toml(text, name);
  if (!doc) return doc.error();
  if (!format) {
    if (doc->contains("lock-version") || doc->contains("packages")) format = Format::pylock;
    else if (detail::has_pypi_dependencies(*doc)) format = Format::pixi;
    else {
      return bad(name, 1, "neither a pylock.toml (no lock-version, no [[packages]]) nor a pixi manifest (no "
                          "[pypi-dependencies]): no lock wheelfit reads");
    }
  }
  return *format == Format::pylock ? detail::parse_pylock(*doc, name) : detail::parse_pixi(*doc, name);
}

}  // namespace

Expected<LockFile> parse_lock(std::string_view text, std::string_view name, std::optional<Format> format) {
  if (auto ok = check_text(text, name); !ok) return ok.error();
  if (text.starts_with("\xef\xbb\xbf")) text.remove_prefix(3);  // a byte order mark
  if (!format) format = format_by_name(name);
  const bool toml = (format && *format != Format::requirements) ||
                    (!format && (util::ascii_lower(base_name(name)).ends_with(".toml") || looks_like_toml(text)));
  auto lock = toml ? parse_toml_lock(text, name, format) : detail::parse_requirements(text, name);
  if (!lock) return lock;
  lock->path = std::string(name);
  return lock;
}

Expected<LockFile> read_lock(const std::string& path, std::optional<Format> format) {
  auto text = util::read_file(path, kMaxLockBytes, "a lock file");
  if (!text) return text.error();
  return parse_lock(*text, path, format);
}

}  // namespace wheelfit::locks
