// The cache's entries: the sidecar's JSON line and the Cache-Control fields (cache_entry.hpp).
#include "cache_entry.hpp"

#include <openssl/evp.h>

#include <boost/json.hpp>
#include <chrono>
#include <limits>
#include <utility>

#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::transports::cache_detail {
namespace json = boost::json;

namespace {

std::string hex(const unsigned char* data, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  return hex(md, len);
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// HTTP's optional whitespace (RFC 9110: space and tab only), not util::trim's ASCII whitespace: a header value
// such as "max-age=\v60" stays malformed, as it always was.
std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A non-negative decimal number, clamped; nullopt when not all digits.
std::optional<std::int64_t> parse_seconds(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  constexpr std::int64_t cap = std::int64_t{1} << 40;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > cap) v = cap;
  }
  return v;
}

CacheControl parse_cache_control(const Headers& headers) {
  CacheControl cc;
  bool seen_max_age = false;
  for (const auto& [name, value] : headers) {
    if (util::ascii_lower(name) != "cache-control") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      // Split on ',' outside quotes.
      std::size_t end = 0;
      bool quoted = false;
      for (; end < rest.size(); ++end) {
        if (rest[end] == '"') quoted = !quoted;
        else if (rest[end] == ',' && !quoted) break;
      }
      std::string_view item = trim_ows(rest.substr(0, end));
      rest = end < rest.size() ? rest.substr(end + 1) : std::string_view{};
      const auto eq = item.find('=');
      const std::string key = util::ascii_lower(trim_ows(item.substr(0, eq)));
      const std::string_view arg = eq == std::string_view::npos ? std::string_view{} : trim_ows(item.substr(eq + 1));
      if (key == "no-store") cc.no_store = true;
      else if (key == "no-cache") cc.no_cache = true;
      else if (key == "max-age" && !seen_max_age) {
        seen_max_age = true;
        cc.max_age = parse_seconds(arg).value_or(0);  // invalid: treat as stale (RFC 9111 4.2.1)
      }
    }
  }
  return cc;
}

std::string header_or_empty(const Headers& headers, std::string_view name) {
  auto v = net::find_header(headers, name);
  return v ? std::string(*v) : std::string{};
}

bool has_header(const Headers& headers, std::string_view name) { return net::find_header(headers, name).has_value(); }

void Meta::take_headers(Headers hdrs, std::int64_t now) {
  headers = std::move(hdrs);
  std::erase_if(headers, [](const auto& h) { return util::is_credential_header(h.first); });  // Set-Cookie: not kept
  const auto cc = parse_cache_control(headers);
  max_age = cc.max_age;
  no_cache = cc.no_cache;
  etag = header_or_empty(headers, "etag");
  last_modified = header_or_empty(headers, "last-modified");
  age = parse_seconds(trim_ows(header_or_empty(headers, "age"))).value_or(0);
  stored_at = now;
}

std::string meta_to_json(const Meta& m) {
  json::array hdrs;
  for (const auto& [k, v] : m.headers) hdrs.push_back(json::array{json::string(k), json::string(v)});
  json::object o;
  o["format"] = kFormat;
  o["url"] = m.url;
  o["accept"] = m.accept;
  o["final_url"] = m.final_url;
  o["status"] = 200;
  o["content_type"] = m.content_type;
  o["etag"] = m.etag;
  o["last_modified"] = m.last_modified;
  o["max_age"] = m.max_age;
  o["no_cache"] = m.no_cache;
  o["age"] = m.age;
  o["stored_at"] = m.stored_at;
  o["sha256"] = m.sha256;
  o["size"] = m.size;
  o["headers"] = std::move(hdrs);
  return json::serialize(o) + "\n";
}

std::optional<Meta> meta_from_json(std::string_view text, std::string& why) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) {
    why = "the sidecar is not JSON (" + ec.message() + ")";
    return std::nullopt;
  }
  const auto* o = v.if_object();
  if (!o) {
    why = "the sidecar is not a JSON object";
    return std::nullopt;
  }
  Meta m;
  auto str = [&](const char* key, std::string& out) {
    const auto* f = o->if_contains(key);
    if (!f || !f->is_string()) {
      why = std::string("the sidecar's '") + key + "' is missing or not a string";
      return false;
    }
    out = std::string(f->get_string());
    return true;
  };
  auto num = [&](const char* key, std::int64_t& out) {
    const auto* f = o->if_contains(key);
    if (f && f->is_int64() && f->get_int64() >= 0) {
      out = f->get_int64();
      return true;
    }
    if (f && f->is_uint64() && f->get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      out = static_cast<std::int64_t>(f->get_uint64());
      return true;
    }
    why = std::string("the sidecar's '") + key + "' is missing or not a non-negative integer";
    return false;
  };
  std::int64_t format = 0;
  if (!num("format", format)) return std::nullopt;
  if (format != kFormat) {
    why = "the sidecar has format " + std::to_string(format) + ", not " + std::to_string(kFormat);
    return std::nullopt;
  }
  std::int64_t size = 0;
  if (!str("url", m.url) || !str("accept", m.accept) || !str("final_url", m.final_url) ||
      !str("content_type", m.content_type) || !str("etag", m.etag) || !str("last_modified", m.last_modified) ||
      !str("sha256", m.sha256) || !num("max_age", m.max_age) || !num("age", m.age) ||
      !num("stored_at", m.stored_at) || !num("size", size)) {
    return std::nullopt;
  }
  m.size = static_cast<std::uint64_t>(size);
  const auto* nc = o->if_contains("no_cache");
  if (!nc || !nc->is_bool()) {
    why = "the sidecar's 'no_cache' is missing or not a boolean";
    return std::nullopt;
  }
  m.no_cache = nc->get_bool();
  if (m.sha256.size() != 64) {
    why = "the sidecar's 'sha256' is not 64 hex digits";
    return std::nullopt;
  }
  const auto* hs = o->if_contains("headers");
  if (!hs || !hs->is_array()) {
    why = "the sidecar's 'headers' is missing or not an array";
    return std::nullopt;
  }
  for (const auto& h : hs->get_array()) {
    const auto* pair = h.if_array();
    if (!pair || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string()) {
      why = "the sidecar's 'headers' holds something other than [name, value] pairs";
      return std::nullopt;
    }
    m.headers.emplace_back(std::string((*pair)[0].get_string()), std::string((*pair)[1].get_string()));
  }
  return m;
}

Headers merge_headers(const Headers& stored, const Headers& fresh) {
  Headers out;
  for (const auto& h : stored) {
    const auto lower = util::ascii_lower(h.first);
    // The stored Age described the old response; the 304's own Age (if any) replaces it.
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "age" || has_header(fresh, h.first)) {
      continue;
    }
    out.push_back(h);
  }
  for (const auto& h : fresh) {
    const auto lower = util::ascii_lower(h.first);
    if (lower == "content-length" || lower == "transfer-encoding") continue;
    out.push_back(h);
  }
  return out;
}

/// Whether a 304 changes what a later run does, so its refreshed sidecar is worth a write: the entry
/// becomes fresh for a while (max-age > 0), or the validators changed. Under max-age=0 or no-cache
/// the new stored-at would never be read: every later run revalidates anyway.
bool worth_storing(const Meta& before, const Meta& after, std::int64_t now) {
  return after.fresh(now) || after.etag != before.etag || after.last_modified != before.last_modified;
}

}  // namespace wheelfit::transports::cache_detail
