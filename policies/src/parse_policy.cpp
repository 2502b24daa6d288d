// parse_policy_json / load_policy_file: the policy JSON format (format 2, documented in
// policies/README.md). Every error names the source and the JSON path.

#include <algorithm>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include <boost/json.hpp>

#include "wheelfit/model/name.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/json_kind.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/reader.hpp"

namespace wheelfit::policies {

using semantics::DeviceRules;
using semantics::DriverRule;
using semantics::FamilyPins;
using semantics::LabelTemplate;
using semantics::line_key;
using semantics::MinDriver;
using semantics::Policy;

namespace {

namespace json = boost::json;

constexpr std::int64_t kFormat = 2;          // the format this code reads

using util::json_kind_name;

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Line and column of the first syntax error: the parser is fed one character at a time (the
// file is small and this only runs on a failure), so it stops right where the text goes wrong.
std::string locate_syntax_error(std::string_view text) {
  json::stream_parser p;
  json::error_code ec;
  std::size_t line = 1, col = 1;
  for (char c : text) {
    p.write_some(&c, 1, ec);
    if (ec) return "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + ec.message();
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  p.finish(ec);
  if (ec) return "at the end: " + ec.message();
  return "unknown position";
}

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[nodiscard]] Error error(const std::string& path, const std::string& what, Errc code = Errc::invalid_input) const {
    return Error(code, source_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  Expected<const json::object*> object(const json::value& v, const std::string& path) const {
    if (!v.is_object()) return error(path, "expected an object, got " + std::string(json_kind_name(v)));
    return &v.get_object();
  }
  Expected<std::string> string(const json::value& v, const std::string& path) const {
    if (!v.is_string()) return error(path, "expected a string, got " + std::string(json_kind_name(v)));
    return std::string(v.get_string());
  }
  // A dotted number with exactly `parts` components ("12.8", "3.12"); 0 = any count. With a
  // fixed count the result is rebuilt from its components, so that str() is canonical ("12.08"
  // reads as 12.8); a free-length one (a driver version) keeps its text ("580.65.06").
  Expected<model::NumericVersion> dotted(std::string_view text, const std::string& path, std::string_view what,
                                         std::size_t parts) const {
    auto v = model::NumericVersion::parse(text);
    if (!v || (parts != 0 && v->parts().size() != parts)) {
      return error(path, quote(text) + " is not " + std::string(what));
    }
    if (parts != 0) return v->truncated(parts);
    return *v;
  }
  Expected<model::NumericVersion> dotted_value(const json::value& v, const std::string& path, std::string_view what,
                                               std::size_t parts) const {
    auto s = string(v, path);
    if (!s) return s.error();
    return dotted(*s, path, what, parts);
  }
  // A target list, canonicalised by the backend's rules (kept as written without rules).
  Expected<std::string> arch_list(const json::value& v, const std::string& path, const DeviceRules* rules) const {
    auto s = string(v, path);
    if (!s) return s.error();
    if (!rules) return *s;
    auto list = rules->parse_list(*s);
    if (!list) return error(path, list.error().message);
    return *list;
  }
  // An accelerator line key ("12.8", "6.2.4"), returned as line_key() spells it.
  Expected<std::string> line_key(std::string_view key, const std::string& path) const {
    auto v = model::NumericVersion::parse(key);
    if (!v || v->parts().size() < 2 || v->parts().size() > 3) {
      return error(path, quote(key) + " is not an accelerator line (major.minor, or major.minor.patch)");
    }
    return policies::line_key(*v);
  }
  Expected<model::NumericVersion> line_value(const json::value& v, const std::string& path) const {
    auto s = string(v, path);
    if (!s) return s.error();
    auto key = line_key(*s, path);
    if (!key) return key.error();
    return *model::NumericVersion::parse(*key);
  }
  Expected<std::vector<std::string>> strings(const json::value& v, const std::string& path) const {
    if (!v.is_array()) return error(path, "expected an array of strings, got " + std::string(json_kind_name(v)));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.get_array().size(); ++i) {
      auto s = string(v.get_array()[i], path + "[" + std::to_string(i) + "]");
      if (!s) return s.error();
      out.push_back(std::move(*s));
    }
    return out;
  }
  // Each member of an object, skipping "_comment"-style keys; `fn(key, value, path)`.
  template <class Fn>
  Expected<void> each(const json::value& v, const std::string& path, Fn&& fn) const {
    auto obj = object(v, path);
    if (!obj) return obj.error();
    for (const auto& kv : **obj) {
      const std::string key(kv.key());
      if (key.starts_with('_')) continue;
      if (auto r = fn(key, kv.value(), path.empty() ? key : path + "." + key); !r) return r;
    }
    return {};
  }
  // A member that must be there.
  Expected<const json::value*> member(const json::object& obj, std::string_view key, const std::string& path) const {
    const auto* v = obj.if_contains(key);
    if (!v) return error(path, "missing key " + quote(key));
    return v;
  }
  // Rejects keys outside `allowed` (other than "_comment"-style ones).
  Expected<void> only(const json::object& obj, std::initializer_list<std::string_view> allowed,
                      const std::string& path) const {
    return only_of(obj, std::span<const std::string_view>(allowed.begin(), allowed.size()), path);
  }
  Expected<void> only_of(const json::object& obj, std::span<const std::string_view> allowed,
                         const std::string& path) const {
    for (const auto& kv : obj) {
      const std::string_view key(kv.key().data(), kv.key().size());
      if (key.starts_with('_')) continue;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return error(path, "unknown key " + quote(key) + " (expected " + list + ")");
      }
    }
    return {};
  }

  // The object `parent`["key"] must hold (its path "<parent path>.<key>"), with only `allowed` keys.
  Expected<const json::object*> section(const json::object& parent, const char* key, const std::string& parent_path,
                                        std::initializer_list<std::string_view> allowed) const {
    const std::string path = parent_path + "." + key;
    auto m = member(parent, key, parent_path);
    if (!m) return m.error();
    auto obj = object(**m, path);
    if (!obj) return obj.error();
    if (auto ok = only(**obj, allowed, path); !ok) return ok.error();
    return obj;
  }

  // An object whose keys are exactly `slots`' names, each a dotted version of `parts` components
  // (0: any) read into its slot; `what` names the version in errors.
  Expected<void> versions(const json::value& v, const std::string& path, std::string_view what, std::size_t parts,
                          std::initializer_list<std::pair<const char*, model::NumericVersion*>> slots) const {
    auto obj = object(v, path);
    if (!obj) return obj.error();
    std::vector<std::string_view> names;
    for (const auto& slot : slots) names.emplace_back(slot.first);
    if (auto ok = only_of(**obj, names, path); !ok) return ok.error();
    for (auto [name, slot] : slots) {
      auto m = member(**obj, name, path);
      if (!m) return m.error();
      auto ver = dotted_value(**m, path + "." + name, what, parts);
      if (!ver) return ver.error();
      *slot = std::move(*ver);
    }
    return {};
  }

  // A "major.minor" key, returned in canonical spelling ("12.08" -> "12.8").
  Expected<std::string> minor_key(std::string_view key, const std::string& path, std::string_view what) const {
    auto v = dotted(key, path, what, 2);
    if (!v) return v.error();
    return v->str();
  }

  Expected<void> platform_key(std::string_view key, const std::string& path) const {
    const bool ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!ok) return error(path, quote(key) + " is not a platform key (such as linux, linux_aarch64, windows)");
    return {};
  }

