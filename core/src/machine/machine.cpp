#include "wheelfit/machine/machine.hpp"
#include "wheelfit/util/toml_depth.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <boost/json.hpp>
#include <toml++/toml.h>

#if __has_include(<sys/utsname.h>)
#include <sys/utsname.h>
#define WHEELFIT_HAVE_UNAME 1
#endif
#ifdef _WIN32
#include <windows.h>

#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/util/windows_text.hpp"
#endif
#if __has_include(<gnu/libc-version.h>)
#include <gnu/libc-version.h>
#define WHEELFIT_HAVE_GNU_LIBC_VERSION 1
#endif

namespace wheelfit::machine {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

constexpr std::uintmax_t kMaxProfileBytes = 1024u * 1024u;

using util::ascii_upper;

bool is_informational_key(std::string_view key) {
  const auto& keys = informational_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// "a, b, c": a key list for messages.
std::string keys_text(const std::vector<std::string_view>& keys) { return util::join({keys.begin(), keys.end()}, ", "); }

// A why-message for a value that failed; the caller prefixes "<where>: <key> = '<value>': ".
using Why = std::string;

// One device target as a profile writes it: lower case, trimmed; the backend judges the rest.
Expected<std::string> parse_gpu_target(std::string_view item) {
  const std::string s = util::ascii_lower(util::trim(item));
  const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' || c == '+' || c == '-';
  });
  if (!ok) {
    return unexpected(Errc::invalid_input, "'" + std::string(item) +
                                               "' is not a device target: write it as the backend names it (letters, "
                                               "digits and . _ : + -, at most 64)");
  }
  return s;
}

// The items of the list fact (gpus), each checked as it is added.
struct ListBuilder {
  std::vector<std::string> targets;

  [[nodiscard]] static std::string example() { return "[\"<target>\", ...]"; }
  [[nodiscard]] static std::string item_example() { return "\"<target>\""; }
  Expected<void> add(std::string_view item) {
    if (util::ascii_lower(util::trim(item)) == "none") {
      return unexpected(Errc::invalid_input, "'none' means no GPU only as the whole value, not as one of the targets");
    }
    auto t = parse_gpu_target(item);
    if (!t) return t.error();
    targets.push_back(std::move(*t));
    return {};
  }
  void store(Machine& m) { m.gpus = std::move(targets); }
};

// The env / text form: comma-separated, spaces allowed; "none" is a known empty list.
Expected<void> parse_list(ListBuilder& list, std::string_view text) {
  if (util::ascii_lower(util::trim(text)) == "none") return {};
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.size() - start : comma - start);
    if (util::trim(item).empty()) {
      return unexpected(Errc::invalid_input, "an empty entry in the list (write the targets separated by commas)");
    }
    if (auto r = list.add(item); !r) return r;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return {};
}

// ---- the facts, as one table

std::string python_text(const Machine& m) {
  return m.python->str() + (m.python_free_threaded ? "t" : "");
}


// Parses `value` (non-empty, trimmed) into its fact of `m`; a why-message on failure.
using Assign = std::optional<Why> (*)(Machine& m, std::string_view value);

// One fact of a profile: its key, the name earlier profiles gave it (read as this fact), the
// variables besides WHEELFIT_OVERRIDE_<KEY> that set it (consulted in order), whether it is a
// list, and how it is read, cleared and written out (nullopt: unknown).
struct Fact {
  std::string_view key;
  std::string_view old_key;
  std::vector<std::string> env_aliases;
  bool list = false;
  Assign assign;
  void (*clear)(Machine& m);
  std::optional<json::value> (*show)(const Machine& m);
};

template <auto Member>
void reset(Machine& m) {
  (m.*Member).reset();
}

// A fact written as its str() (versions), or as itself (strings).
template <auto Member>
std::optional<json::value> show_text(const Machine& m) {
  const auto& v = m.*Member;
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<std::decay_t<decltype(*v)>, std::string>) return json::value(json::string(*v));
  else return json::value(json::string(v->str()));
}

template <auto Member>
std::optional<Why> assign_numeric(Machine& m, std::string_view value) {
  auto v = model::NumericVersion::parse(value);
  if (!v) return v.error().message;
  m.*Member = *v;
  return std::nullopt;
}

// [a-z0-9] and the given punctuation, 1-64 characters.
bool is_name(std::string_view s, std::string_view punctuation) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || punctuation.find(c) != std::string_view::npos;
  });
}

