// The JSON readers of wheelfit::index: PEP 691 project pages and the farm's packages.json
// (schema 1), with Boost.JSON. Every error names the input and the JSON path of the value.

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "links_detail.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/json_kind.hpp"

namespace wheelfit::index {
namespace {

namespace json = boost::json;

using util::json_kind_name;

std::string_view as_view(const json::string& s) { return {s.data(), s.size()}; }

/// Builds "<source>: <path>: <what>" errors.
struct Reporter {
  std::string_view source;

  [[nodiscard]] Unexpected fail(std::string_view path, std::string_view what, Errc code = Errc::invalid_input) const {
    std::string msg(source);
    msg += ": ";
    if (!path.empty()) {
      msg.append(path);
      msg += ": ";
    }
    msg.append(what);
    return unexpected(code, std::move(msg));
  }
  [[nodiscard]] Unexpected wrong_kind(std::string_view path, std::string_view expected, const json::value& got) const {
    return fail(path, "not " + std::string(expected) + " (got " + std::string(json_kind_name(got)) + ")");
  }
};

/// A JSON path ("packages.cumm.wheels[2].sha256"), spelled out only when an error names it: a
/// large index is walked without building a path string per value. A child refers to its
/// parent, so it must not outlive it.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  ///< when !is_index
  std::size_t index = 0;
  bool is_index = false;

  [[nodiscard]] Path operator/(std::string_view k) const { return Path{this, k, 0, false}; }
  [[nodiscard]] Path operator[](std::size_t i) const { return Path{this, {}, i, true}; }
  [[nodiscard]] std::string str() const {
    std::string out = parent ? parent->str() : std::string{};
    if (is_index) {
      out += '[';
      out += std::to_string(index);
      out += ']';
    } else {
      if (!out.empty()) out += '.';
      out.append(key);
    }
    return out;
  }
};

Expected<json::value> parse_json(std::string_view body, const Reporter& r) {
  json::stream_parser parser;
  // One arena for the whole document: a large index parses without a malloc per value.
  parser.reset(json::make_shared_resource<json::monotonic_resource>());
  boost::system::error_code ec;
  const std::size_t consumed = parser.write(body.data(), body.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    return r.fail("", "invalid JSON near offset " + std::to_string(consumed) + ": " + ec.message());
  }
  return parser.release();
}

Expected<const json::object*> require_object(const json::value& v, const Path& path, const Reporter& r) {
  if (const json::object* o = v.if_object()) return o;
  const std::string p = path.str();
  return r.wrong_kind(p.empty() ? "top level" : p, "an object", v);
}

/// A required string member.
Expected<std::string> required_string(const json::object& o, std::string_view key, const Path& path,
                                      const Reporter& r) {
  const json::value* v = o.if_contains(key);
  if (!v) return r.fail((path / key).str(), "missing");
  if (const json::string* s = v->if_string()) return std::string(as_view(*s));
  return r.wrong_kind((path / key).str(), "a string", *v);
}

/// An optional string member: absent or null is nullopt.
Expected<std::optional<std::string>> optional_string(const json::object& o, std::string_view key, const Path& path,
                                                     const Reporter& r) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<std::string>{};
  if (const json::string* s = v->if_string()) return std::optional<std::string>(std::string(as_view(*s)));
  return r.wrong_kind((path / key).str(), "a string", *v);
}

/// An optional sha256 member: 64 hex digits, returned lower-case.
Expected<std::optional<std::string>> optional_sha256(const json::object& o, std::string_view key, const Path& path,
                                                     const Reporter& r) {
  auto s = optional_string(o, key, path, r);
  if (!s) return std::move(s).error();
  if (!*s) return std::optional<std::string>{};
  if (!detail::is_sha256_hex(**s)) {
    return r.fail((path / key).str(), detail::quote_for_message(**s) + " is not 64 hex digits");
  }
  for (char& c : **s) c = detail::to_lower_ascii(c);
  return s;
}

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// PEP 691