 private:
  std::string source_;
};

// Returns the error of an Expected<...> expression. The result's name carries the line number so
// that a WF_TRY inside a lambda inside another WF_TRY does not shadow the outer one.
#define WF_CAT2(a, b) a##b
#define WF_CAT(a, b) WF_CAT2(a, b)
#define WF_TRY(expr) WF_TRY_AS(WF_CAT(wf_try_, __LINE__), expr)
#define WF_TRY_AS(name, expr)          \
  do {                                 \
    if (auto name = (expr); !name) {   \
      return std::move(name).error();  \
    }                                  \
  } while (0)

// The readers of the sections of the policy JSON, one a section (backend: one a sub-object), each
// given the section's value by parse_policy_json; each fills its part of the policy's tables.

// format
Expected<void> format(const Reader& rd, const json::value& f, Policy::Tables&) {
  std::int64_t n = 0;
  if (f.is_int64()) {
    n = f.get_int64();
  } else if (f.is_uint64()) {
    n = kFormat + 1;
  } else {
    return rd.error("format", "expected an integer, got " + std::string(json_kind_name(f)));
  }
  if (n < 1) return rd.error("format", std::to_string(n) + " is not a format number");
  if (n != kFormat) {
    return rd.error("format", "format " + std::to_string(n) + (n > kFormat ? " is newer than" : " is older than") +
                                  " the format this wheelfit reads (" + std::to_string(kFormat) + "); " +
                                  (n > kFormat ? "upgrade wheelfit or use an older policy file"
                                               : "regenerate the file (policies/README.md)"),
                    Errc::unsupported);
  }
  return {};
}

// version
Expected<void> version(const Reader& rd, const json::value& v, Policy::Tables& p) {
  auto s = rd.string(v, "version");
  if (!s) return s.error();
  const bool printable = std::all_of(s->begin(), s->end(), [](char c) { return c >= 0x20 && c != 0x7f; });
  if (s->empty() || s->size() > 100 || !printable) {
    return rd.error("version", quote(*s) + " is not a version string (1-100 printable characters, e.g. 2026-08-22)");
  }
  p.version = std::move(*s);
  return {};
}

// backend.errors: the run-time errors explain names
Expected<void> backend_errors(const Reader& rd, const json::object& bo, Policy::Tables& p) {
  if (const auto* ev = bo.if_contains("errors")) {
    auto eo = rd.object(*ev, "backend.errors");
    if (!eo) return eo.error();
    WF_TRY(rd.only(**eo, {"no_kernel", "no_device", "driver_too_old", "wrong_torch"}, "backend.errors"));
    for (auto [key, slot] : {std::pair{"no_kernel", &p.errors.no_kernel}, std::pair{"no_device", &p.errors.no_device},
                             std::pair{"driver_too_old", &p.errors.driver_too_old},
                             std::pair{"wrong_torch", &p.errors.wrong_torch}}) {
      if (const auto* m = (*eo)->if_contains(key)) {
        auto value = rd.string(*m, std::string("backend.errors.") + key);
        if (!value) return value.error();
        *slot = std::move(*value);
      }
    }
  }
  return {};
}

// backend.line: the notation
Expected<void> backend_line(const Reader& rd, const json::object& bo, Policy::Tables& p) {
  auto lo = rd.section(bo, "line", "backend", {"key", "prefix", "name"});
  if (!lo) return lo.error();
  for (auto [key, slot] : {std::pair{"key", &p.notation.key}, std::pair{"prefix", &p.notation.prefix},
                           std::pair{"name", &p.notation.name}}) {
    auto m = rd.member(**lo, key, "backend.line");
    if (!m) return m.error();
    auto name = rd.string(**m, std::string("backend.line.") + key);
    if (!name) return name.error();
    // key and prefix are identifiers (JSON keys, combo strings); name is prose ("Acme NPU").
    const bool prose = std::string_view(key) == "name";
    const bool ok = !name->empty() && name->size() <= 32 && std::all_of(name->begin(), name->end(), [&](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
             (prose && c == ' ');
    });
    if (!ok) {
      return rd.error(std::string("backend.line.") + key,
                      quote(*name) + " is not a name (1-32 of [A-Za-z0-9_-]" + (prose ? " and spaces)" : ")"));
    }
    *slot = std::move(*name);
  }
  return {};
}

// backend.combo_labels, backend.torch_labels: the label templates
Expected<void> backend_labels(const Reader& rd, const json::object& bo, Policy::Tables& p) {
  for (auto [key, slot] : {std::pair{"combo_labels", &p.combo_labels}, std::pair{"torch_labels", &p.torch_labels}}) {
    const std::string path = std::string("backend.") + key;
    auto m = rd.member(bo, key, "backend");
    if (!m) return m.error();
    auto texts = rd.strings(**m, path);
    if (!texts) return texts.error();
    for (std::size_t i = 0; i < texts->size(); ++i) {
      auto t = LabelTemplate::parse((*texts)[i]);
      if (!t) return rd.error(path + "[" + std::to_string(i) + "]", t.error().message);
      const bool needs_torch = slot == &p.combo_labels;
      if (needs_torch ? !t->has_torch() : !t->has_line()) {
        return rd.error(path + "[" + std::to_string(i) + "]",
                        quote((*texts)[i]) + (needs_torch ? " names no {torch}" : " names no {line}"));
      }
      slot->push_back(std::move(*t));
    }
  }
  return {};
}

// backend.torch_index
Expected<void> backend_torch_index(const Reader& rd, const json::object& bo, Policy::Tables& p) {
  auto m = rd.member(bo, "torch_index", "backend");
  if (!m) return m.error();
  auto s = rd.string(**m, "backend.torch_index");
  if (!s) return s.error();
  if (!(s->starts_with("https://") || s->starts_with("http://")) ||
      (s->find("{line}") == std::string::npos && s->find("{line_nodot}") == std::string::npos)) {
    return rd.error("backend.torch_index",
                    quote(*s) + " is not an http(s) URL pattern containing {line} or {line_nodot}");
  }
  p.torch_index_pattern = std::move(*s);
  return {};
}

// backend.device
Expected<void> backend_device(const Reader& rd, const json::object& bo, Policy::Tables& p) {
  auto dobj = rd.section(bo, "device", "backend", {"name", "prefix", "code_sections", "runtime_libraries"});
  if (!dobj) return dobj.error();
  if (const auto* libs = (*dobj)->if_contains("runtime_libraries")) {
    auto list = rd.strings(*libs, "backend.device.runtime_libraries");
    if (!list) return list.error();
    for (std::size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].find("{major}") == std::string::npos) {
        return rd.error("backend.device.runtime_libraries[" + std::to_string(i) + "]",
                        quote((*list)[i]) + " names no {major}");
      }
    }
    p.runtime_libraries = std::move(*list);
  }
  if (const auto* prefix = (*dobj)->if_contains("prefix")) {
    auto ps = rd.string(*prefix, "backend.device.prefix");
    if (!ps) return ps.error();
    p.device_prefix = std::move(*ps);
  }
  auto name = rd.member(**dobj, "name", "backend.device");
  if (!name) return name.error();
  auto ns = rd.string(**name, "backend.device.name");
  if (!ns) return ns.error();
  p.device_name = std::move(*ns);
  if (const auto* cs = (*dobj)->if_contains("code_sections")) {
    auto list = rd.strings(*cs, "backend.device.code_sections");
    if (!list) return list.error();
    p.code_sections = std::move(*list);
  }
  return {};
}