std::optional<Why> assign_os(Machine& m, std::string_view value) {
  auto os = model::parse_os(value);
  if (!os) return Why("must be linux, windows or macos");
  m.os = *os;
  return std::nullopt;
}

// A fact that is a name (cpu_arch, backend), given in its canonical case: set when is_name, else `why`.
std::optional<Why> assign_name(std::optional<std::string>& fact, std::string name, std::string_view punct, const char* why) {
  if (!is_name(name, punct)) return Why(why);
  fact = std::move(name);
  return std::nullopt;
}

std::optional<Why> assign_cpu_arch(Machine& m, std::string_view value) {
  return assign_name(m.cpu_arch, model::normalize_cpu_arch(value), "_",
                     "must be a machine name such as x86_64, amd64, aarch64 or arm64");
}

std::optional<Why> assign_python(Machine& m, std::string_view value) {
  std::string_view digits = value;
  const bool ft = digits.ends_with('t');
  if (ft) digits.remove_suffix(1);
  auto v = model::NumericVersion::parse(digits);
  if (!v || v->parts().size() != 2) return Why("must be major.minor such as \"3.12\" (or \"3.13t\" for free-threaded)");
  m.python = *v;
  m.python_free_threaded = ft;
  return std::nullopt;
}

void clear_python(Machine& m) {
  m.python.reset();
  m.python_free_threaded = false;
}

std::optional<json::value> show_python(const Machine& m) {
  if (!m.python) return std::nullopt;
  return json::value(json::string(python_text(m)));
}

std::optional<Why> assign_torch(Machine& m, std::string_view value) {
  auto v = model::Version::parse(value);
  if (!v) return v.error().message;
  m.torch = *v;
  return std::nullopt;
}

std::optional<Why> assign_backend(Machine& m, std::string_view value) {
  return assign_name(m.backend, util::ascii_lower(value), "_-",
                     "must be a backend name as `wheelfit plugins` lists them, or cpu (1-64 of [a-z0-9_-])");
}

std::optional<Why> assign_gpus(Machine& m, std::string_view value) {
  ListBuilder list;
  if (auto r = parse_list(list, value); !r) return r.error().message;
  list.store(m);
  return std::nullopt;
}

std::optional<json::value> show_gpus(const Machine& m) {
  if (!m.gpus) return std::nullopt;
  json::array arr;
  for (const auto& g : *m.gpus) arr.emplace_back(json::string(g));
  return json::value(std::move(arr));
}

std::optional<Why> assign_variant_properties(Machine& m, std::string_view value) {
  auto p = model::parse_variant_properties(value, "variant_properties");
  if (!p) return p.error().message + " (write {\"<namespace>\": {\"<feature>\": [\"<value>\", ...]}})";
  m.variant_properties = std::move(*p);
  return std::nullopt;
}

std::optional<json::value> show_variant_properties(const Machine& m) {
  if (!m.variant_properties) return std::nullopt;
  return json::parse(model::variant_properties_json(*m.variant_properties));
}

// A profile's variant_properties table ([variant_properties.<namespace>] <feature> = [values])
// as the JSON text the fact reads. toml++ walks keys by name: features keep no other order.
std::string toml_table_json(const toml::table& t) {
  json::object o;
  for (const auto& [ns, node] : t) {
    if (const auto* features = node.as_table()) {
      json::object f;
      for (const auto& [feature, values] : *features) {
        json::array a;
        if (const auto* arr = values.as_array()) {
          for (const auto& item : *arr) {
            if (const auto* s = item.as_string()) a.emplace_back(json::string(s->get()));
            else a.emplace_back(nullptr);  // refused by the reader, naming the path
          }
          f[std::string(feature.str())] = std::move(a);
        } else {
          f[std::string(feature.str())] = nullptr;
        }
      }
      o[std::string(ns.str())] = std::move(f);
    } else {
      o[std::string(ns.str())] = nullptr;
    }
  }
  return json::serialize(o);
}

