#include "wheelfit/index/releases.hpp"

#include <boost/json.hpp>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "wheelfit/index/links.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/json_kind.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/safe_text.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::index {
namespace json = boost::json;
using net::NetErrc;

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool has_control(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

/// The origin of an http(s) URL; nullopt for another scheme.
std::optional<model::url::Origin> origin_of(std::string_view url) {
  auto o = model::url::origin(url);
  if (!o || (o->scheme != "http" && o->scheme != "https")) return std::nullopt;
  return o;
}

bool valid_repo_part(std::string_view s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 100) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool valid_repo(std::string_view repo) {
  const auto slash = repo.find('/');
  return slash != std::string_view::npos && valid_repo_part(repo.substr(0, slash)) &&
         valid_repo_part(repo.substr(slash + 1));
}

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  auto t = util::trim(v);
  if (t.empty()) return std::nullopt;
  return std::string(t);
}

// ---------------------------------------------------------------------------------------------
// RFC 8288 Link header

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// The rel="next" target of a Link header; an error describing the first malformation.
Expected<std::optional<std::string>> parse_link_next(std::string_view h) {
  std::size_t i = 0;
  const auto n = h.size();
  auto skip_ws = [&] {
    while (i < n && (h[i] == ' ' || h[i] == '\t')) ++i;
  };
  auto bad = [&](std::string_view what) {
    return unexpected(Errc::invalid_input, "Link header: " + std::string(what) + " at offset " + std::to_string(i));
  };
  std::optional<std::string> next;
  while (true) {
    while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == ',')) ++i;
    if (i >= n) break;
    if (h[i] != '<') return bad("expected '<'");
    const auto close = h.find('>', i + 1);
    if (close == std::string_view::npos) return bad("unterminated '<'");
    const std::string_view target = h.substr(i + 1, close - i - 1);
    for (char c : target) {
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return bad("a space or control character in the URL");
    }
    i = close + 1;
    std::optional<std::string> rel;
    while (true) {
      skip_ws();
      if (i >= n || h[i] == ',') break;
      if (h[i] != ';') return bad("expected ';' or ','");
      ++i;
      skip_ws();
      const auto name_start = i;
      while (i < n && is_tchar(h[i])) ++i;
      if (i == name_start) return bad("expected a parameter name");
      const std::string name = util::ascii_lower(h.substr(name_start, i - name_start));
      skip_ws();
      std::string value;
      if (i < n && h[i] == '=') {
        ++i;
        skip_ws();
        if (i < n && h[i] == '"') {
          ++i;
          bool closed = false;
          while (i < n) {
            const char c = h[i++];
            if (c == '"') {
              closed = true;
              break;
            }
            if (c == '\\') {
              if (i >= n) break;
              value += h[i++];
            } else {
              value += c;
            }
          }
          if (!closed) return bad("unterminated quoted string");
        } else {
          const auto v_start = i;
          while (i < n && is_tchar(h[i])) ++i;
          value = std::string(h.substr(v_start, i - v_start));
        }
      }
      if (name == "rel" && !rel) rel = std::move(value);  // later rel parameters are ignored (RFC 8288 3.3)
    }
    if (rel && !next) {
      std::string_view rels = *rel;
      while (!rels.empty()) {
        while (!rels.empty() && is_space(rels.front())) rels.remove_prefix(1);
        std::size_t k = 0;
        while (k < rels.size() && !is_space(rels[k])) ++k;
        if (k > 0 && util::ascii_lower(rels.substr(0, k)) == "next") {
          next = std::string(target);
          break;
        }
        rels.remove_prefix(k);
      }
    }
  }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Releases JSON

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!ok) return false;
  }
  return true;
}

/// The project a note about an unparseable wheel belongs to: the normalised text before the
/// first '-', when that is a valid name.
std::optional<std::string> guess_project(std::string_view filename) {
  const auto dash = filename.find('-');
  const auto head = filename.substr(0, dash);
  if (!model::is_valid_name(head)) return std::nullopt;
  return model::normalize_name(head);
}

// The name escaped (util::escape_controls, one line): it is the API's, and may hold anything.
std::string note_asset(std::string_view path, std::string_view name) {
  return std::string(path) + " '" + util::escape_controls(name, util::ControlEscape::line) + "'";
}

