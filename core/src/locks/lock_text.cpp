// What the lock readers share (lock_text.hpp).
#include "lock_text.hpp"

#include <algorithm>

#include "wheelfit/model/name.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/model/version.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/safe_text.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::locks::detail {

namespace {

/// `text` with the userinfo of every "scheme://user@host" in it dropped (util::redact keeps the
/// user name; a lock's message keeps none of it).
std::string without_any_userinfo(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t from = 0;
  for (std::size_t sep = text.find("://"); sep != std::string_view::npos; sep = text.find("://", from)) {
    const std::size_t start = sep + 3;
    const std::size_t end = std::min(text.find_first_of("/?# \t\r\n", start), text.size());
    const std::size_t at = text.substr(start, end - start).rfind('@');
    out += text.substr(from, start - from);
    from = at == std::string_view::npos ? start : start + at + 1;
  }
  out += text.substr(from);
  return out;
}

}  // namespace

std::string plain(std::string_view text) {
  constexpr std::size_t kMax = 200;
  // Redacted whole before it is shortened: a secret cut in half is no longer recognised.
  const std::string clean = util::redact(without_any_userinfo(text));
  const std::string line =
      util::one_line(util::escape_controls(std::string_view(clean).substr(0, kMax), util::ControlEscape::line), "?");
  return clean.size() > kMax ? line + "..." : line;
}

std::string shown(std::string_view value) { return "'" + plain(value) + "'"; }

Error bad(std::string_view file, std::size_t line, const std::string& what) {
  return Error(Errc::invalid_input, std::string(file) + ":" + std::to_string(line) + ": " + what);
}

Expected<std::string> sha256_of(std::string_view hex, std::string_view file, std::size_t line, std::string_view of) {
  const bool ok = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
                    return util::ascii::is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
                  });
  if (!ok) return bad(file, line, "the sha256 " + shown(hex) + " of " + std::string(of) + " is not 64 hex digits");
  return util::ascii_lower(hex);
}

Expected<std::string> project_name(std::string_view raw, std::string_view file, std::size_t line) {
  if (!model::is_valid_name(raw)) return bad(file, line, shown(raw) + " is not a project name (PEP 508)");
  return model::normalize_name(raw);
}

Expected<void> check_file_name(std::string_view name, std::string_view file, std::size_t line) {
  std::string why;
  if (name.empty()) why = "is empty";
  else if (name == "." || name == "..") why = "names a folder";
  else if (name.find_first_of("/\\") != std::string_view::npos) why = "holds a path separator";
  else if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    why = "holds a control character";
  if (why.empty()) return {};
  return bad(file, line, "the file name " + shown(name) + " " + why + ", so it is no file name");
}

Expected<std::string> file_name_of(std::string_view location, bool url, std::string_view file, std::size_t line) {
  std::string name;
  if (url) {
    name = model::url::percent_decode(model::url::last_path_segment(location));
  } else {
    const std::size_t slash = location.find_last_of("/\\");
    name = std::string(slash == std::string_view::npos ? location : location.substr(slash + 1));
  }
  if (auto ok = check_file_name(name, file, line); !ok) {
    return bad(file, line, "the location " + shown(location) + " names no file (" + shown(name) + ")");
  }
  return name;
}

Expected<void> check_inside(std::string_view path, std::string_view file, std::size_t line) {
  const bool rooted = !path.empty() && (path.front() == '/' || path.front() == '\\');
  const bool drive = path.size() >= 2 && util::ascii::is_alpha(path[0]) && path[1] == ':';
  if (!rooted && !drive) return {};
  return bad(file, line, "the path " + shown(path) + " leaves the lock's folder (" +
                             (drive ? "a drive letter" : path.starts_with("//") || path.starts_with("\\\\") ? "a UNC or device prefix" : "absolute") +
                             "); a lock names its files relative to itself");
}

std::optional<std::string_view> fragment_sha256(std::string_view url) {
  const std::size_t hash = url.find('#');
  if (hash == std::string_view::npos) return std::nullopt;
  std::string_view fragment = url.substr(hash + 1);
  while (!fragment.empty()) {
    const std::size_t amp = fragment.find('&');
    const std::string_view part = fragment.substr(0, amp);
    if (part.starts_with("sha256=")) return part.substr(7);
    if (amp == std::string_view::npos) break;
    fragment.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

bool is_wheel_file(std::string_view filename) {
  return filename.size() > 4 && util::iequals(filename.substr(filename.size() - 4), ".whl");
}

bool is_vcs(std::string_view location) {
  for (std::string_view prefix : {"git+", "hg+", "svn+", "bzr+"}) {
    if (util::starts_with_ci(location, prefix)) return true;
  }
  return false;
}

std::optional<std::string> exact_pin(std::string_view spec) {
  spec = util::trim(spec);
  if (spec.starts_with("===")) {
    const std::string_view v = util::trim(spec.substr(3));
    if (v.empty() || v.find_first_of(" \t,;") != std::string_view::npos) return std::nullopt;
    return std::string(v);
  }
  if (!spec.starts_with("==")) return std::nullopt;
  const std::string_view v = util::trim(spec.substr(2));
  if (v.empty() || v.find_first_of("*, \t;") != std::string_view::npos || !model::Version::parse(v)) return std::nullopt;
  return std::string(v);
}

Expected<void> check_wheel(Entry& entry, std::string_view file) {
  auto wheel = model::WheelName::parse(entry.filename);
  if (!wheel) {
    return bad(file, entry.line, plain(wheel.error().message));  // it quotes the file name
  }
  if (wheel->name != entry.name) {
    return bad(file, entry.line, "the wheel " + shown(entry.filename) + " is no file of the project " + shown(entry.name));
  }
  if (entry.version.empty()) {
    const std::size_t dash = entry.filename.find('-');
    entry.version = entry.filename.substr(dash + 1, entry.filename.find('-', dash + 1) - dash - 1);
  }
  return {};
}

void Warnings::add(std::string_view file, std::size_t line, const std::string& what) {
  items.emplace_back(line, std::string(file) + ":" + std::to_string(line) + ": " + what);
}

std::vector<std::string> Warnings::sorted() {
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(items.size());
  for (auto& [line, text] : items) out.push_back(std::move(text));
  return out;
}

std::size_t line_of(const toml::node& node) { return node.source().begin.line; }

Expected<std::optional<std::string>> string_at(const toml::table& t, std::string_view key, std::string_view file,
                                               const std::string& where) {
  const toml::node* node = t.get(key);
  if (!node) return std::optional<std::string>();
  if (const auto* s = node->as_string()) return std::optional<std::string>(s->get());
  return bad(file, line_of(*node), where + " " + std::string(key) + " is not a string");
}

const toml::table* table_at(const toml::table& t, std::string_view key) {
  const toml::node* node = t.get(key);
  return node ? node->as_table() : nullptr;
}

}  // namespace wheelfit::locks::detail