const std::vector<Fact>& facts() {
  static const std::vector<Fact> table{
      {"os", "", {}, false, assign_os, reset<&Machine::os>, [](const Machine& m) -> std::optional<json::value> {
         if (!m.os) return std::nullopt;
         return json::value(json::string(model::to_string(*m.os)));
       }},
      {"cpu_arch", "", {}, false, assign_cpu_arch, reset<&Machine::cpu_arch>, show_text<&Machine::cpu_arch>},
      {"glibc", "", {"CONDA_OVERRIDE_GLIBC"}, false, assign_numeric<&Machine::glibc>, reset<&Machine::glibc>,
       show_text<&Machine::glibc>},
      {"python", "", {}, false, assign_python, clear_python, show_python},
      {"torch", "", {}, false, assign_torch, reset<&Machine::torch>, show_text<&Machine::torch>},
      {"backend", "", {}, false, assign_backend, reset<&Machine::backend>, show_text<&Machine::backend>},
      {"driver_version", "", {}, false, assign_numeric<&Machine::driver_version>, reset<&Machine::driver_version>,
       show_text<&Machine::driver_version>},
      {"driver_line", "cuda_driver", {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "CONDA_OVERRIDE_CUDA"}, false,
       assign_numeric<&Machine::driver_line>, reset<&Machine::driver_line>, show_text<&Machine::driver_line>},
      {"gpus", "gpu_targets", {"WHEELFIT_OVERRIDE_GPU_TARGETS"}, true, assign_gpus, reset<&Machine::gpus>, show_gpus},
      {"variant_properties", "", {}, false, assign_variant_properties, reset<&Machine::variant_properties>,
       show_variant_properties},
  };
  return table;
}

// The fact a key names, under its name or its old one; nullptr for an unknown key.
const Fact* fact_of(std::string_view key) {
  for (const auto& f : facts())
    if (f.key == key || (!f.old_key.empty() && f.old_key == key)) return &f;
  return nullptr;
}

// Keys of earlier profiles, read as the fact they name now.
std::string_view canonical_key(std::string_view key) {
  const Fact* f = fact_of(key);
  return f ? f->key : key;
}

bool is_list_key(std::string_view key) {
  const Fact* f = fact_of(key);
  return f && f->list;
}

Unexpected unknown_key(const std::string& where, std::string_view key) {
  return unexpected(Errc::invalid_input, where + ": unknown key '" + std::string(key) + "' (known keys: " +
                                             keys_text(profile_keys()) + "; ignored: " + keys_text(informational_keys()) + ")");
}

// A profile naming one fact under both its names (gpus and gpu_targets) is refused, whichever
// comes first (toml++ walks keys in name order).
Expected<void> first_spelling(std::vector<std::string_view>& seen, std::string_view key, const std::string& where) {
  const std::string_view fact = canonical_key(key);
  if (std::find(seen.begin(), seen.end(), fact) != seen.end()) {
    return unexpected(Errc::invalid_input, where + ": the profile gives both " + std::string(fact) + " and " +
                                               std::string(fact_of(fact)->old_key) + " (its old name) for one fact: keep " +
                                               std::string(fact));
  }
  seen.push_back(fact);
  return {};
}

// Sets one fact; `where` prefixes error messages, `origin` is the provenance.
Expected<void> set_fact_at(Machine& m, std::string_view key, std::string_view raw, const std::string& where,
                           const std::string& origin) {
  const Fact* fact = fact_of(key);
  if (!fact) return unknown_key(where, key);
  const std::string given(key);  // errors name the key as the caller wrote it
  key = fact->key;
  const std::string_view value = util::trim(raw);
  if (value.empty()) {
    fact->clear(m);
    m.provenance.erase(std::string(key));
    return {};
  }
  Machine next = m;
  if (auto why = fact->assign(next, value)) {
    return unexpected(Errc::invalid_input, where + ": " + given + " = '" + std::string(raw) + "': " + *why);
  }
  next.provenance[std::string(key)] = origin;
  m = std::move(next);
  return {};
}

std::string number_advice(std::string_view key, const std::string& shown) {
  return std::string(key) + " = " + shown + " is a number; quote it: " + std::string(key) + " = \"" + shown +
         "\" (as a number, a version such as 3.10 would read as 3.1)";
}

Unexpected too_large(const std::string& source, std::size_t size) {
  return unexpected(Errc::too_large, source + ": " + std::to_string(size) +
                                         " bytes is over the 1 MiB limit for a machine profile");
}

// ---- TOML profiles ----

// The text of a single-line node as written ("3.10", not the float 3.1), or "" if unknown.
std::string source_text(std::string_view text, const toml::source_region& region) {
  return util::source_span(text, region.begin.line, region.begin.column, region.end.line, region.end.column);
}

