// The PEP 691 reader of wheelfit::index, with Boost.JSON, and the helpers it shares with the
// packages.json reader (json_reader.hpp). Every error names the input and the JSON path of the value.

#include <boost/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "json_reader.hpp"
#include "page_text.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/json_kind.hpp"
#include "wheelfit/util/safe_text.hpp"

namespace wheelfit::index {
namespace detail {

Unexpected JsonReporter::fail(std::string_view path, std::string_view what, Errc code) const {
  std::string msg(source);
  msg += ": ";
  if (!path.empty()) {
    msg.append(path);
    msg += ": ";
  }
  msg.append(what);
  return unexpected(code, std::move(msg));
}

Unexpected JsonReporter::wrong_kind(std::string_view path, std::string_view expected, const json::value& got) const {
  return fail(path, "not " + std::string(expected) + " (got " + std::string(util::json_kind_name(got)) + ")");
}

Unexpected JsonReporter::invalid_json(std::size_t offset, const boost::system::error_code& ec) const {
  return fail("", "invalid JSON near offset " + std::to_string(offset) + ": " + ec.message());
}

std::string JsonPath::str() const {
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

Expected<json::value> parse_json(std::string_view body, const JsonReporter& r) {
  json::stream_parser parser;
  // One arena for the whole document: a large index parses without a malloc per value.
  parser.reset(json::make_shared_resource<json::monotonic_resource>());
  boost::system::error_code ec;
  const std::size_t consumed = parser.write(body.data(), body.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) return r.invalid_json(consumed, ec);
  return parser.release();
}

Expected<const json::object*> require_object(const json::value& v, const JsonPath& path, const JsonReporter& r) {
  if (const json::object* o = v.if_object()) return o;
  const std::string p = path.str();
  return r.wrong_kind(p.empty() ? "top level" : p, "an object", v);
}

Expected<std::string> required_string(const json::object& o, std::string_view key, const JsonPath& path,
                                      const JsonReporter& r) {
  const json::value* v = o.if_contains(key);
  if (!v) return r.fail((path / key).str(), "missing");
  if (const json::string* s = v->if_string()) return std::string(as_view(*s));
  return r.wrong_kind((path / key).str(), "a string", *v);
}

Expected<std::optional<std::string>> optional_string(const json::object& o, std::string_view key, const JsonPath& path,
                                                     const JsonReporter& r) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<std::string>{};
  if (const json::string* s = v->if_string()) return std::optional<std::string>(std::string(as_view(*s)));
  return r.wrong_kind((path / key).str(), "a string", *v);
}

Expected<std::optional<std::string>> optional_sha256(const json::object& o, std::string_view key, const JsonPath& path,
                                                     const JsonReporter& r) {
  auto s = optional_string(o, key, path, r);
  if (!s) return std::move(s).error();
  if (!*s) return std::optional<std::string>{};
  if (!is_sha256_hex(**s)) {
    return r.fail((path / key).str(), quote_for_message(**s) + " is not 64 hex digits");
  }
  for (char& c : **s) c = to_lower_ascii(c);
  return s;
}

}  // namespace detail

namespace {

using detail::as_view;
using detail::JsonPath;
using detail::JsonReporter;
using detail::optional_sha256;
using detail::optional_string;
using detail::parse_json;
using detail::require_object;
using detail::required_string;
namespace json = boost::json;

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// meta.api-version: 1.x (PEP 691); a later major version may mean something else.
Expected<void> check_api_version(const json::object& top, const JsonReporter& r) {
  const JsonPath root;  // a path refers to its parent: the root outlives it
  const JsonPath meta_path = root / "meta";
  const json::value* meta = top.if_contains("meta");
  if (!meta) return r.fail("meta", "missing");
  auto meta_obj = require_object(*meta, meta_path, r);
  if (!meta_obj) return std::move(meta_obj).error();
  auto api = required_string(**meta_obj, "api-version", meta_path, r);
  if (!api) return std::move(api).error();
  const std::string_view v = *api;
  const std::size_t dot = v.find('.');
  if (dot == std::string_view::npos || !is_digits(v.substr(0, dot)) || !is_digits(v.substr(dot + 1))) {
    return r.fail("meta.api-version", detail::quote_for_message(v) + " is not <major>.<minor>");
  }
  if (v.substr(0, dot) != "1") {
    return r.fail("meta.api-version", "version " + std::string(v) + " is not supported (expected 1.x)", Errc::unsupported);
  }
  return {};
}

// PEP 700's "size": an integer of bytes, 0 to INT64_MAX (a TOML integer, where pylock.toml writes
// it); null or absent is unknown. A fraction, a negative or larger number is the page's error:
// never a guessed size.
Expected<std::optional<std::uint64_t>> optional_size(const json::object& f, const JsonPath& path, const JsonReporter& r) {
  const json::value* v = f.if_contains("size");
  if (!v || v->is_null()) return std::optional<std::uint64_t>{};
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (const std::int64_t* i = v->if_int64(); i && *i >= 0) return std::optional<std::uint64_t>(static_cast<std::uint64_t>(*i));
  if (const std::uint64_t* u = v->if_uint64(); u && *u <= kMax) return std::optional<std::uint64_t>(*u);
  if (v->is_int64() || v->is_uint64() || v->is_double()) {
    return r.fail((path / "size").str(),
                  json::serialize(*v) + " is not a size in bytes (an integer from 0 to " + std::to_string(kMax) + ")");
  }
  return r.wrong_kind((path / "size").str(), "an integer", *v);
}

// One entry of "files" (at `path`) as a link; nullopt when it is skipped (said in `page`).
Expected<std::optional<Link>> read_file(const json::object& f, const JsonPath& path, std::string_view page_url,
                                        const JsonReporter& r, Page& page, detail::PageNotes& notes) {
  auto filename = required_string(f, "filename", path, r);
  if (!filename) return std::move(filename).error();
  auto url = required_string(f, "url", path, r);
  if (!url) return std::move(url).error();

  Link link;
  link.text = std::move(*filename);
  const std::string_view href = *url;
  // A "\n" or "\u2028" in the URL is a line break to pip's reader, a space another token
  // (decision 0021): the file is skipped, the page read.
  if (const std::string why = util::url_token_problem(href); !why.empty()) {
    page.skipped.push_back((path / "url").str() + " " + detail::quote_for_message(href) + ": the URL " + why);
    notes.unsafe_url(page.skipped.back());
    return std::optional<Link>{};
  }
  const std::size_t hash = href.find('#');
  link.url = resolve_url(page_url, href.substr(0, hash));
  const std::string_view segment = detail::last_path_segment(link.url);
  link.filename = segment.empty() ? link.text : percent_decode(segment);
  if (const std::string_view why = detail::filename_problem(link.filename); !why.empty()) {
    page.skipped.push_back((path / "url").str() + " " + detail::quote_for_message(href) + ": file name " +
                           detail::quote_for_message(link.filename) + " " + std::string(why));
    return std::optional<Link>{};
  }

  if (const json::value* hashes = f.if_contains("hashes")) {
    const JsonPath hp = path / "hashes";
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
  auto size = optional_size(f, path, r);
  if (!size) return std::move(size).error();
  link.size = *size;
  return std::optional<Link>(std::move(link));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// PEP 691

Expected<Page> parse_simple_json(std::string_view body, std::string_view page_url) {
  const JsonReporter r{page_url};
  auto doc = parse_json(body, r);
  if (!doc) return std::move(doc).error();
  auto top = require_object(*doc, JsonPath{}, r);
  if (!top) return std::move(top).error();
  if (auto api = check_api_version(**top, r); !api) return std::move(api).error();

  const json::value* files = (*top)->if_contains("files");
  if (!files) return r.fail("files", "missing");
  const json::array* arr = files->if_array();
  if (!arr) return r.wrong_kind("files", "an array", *files);

  Page page;
  detail::PageNotes notes;
  page.links.reserve(arr->size());
  const JsonPath root;  // a path refers to its parent: the root outlives it
  const JsonPath files_path = root / "files";
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const JsonPath path = files_path[i];
    auto file = require_object((*arr)[i], path, r);
    if (!file) return std::move(file).error();
    auto link = read_file(**file, path, page_url, r, page, notes);
    if (!link) return std::move(link).error();
    if (*link) page.links.push_back(std::move(**link));
  }
  notes.flush(page, page_url);
  return page;
}

}  // namespace wheelfit::index
