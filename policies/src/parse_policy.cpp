// parse_policy_json / load_policy_file: the JSON format of policies/data/policy.json
// (documented in policies/README.md). Every error names the source and the JSON path.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <boost/json.hpp>

#include "wheelfit/model/name.hpp"
#include "wheelfit/util/json_kind.hpp"
#include "wheelfit/policies/policy.hpp"

namespace wheelfit::policies {
namespace {

namespace json = boost::json;

constexpr std::int64_t kFormat = 1;          // the newest format this code reads
constexpr std::size_t kMaxFileBytes = 16u << 20;

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
  Expected<ArchList> arch_list(const json::value& v, const std::string& path) const {
    auto s = string(v, path);
    if (!s) return s.error();
    auto list = ArchList::parse(*s);
    if (!list) return error(path, list.error().message);
    return *list;
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

}  // namespace

Expected<Policy> parse_policy_json(std::string_view text, std::string_view source) {
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

  Policy p;
  p.source_ = std::string(source);

  // format
  {
    auto v = rd.member(obj, "format", "");
    if (!v) return v.error();
    const json::value& f = **v;
    std::int64_t n = 0;
    if (f.is_int64()) {
      n = f.get_int64();
    } else if (f.is_uint64()) {
      n = kFormat + 1;
    } else {
      return rd.error("format", "expected an integer, got " + std::string(json_kind_name(f)));
    }
    if (n < 1) return rd.error("format", std::to_string(n) + " is not a format number");
    if (n > kFormat) {
      return rd.error("format", "format " + std::to_string(n) + " is newer than this wheelfit reads (" +
                                    std::to_string(kFormat) + "); upgrade wheelfit or use an older policy file",
                      Errc::unsupported);
    }
  }

  // version
  {
    auto v = rd.member(obj, "version", "");
    if (!v) return v.error();
    auto s = rd.string(**v, "version");
    if (!s) return s.error();
    const bool printable = std::all_of(s->begin(), s->end(), [](char c) { return c >= 0x20 && c != 0x7f; });
    if (s->empty() || s->size() > 100 || !printable) {
      return rd.error("version", quote(*s) + " is not a version string (1-100 printable characters, e.g. 2026-08-22)");
    }
    p.version_ = std::move(*s);
  }

  // arch_policy: platform -> cuda -> list
  {
    auto v = rd.member(obj, "arch_policy", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "arch_policy", [&](const std::string& platform, const json::value& rows,
                                           const std::string& path) -> Expected<void> {
      WF_TRY(rd.platform_key(platform, path));
      auto& table = p.arch_policy_[platform];
      return rd.each(rows, path, [&](const std::string& cuda, const json::value& list,
                                     const std::string& row_path) -> Expected<void> {
        auto key = rd.minor_key(cuda, row_path, "a CUDA major.minor");
        if (!key) return key.error();
        auto archs = rd.arch_list(list, row_path);
        if (!archs) return archs.error();
        if (!table.emplace(*key, std::move(*archs)).second) return rd.error(row_path, "duplicate CUDA line " + *key);
        return {};
      });
    }));
  }

  // arch_exceptions: "cuda/torch" -> list
  {
    auto v = rd.member(obj, "arch_exceptions", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "arch_exceptions", [&](const std::string& key, const json::value& list,
                                               const std::string& path) -> Expected<void> {
      const auto slash = key.find('/');
      if (slash == std::string::npos) return rd.error(path, quote(key) + " is not <cuda>/<torch-minor>");
      auto cuda = rd.minor_key(std::string_view(key).substr(0, slash), path, "a CUDA major.minor");
      if (!cuda) return cuda.error();
      auto torch = rd.minor_key(std::string_view(key).substr(slash + 1), path, "a torch major.minor");
      if (!torch) return torch.error();
      auto archs = rd.arch_list(list, path);
      if (!archs) return archs.error();
      if (!p.arch_exceptions_.emplace(*cuda + "/" + *torch, std::move(*archs)).second) {
        return rd.error(path, "duplicate exception " + *cuda + "/" + *torch);
      }
      return {};
    }));
  }