std::string toml_number_text(std::string_view text, const toml::node& node) {
  std::string shown = source_text(text, node.source());
  if (!shown.empty()) return shown;
  std::ostringstream out;
  node.visit([&](const auto& v) {
    if constexpr (toml::is_number<decltype(v)>) out << v.get();
  });
  return out.str();
}

std::string toml_where(const std::string& source, const toml::node& node) {
  const auto& b = node.source().begin;
  if (b.line == 0) return source;
  return source + ":" + std::to_string(b.line) + ":" + std::to_string(b.column);
}

Expected<Machine> parse_toml_profile(std::string_view text, const std::string& source) {
  if (const auto line = util::too_deep_toml_line(text)) {  // toml++ would recurse that deep (util/toml_depth.hpp)
    return unexpected(Errc::invalid_input, source + ":" + std::to_string(*line) + ": more than " +
                                               std::to_string(util::kMaxTomlKeyDots) + " dotted key parts on one line: too deep to read");
  }
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return unexpected(Errc::invalid_input, source + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                                               ": TOML syntax error: " + std::string(e.description()));
  }
  Machine m;
  const std::string origin = "profile " + source;
  std::vector<std::string_view> seen;
  for (const auto& [k, node] : doc) {
    const std::string_view key = k.str();
    const std::string where = toml_where(source, node);
    if (is_informational_key(key)) continue;
    if (!fact_of(key)) return unknown_key(where, key);
    if (auto r = first_spelling(seen, key, where); !r) return r.error();
    if (key == "variant_properties") {
      const toml::table* t = node.as_table();
      if (t == nullptr) {
        return unexpected(Errc::invalid_input, where + ": variant_properties must be a table of namespaces "
                                                       "([variant_properties.<namespace>] <feature> = [\"<value>\", ...])");
      }
      if (auto r = set_fact_at(m, key, toml_table_json(*t), where, origin); !r) return r.error();
      continue;
    }
    if (is_list_key(key)) {
      ListBuilder list;
      const toml::array* arr = node.as_array();
      if (arr == nullptr) {
        return unexpected(Errc::invalid_input, where + ": " + std::string(key) + " must be an array of strings such as " +
                                                   list.example() + " ([] for no GPU)");
      }
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const toml::node& item = *arr->get(i);
        const std::string iw = toml_where(source, item) + ": " + std::string(key) + "[" + std::to_string(i) + "]";
        if (item.is_number()) {
          const std::string shown = toml_number_text(text, item);
          return unexpected(Errc::invalid_input, iw + " = " + shown + " is a number; quote it: \"" + shown + "\"");
        }
        const auto* s = item.as_string();
        if (s == nullptr) return unexpected(Errc::invalid_input, iw + " must be a string such as " + list.item_example());
        if (auto r = list.add(s->get()); !r) return unexpected(Errc::invalid_input, iw + ": " + r.error().message);
      }
      list.store(m);
      m.provenance[std::string(canonical_key(key))] = origin;
      continue;
    }
    if (node.is_number()) {
      return unexpected(Errc::invalid_input, where + ": " + number_advice(key, toml_number_text(text, node)));
    }
    const auto* s = node.as_string();
    if (s == nullptr) return unexpected(Errc::invalid_input, where + ": " + std::string(key) + " must be a string");
    if (util::trim(s->get()).empty()) {
      return unexpected(Errc::invalid_input,
                        where + ": " + std::string(key) + " is empty; leave the key out when the fact is unknown");
    }
    auto r = set_fact_at(m, key, s->get(), where, origin);
    if (!r) return r.error();
  }
  return m;
}

// ---- JSON profiles ----