Expected<Page> parse_simple_json(std::string_view body, std::string_view page_url) {
  const Reporter r{page_url};
  auto doc = parse_json(body, r);
  if (!doc) return std::move(doc).error();
  auto top = require_object(*doc, Path{}, r);
  if (!top) return std::move(top).error();

  const Path root;
  const Path meta_path = root / "meta";
  const json::value* meta = (*top)->if_contains("meta");
  if (!meta) return r.fail("meta", "missing");
  auto meta_obj = require_object(*meta, meta_path, r);
  if (!meta_obj) return std::move(meta_obj).error();
  auto api = required_string(**meta_obj, "api-version", meta_path, r);
  if (!api) return std::move(api).error();
  {
    const std::string_view v = *api;
    const std::size_t dot = v.find('.');
    if (dot == std::string_view::npos || !is_digits(v.substr(0, dot)) || !is_digits(v.substr(dot + 1))) {
      return r.fail("meta.api-version", detail::quote_for_message(v) + " is not <major>.<minor>");
    }
    if (v.substr(0, dot) != "1") {
      return r.fail("meta.api-version", "version " + std::string(v) + " is not supported (expected 1.x)",
                    Errc::unsupported);
    }
  }

  const json::value* files = (*top)->if_contains("files");
  if (!files) return r.fail("files", "missing");
  const json::array* arr = files->if_array();
  if (!arr) return r.wrong_kind("files", "an array", *files);

  Page page;
  page.links.reserve(arr->size());
  const Path files_path = root / "files";
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const Path path = files_path[i];
    auto file = require_object((*arr)[i], path, r);
    if (!file) return std::move(file).error();
    const json::object& f = **file;

    auto filename = required_string(f, "filename", path, r);
    if (!filename) return std::move(filename).error();
    auto url = required_string(f, "url", path, r);
    if (!url) return std::move(url).error();

    Link link;
    link.text = std::move(*filename);
    const std::string_view href = *url;
    const std::size_t hash = href.find('#');
    link.url = resolve_url(page_url, href.substr(0, hash));
    const std::string_view segment = detail::last_path_segment(link.url);
    link.filename = segment.empty() ? link.text : percent_decode(segment);
    if (detail::unsafe_filename(link.filename)) {
      page.skipped.push_back((path / "url").str() + " " + detail::quote_for_message(href) + ": file name " +
                             detail::quote_for_message(link.filename) +
                             " holds a path separator or a control character");
      continue;
    }

    if (const json::value* hashes = f.if_contains("hashes")) {
      const Path hp = path / "hashes";
      auto h = require_object(*hashes, hp, r);
      if (!h) return std::move(h).error();
      auto sha = optional_sha256(**h, "sha256", hp, r);
      if (!sha) return std::move(sha).error();
      link.sha256 = std::move(*sha);
    }
    if (!link.sha256 && hash != std::string_view::npos) {  // a PEP 503-style "#sha256=" on the url
      link.sha256 = detail::parse_hash_fragment(href.substr(hash + 1)).sha256;
    }

    auto rp = optional_string(f, "requires-python", path, r);
    if (!rp) return std::move(rp).error();
    if (*rp && !(*rp)->empty()) link.requires_python = std::move(*rp);

    if (const json::value* y = f.if_contains("yanked"); y && !y->is_null()) {
      if (const bool* b = y->if_bool()) {
        link.yanked = *b;
      } else if (const json::string* s = y->if_string()) {
        link.yanked = true;
        link.yank_reason = std::string(as_view(*s));
      } else {
        return r.wrong_kind((path / "yanked").str(), "a boolean or a string", *y);
      }
    }
    page.links.push_back(std::move(link));
  }
  return page;
}

// ---------------------------------------------------------------------------------------------
// packages.json, schema 1