// backend.driver
Expected<void> backend_driver(const Reader& rd, const json::object& bo, Policy::Tables& p) {
  auto dobj = rd.section(bo, "driver", "backend", {"rule", "why", "floors"});
  if (!dobj) return dobj.error();
  auto rule = rd.member(**dobj, "rule", "backend.driver");
  if (!rule) return rule.error();
  auto rs = rd.string(**rule, "backend.driver.rule");
  if (!rs) return rs.error();
  if (*rs == "same_major") p.driver_rule = DriverRule::same_major;
  else if (*rs == "at_least") p.driver_rule = DriverRule::at_least;
  else if (*rs == "unknown") p.driver_rule = DriverRule::unknown;
  else return rd.error("backend.driver.rule", quote(*rs) + " is not a driver rule (same_major, at_least, unknown)");
  if (const auto* why = (*dobj)->if_contains("why")) {
    auto ws = rd.string(*why, "backend.driver.why");
    if (!ws) return ws.error();
    p.driver_why = std::move(*ws);
  }
  if (const auto* floors = (*dobj)->if_contains("floors")) {
    WF_TRY(rd.each(*floors, "backend.driver.floors", [&](const std::string& major, const json::value& entry,
                                                         const std::string& path) -> Expected<void> {
      auto mv = rd.dotted(major, path, "a line major", 1);
      if (!mv) return mv.error();
      MinDriver md;
      WF_TRY(rd.versions(entry, path, "a driver version", 0, {{"linux", &md.linux_}, {"windows", &md.windows}}));
      if (!p.min_driver.emplace(mv->major(), std::move(md)).second) return rd.error(path, "duplicate line major");
      return {};
    }));
  }
  return {};
}