std::string line_col(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// A JSON number as text; a double that is integral keeps a ".0" so that 9.0 is not shown as 9.
std::string json_number_text(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  std::ostringstream out;
  out << v.get_double();
  std::string s = out.str();
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

// The number after "key": as written in `text` ("3.10", where the double would show 3.1), or
// the formatted value when it cannot be found.
std::string json_number_text(std::string_view text, std::string_view key, const json::value& v) {
  const std::string quoted = "\"" + std::string(key) + "\"";
  auto skip_ws = [&](std::size_t p) {
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t' || text[p] == '\r' || text[p] == '\n')) ++p;
    return p;
  };
  for (auto pos = text.find(quoted); pos != std::string_view::npos; pos = text.find(quoted, pos + 1)) {
    std::size_t p = skip_ws(pos + quoted.size());
    if (p >= text.size() || text[p] != ':') continue;
    p = skip_ws(p + 1);
    const std::size_t b = p;
    while (p < text.size() && ((text[p] >= '0' && text[p] <= '9') || text[p] == '-' || text[p] == '+' ||
                               text[p] == '.' || text[p] == 'e' || text[p] == 'E')) {
      ++p;
    }
    if (p > b) return std::string(text.substr(b, p - b));
  }
  return json_number_text(v);
}

bool json_is_number(const json::value& v) { return v.is_int64() || v.is_uint64() || v.is_double(); }

Expected<Machine> parse_json_profile(std::string_view text, const std::string& source) {
  json::parser parser;
  boost::system::error_code ec;
  const std::size_t used = parser.write(text.data(), text.size(), ec);
  if (ec) {
    return unexpected(Errc::invalid_input,
                      source + ":" + line_col(text, used) + ": JSON syntax error: " + ec.message());
  }
  const json::value doc = parser.release();
  const json::object* obj = doc.if_object();
  if (obj == nullptr) return unexpected(Errc::invalid_input, source + ": a JSON profile must be one object");

  Machine m;
  const std::string origin = "profile " + source;
  std::vector<std::string_view> seen;
  for (const auto& entry : *obj) {
    const std::string_view key(entry.key().data(), entry.key().size());
    const json::value& v = entry.value();
    if (is_informational_key(key)) continue;
    if (!fact_of(key)) return unknown_key(source, key);
    if (auto r = first_spelling(seen, key, source); !r) return r.error();
    const std::string where = source + ": \"" + std::string(key) + "\"";
    if (key == "variant_properties") {
      if (!v.is_object()) {
        return unexpected(Errc::invalid_input,
                          where + " must be an object {\"<namespace>\": {\"<feature>\": [\"<value>\", ...]}}");
      }
      if (auto r = set_fact_at(m, key, json::serialize(v), source, origin); !r) return r.error();
      continue;
    }
    if (is_list_key(key)) {
      ListBuilder list;
      const json::array* arr = v.if_array();
      if (arr == nullptr) {
        return unexpected(Errc::invalid_input,
                          where + " must be an array of strings such as " + list.example() + " ([] for no GPU)");
      }
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const json::value& item = (*arr)[i];
        const std::string iw = source + ": " + std::string(key) + "[" + std::to_string(i) + "]";
        if (json_is_number(item)) {
          const std::string shown = json_number_text(item);
          return unexpected(Errc::invalid_input, iw + " = " + shown + " is a number; quote it: \"" + shown + "\"");
        }
        const json::string* s = item.if_string();
        if (s == nullptr) return unexpected(Errc::invalid_input, iw + " must be a string such as " + list.item_example());
        if (auto r = list.add(std::string_view(s->data(), s->size())); !r) {
          return unexpected(Errc::invalid_input, iw + ": " + r.error().message);
        }
      }
      list.store(m);
      m.provenance[std::string(canonical_key(key))] = origin;
      continue;
    }
    if (json_is_number(v)) {
      const std::string shown = json_number_text(text, key, v);
      return unexpected(Errc::invalid_input, source + ": \"" + std::string(key) + "\": " + shown +
                                                 " is a number; quote it: \"" + std::string(key) + "\": \"" + shown +
                                                 "\" (as a number, a version such as 3.10 would read as 3.1)");
    }
    const json::string* s = v.if_string();
    if (s == nullptr) return unexpected(Errc::invalid_input, where + " must be a string");
    const std::string_view value(s->data(), s->size());
    if (util::trim(value).empty()) {
      return unexpected(Errc::invalid_input, where + " is empty; leave the key out when the fact is unknown");
    }
    auto r = set_fact_at(m, key, value, source, origin);
    if (!r) return r.error();
  }
  return m;
}


}  // namespace

const std::vector<std::string_view>& profile_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out;
    for (const auto& f : facts()) out.push_back(f.key);
    return out;
  }();
  return keys;
}

const std::vector<std::string_view>& informational_keys() {
  static const std::vector<std::string_view> keys = {"provenance", "notes", "interpreter", "devices"};
  return keys;
}

