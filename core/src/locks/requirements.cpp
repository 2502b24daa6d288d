// requirements.txt read back (locks/read.hpp), line by line as pip reads it: its physical lines
// (Python's str.splitlines()), continuations joined, comments removed, then each line an option
// line or a requirement with its options.
#include <algorithm>
#include <vector>

#include "lock_text.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::locks::detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/// The length of the line break at `text[i]` as str.splitlines() sees one ('\n', '\r', "\r\n",
/// '\v', '\f', U+001C-U+001E, U+0085, U+2028, U+2029); 0 when there is none.
std::size_t break_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == '\r') return i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
  if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) return 1;
  const std::string_view rest = text.substr(i);
  if (rest.starts_with("\xc2\x85")) return 2;
  if (rest.starts_with("\xe2\x80\xa8") || rest.starts_with("\xe2\x80\xa9")) return 3;
  return 0;
}

/// pip's COMMENT_RE, `(^|\s+)#.*$`, matched at the start of `line`.
bool is_comment_line(std::string_view line) {
  const auto first = std::find_if_not(line.begin(), line.end(), is_space);
  return first != line.end() && *first == '#';
}

/// `line` with pip's COMMENT_RE removed (the first '#' at its start or after whitespace, with
/// that whitespace and the rest of the line), then trimmed.
std::string_view without_comment(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || is_space(line[i - 1]))) {
      line = line.substr(0, i);
      break;
    }
  }
  const auto begin = std::find_if_not(line.begin(), line.end(), is_space);
  const auto end = std::find_if_not(line.rbegin(), line.rend(), is_space).base();
  return begin < end ? std::string_view(&*begin, static_cast<std::size_t>(end - begin)) : std::string_view();
}

std::vector<std::string_view> tokens_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

bool is_name_char(char c) { return util::ascii::is_alnum(c) || c == '-' || c == '_' || c == '.'; }