// backend: notation, label grammar, torch index, device, driver
Expected<void> backend(const Reader& rd, const json::value& v, Policy::Tables& p) {
  auto bo = rd.object(v, "backend");
  if (!bo) return bo.error();
  WF_TRY(rd.only(**bo, {"line", "combo_labels", "torch_labels", "torch_index", "device", "driver", "errors"},
                 "backend"));
  WF_TRY(backend_errors(rd, **bo, p));
  WF_TRY(backend_line(rd, **bo, p));
  WF_TRY(backend_labels(rd, **bo, p));
  WF_TRY(backend_torch_index(rd, **bo, p));
  WF_TRY(backend_device(rd, **bo, p));
  return backend_driver(rd, **bo, p);
}

// arch_policy: platform -> line -> list
Expected<void> arch_policy(const Reader& rd, const json::value& v, Policy::Tables& p) {
  const DeviceRules* rules = p.rules.get();
  return rd.each(v, "arch_policy", [&](const std::string& platform, const json::value& rows,
                                       const std::string& path) -> Expected<void> {
    WF_TRY(rd.platform_key(platform, path));
    auto& table = p.arch_policy[platform];
    return rd.each(rows, path, [&](const std::string& line, const json::value& list,
                                   const std::string& row_path) -> Expected<void> {
      auto key = rd.line_key(line, row_path);
      if (!key) return key.error();
      auto archs = rd.arch_list(list, row_path, rules);
      if (!archs) return archs.error();
      if (!table.emplace(*key, std::move(*archs)).second) return rd.error(row_path, "duplicate line " + *key);
      return {};
    });
  });
}