// A file name that may not become a file (nor reach a terminal): a path separator or a control
// character, as a page href's decoded file name is refused (index/links.cpp).
bool unsafe_file_name(std::string_view name) { return name.find_first_of("/\\") != std::string_view::npos || has_control(name); }

}  // namespace

ReleasesSource ReleasesSource::from_env(std::string repo) {
  ReleasesSource s;
  s.repo = std::move(repo);
  if (auto api = env_value("WHEELFIT_GITHUB_API")) {
    std::string base = *api;
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (!base.empty()) s.api_base = std::move(base);
  }
  if (auto token = env_value("GITHUB_TOKEN")) {
    if (has_control(*token)) {
      log::warn("GITHUB_TOKEN holds a control character; ignored (no token is sent)");
    } else {
      s.token = std::move(*token);
    }
  }
  return s;
}

std::optional<std::string> repo_of_pages_url(std::string_view index_url) {
  constexpr std::string_view scheme = "https://";
  if (!util::starts_with_ci(index_url, scheme)) return std::nullopt;
  std::string_view rest = index_url.substr(scheme.size());
  const auto host_end = rest.find_first_of("/?#");
  if (host_end == std::string_view::npos || rest[host_end] != '/') return std::nullopt;
  const std::string host = util::ascii_lower(rest.substr(0, host_end));
  constexpr std::string_view suffix = ".github.io";
  if (host.size() <= suffix.size() || !host.ends_with(suffix)) return std::nullopt;
  const std::string owner = host.substr(0, host.size() - suffix.size());
  for (char c : owner) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return std::nullopt;  // no '.', ':', '@'
  }
  if (owner.empty() || owner.front() == '-') return std::nullopt;
  std::string_view path = rest.substr(host_end + 1);
  const auto seg_end = path.find_first_of("/?#");
  const std::string_view repo = path.substr(0, seg_end);
  if (!valid_repo_part(repo)) return std::nullopt;
  return owner + "/" + std::string(repo);
}

std::optional<std::string> link_next(std::string_view link_header) {
  auto r = parse_link_next(link_header);
  if (!r) return std::nullopt;
  return *r;
}