Expected<PackagesJson> parse_packages_json(std::string_view body, std::string_view source) {
  const Reporter r{source};
  auto doc = parse_json(body, r);
  if (!doc) return std::move(doc).error();
  auto top = require_object(*doc, Path{}, r);
  if (!top) return std::move(top).error();

  const json::value* schema = (*top)->if_contains("schema");
  if (!schema) return r.fail("schema", "missing");
  const std::int64_t* schema_int = schema->if_int64();
  const std::uint64_t* schema_uint = schema->if_uint64();
  const bool schema_ok = (schema_int && *schema_int == 1) || (schema_uint && *schema_uint == 1);
  if (!schema_ok) {
    return r.fail("schema", "schema " + detail::quote_for_message(json::serialize(*schema)) +
                                " is not supported (expected the integer 1)",
                  Errc::unsupported);
  }

  PackagesJson result;
  const Path root;
  auto repo = optional_string(**top, "repo", root, r);
  if (!repo) return std::move(repo).error();
  if (*repo) result.repo = std::move(**repo);

  const json::value* packages = (*top)->if_contains("packages");
  if (!packages) return r.fail("packages", "missing");
  const Path packages_path = root / "packages";
  auto pkgs = require_object(*packages, packages_path, r);
  if (!pkgs) return std::move(pkgs).error();

  for (const json::key_value_pair& kv : **pkgs) {
    const std::string_view key(kv.key().data(), kv.key().size());
    const Path path = packages_path / key;
    auto entry_obj = require_object(kv.value(), path, r);
    if (!entry_obj) return std::move(entry_obj).error();
    const json::object& e = **entry_obj;

    std::string name = detail::normalize_project_name(key);
    if (name.empty()) return r.fail(path.str(), "empty project name");
    if (result.packages.count(name) != 0) {
      return r.fail(path.str(), "the same project as another key (PEP 503 name '" + name + "')");
    }

    PackagesJsonEntry entry;
    if (const json::value* tf = e.if_contains("torch_free"); tf && !tf->is_null()) {
      const bool* b = tf->if_bool();
      if (!b) return r.wrong_kind((path / "torch_free").str(), "a boolean", *tf);
      entry.torch_free = *b;
    }
    const Path wheels_path = path / "wheels";
    const json::value* wheels = e.if_contains("wheels");
    if (!wheels) return r.fail(wheels_path.str(), "missing");
    const json::array* arr = wheels->if_array();
    if (!arr) return r.wrong_kind(wheels_path.str(), "an array", *wheels);
    entry.wheels.reserve(arr->size());
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const Path wp = wheels_path[i];
      auto wheel_obj = require_object((*arr)[i], wp, r);
      if (!wheel_obj) return std::move(wheel_obj).error();
      const json::object& w = **wheel_obj;

      PackagesJsonWheel wheel;
      auto filename = required_string(w, "filename", wp, r);
      if (!filename) return std::move(filename).error();
      wheel.filename = std::move(*filename);
      auto url = required_string(w, "url", wp, r);
      if (!url) return std::move(url).error();
      // A relative url (a mirror's "files/x.whl") is relative to packages.json itself.
      wheel.url = url->find("://") == std::string::npos ? resolve_url(source, *url) : std::move(*url);
      auto sha = optional_sha256(w, "sha256", wp, r);
      if (!sha) return std::move(sha).error();
      wheel.sha256 = std::move(*sha);
      for (const auto& kv2 : w) {  // the farm's other string fields (version, cuda, torch, python, ...), kept as given
        const std::string_view k(kv2.key().data(), kv2.key().size());
        if (k == "filename" || k == "url" || k == "sha256" || !kv2.value().is_string()) continue;
        wheel.fields.emplace_back(std::string(k), std::string(kv2.value().get_string()));
      }
      entry.wheels.push_back(std::move(wheel));
    }
    result.packages.emplace(std::move(name), std::move(entry));
  }
  result.build_lookup();
  return result;
}

PackagesJson::PackagesJson(const PackagesJson& other) : repo(other.repo), packages(other.packages) {
  if (other.indexed_) build_lookup();
}

PackagesJson& PackagesJson::operator=(const PackagesJson& other) {
  if (this != &other) {
    repo = other.repo;
    packages = other.packages;
    by_url_.clear();
    by_filename_.clear();
    indexed_ = false;
    if (other.indexed_) build_lookup();
  }
  return *this;
}

void PackagesJson::build_lookup() {
  by_url_.clear();
  by_filename_.clear();
  std::size_t n = 0;
  for (const auto& [name, entry] : packages) n += entry.wheels.size();
  by_url_.reserve(n);
  by_filename_.reserve(n);
  for (const auto& [name, entry] : packages) {
    for (const PackagesJsonWheel& w : entry.wheels) {
      if (!w.sha256) continue;
      by_url_.try_emplace(w.url, &*w.sha256);
      auto [it, inserted] = by_filename_.try_emplace(w.filename, &*w.sha256);
      if (!inserted && it->second && *it->second != *w.sha256) it->second = nullptr;
    }
  }
  indexed_ = true;
}

std::optional<std::string> PackagesJson::sha256_for(std::string_view url, std::string_view filename) const {
  if (indexed_) {
    if (!url.empty()) {
      if (auto it = by_url_.find(url); it != by_url_.end()) return *it->second;
    }
    std::string derived;
    if (filename.empty()) {
      derived = percent_decode(detail::last_path_segment(url));
      filename = derived;
    }
    if (auto it = by_filename_.find(filename); it != by_filename_.end() && it->second) return *it->second;
    return std::nullopt;
  }
  if (!url.empty()) {
    for (const auto& [name, entry] : packages) {
      for (const PackagesJsonWheel& w : entry.wheels) {
        if (w.url == url && w.sha256) return w.sha256;
      }
    }
  }
  // By file name: the one given, or the decoded last segment of the url. Two wheels of that
  // name with different hashes are a conflict: no hash is better than an arbitrary one.
  std::string derived;
  if (filename.empty()) {
    derived = percent_decode(detail::last_path_segment(url));
    filename = derived;
  }
  if (filename.empty()) return std::nullopt;
  std::optional<std::string> found;
  for (const auto& [name, entry] : packages) {
    for (const PackagesJsonWheel& w : entry.wheels) {
      if (w.filename != filename || !w.sha256) continue;
      if (found && *found != *w.sha256) return std::nullopt;
      found = w.sha256;
    }
  }
  return found;
}

}  // namespace wheelfit::index