// arch_exceptions: "line/torch" -> list
Expected<void> arch_exceptions(const Reader& rd, const json::value& v, Policy::Tables& p) {
  const DeviceRules* rules = p.rules.get();
  return rd.each(v, "arch_exceptions", [&](const std::string& key, const json::value& list,
                                           const std::string& path) -> Expected<void> {
    const auto slash = key.find('/');
    if (slash == std::string::npos) return rd.error(path, quote(key) + " is not <line>/<torch-minor>");
    auto line = rd.line_key(std::string_view(key).substr(0, slash), path);
    if (!line) return line.error();
    auto torch = rd.minor_key(std::string_view(key).substr(slash + 1), path, "a torch major.minor");
    if (!torch) return torch.error();
    auto archs = rd.arch_list(list, path, rules);
    if (!archs) return archs.error();
    if (!p.arch_exceptions.emplace(*line + "/" + *torch, std::move(*archs)).second) {
      return rd.error(path, "duplicate exception " + *line + "/" + *torch);
    }
    return {};
  });
}

// packages: name -> overrides
Expected<void> packages(const Reader& rd, const json::value& v, Policy::Tables& p) {
  const DeviceRules* rules = p.rules.get();
  return rd.each(v, "packages", [&](const std::string& name, const json::value& entry,
                                    const std::string& path) -> Expected<void> {
    if (!model::is_valid_name(name) || model::normalize_name(name) != name) {
      return rd.error(path, quote(name) + " is not a PEP 503 normalised name (expected " +
                                quote(model::normalize_name(name)) + ")");
    }
    auto eo = rd.object(entry, path);
    if (!eo) return eo.error();
    WF_TRY(rd.only(**eo, {"arch_list", "arch_list_aarch64", "arch_list_by_line", "arch_list_by_line_aarch64"}, path));
    Policy::PackageOverride po;
    for (auto [key, slot] : {std::pair{"arch_list", &po.all}, std::pair{"arch_list_aarch64", &po.all_aarch64}}) {
      if (const auto* lv = (*eo)->if_contains(key)) {
        auto archs = rd.arch_list(*lv, path + "." + key, rules);
        if (!archs) return archs.error();
        *slot = std::move(*archs);
      }
    }
    for (auto [key, slot] : {std::pair{"arch_list_by_line", &po.by_line},
                             std::pair{"arch_list_by_line_aarch64", &po.by_line_aarch64}}) {
      if (const auto* lv = (*eo)->if_contains(key)) {
        auto* table = slot;
        WF_TRY(rd.each(*lv, path + "." + key, [&](const std::string& line, const json::value& list,
                                                  const std::string& row_path) -> Expected<void> {
          auto lk = rd.line_key(line, row_path);
          if (!lk) return lk.error();
          auto archs = rd.arch_list(list, row_path, rules);
          if (!archs) return archs.error();
          if (!table->emplace(*lk, std::move(*archs)).second) return rd.error(row_path, "duplicate line " + *lk);
          return {};
        }));
      }
    }
    p.packages.emplace(name, std::move(po));
    return {};
  });
}