bool same_facts(const Machine& a, const Machine& b) {
  return a.os == b.os && a.cpu_arch == b.cpu_arch && a.glibc == b.glibc && a.python == b.python &&
         a.python_free_threaded == b.python_free_threaded && a.torch == b.torch && a.backend == b.backend &&
         a.driver_version == b.driver_version && a.driver_line == b.driver_line && a.gpus == b.gpus &&
         a.variant_properties == b.variant_properties;
}

Expected<void> set_fact(Machine& m, std::string_view key, std::string_view value, const std::string& origin) {
  return set_fact_at(m, key, value, origin, origin);
}

Expected<Machine> parse_machine_profile(std::string_view text, const std::string& source) {
  if (text.size() > kMaxProfileBytes) return too_large(source, text.size());
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_json_profile(text, source);
  return parse_toml_profile(text, source);
}

Expected<Machine> load_machine_profile(const std::string& path) {
  auto text = util::read_file(path, kMaxProfileBytes, "a machine profile");
  if (!text) return text.error();
  return parse_machine_profile(*text, path);
}

Expected<void> apply_env_overrides(Machine& m, const Getenv& getenv) {
  Machine next = m;
  for (const auto key : profile_keys()) {
    const std::string var = "WHEELFIT_OVERRIDE_" + ascii_upper(key);
    if (auto v = getenv(var)) {
      auto r = set_fact(next, key, *v, "env " + var);
      if (!r) return r;
      continue;
    }
    for (const auto& other : override_aliases(key)) {
      if (auto v = getenv(other)) {
        auto r = set_fact(next, key, *v, "env " + other);
        if (!r) return r;
        break;
      }
    }
  }
  m = std::move(next);
  return {};
}

std::vector<std::string> override_aliases(std::string_view key) {
  const Fact* f = fact_of(key);
  return f && f->key == key ? f->env_aliases : std::vector<std::string>{};
}

Getenv process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    const std::string n(name);
#ifdef _WIN32
    return util::env_utf8(n);  // UTF-8, not the ANSI code page
#else
    if (const char* v = std::getenv(n.c_str())) return std::string(v);
    return std::nullopt;
#endif
  };
}

void fill_from_host(Machine& m) {
#ifdef _WIN32
  if (!m.os) {
    m.os = model::Os::windows;
    m.provenance["os"] = "host (a Windows build)";
  }
  if (!m.cpu_arch) {
    SYSTEM_INFO info{};
    ::GetNativeSystemInfo(&info);  // the machine's, not this process's (an x64 build under ARM64 emulation)
    const char* arch = info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64   ? "x86_64"
                       : info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "aarch64"
                                                                                     : "";
    if (*arch) {
      m.cpu_arch = arch;
      m.provenance["cpu_arch"] = "host GetNativeSystemInfo";
    }
  }
#endif
#ifdef WHEELFIT_HAVE_UNAME
  struct utsname u {};
  if (::uname(&u) == 0) {
    if (!m.os) {
      if (auto os = model::parse_os(u.sysname)) {
        m.os = *os;
        m.provenance["os"] = "host uname";
      }
    }
    if (!m.cpu_arch) {
      std::string arch = model::normalize_cpu_arch(u.machine);
      if (!arch.empty()) {
        m.cpu_arch = std::move(arch);
        m.provenance["cpu_arch"] = "host uname";
      }
    }
  }
#endif
#ifdef WHEELFIT_HAVE_GNU_LIBC_VERSION
  // The host's glibc says nothing about a machine that is not Linux.
  if (!m.glibc && m.os == model::Os::linux_) {
    if (auto v = model::NumericVersion::parse(::gnu_get_libc_version())) {
      m.glibc = *v;
      m.provenance["glibc"] = "host gnu_get_libc_version()";
    }
  }
#endif
}

std::string to_json(const Machine& m) {
  json::object out;
  json::object prov;
  auto put = [&](std::string_view key, json::value v) {
    out.emplace(key, std::move(v));
    if (auto it = m.provenance.find(std::string(key)); it != m.provenance.end()) prov.emplace(key, it->second);
  };
  for (const auto& f : facts()) {
    if (auto v = f.show(m)) put(f.key, std::move(*v));
  }
  out.emplace("provenance", std::move(prov));
  return json::serialize(out);
}

}  // namespace wheelfit::machine
