// The farm's packages.json (schema 1) read whole into a DOM, and the record readers the selective
// read (packages_json_select.cpp) shares. Every error names the input and the JSON path of the value.

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_reader.hpp"
#include "packages_json_records.hpp"
#include "page_text.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/safe_text.hpp"

namespace wheelfit::index {
namespace {

namespace json = boost::json;
using detail::JsonPath;
using detail::JsonReporter;

const JsonPath kRoot;
const JsonPath kPackagesPath = kRoot / "packages";

}  // namespace

Expected<std::string> detail::read_packages_header(const json::value* schema, const json::value* repo, const JsonReporter& r) {
  if (!schema) return r.fail("schema", "missing");
  const std::int64_t* schema_int = schema->if_int64();
  const std::uint64_t* schema_uint = schema->if_uint64();
  const bool schema_ok = (schema_int && *schema_int == 1) || (schema_uint && *schema_uint == 1);
  if (!schema_ok) {
    return r.fail("schema", "schema " + detail::quote_for_message(json::serialize(*schema)) +
                                " is not supported (expected the integer 1)",
                  Errc::unsupported);
  }
  if (!repo || repo->is_null()) return std::string();
  if (const json::string* s = repo->if_string()) return std::string(detail::as_view(*s));
  return r.wrong_kind("repo", "a string", *repo);
}

namespace {

/// One wheel of a record.
Expected<PackagesJsonWheel> read_wheel(const json::value& v, const JsonPath& wp, const JsonReporter& r) {
  auto wheel_obj = detail::require_object(v, wp, r);
  if (!wheel_obj) return std::move(wheel_obj).error();
  const json::object& w = **wheel_obj;

  PackagesJsonWheel wheel;
  auto filename = detail::required_string(w, "filename", wp, r);
  if (!filename) return std::move(filename).error();
  wheel.filename = std::move(*filename);
  auto url = detail::required_string(w, "url", wp, r);
  if (!url) return std::move(url).error();
  // Not one token: a lock file would carry it as more than one (decision 0021).
  if (const std::string why = util::url_token_problem(*url); !why.empty()) {
    return r.fail((wp / "url").str(), detail::quote_for_message(*url) + " " + why);
  }
  // A relative url (a mirror's "files/x.whl") is relative to packages.json itself.
  wheel.url = url->find("://") == std::string::npos ? resolve_url(r.source, *url) : std::move(*url);
  auto sha = detail::optional_sha256(w, "sha256", wp, r);
  if (!sha) return std::move(sha).error();
  wheel.sha256 = std::move(*sha);
  for (const auto& kv : w) {  // the farm's other string fields (version, cuda, torch, python, ...), kept as given
    const std::string_view k(kv.key().data(), kv.key().size());
    if (k == "filename" || k == "url" || k == "sha256" || !kv.value().is_string()) continue;
    wheel.fields.emplace_back(std::string(k), std::string(kv.value().get_string()));
  }
  return wheel;
}

/// One project's record ({"torch_free": bool, "wheels": [...]}) at `path`.
Expected<PackagesJsonEntry> read_entry(const json::value& v, const JsonPath& path, const JsonReporter& r) {
  auto entry_obj = detail::require_object(v, path, r);
  if (!entry_obj) return std::move(entry_obj).error();
  const json::object& e = **entry_obj;

  PackagesJsonEntry entry;
  if (const json::value* tf = e.if_contains("torch_free"); tf && !tf->is_null()) {
    const bool* b = tf->if_bool();
    if (!b) return r.wrong_kind((path / "torch_free").str(), "a boolean", *tf);
    entry.torch_free = *b;
  }
  const JsonPath wheels_path = path / "wheels";
  const json::value* wheels = e.if_contains("wheels");
  if (!wheels) return r.fail(wheels_path.str(), "missing");
  const json::array* arr = wheels->if_array();
  if (!arr) return r.wrong_kind(wheels_path.str(), "an array", *wheels);
  entry.wheels.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    auto wheel = read_wheel((*arr)[i], wheels_path[i], r);
    if (!wheel) return std::move(wheel).error();
    entry.wheels.push_back(std::move(*wheel));
  }
  return entry;
}

}  // namespace

Expected<void> detail::add_packages_entry(PackagesJson& out, std::string_view key, const json::value& v, const JsonReporter& r) {
  const JsonPath path = kPackagesPath / key;
  if (!v.is_object()) return r.wrong_kind(path.str(), "an object", v);
  std::string name = detail::normalize_project_name(key);
  if (name.empty()) return r.fail(path.str(), "empty project name");
  if (out.packages.count(name) != 0) {
    return r.fail(path.str(), "the same project as another key (PEP 503 name '" + name + "')");
  }
  auto entry = read_entry(v, path, r);
  if (!entry) return std::move(entry).error();
  out.packages.emplace(std::move(name), std::move(*entry));
  return {};
}

Expected<PackagesJson> parse_packages_json(std::string_view body, std::string_view source) {
  const JsonReporter r{source};
  auto doc = detail::parse_json(body, r);
  if (!doc) return std::move(doc).error();
  auto top = detail::require_object(*doc, kRoot, r);
  if (!top) return std::move(top).error();

  PackagesJson result;
  auto repo = detail::read_packages_header((*top)->if_contains("schema"), (*top)->if_contains("repo"), r);
  if (!repo) return std::move(repo).error();
  result.repo = std::move(*repo);

  const json::value* packages = (*top)->if_contains("packages");
  if (!packages) return r.fail("packages", "missing");
  auto pkgs = detail::require_object(*packages, kPackagesPath, r);
  if (!pkgs) return std::move(pkgs).error();
  for (const json::key_value_pair& kv : **pkgs) {
    if (auto added = detail::add_packages_entry(result, {kv.key().data(), kv.key().size()}, kv.value(), r); !added) {
      return std::move(added).error();
    }
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
