// requirements.txt and pylock.toml from the picks (output/locks.hpp).
#include "wheelfit/output/locks.hpp"

#include <limits>
#include <sstream>
#include <utility>

#include <toml++/toml.h>

#include "wheelfit/util/safe_text.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::output {

namespace {

/// `value` as a message quotes it: one line, UTF-8, shortened.
std::string in_quotes(std::string_view value) {
  constexpr std::size_t kMax = 200;
  // C0 and C1 controls as "\xNN", then what else is no line of UTF-8 (U+2028, a split sequence) as '?'.
  const std::string shown = util::one_line(util::escape_controls(value.substr(0, kMax), util::ControlEscape::line), "?");
  return "'" + shown + (value.size() > kMax ? "...'" : "'");
}

/// "# <comment>\n" per comment, each checked.
Expected<std::string> comment_block(std::string_view file, const std::vector<std::string>& comments) {
  std::string out;
  for (const auto& c : comments) {
    if (auto ok = check_lock_value(file, "a comment", c, LockValue::comment); !ok) return ok.error();
    out += "# " + c + "\n";
  }
  return out;
}

std::string unlocked_note(const LockedWheel& w) {
  return "not locked: " + w.filename + " (its index publishes no sha256; install it yourself, knowingly)";
}

/// Each (what, value) of `values` checked as `kind` for `file`.
Expected<void> check_values(std::string_view file, std::initializer_list<std::pair<std::string, std::string_view>> values,
                            LockValue kind) {
  for (const auto& [what, value] : values) {
    if (auto ok = check_lock_value(file, what, value, kind); !ok) return ok;
  }
  return {};
}

// PEP 825's [packages.variants-json]: the JSON structure of the variant metadata "converted into
// the respective TOML types". `Refusal` words the error of a value TOML cannot carry.
struct Refusal {
  std::string_view file;
  const LockedWheel& wheel;
  Error operator()(const std::string& path, const std::string& why) const {
    return Error(Errc::invalid_input, std::string(file) + ": the variant metadata of " + in_quotes(wheel.filename) + " " + why +
                                          " (at " + path + "), so the file is not written");
  }
};

Expected<toml::table> toml_table(const boost::json::object& o, const std::string& path, int inline_depth, const Refusal& refuse);
Expected<toml::array> toml_array(const boost::json::array& a, const std::string& path, const Refusal& refuse);

/// JSON `v` (at `path`) given to `add` as its TOML value; objects `inline_depth` levels down
/// and deeper are inline tables.
template <typename Add>
Expected<void> to_toml(const boost::json::value& v, const std::string& path, int inline_depth, const Refusal& refuse, Add add) {
  switch (v.kind()) {
    case boost::json::kind::object: {
      auto t = toml_table(v.get_object(), path, inline_depth, refuse);
      if (!t) return t.error();
      add(std::move(*t));
      return {};
    }
    case boost::json::kind::array: {
      auto a = toml_array(v.get_array(), path, refuse);
      if (!a) return a.error();
      add(std::move(*a));
      return {};
    }
    case boost::json::kind::string: add(std::string(v.get_string())); return {};
    case boost::json::kind::bool_: add(v.get_bool()); return {};
    case boost::json::kind::int64: add(v.get_int64()); return {};
    case boost::json::kind::double_: add(v.get_double()); return {};
    case boost::json::kind::uint64:
      if (v.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return refuse(path, "holds an integer beyond TOML's 64 bits");
      }
      add(static_cast<std::int64_t>(v.get_uint64()));
      return {};
    case boost::json::kind::null: break;
  }
  return refuse(path, "holds a null, which TOML has no form for");
}

Expected<toml::table> toml_table(const boost::json::object& o, const std::string& path, int inline_depth, const Refusal& refuse) {
  toml::table t;
  for (const auto& [key, value] : o) {
    const std::string k(key);
    auto ok = to_toml(value, path + "." + k, inline_depth - 1, refuse, [&](auto&& node) { t.insert(k, std::move(node)); });
    if (!ok) return ok.error();
  }
  t.is_inline(inline_depth <= 0);
  return t;
}

Expected<toml::array> toml_array(const boost::json::array& a, const std::string& path, const Refusal& refuse) {
  toml::array out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto ok = to_toml(a[i], path + "[" + std::to_string(i) + "]", 0, refuse, [&](auto&& node) { out.push_back(std::move(node)); });
    if (!ok) return ok.error();
  }
  return out;
}

/// [packages.variants-json] of `w`: its variant metadata with "$schema" and every other key,
/// `variants` holding the wheel's own label only; the labels (two levels down) are inline tables,
/// as in PEP 825's example.
Expected<toml::table> variants_table(std::string_view file, const LockedWheel& w) {
  const Refusal refuse{file, w};
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(*w.variants_json, ec);
  if (ec || !doc.is_object()) return refuse("$", "is not a JSON object");
  auto& object = doc.get_object();
  const boost::json::value* variants = object.if_contains("variants");
  const boost::json::value* own = variants && variants->is_object() ? variants->get_object().if_contains(*w.variant_label) : nullptr;
  if (!own) return refuse("$.variants", "lists no variant " + in_quotes(*w.variant_label));
  object["variants"] = boost::json::object{{*w.variant_label, *own}};
  return toml_table(object, "$", 2, refuse);
}

}  // namespace