// pytorch_matrix: platform -> line -> torch -> [python]
Expected<void> pytorch_matrix(const Reader& rd, const json::value& v, Policy::Tables& p) {
  std::set<std::tuple<model::NumericVersion, model::NumericVersion, model::NumericVersion, std::string>> seen;
  WF_TRY(rd.each(v, "pytorch_matrix", [&](const std::string& platform, const json::value& by_line,
                                          const std::string& ppath) -> Expected<void> {
    WF_TRY(rd.platform_key(platform, ppath));
    return rd.each(by_line, ppath, [&](const std::string& line, const json::value& by_torch,
                                       const std::string& cpath) -> Expected<void> {
      auto lk = rd.line_key(line, cpath);
      if (!lk) return lk.error();
      const auto lv = *model::NumericVersion::parse(*lk);
      return rd.each(by_torch, cpath, [&](const std::string& torch, const json::value& pythons,
                                          const std::string& tpath) -> Expected<void> {
        auto tv = rd.dotted(torch, tpath, "a torch major.minor", 2);
        if (!tv) return tv.error();
        if (!pythons.is_array()) return rd.error(tpath, "expected an array of Python versions, got " +
                                                            std::string(json_kind_name(pythons)));
        const auto& arr = pythons.get_array();
        for (std::size_t i = 0; i < arr.size(); ++i) {
          const std::string ipath = tpath + "[" + std::to_string(i) + "]";
          auto py = rd.dotted_value(arr[i], ipath, "a Python major.minor", 2);
          if (!py) return py.error();
          if (!seen.emplace(lv, *tv, *py, platform).second) return rd.error(ipath, "duplicate Python " + py->str());
          p.cells.push_back(Policy::Cell{model::Combo{lv, *tv}, *py, platform});
        }
        return {};
      });
    });
  }));
  std::sort(p.cells.begin(), p.cells.end(), [](const Policy::Cell& a, const Policy::Cell& b) {
    return std::tie(a.combo.line, a.combo.torch, a.python, a.platform) <
           std::tie(b.combo.line, b.combo.torch, b.python, b.platform);
  });
  return {};
}

// torch_family: torch -> {torchvision, torchaudio}
Expected<void> torch_family(const Reader& rd, const json::value& v, Policy::Tables& p) {
  return rd.each(v, "torch_family", [&](const std::string& torch, const json::value& entry,
                                        const std::string& path) -> Expected<void> {
    auto key = rd.minor_key(torch, path, "a torch major.minor");
    if (!key) return key.error();
    FamilyPins pins;
    WF_TRY(rd.versions(entry, path, "a major.minor version", 2,
                       {{"torchvision", &pins.torchvision}, {"torchaudio", &pins.torchaudio}}));
    if (!p.family.emplace(*key, std::move(pins)).second) return rd.error(path, "duplicate torch minor " + *key);
    return {};
  });
}

// torch_archs: platform -> torch -> line -> {list, source, date}
Expected<void> torch_archs(const Reader& rd, const json::value& v, Policy::Tables& p) {
  const DeviceRules* rules = p.rules.get();
  return rd.each(v, "torch_archs", [&](const std::string& platform, const json::value& torches,
                                       const std::string& ppath) -> Expected<void> {
    WF_TRY(rd.platform_key(platform, ppath));
    auto& table = p.torch_archs[platform];
    return rd.each(torches, ppath, [&](const std::string& torch, const json::value& lines,
                                       const std::string& tpath) -> Expected<void> {
      auto tkey = rd.minor_key(torch, tpath, "a torch major.minor");
      if (!tkey) return tkey.error();
      if (table.contains(*tkey)) return rd.error(tpath, "duplicate torch minor " + *tkey);
      auto& rows = table[*tkey];
      return rd.each(lines, tpath, [&](const std::string& line, const json::value& entry,
                                       const std::string& path) -> Expected<void> {
        auto lkey = rd.line_key(line, path);
        if (!lkey) return lkey.error();
        auto eo = rd.object(entry, path);
        if (!eo) return eo.error();
        WF_TRY(rd.only(**eo, {"list", "source", "date"}, path));
        semantics::TorchArchRow row;
        for (auto [name, slot] : {std::pair{"list", &row.list}, std::pair{"source", &row.source},
                                  std::pair{"date", &row.date}}) {
          auto m = rd.member(**eo, name, path);
          if (!m) return m.error();
          auto s = std::string_view(name) == "list" ? rd.arch_list(**m, path + ".list", rules)
                                                    : rd.string(**m, path + "." + name);
          if (!s) return s.error();
          if (s->empty()) return rd.error(path + "." + name, "is empty");
          *slot = std::move(*s);
        }
        if (!rows.emplace(*lkey, std::move(row)).second) return rd.error(path, "duplicate line " + *lkey);
        return {};
      });
    });
  });
}