namespace {

using Releases = std::map<std::string, Page>;

// The fields of one release asset; a wrong shape is an error naming its JSON path.
struct AssetFields {
  std::string name, url;
  const json::value* digest = nullptr;  ///< a string, or nullptr (absent or null)
};
Expected<AssetFields> asset_fields(const json::value& v, const std::string& src, const std::string& apath) {
  const auto* asset = v.if_object();
  if (!asset) {
    return unexpected(Errc::invalid_input, src + ": " + apath + ": not an object (" + std::string(util::json_kind_name(v)) + ")");
  }
  const auto* name_v = asset->if_contains("name");
  if (!name_v || !name_v->is_string()) return unexpected(Errc::invalid_input, src + ": " + apath + ".name: not a string");
  AssetFields out;
  out.name = std::string(name_v->get_string());
  if (!out.name.ends_with(".whl")) return out;  // source tarballs, checksums, ...: not read further
  const auto* url_v = asset->if_contains("browser_download_url");
  if (!url_v || !url_v->is_string()) {
    return unexpected(Errc::invalid_input, src + ": " + apath + ".browser_download_url: not a string");
  }
  out.url = std::string(url_v->get_string());
  const auto* digest_v = asset->if_contains("digest");
  if (digest_v && !digest_v->is_null() && !digest_v->is_string()) {
    return unexpected(Errc::invalid_input, src + ": " + apath + ".digest: not a string");
  }
  if (digest_v && digest_v->is_string()) out.digest = digest_v;
  return out;
}

// The file name a wheel asset's download URL names, or why the asset is skipped (`refused`: with
// a warning, for a hostile name that would become a file in the download folder).
struct AssetCheck {
  std::string filename, why;
  bool refused = false;
};
AssetCheck check_asset(const AssetFields& a) {
  // A hostile name (the asset's, or the file name its download URL decodes to) is refused
  // with a warning, as a page's href is: it would become a file in the download folder.
  if (unsafe_file_name(a.name)) return {{}, "the file name holds '/', '\\' or a control character", true};
  const std::string quoted_url =
      "browser_download_url '" + util::one_line(util::escape_controls(a.url, util::ControlEscape::line), "?") + "'";
  if (!model::url::is_http(a.url)) return {{}, quoted_url + " is not an http(s) URL"};
  // As a page's href: not one token, it would not stay one in a lock file (decision 0021).
  if (const std::string why = util::url_token_problem(a.url); !why.empty()) return {{}, quoted_url + " " + why};
  std::string filename = model::url::percent_decode(model::url::last_path_segment(a.url));
  if (unsafe_file_name(filename)) {
    return {{}, "browser_download_url's file name '" + util::escape_controls(filename, util::ControlEscape::line) +
                "' holds '/', '\\' or a control character", true};
  }
  if (!util::is_utf8(filename)) {
    return {{}, "browser_download_url's file name '" + util::utf8_or_replaced(filename, "?") + "' is not UTF-8", true};
  }
  return {std::move(filename), {}};
}

// Adds one asset that is a wheel to its project's page (or notes why not).
void add_wheel_asset(const AssetFields& a, const std::string& src, const std::string& apath, Releases& result) {
  // Which project: from the wheel file name.
  const auto guess = guess_project(a.name);
  auto skip = [&](const std::string& why) {
    if (guess) result[*guess].skipped.push_back(note_asset(apath, a.name) + ": " + why);
    else log::debug(src + ": " + note_asset(apath, a.name) + ": " + why);
  };
  AssetCheck checked = check_asset(a);
  if (!checked.why.empty()) {
    if (checked.refused) log::warn(src + ": " + note_asset(apath, a.name) + " skipped: " + checked.why);
    skip(checked.why);
    return;
  }
  auto wheel = model::WheelName::parse(a.name);
  if (!wheel) {
    skip(wheel.error().message);
    return;
  }
  Link link;
  link.text = a.name;
  link.url = a.url;
  link.filename = std::move(checked.filename);
  auto& page = result[wheel->name];
  if (a.digest) {
    const std::string_view digest = a.digest->get_string();
    constexpr std::string_view prefix = "sha256:";
    if (digest.size() == prefix.size() + 64 && util::ascii_lower(digest.substr(0, prefix.size())) == prefix &&
        is_hex64(digest.substr(prefix.size()))) {
      link.sha256 = util::ascii_lower(digest.substr(prefix.size()));
    } else {
      page.skipped.push_back(note_asset(apath, a.name) + ": digest '" + std::string(digest) +
                             "' is not sha256:<64 hex digits>; kept without a hash");
    }
  }
  bool duplicate = false;
  for (const auto& l : page.links) duplicate = duplicate || l.url == link.url;
  if (!duplicate) page.links.push_back(std::move(link));
}

// The wheel assets of release `ri` into `result`.
Expected<void> add_release(const json::value& v, std::size_t ri, const std::string& src, Releases& result) {
  const std::string rpath = "releases[" + std::to_string(ri) + "]";
  const auto* release = v.if_object();
  if (!release) {
    return unexpected(Errc::invalid_input, src + ": " + rpath + ": not an object (" + std::string(util::json_kind_name(v)) + ")");
  }
  const auto* assets_v = release->if_contains("assets");
  if (!assets_v || assets_v->is_null()) return {};
  const auto* assets = assets_v->if_array();
  if (!assets) {
    return unexpected(Errc::invalid_input, src + ": " + rpath + ".assets: not an array (" +
                                               std::string(util::json_kind_name(*assets_v)) + ")");
  }
  for (std::size_t ai = 0; ai < assets->size(); ++ai) {
    const std::string apath = rpath + ".assets[" + std::to_string(ai) + "]";
    auto fields = asset_fields((*assets)[ai], src, apath);
    if (!fields) return fields.error();
    if (fields->name.ends_with(".whl")) add_wheel_asset(*fields, src, apath, result);
  }
  return {};
}

}  // namespace

Expected<void> parse_releases_page(std::string_view body, std::string_view source, std::map<std::string, Page>& out) {
  const std::string src(source);
  json::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return unexpected(Errc::invalid_input, src + ": not valid JSON: " + ec.message());
  if (!doc.is_array()) {
    std::string what = src + ": not a list of releases (" + std::string(util::json_kind_name(doc));
    if (const auto* o = doc.if_object()) {
      if (const auto* m = o->if_contains("message"); m && m->is_string()) {
        what += "; message: \"" + std::string(m->get_string()) + "\"";
      }
    }
    return unexpected(Errc::invalid_input, what + ")");
  }
  // Collect into a copy first: a page that fails adds nothing.
  auto result = out;
  const auto& releases = doc.get_array();
  for (std::size_t ri = 0; ri < releases.size(); ++ri) {
    if (auto ok = add_release(releases[ri], ri, src, result); !ok) return ok;
  }
  out = std::move(result);
  return {};
}