std::string lock_value_problem(std::string_view value, LockValue kind) {
  switch (kind) {
    case LockValue::requirement_token:
      if (value.empty()) return "is empty";
      if (std::string why = util::url_token_problem(value); !why.empty()) return why;
      if (value.find("${") != std::string_view::npos) return "holds '${', which pip expands from the installer's environment";
      return {};
    case LockValue::toml_string: {
      const std::size_t good = util::utf8_valid_prefix(value);
      return good == value.size() ? std::string() : "is not UTF-8 (at byte " + std::to_string(good) + ")";
    }
    case LockValue::comment: return util::one_line_problem(value);
  }
  return {};
}

Expected<void> check_lock_value(std::string_view file, std::string_view what, std::string_view value, LockValue kind) {
  const std::string why = lock_value_problem(value, kind);
  if (why.empty()) return {};
  return unexpected(Errc::invalid_input, std::string(file) + ": " + std::string(what) + " " + in_quotes(value) + " " + why +
                                             ": an installer would read it as something else, so the file is not written");
}

namespace {

/// A wheel without a sha256 is no entry of `file` but a comment at its end, added to `missing`:
/// true then. The note is checked as a comment line (decision 0021).
Expected<bool> set_aside_unlocked(std::string_view file, const LockedWheel& w, std::string& missing) {
  if (w.sha256) return false;
  const std::string note = unlocked_note(w);
  if (auto ok = check_lock_value(file, "a comment", note, LockValue::comment); !ok) return ok.error();
  missing += "# " + note + "\n";
  return true;
}

}  // namespace

Expected<std::string> requirements_txt(const std::vector<LockedWheel>& wheels, bool by_index,
                                       const std::vector<std::string>& comments) {
  constexpr std::string_view kFile = "requirements.txt";
  auto out = comment_block(kFile, comments);
  if (!out) return out;
  std::string missing;
  for (const auto& w : wheels) {
    auto unlocked = set_aside_unlocked(kFile, w, missing);
    if (!unlocked) return unlocked.error();
    if (*unlocked) continue;
    const std::string of = " of " + in_quotes(w.filename);
    const std::string& where = by_index ? w.version : w.location;
    if (auto ok = check_values(kFile, {{"the name" + of, w.name}, {(by_index ? "the version" : "the URL") + of, where},
                                       {"the sha256" + of, *w.sha256}},
                               LockValue::requirement_token);
        !ok) {
      return ok.error();
    }
    *out += by_index ? w.name + "==" + w.version : w.name + " @ " + w.location;
    *out += " --hash=sha256:" + *w.sha256 + "\n";
  }
  return *out + missing;
}

Expected<std::string> pylock_toml(const std::vector<LockedWheel>& wheels, const std::optional<std::string>& requires_python,
                                  const std::vector<std::string>& comments) {
  constexpr std::string_view kFile = "pylock.toml";
  auto head = comment_block(kFile, comments);
  if (!head) return head;
  toml::table doc;
  doc.insert("lock-version", "1.0");
  if (requires_python) doc.insert("requires-python", *requires_python);
  doc.insert("created-by", "wheelfit");
  toml::array packages;
  std::string missing;
  for (const auto& w : wheels) {
    auto unlocked = set_aside_unlocked(kFile, w, missing);
    if (!unlocked) return unlocked.error();
    if (*unlocked) continue;
    // toml++ escapes every string, but writes a byte that is not UTF-8 as another character.
    const std::string of = " of " + in_quotes(w.filename);
    if (auto ok = check_values(kFile, {{"the name" + of, w.name}, {"the version" + of, w.version}, {"the file name", w.filename},
                                       {"the location" + of, w.location}, {"the sha256" + of, *w.sha256}},
                               LockValue::toml_string);
        !ok) {
      return ok.error();
    }
    toml::table wheel;
    wheel.insert("name", w.filename);
    wheel.insert(w.relative ? "path" : "url", w.location);
    // PEP 751's size, where known (uv refuses a wrong one); beyond a TOML integer it is no size.
    if (w.size && *w.size <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      wheel.insert("size", static_cast<std::int64_t>(*w.size));
    }
    toml::table hashes;
    hashes.insert("sha256", *w.sha256);
    hashes.is_inline(true);
    wheel.insert("hashes", std::move(hashes));
    wheel.is_inline(true);
    toml::array list;
    list.push_back(std::move(wheel));
    toml::table package;
    package.insert("name", w.name);
    package.insert("version", w.version);
    package.insert("wheels", std::move(list));
    if (w.variant_label && w.variants_json) {  // PEP 825's [packages.variants-json]
      auto variants = variants_table(kFile, w);
      if (!variants) return variants.error();
      package.insert("variants-json", std::move(*variants));
    }
    packages.push_back(std::move(package));
  }
  doc.insert("packages", std::move(packages));
  std::ostringstream os;
  const auto flags = toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings;
  os << *head << missing << toml::toml_formatter(doc, flags) << "\n";
  return os.str();
}

}  // namespace wheelfit::output