// pypi_line: platform -> torch -> line
Expected<void> pypi_line(const Reader& rd, const json::value& v, Policy::Tables& p) {
  return rd.each(v, "pypi_line", [&](const std::string& platform, const json::value& rows,
                                     const std::string& ppath) -> Expected<void> {
    WF_TRY(rd.platform_key(platform, ppath));
    auto& table = p.pypi_line[platform];
    return rd.each(rows, ppath, [&](const std::string& torch, const json::value& line,
                                    const std::string& path) -> Expected<void> {
      auto key = rd.minor_key(torch, path, "a torch major.minor");
      if (!key) return key.error();
      auto lv = rd.line_value(line, path);
      if (!lv) return lv.error();
      if (!table.emplace(*key, std::move(*lv)).second) return rd.error(path, "duplicate torch minor " + *key);
      return {};
    });
  });
}

// fallback: cpu arch -> {line, torch}
Expected<void> fallback(const Reader& rd, const json::value& v, Policy::Tables& p) {
  return rd.each(v, "fallback", [&](const std::string& arch, const json::value& entry,
                                    const std::string& path) -> Expected<void> {
    WF_TRY(rd.platform_key(arch, path));
    auto eo = rd.object(entry, path);
    if (!eo) return eo.error();
    WF_TRY(rd.only(**eo, {"line", "torch"}, path));
    auto lm = rd.member(**eo, "line", path);
    if (!lm) return lm.error();
    auto line = rd.line_value(**lm, path + ".line");
    if (!line) return line.error();
    auto tm = rd.member(**eo, "torch", path);
    if (!tm) return tm.error();
    auto torch = rd.dotted_value(**tm, path + ".torch", "a torch major.minor", 2);
    if (!torch) return torch.error();
    const std::string norm = model::normalize_cpu_arch(arch);
    if (!p.fallback.emplace(norm, model::Combo{*line, *torch}).second) {
      return rd.error(path, "duplicate CPU arch " + norm);
    }
    return {};
  });
}

}  // namespace

Expected<Policy> parse_policy_json(std::string_view text, std::string_view source,
                                   std::shared_ptr<const DeviceRules> rules_ptr) {
  const Reader rd(source);
  json::value root;
  {
    json::error_code ec;
    json::parse_options opts;
    opts.max_depth = 16;
    root = json::parse(json::string_view(text.data(), text.size()), ec, {}, opts);
    if (ec) return rd.error("", "not JSON: " + locate_syntax_error(text));
  }
  auto top = rd.object(root, "");
  if (!top) return rd.error("", "expected a JSON object at the top level, got " + std::string(json_kind_name(root)));
  const json::object& obj = **top;

  Policy::Tables p;
  p.source = std::string(source);
  p.rules = std::move(rules_ptr);

  // The sections in the README's order: of a file with several errors, the first section's is reported.
  using Section = Expected<void> (*)(const Reader&, const json::value&, Policy::Tables&);
  for (const auto& [key, read] : {std::pair<const char*, Section>{"format", &format},
                                  {"version", &version},
                                  {"backend", &backend},
                                  {"arch_policy", &arch_policy},
                                  {"arch_exceptions", &arch_exceptions},
                                  {"packages", &packages},
                                  {"pytorch_matrix", &pytorch_matrix},
                                  {"torch_family", &torch_family},
                                  {"pypi_line", &pypi_line},
                                  {"fallback", &fallback}}) {
    auto v = rd.member(obj, key, "");
    if (!v) return v.error();
    WF_TRY(read(rd, **v, p));
  }
  // Optional sections: a policy written before them reads as "unknown" there.
  if (const auto* v = obj.if_contains("torch_archs")) WF_TRY(torch_archs(rd, *v, p));
  return Policy(std::move(p));
}

Expected<Policy> load_policy_file(const std::string& path, std::shared_ptr<const DeviceRules> rules) {
  auto text = util::read_file(path, semantics::kMaxFileBytes, "a policy file");
  if (!text) return text.error();
  return parse_policy_json(*text, path, std::move(rules));
}

Expected<void> register_format() { return semantics::install_reader(&parse_policy_json); }

}  // namespace wheelfit::policies