  // packages: name -> overrides
  {
    auto v = rd.member(obj, "packages", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "packages", [&](const std::string& name, const json::value& entry,
                                        const std::string& path) -> Expected<void> {
      if (!model::is_valid_name(name) || model::normalize_name(name) != name) {
        return rd.error(path, quote(name) + " is not a PEP 503 normalised name (expected " +
                                  quote(model::normalize_name(name)) + ")");
      }
      auto eo = rd.object(entry, path);
      if (!eo) return eo.error();
      WF_TRY(rd.only(**eo, {"arch_list", "arch_list_aarch64", "arch_list_by_cuda", "arch_list_by_cuda_aarch64"}, path));
      Policy::PackageOverride po;
      for (auto [key, slot] : {std::pair{"arch_list", &po.all}, std::pair{"arch_list_aarch64", &po.all_aarch64}}) {
        if (const auto* lv = (*eo)->if_contains(key)) {
          auto archs = rd.arch_list(*lv, path + "." + key);
          if (!archs) return archs.error();
          *slot = std::move(*archs);
        }
      }
      for (auto [key, slot] : {std::pair{"arch_list_by_cuda", &po.by_cuda},
                               std::pair{"arch_list_by_cuda_aarch64", &po.by_cuda_aarch64}}) {
        if (const auto* lv = (*eo)->if_contains(key)) {
          auto* table = slot;
          WF_TRY(rd.each(*lv, path + "." + key, [&](const std::string& cuda, const json::value& list,
                                                    const std::string& row_path) -> Expected<void> {
            auto ck = rd.minor_key(cuda, row_path, "a CUDA major.minor");
            if (!ck) return ck.error();
            auto archs = rd.arch_list(list, row_path);
            if (!archs) return archs.error();
            if (!table->emplace(*ck, std::move(*archs)).second) return rd.error(row_path, "duplicate CUDA line " + *ck);
            return {};
          }));
        }
      }
      p.packages_.emplace(name, std::move(po));
      return {};
    }));
  }

  // pytorch_matrix: platform -> cuda -> torch -> [python]
  {
    auto v = rd.member(obj, "pytorch_matrix", "");
    if (!v) return v.error();
    std::set<std::tuple<model::NumericVersion, model::NumericVersion, model::NumericVersion, std::string>> seen;
    WF_TRY(rd.each(**v, "pytorch_matrix", [&](const std::string& platform, const json::value& by_cuda,
                                              const std::string& ppath) -> Expected<void> {
      WF_TRY(rd.platform_key(platform, ppath));
      return rd.each(by_cuda, ppath, [&](const std::string& cuda, const json::value& by_torch,
                                         const std::string& cpath) -> Expected<void> {
        auto cv = rd.dotted(cuda, cpath, "a CUDA major.minor", 2);
        if (!cv) return cv.error();
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
            if (!seen.emplace(*cv, *tv, *py, platform).second) return rd.error(ipath, "duplicate Python " + py->str());
            p.cells_.push_back(Policy::Cell{model::Combo{*cv, *tv}, *py, platform});
          }
          return {};
        });
      });
    }));
    std::sort(p.cells_.begin(), p.cells_.end(), [](const Policy::Cell& a, const Policy::Cell& b) {
      return std::tie(a.combo.cuda, a.combo.torch, a.python, a.platform) <
             std::tie(b.combo.cuda, b.combo.torch, b.python, b.platform);
    });
  }

  // torch_family: torch -> {torchvision, torchaudio}
  {
    auto v = rd.member(obj, "torch_family", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "torch_family", [&](const std::string& torch, const json::value& entry,
                                            const std::string& path) -> Expected<void> {
      auto key = rd.minor_key(torch, path, "a torch major.minor");
      if (!key) return key.error();
      auto eo = rd.object(entry, path);
      if (!eo) return eo.error();
      WF_TRY(rd.only(**eo, {"torchvision", "torchaudio"}, path));
      FamilyPins pins;
      for (auto [name, slot] : {std::pair{"torchvision", &pins.torchvision}, std::pair{"torchaudio", &pins.torchaudio}}) {
        auto m = rd.member(**eo, name, path);
        if (!m) return m.error();
        auto ver = rd.dotted_value(**m, path + "." + name, "a major.minor version", 2);
        if (!ver) return ver.error();
        *slot = std::move(*ver);
      }
      if (!p.family_.emplace(*key, std::move(pins)).second) return rd.error(path, "duplicate torch minor " + *key);
      return {};
    }));
  }

  // pypi_cuda: platform -> torch -> cuda
  {
    auto v = rd.member(obj, "pypi_cuda", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "pypi_cuda", [&](const std::string& platform, const json::value& rows,
                                         const std::string& ppath) -> Expected<void> {
      WF_TRY(rd.platform_key(platform, ppath));
      auto& table = p.pypi_cuda_[platform];
      return rd.each(rows, ppath, [&](const std::string& torch, const json::value& cuda,
                                      const std::string& path) -> Expected<void> {
        auto key = rd.minor_key(torch, path, "a torch major.minor");
        if (!key) return key.error();
        auto cv = rd.dotted_value(cuda, path, "a CUDA major.minor", 2);
        if (!cv) return cv.error();
        if (!table.emplace(*key, std::move(*cv)).second) return rd.error(path, "duplicate torch minor " + *key);
        return {};
      });
    }));
  }

  // min_driver: cuda major -> {linux, windows}
  {
    auto v = rd.member(obj, "min_driver", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "min_driver", [&](const std::string& major, const json::value& entry,
                                          const std::string& path) -> Expected<void> {
      auto mv = rd.dotted(major, path, "a CUDA major", 1);
      if (!mv) return mv.error();
      auto eo = rd.object(entry, path);
      if (!eo) return eo.error();
      WF_TRY(rd.only(**eo, {"linux", "windows"}, path));
      MinDriver md;
      for (auto [name, slot] : {std::pair{"linux", &md.linux_}, std::pair{"windows", &md.windows}}) {
        auto m = rd.member(**eo, name, path);
        if (!m) return m.error();
        auto ver = rd.dotted_value(**m, path + "." + name, "a driver version", 0);
        if (!ver) return ver.error();
        *slot = std::move(*ver);
      }
      if (!p.min_driver_.emplace(mv->major(), std::move(md)).second) return rd.error(path, "duplicate CUDA major");
      return {};
    }));
  }

  // fallback: backend -> cpu arch -> {cuda, torch}
  {
    auto v = rd.member(obj, "fallback", "");
    if (!v) return v.error();
    WF_TRY(rd.each(**v, "fallback", [&](const std::string& backend, const json::value& by_arch,
                                        const std::string& bpath) -> Expected<void> {
      WF_TRY(rd.platform_key(backend, bpath));
      auto& table = p.fallback_[backend];
      return rd.each(by_arch, bpath, [&](const std::string& arch, const json::value& entry,
                                         const std::string& path) -> Expected<void> {
        auto eo = rd.object(entry, path);
        if (!eo) return eo.error();
        WF_TRY(rd.only(**eo, {"cuda", "torch"}, path));
        auto cm = rd.member(**eo, "cuda", path);
        if (!cm) return cm.error();
        auto cuda = rd.dotted_value(**cm, path + ".cuda", "a CUDA major.minor", 2);
        if (!cuda) return cuda.error();
        auto tm = rd.member(**eo, "torch", path);
        if (!tm) return tm.error();
        auto torch = rd.dotted_value(**tm, path + ".torch", "a torch major.minor", 2);
        if (!torch) return torch.error();
        const std::string norm = model::normalize_cpu_arch(arch);
        if (!table.emplace(norm, model::Combo{*cuda, *torch}).second) {
          return rd.error(path, "duplicate CPU arch " + norm);
        }
        return {};
      });
    }));
  }

  // torch_index
  {
    auto v = rd.member(obj, "torch_index", "");
    if (!v) return v.error();
    auto s = rd.string(**v, "torch_index");
    if (!s) return s.error();
    if (!(s->starts_with("https://") || s->starts_with("http://")) || s->find("{cuda_nodot}") == std::string::npos) {
      return rd.error("torch_index", quote(*s) + " is not an http(s) URL pattern containing {cuda_nodot}");
    }
    p.torch_index_pattern_ = std::move(*s);
  }

  return p;
}

Expected<Policy> load_policy_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return unexpected(Errc::not_found, path + ": no such policy file");
  if (std::filesystem::is_directory(status)) return unexpected(Errc::io_error, path + ": is a directory, not a policy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(Errc::io_error, path + ": cannot open the policy file");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) {
      return unexpected(Errc::too_large, path + ": the policy file is larger than " +
                                             std::to_string(kMaxFileBytes >> 20) + " MiB");
    }
  }
  if (in.bad()) return unexpected(Errc::io_error, path + ": reading the policy file failed");
  return parse_policy_json(text, path);
}

}  // namespace wheelfit::policies