Expected<std::map<std::string, index::Page>> list_release_wheels(net::Transport& transport,
                                                                 const ReleasesSource& source) {
  if (!valid_repo(source.repo)) {
    return unexpected(Errc::invalid_input, "GitHub repository '" + source.repo + "' is not of the form owner/name");
  }
  std::string base = source.api_base;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const auto api_origin = origin_of(base);
  if (!api_origin) return unexpected(Errc::invalid_input, "GitHub API base '" + base + "' is not an http(s) URL");

  // A token over plain http is readable by everyone on the path: only when the user allowed the host.
  const bool secure = api_origin->scheme == "https" || source.token_over_http;
  if (source.token && !secure) {
    log::warn("GITHUB_TOKEN is not sent to " + util::redact(base) + ": a token goes over https only (allow the host with "
              "--allow-insecure-host to send it anyway)");
  }
  const std::string first = base + "/repos/" + source.repo + "/releases?per_page=100";
  std::string url = first;
  std::set<std::string> visited;
  std::map<std::string, index::Page> out;
  unsigned pages = 0;
  while (true) {
    if (visited.contains(url)) {
      return net::net_error(NetErrc::protocol, first + ": the Link header loops back to " + url + " after " +
                                                         std::to_string(pages) + " pages");
    }
    if (pages >= source.max_pages) {
      return net::net_error(NetErrc::protocol, first + ": more than " + std::to_string(source.max_pages) +
                                                         " pages of releases; refused");
    }
    visited.insert(url);

    net::Request req;
    req.url = url;
    req.headers.emplace_back("Accept", "application/vnd.github+json");
    req.headers.emplace_back("X-GitHub-Api-Version", "2022-11-28");
    if (source.token && secure && origin_of(url) == api_origin) req.headers.emplace_back("Authorization", "Bearer " + *source.token);

    auto r = transport.get(req);
    if (!r) {
      if (r.error().message.find(url) == std::string::npos) return r.error().with_context(url);
      return std::move(r).error();
    }
    if (r->status != 200) {
      return net::net_error(NetErrc::protocol, url + ": unexpected status " + std::to_string(r->status));
    }
    if (auto ok = parse_releases_page(r->body, url, out); !ok) return ok.error();
    ++pages;

    const auto link = net::find_header(r->headers, "link");
    if (!link) break;
    auto next = parse_link_next(*link);
    if (!next) return net::net_error(NetErrc::protocol, url + ": " + next.error().message);
    if (!*next) break;
    std::string resolved = model::url::resolve(url, **next);
    if (!model::url::is_http(resolved)) {
      return net::net_error(NetErrc::protocol, url + ": the Link header's next URL '" + resolved +
                                                         "' is not an http(s) URL");
    }
    url = std::move(resolved);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Failover

namespace {

/// Passes requests through and remembers which URLs failed and why, so a page that failed to be
/// read (transport) can be told from one that failed to parse.
class RecordingTransport final : public net::Transport {
 public:
  explicit RecordingTransport(net::Transport& inner) : inner_(inner) {}
  [[nodiscard]] net::Stats stats() const override { return inner_.stats(); }
  void flush() override { inner_.flush(); }
  std::map<std::string, Error> failures;

 private:
  net::SchemeFacts facts_impl(std::string_view url) const override { return inner_.facts(url); }
  Expected<net::Response> get_impl(const net::Request& request) override {
    auto r = inner_.get(request);
    if (!r) failures.insert_or_assign(request.url, r.error());
    return r;
  }
  std::vector<Expected<net::Response>> get_many_impl(const std::vector<net::Request>& requests) override {
    return get_many_hooked_impl(requests, {});
  }
  // The caller's hook is passed through: read_index parses each answer as it comes.
  std::vector<Expected<net::Response>> get_many_hooked_impl(const std::vector<net::Request>& requests,
                                                                  const AnswerHook& on_answer) override {
    auto out = inner_.get_many(requests, on_answer);
    for (std::size_t i = 0; i < out.size() && i < requests.size(); ++i) {
      if (!out[i]) failures.insert_or_assign(requests[i].url, out[i].error());
    }
    return out;
  }
  net::Transport& inner_;
};

/// "Could not be read": a network failure (any NetErrc: resets, timeouts, 5xx after retries,
/// ...), never a clean 404 (Errc::not_found) or an oversized / malformed answer.
bool is_read_failure(const Error& e) { return e.code.category() == net::net_category(); }

}  // namespace

index::IndexSnapshot read_index_with_failover(net::Transport& transport, const std::string& base,
                                              const std::vector<std::string>& names,
                                              const std::optional<ReleasesSource>& releases) {
  RecordingTransport recorder(transport);
  auto snap = index::read_index(recorder, base, names);
  if (!releases) return snap;

  std::vector<std::string> failed;  // keys of snap.projects
  for (const auto& [key, page] : snap.projects) {
    if (page.status != index::ProjectPage::Status::failed) continue;
    const auto it = recorder.failures.find(page.url);
    if (it != recorder.failures.end() && is_read_failure(it->second)) failed.push_back(key);
  }
  if (failed.empty()) return snap;

  std::string note = "the index at " + snap.base_url + " could not be read (" + std::to_string(failed.size()) + " of " +
                     std::to_string(snap.projects.size()) + " pages failed: ";
  constexpr std::size_t kShown = 3;
  for (std::size_t i = 0; i < failed.size() && i < kShown; ++i) {
    if (i) note += "; ";
    note += snap.projects[failed[i]].error;
  }
  if (failed.size() > kShown) note += "; and " + std::to_string(failed.size() - kShown) + " more";
  note += ")";

  auto api = list_release_wheels(transport, *releases);
  if (!api) {
    note += "; the GitHub Releases API of " + releases->repo + " failed too: " + api.error().message;
    snap.failover_note = std::move(note);
    return snap;
  }

  std::size_t replaced = 0;
  std::vector<std::string> missing, torch_free;
  for (const auto& key : failed) {
    auto& page = snap.projects[key];
    const auto it = api->find(model::normalize_name(page.name));
    page.source = "releases-api";
    if (it != api->end() && !it->second.links.empty()) {
      page.status = index::ProjectPage::Status::ok;
      page.page = it->second;
      page.error.clear();
      ++replaced;
      if (snap.packages_json) {
        const auto pj = snap.packages_json->packages.find(model::normalize_name(page.name));
        if (pj != snap.packages_json->packages.end() && pj->second.torch_free) torch_free.push_back(page.name);
      }
    } else {
      page.status = index::ProjectPage::Status::not_published;
      page.error = page.name + ": no wheels among the releases of " + releases->repo +
                   " (asked because the index page could not be read: " + page.error + ")";
      missing.push_back(page.name);
    }
  }
  note += "; used the GitHub Releases API of " + releases->repo + " instead: " + std::to_string(replaced) +
          " page(s) replaced by release assets";
  if (!missing.empty()) {
    note += ", not listed there: ";
    for (std::size_t i = 0; i < missing.size(); ++i) note += (i ? ", " : "") + missing[i];
  }
  if (!torch_free.empty()) {
    note += "; torch-free packages (";
    for (std::size_t i = 0; i < torch_free.size(); ++i) note += (i ? ", " : "") + torch_free[i];
    note += ") are listed only under the torch they were built with: the index's per-torch aliases are not in "
            "the API";
  } else if (!snap.packages_json && replaced > 0) {
    note += "; torch-free packages, if any, appear only under the torch they were built with (the index's "
            "per-torch aliases are not in the API)";
  }
  snap.failover_note = std::move(note);
  return snap;
}

IndexSnapshot read_index_with_releases(net::Transport& transport, const std::string& base,
                                       const std::vector<std::string>& names, const ReleasesRequest& request) {
  std::string repo = request.repo.empty() ? repo_of_pages_url(base).value_or("") : request.repo;
  std::optional<ReleasesSource> releases;
  if (!repo.empty()) {
    releases = ReleasesSource::from_env(std::move(repo));
    releases->token_over_http = request.token_over_http && request.token_over_http(releases->api_base);
  }
  return read_index_with_failover(transport, base, names, releases);
}

}  // namespace wheelfit::index