/// Reads one file's logical lines into a LockFile.
class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  Expected<void> line(std::size_t number, std::string_view text) {
    number_ = number;
    text = without_comment(text);
    if (text.empty()) return {};
    const auto tokens = tokens_of(text);
    const auto first_option =
        std::find_if(tokens.begin(), tokens.end(), [](std::string_view t) { return t.front() == '-'; });
    if (first_option == tokens.begin()) return options_line(tokens);
    // The requirement runs to the first option (pip's break_args_options).
    const std::string_view requirement(tokens.front().data(), static_cast<std::size_t>(
                                                                  (first_option[-1].data() + first_option[-1].size()) -
                                                                  tokens.front().data()));
    Entry entry;
    entry.line = number;
    if (auto ok = hashes(std::vector<std::string_view>(first_option, tokens.end()), entry); !ok) return ok;
    return this->requirement(requirement, std::move(entry));
  }

  LockFile finish() {
    lock_.format = Format::requirements;
    lock_.warnings = warnings_.sorted();
    return std::move(lock_);
  }

 private:
  /// The value of option `t` (`--long=V`, `--long V`, `-sV`, `-s V`), advancing `i` past it;
  /// nullopt when `t` is not this option.
  Expected<std::optional<std::string_view>> value_of(const std::vector<std::string_view>& tokens, std::size_t& i,
                                                     std::string_view long_name, std::string_view short_name = {}) {
    const std::string_view t = tokens[i];
    if (t == long_name || (!short_name.empty() && t == short_name)) {
      if (i + 1 == tokens.size()) return bad(file_, number_, std::string(t) + " without its value");
      return std::optional<std::string_view>(tokens[++i]);
    }
    if (t.starts_with(long_name) && t.size() > long_name.size() && t[long_name.size()] == '=') {
      return std::optional<std::string_view>(t.substr(long_name.size() + 1));
    }
    if (!short_name.empty() && t.starts_with(short_name) && t.size() > short_name.size() && !t.starts_with("--")) {
      return std::optional<std::string_view>(t.substr(short_name.size()));
    }
    return std::optional<std::string_view>();
  }

  /// A line of options only: the first --index-url is the lock's index; a file or an editable
  /// requirement it names is a warning; the other options of pip's file are skipped.
  Expected<void> options_line(const std::vector<std::string_view>& tokens) {
    static constexpr std::pair<std::string_view, std::string_view> kValued[] = {
        {"--extra-index-url", ""}, {"--find-links", "-f"},  {"--trusted-host", ""},    {"--no-binary", ""},
        {"--only-binary", ""},     {"--use-feature", ""},   {"--global-option", ""},   {"--config-settings", ""},
        {"--hash", ""},            {"--requirement", "-r"}, {"--constraint", "-c"},    {"--editable", "-e"}};
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      auto index = value_of(tokens, i, "--index-url", "-i");
      if (!index) return index.error();
      if (*index) {
        if (!lock_.index) lock_.index = std::string(**index);
        continue;
      }
      bool known = false;
      for (const auto& [long_name, short_name] : kValued) {
        auto value = value_of(tokens, i, long_name, short_name);
        if (!value) return value.error();
        if (!*value) continue;
        known = true;
        if (long_name == "--requirement" || long_name == "--constraint") {
          warnings_.add(file_, number_, "names another file, " + shown(**value) + ", which is not read");
        } else if (long_name == "--editable") {
          warnings_.add(file_, number_, "an editable requirement, " + shown(**value) + ", pins no wheel: skipped");
        }
        break;
      }
      static constexpr std::string_view kFlags[] = {"--no-index", "--pre", "--prefer-binary", "--require-hashes"};
      if (!known && std::find(std::begin(kFlags), std::end(kFlags), tokens[i]) == std::end(kFlags)) {
        warnings_.add(file_, number_, "the option " + shown(tokens[i]) + " is not one wheelfit reads: skipped");
      }
    }
    return {};
  }

  /// The --hash options of a requirement: sha256 digests into `entry`, other kinds skipped.
  Expected<void> hashes(const std::vector<std::string_view>& options, Entry& entry) {
    for (std::size_t i = 0; i < options.size(); ++i) {
      auto value = value_of(options, i, "--hash");
      if (!value) return value.error();
      if (!*value) continue;
      const std::size_t colon = (*value)->find(':');
      if (colon == std::string_view::npos) {
        return bad(file_, number_, "the hash " + shown(**value) + " is not <kind>:<hex digits>");
      }
      if ((*value)->substr(0, colon) != "sha256") continue;
      auto hex = sha256_of((*value)->substr(colon + 1), file_, number_, "this requirement");
      if (!hex) return hex.error();
      if (!entry.sha256) entry.sha256 = std::move(*hex);
      else entry.other_sha256.push_back(std::move(*hex));
    }
    return {};
  }

  Expected<void> requirement(std::string_view text, Entry entry) {
    std::size_t i = 0;
    while (i < text.size() && is_name_char(text[i])) ++i;
    const std::string_view raw_name = text.substr(0, i);
    std::string_view rest = util::trim(text.substr(i));
    const bool wheel_path = rest.empty() && is_wheel_file(raw_name);
    if (raw_name.empty() || wheel_path || (!rest.empty() && std::string_view("[@=<>!~;").find(rest.front()) == std::string_view::npos)) {
      return location(text, std::move(entry));  // a bare URL or path
    }
    auto name = project_name(raw_name, file_, number_);
    if (!name) return name.error();
    entry.name = std::move(*name);
    if (rest.starts_with('[')) {
      const std::size_t close = rest.find(']');
      if (close == std::string_view::npos) return bad(file_, number_, "the extras of " + shown(text) + " are not closed");
      rest = util::trim(rest.substr(close + 1));
    }
    if (rest.starts_with('@')) return location(util::trim(rest.substr(1)), std::move(entry));
    const std::string_view spec = util::trim(rest.substr(0, rest.find(';')));
    auto version = exact_pin(spec);
    if (!version) {
      warnings_.add(file_, number_, shown(entry.name) + (spec.empty() ? " names no version" : " " + shown(spec) + " pins no one version") +
                                        ": skipped");
      return {};
    }
    entry.version = std::move(*version);
    lock_.entries.push_back(std::move(entry));
    return {};
  }

  /// `name @ LOCATION [; marker]` (entry.name set) or a bare LOCATION: a URL or a relative path.
  Expected<void> location(std::string_view text, Entry entry) {
    const auto tokens = tokens_of(text);
    if (tokens.empty()) return bad(file_, number_, "'@' without a URL");
    const std::string_view where = tokens.front();
    if (tokens.size() > 1 && !tokens[1].starts_with(';')) {
      return bad(file_, number_, shown(text) + " is not one requirement (text after its location)");
    }
    if (is_vcs(where)) {
      warnings_.add(file_, number_, shown(where) + " is a VCS source, not a wheel: skipped");
      return {};
    }
    const bool url = !model::url::url_scheme(where).empty();
    auto filename = file_name_of(where, url, file_, number_);
    if (!filename) return filename.error();
    if (!is_wheel_file(*filename)) {
      warnings_.add(file_, number_, shown(*filename) + " is not a wheel (an sdist or another archive): skipped");
      return {};
    }
    if (!url) {
      if (auto ok = check_inside(where, file_, number_); !ok) return ok;
    }
    entry.filename = std::move(*filename);
    (url ? entry.url : entry.path) = std::string(where);
    if (entry.name.empty()) {
      auto name = project_name(entry.filename.substr(0, entry.filename.find('-')), file_, number_);
      if (!name) return name.error();
      entry.name = std::move(*name);
    }
    if (auto ok = check_wheel(entry, file_); !ok) return ok;
    if (const auto fragment = fragment_sha256(where); fragment && !entry.sha256) {
      auto hex = sha256_of(*fragment, file_, number_, shown(entry.filename));
      if (!hex) return hex.error();
      entry.sha256 = std::move(*hex);
    }
    lock_.entries.push_back(std::move(entry));
    return {};
  }

  std::string_view file_;
  std::size_t number_ = 0;
  LockFile lock_;
  Warnings warnings_;
};

}  // namespace

Expected<LockFile> parse_requirements(std::string_view text, std::string_view file) {
  Reader reader(file);
  std::string joined;               // a line continued with '\' so far (pip's join_lines)
  std::size_t first_line = 0;       // its first physical line
  std::size_t number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = pos;
    std::size_t brk = 0;
    while (end < text.size() && (brk = break_at(text, end)) == 0) ++end;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + brk;
    ++number;
    const bool comment = is_comment_line(line);
    if (!line.ends_with('\\') || comment) {
      if (joined.empty() && first_line == 0) {
        if (auto ok = reader.line(number, line); !ok) return ok.error();
        continue;
      }
      joined += comment ? " " + std::string(line) : std::string(line);
      if (auto ok = reader.line(first_line, joined); !ok) return ok.error();
      joined.clear();
      first_line = 0;
      continue;
    }
    if (first_line == 0) first_line = number;
    std::string_view piece = line;  // line.strip("\\")
    while (!piece.empty() && piece.front() == '\\') piece.remove_prefix(1);
    while (!piece.empty() && piece.back() == '\\') piece.remove_suffix(1);
    joined += piece;
  }
  if (first_line != 0) {
    if (auto ok = reader.line(first_line, joined); !ok) return ok.error();
  }
  return reader.finish();
}

}  // namespace wheelfit::locks::detail
