#include "farmgen.hpp"
#include "wheel_files.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

#include "wheelfit/model/name.hpp"
#include "wheelfit/model/version.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::farmgen {

namespace detail {
std::string_view embedded_packages_json();  // embedded_farm_packages.cpp (generated)
}

namespace fs = std::filesystem;
namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// Small helpers

namespace {

using util::html_escape;

std::string minor_str(const model::NumericVersion& v) {
  return std::to_string(v.major()) + "." + std::to_string(v.minor());
}
std::string nodot2(const model::NumericVersion& v) {
  return std::to_string(v.major()) + std::to_string(v.minor());
}

// JSON string literal; for ASCII input the same text as Python's json.dumps (ensure_ascii).
void json_string(std::string& out, std::string_view s) { out += json::serialize(json::string(s)); }

std::string percent_plus(std::string_view filename) {
  std::string out;
  out.reserve(filename.size() + 4);
  for (char c : filename) {
    if (c == '+') out += "%2B";
    else out += c;
  }
  return out;
}

// --- package list parsing --------------------------------------------------------------------

struct ListReader {
  std::string_view source;
  Error fail(const std::string& path, const std::string& what) const {
    return Error(Errc::invalid_input, std::string(source) + ": " + path + ": " + what);
  }
  Expected<std::string> str(const json::object& o, std::string_view key, const std::string& path) const {
    const json::value* v = o.if_contains(key);
    if (!v) return fail(path + "." + std::string(key), "missing");
    if (!v->is_string()) return fail(path + "." + std::string(key), "not a string");
    return std::string(v->get_string());
  }
  Expected<model::NumericVersion> minor(const json::value& v, const std::string& path) const {
    if (!v.is_string()) return fail(path, "not a string");
    auto nv = model::NumericVersion::parse(v.get_string());
    if (!nv) return fail(path, nv.error().message);
    if (nv->parts().size() > 2) return fail(path, "expected major.minor, got '" + std::string(v.get_string()) + "'");
    return nv->truncated(2);
  }
};

Expected<FarmPackage> parse_package(const json::value& v, const std::string& path, const ListReader& rd) {
  if (!v.is_object()) return rd.fail(path, "not an object");
  const auto& o = v.get_object();
  FarmPackage p;
  auto name = rd.str(o, "name", path);
  if (!name) return name.error();
  p.name = std::move(*name);
  if (!model::is_valid_name(p.name) || p.name.find_first_of("-.") != std::string::npos)
    return rd.fail(path + ".name", "not a wheel distribution name (letters, digits, '_'): '" + p.name + "'");
  auto index_name = rd.str(o, "index_name", path);
  if (!index_name) return index_name.error();
  p.index_name = std::move(*index_name);
  if (p.index_name != model::normalize_name(p.name))
    return rd.fail(path + ".index_name", "'" + p.index_name + "' is not the PEP 503 form of '" + p.name + "'");
  auto version = rd.str(o, "version", path);
  if (!version) return version.error();
  p.version = std::move(*version);
  auto pv = model::Version::parse(p.version);
  if (!pv || p.version.find_first_of("-+ ") != std::string::npos)
    return rd.fail(path + ".version", "not a public PEP 440 version: '" + p.version + "'");
  if (const json::value* lt = o.if_contains("links_torch")) {
    if (!lt->is_bool()) return rd.fail(path + ".links_torch", "not a boolean");
    p.links_torch = lt->get_bool();
  }
  const json::value* plats = o.if_contains("platforms");
  if (!plats || !plats->is_array() || plats->get_array().empty())
    return rd.fail(path + ".platforms", "expected a non-empty array of platform keys");
  for (std::size_t i = 0; i < plats->get_array().size(); ++i) {
    const auto& e = plats->get_array()[i];
    if (!e.is_string() || platform_tags(e.get_string()).empty())
      return rd.fail(path + ".platforms[" + std::to_string(i) + "]",
                     "expected \"linux\", \"windows\" or \"linux_aarch64\"");
    p.platforms.emplace_back(e.get_string());
  }
  if (const json::value* oc = o.if_contains("own_combinations")) {
    if (!oc->is_array()) return rd.fail(path + ".own_combinations", "not an array");
    for (std::size_t i = 0; i < oc->get_array().size(); ++i) {
      const std::string rp = path + ".own_combinations[" + std::to_string(i) + "]";
      const auto& row = oc->get_array()[i];
      if (!row.is_object()) return rd.fail(rp, "not an object");
      const auto& ro = row.get_object();
      OwnCombination c;
      for (const auto* key : {"cuda", "torch"}) {
        const json::value* kv = ro.if_contains(key);
        if (!kv) return rd.fail(rp + "." + key, "missing");
        auto nv = rd.minor(*kv, rp + "." + key);
        if (!nv) return nv.error();
        (std::string_view(key) == "cuda" ? c.line : c.torch) = std::move(*nv);
      }
      const json::value* pys = ro.if_contains("pythons");
      if (!pys || !pys->is_array() || pys->get_array().empty())
        return rd.fail(rp + ".pythons", "expected a non-empty array");
      for (std::size_t j = 0; j < pys->get_array().size(); ++j) {
        auto nv = rd.minor(pys->get_array()[j], rp + ".pythons[" + std::to_string(j) + "]");
        if (!nv) return nv.error();
        c.pythons.push_back(std::move(*nv));
      }
      p.own_combinations.push_back(std::move(c));
    }
  }
  if (const json::value* mp = o.if_contains("min_pytorch")) {
    auto nv = rd.minor(*mp, path + ".min_pytorch");
    if (!nv) return nv.error();
    p.min_pytorch = std::move(*nv);
  }
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public: facts, package list, grid, names

std::string_view platform_tags(std::string_view platform) noexcept {
  if (platform == "linux") return "manylinux_2_24_x86_64.manylinux_2_28_x86_64";
  if (platform == "linux_aarch64") return "manylinux_2_26_aarch64.manylinux_2_28_aarch64";
  if (platform == "windows") return "win_amd64";
  return {};
}

Expected<std::vector<FarmPackage>> parse_package_list(std::string_view text, std::string_view source) {
  const ListReader rd{source};
  std::error_code ec;
  json::value doc = json::parse(text, ec);
  if (ec) return rd.fail("$", "not JSON: " + ec.message());
  if (!doc.is_object()) return rd.fail("$", "not an object");
  const auto& top = doc.get_object();
  const json::value* format = top.if_contains("format");
  if (!format || !format->is_int64() || format->get_int64() != 1)
    return Error(Errc::unsupported, std::string(source) + ": format: expected 1");
  const json::value* pkgs = top.if_contains("packages");
  if (!pkgs || !pkgs->is_array()) return rd.fail("packages", "expected an array");
  std::vector<FarmPackage> out;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < pkgs->get_array().size(); ++i) {
    const std::string path = "packages[" + std::to_string(i) + "]";
    auto p = parse_package(pkgs->get_array()[i], path, rd);
    if (!p) return p.error();
    if (!seen.emplace(p->index_name, i).second)
      return rd.fail(path + ".index_name", "duplicate '" + p->index_name + "'");
    out.push_back(std::move(*p));
  }
  return out;
}

const std::vector<FarmPackage>& builtin_packages() {
  static const std::vector<FarmPackage> list = [] {
    auto parsed = parse_package_list(detail::embedded_packages_json(), "built-in farm_packages.json");
    if (!parsed) throw std::logic_error(parsed.error().message);
    return std::move(*parsed);
  }();
  return list;
}

std::vector<FarmPackage> select_packages(const std::vector<FarmPackage>& list, std::size_t n) {
  std::vector<FarmPackage> out(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(std::min(n, list.size())));
  for (std::size_t k = 1; out.size() < n; ++k) {
    FarmPackage p;
    p.name = "synthetic_pkg_" + std::to_string(k);
    p.index_name = "synthetic-pkg-" + std::to_string(k);
    p.version = "1.0.0";
    p.links_torch = true;
    p.platforms = {"linux", "windows", "linux_aarch64"};
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<GridCell> farm_grid(const semantics::Policy& policy) {
  const model::NumericVersion py_min({3, 10});
  std::vector<GridCell> grid;
  for (const auto& cell : policy.shipped_cells()) {
    if (cell.python < py_min) continue;
    if (platform_tags(cell.platform).empty()) continue;
    // The farm builds a line on a platform when the policy has its arch list there.
    if (!policy.platform_arch_list(cell.combo, cell.platform)) continue;
    // Free-threaded Pythons ("3.13t") cannot be represented in a NumericVersion cell: none here.
    grid.push_back(GridCell{model::Combo{cell.combo.line, cell.combo.torch.truncated(2)},
                            cell.python.truncated(2), cell.platform});
  }
  return grid;
}

std::vector<GridCell> package_cells(const FarmPackage& package, const std::vector<GridCell>& grid) {
  std::vector<GridCell> out;
  for (const auto& c : grid) {
    if (std::find(package.platforms.begin(), package.platforms.end(), c.platform) == package.platforms.end())
      continue;
    if (package.min_pytorch && c.combo.torch < *package.min_pytorch) continue;
    if (!package.own_combinations.empty()) {
      const bool listed = std::any_of(package.own_combinations.begin(), package.own_combinations.end(),
                                      [&](const OwnCombination& oc) {
                                        return oc.line == c.combo.line && oc.torch == c.combo.torch &&
                                               std::find(oc.pythons.begin(), oc.pythons.end(), c.python) !=
                                                   oc.pythons.end();
                                      });
      if (!listed) continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string wheel_filename(const FarmPackage& package, const std::string& label,
                           const model::NumericVersion& python, std::string_view platform) {
  const std::string py = nodot2(python);
  std::string f;
  f.reserve(128);
  f += package.name;
  f += '-';
  f += package.version;
  f += '+';
  f += label;
  f += "-cp";
  f += py;
  f += "-cp";
  f += py;
  f += '-';
  f += platform_tags(platform);
  f += ".whl";
  return f;
}

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw std::runtime_error("OpenSSL EVP_Digest(SHA-256) failed");
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (std::size_t i = 0; i < 32; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Generation

namespace {

struct Anchor {
  std::string text;  ///< what a resolver matches
  std::string href;  ///< what gets installed
  std::string channel;  ///< "cu128/torch2.8"
};

struct RealFile {
  std::string filename, url, sha256, line, torch, python, platform;
  std::string bytes;  ///< the wheel itself (--with-files), else empty
  /// What the pages link: the URL, with the true digest as its #sha256= fragment for a real file.
  [[nodiscard]] std::string href() const { return bytes.empty() ? url : url + "#sha256=" + sha256; }
};

struct PackageOut {
  const FarmPackage* pkg = nullptr;
  std::vector<Anchor> anchors;  ///< sorted by text
  std::vector<RealFile> files;  ///< sorted by file name
};

std::string release_url(const std::string& base, const FarmPackage& p, std::string_view filename) {
  return base + "/releases/download/" + p.name + "-latest/" + percent_plus(filename);
}

std::string channel_of(const semantics::Policy& policy, const model::Combo& c) {
  return policy.notation().prefix + c.line.nodot() + "/torch" + minor_str(c.torch);
}

// The local label the farm writes for a combo: the backend's first combo template.
std::string label_of(const semantics::Policy& policy, const model::Combo& c) {
  return policy.combo_labels().empty() ? std::string() : policy.combo_labels().front().render(c);
}

PackageOut build_package(const FarmPackage& p, const std::vector<GridCell>& grid, const std::string& base,
                         const semantics::Policy& policy, bool with_files) {
  PackageOut out;
  out.pkg = &p;
  const auto cells = package_cells(p, grid);
  auto add_file = [&](const model::Combo& combo, const model::NumericVersion& py, const std::string& platform) {
    RealFile f;
    f.filename = wheel_filename(p, label_of(policy, combo), py, platform);
    f.url = release_url(base, p, f.filename);
    if (with_files) {
      f.bytes = wheel_bytes({p.index_name, p.name, p.version + "+" + label_of(policy, combo), "cp" + nodot2(py),
                             std::string(platform_tags(platform))});
      f.sha256 = sha256_hex(f.bytes);
    } else {
      f.sha256 = sha256_hex(f.filename);
    }
    f.line = combo.line.str();
    f.torch = minor_str(combo.torch);
    f.python = nodot2(py);
    f.platform = platform;
    out.files.push_back(f);
    return f;
  };
  if (p.links_torch) {
    for (const auto& c : cells) {
      const RealFile f = add_file(c.combo, c.python, c.platform);
      out.anchors.push_back(Anchor{f.filename, f.href(), channel_of(policy, c.combo)});
    }
  } else {
    // One real file per (CUDA line, Python, platform), built against the newest torch minor of
    // the package's cells there; every torch minor of the line lists it under its own name.
    using Key = std::tuple<model::NumericVersion, model::NumericVersion, std::string>;
    std::map<Key, model::NumericVersion> newest;
    for (const auto& c : cells) {
      auto [it, fresh] = newest.emplace(Key{c.combo.line, c.python, c.platform}, c.combo.torch);
      if (!fresh && it->second < c.combo.torch) it->second = c.combo.torch;
    }
    std::map<Key, RealFile> real;
    for (const auto& [key, torch] : newest)
      real.emplace(key, add_file(model::Combo{std::get<0>(key), torch}, std::get<1>(key), std::get<2>(key)));
    for (const auto& c : cells) {
      const RealFile& f = real.at(Key{c.combo.line, c.python, c.platform});
      out.anchors.push_back(Anchor{wheel_filename(p, label_of(policy, c.combo), c.python, c.platform), f.href(),
                                   channel_of(policy, c.combo)});
    }
  }
  std::sort(out.anchors.begin(), out.anchors.end(),
            [](const Anchor& a, const Anchor& b) { return std::tie(a.text, a.href) < std::tie(b.text, b.href); });
  std::sort(out.files.begin(), out.files.end(),
            [](const RealFile& a, const RealFile& b) { return a.filename < b.filename; });
  return out;
}

void append_anchor(std::string& page, const Anchor& a) {
  page += "<a href=\"";
  page += html_escape(a.href);
  page += "\">";
  page += html_escape(a.text);
  page += "</a><br>\n";
}

std::string page_head(std::string_view title, std::string_view h1) {
  std::string s = "<!DOCTYPE html>\n<html>\n<head><title>";
  s += html_escape(title);
  s += "</title></head>\n<body>\n<h1>";
  s += html_escape(h1);
  s += "</h1>\n";
  return s;
}
constexpr std::string_view kPageTail = "</body>\n</html>\n";

std::string packages_json(const std::string& repo, const std::vector<PackageOut>& pkgs, const std::string& line_key) {
  // The farm's packages.json is Python's json.dump(indent=1) with packages in reverse name order
  // and wheels by file name; this writes the same shape.
  std::vector<const PackageOut*> order;
  for (const auto& p : pkgs) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const PackageOut* a, const PackageOut* b) { return a->pkg->index_name > b->pkg->index_name; });
  std::string s;
  s.reserve(pkgs.size() * 1024);
  s += "{\n \"schema\": 1,\n \"repo\": ";
  json_string(s, repo);
  s += ",\n \"packages\": {";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PackageOut& p = *order[i];
    s += i ? ",\n  " : "\n  ";
    json_string(s, p.pkg->index_name);
    s += ": {\n   \"torch_free\": ";
    s += p.pkg->links_torch ? "false" : "true";
    s += ",\n   \"wheels\": [";
    for (std::size_t j = 0; j < p.files.size(); ++j) {
      const RealFile& f = p.files[j];
      s += j ? ",\n    {" : "\n    {";
      const std::pair<std::string_view, const std::string*> fields[] = {
          {"filename", &f.filename}, {"version", &p.pkg->version}, {line_key, &f.line},
          {"torch", &f.torch},       {"python", &f.python},        {"abi", nullptr},
          {"platform", &f.platform}, {"url", &f.url},              {"sha256", &f.sha256}};
      bool first = true;
      for (const auto& [key, value] : fields) {
        s += first ? "\n     " : ",\n     ";
        first = false;
        json_string(s, key);
        s += ": ";
        json_string(s, value ? std::string_view(*value) : std::string_view("cp"));
      }
      s += "\n    }";
    }
    s += p.files.empty() ? "]" : "\n   ]";
    s += "\n  }";
  }
  s += order.empty() ? "}" : "\n }";
  s += "\n}\n";
  return s;
}

std::string repo_of(const std::string& base) {
  constexpr std::string_view gh = "https://github.com/";
  if (base.size() > gh.size() && base.compare(0, gh.size(), gh) == 0) return base.substr(gh.size());
  return base;
}

Expected<void> write_one(const fs::path& path, std::string_view content, FarmStats& stats) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Error(Errc::io_error, path.parent_path().string() + ": cannot create directory: " + ec.message());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Error(Errc::io_error, path.string() + ": cannot open for writing");
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  f.close();
  if (!f) return Error(Errc::io_error, path.string() + ": write failed");
  stats.bytes += content.size();
  ++stats.files;
  return {};
}

Expected<FarmStats> write_tree(const fs::path& dir, const std::vector<PackageOut>& pkgs, const std::string& repo,
                               const semantics::Policy& policy) {
  FarmStats stats;
  // Root.
  std::vector<const PackageOut*> by_name;
  for (const auto& p : pkgs) by_name.push_back(&p);
  std::sort(by_name.begin(), by_name.end(),
            [](const PackageOut* a, const PackageOut* b) { return a->pkg->index_name < b->pkg->index_name; });
  {
    std::string root = page_head("CUDA Wheels Index", "CUDA Wheels");
    root += "<p class=\"hint\">A synthetic full-grid PEP 503 index written by wheelfit-farmgen, laid out like "
            "the cuda-wheels farm (per-combo channels live at <code>/cu&lt;ver&gt;/&lt;torch&gt;/</code>).</p>\n";
    for (const auto* p : by_name) {
      const std::string n = html_escape(p->pkg->index_name);
      root += "<a href=\"" + n + "/\">" + n + "</a><br>\n";
    }
    root += kPageTail;
    if (auto r = write_one(dir / "index.html", root, stats); !r) return r.error();
    ++stats.pages;
  }
  // Package pages, and the channels' contents.
  std::map<std::string, std::map<std::string, std::vector<const Anchor*>>> channels;  // channel -> pkg -> anchors
  for (const auto* p : by_name) {
    std::string page = page_head(p->pkg->index_name, p->pkg->index_name);
    for (const auto& a : p->anchors) {
      append_anchor(page, a);
      channels[a.channel][p->pkg->index_name].push_back(&a);
    }
    page += kPageTail;
    if (auto r = write_one(dir / p->pkg->index_name / "index.html", page, stats); !r) return r.error();
    ++stats.pages;
    ++stats.packages;
    stats.anchors += p->anchors.size();
    stats.wheels += p->files.size();
  }
  for (const auto& [channel, by_pkg] : channels) {
    const auto slash = channel.find('/');
    const std::string cu = channel.substr(0, slash), torch = channel.substr(slash + 1);
    const std::string label = cu + " / " + torch;
    const std::string title = policy.notation().name + " Wheels ";
    std::string root = page_head(title + channel, title + "-- " + label);
    for (const auto& [name, anchors] : by_pkg) {
      const std::string n = html_escape(name);
      root += "<a href=\"" + n + "/\">" + n + "</a><br>\n";
      std::string page = page_head(name + " " + channel, name + " -- " + label);
      for (const Anchor* a : anchors) append_anchor(page, *a);
      page += kPageTail;
      if (auto r = write_one(dir / cu / torch / name / "index.html", page, stats); !r) return r.error();
      ++stats.pages;
    }
    root += kPageTail;
    if (auto r = write_one(dir / cu / torch / "index.html", root, stats); !r) return r.error();
    ++stats.pages;
  }
  if (auto r = write_one(dir / "packages.json", packages_json(repo, pkgs, policy.notation().key), stats); !r) return r.error();
  for (const auto& p : pkgs) {
    for (const auto& f : p.files) {
      if (f.bytes.empty()) continue;
      const fs::path at = dir / "releases" / "download" / (p.pkg->name + "-latest") / f.filename;
      if (auto r = write_one(at, f.bytes, stats); !r) return r.error();
    }
  }
  return stats;
}

bool is_empty_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_empty(p, ec) && !ec;
}

}  // namespace

Expected<FarmStats> generate_farm(const FarmOptions& options, const semantics::Policy& policy) {
  if (options.out.empty()) return Error(Errc::usage, "--out: no output directory given");
  if (options.packages && *options.packages == 0) return Error(Errc::usage, "--packages: must be at least 1");
  std::string base = options.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.empty() || base.find_first_of(" \t\r\n\"<>") != std::string::npos)
    return Error(Errc::usage, "--base-url: '" + options.base_url + "' is not a usable URL");

  // Where: out (absolute, without a trailing '/').
  std::error_code ec;
  fs::path out = fs::absolute(options.out, ec).lexically_normal();
  if (ec) return Error(Errc::io_error, options.out.string() + ": " + ec.message());
  if (out.filename().empty()) out = out.parent_path();
  const fs::path parent = out.parent_path();
  const auto st = fs::status(out, ec);
  const bool exists = fs::exists(st);
  if (exists && !fs::is_directory(st))
    return Error(Errc::usage, out.string() + ": exists and is not a directory");
  const bool replace = exists && !is_empty_dir(out);
  if (replace && !(fs::is_regular_file(out / "index.html", ec) && fs::is_regular_file(out / "packages.json", ec)))
    return Error(Errc::usage, out.string() + ": not empty and holds no farm index (index.html + packages.json); "
                                             "refusing to replace it");
  fs::create_directories(parent, ec);
  if (ec) return Error(Errc::io_error, parent.string() + ": cannot create directory: " + ec.message());

  // What.
  const auto& list = options.package_list ? *options.package_list : builtin_packages();
  const auto packages = select_packages(list, options.packages.value_or(list.size()));
  const auto grid = farm_grid(policy);
  std::vector<PackageOut> outs;
  outs.reserve(packages.size());
  for (const auto& p : packages) outs.push_back(build_package(p, grid, base, policy, options.with_files));

  // Write to a sibling temp dir, then swap it into place.
  const std::string tag = "." + out.filename().string() + ".farmgen-";
  const std::string pid = std::to_string(static_cast<long long>(::getpid()));
  const fs::path tmp = parent / (tag + "tmp-" + pid);
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec)
    return Error(Errc::io_error, tmp.string() + ": cannot create directory: " + (ec ? ec.message() : "exists"));
  auto cleanup = [&] {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
  };
  auto stats = write_tree(tmp, outs, repo_of(base), policy);
  if (!stats) {
    cleanup();
    return stats.error();
  }
  if (!replace) {
    fs::rename(tmp, out, ec);  // onto an absent or empty directory
    if (ec) {
      cleanup();
      return Error(Errc::io_error, out.string() + ": cannot move the new index into place: " + ec.message());
    }
  } else {
    const fs::path old = parent / (tag + "old-" + pid);
    fs::remove_all(old, ec);
    fs::rename(out, old, ec);
    if (ec) {
      cleanup();
      return Error(Errc::io_error, out.string() + ": cannot move the old index aside: " + ec.message());
    }
    fs::rename(tmp, out, ec);
    if (ec) {
      std::error_code ignored;
      fs::rename(old, out, ignored);
      cleanup();
      return Error(Errc::io_error, out.string() + ": cannot move the new index into place: " + ec.message());
    }
    fs::remove_all(old, ec);
  }
  return stats;
}

}  // namespace wheelfit::farmgen
