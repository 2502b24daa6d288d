#pragma once
// The cache's entries (internal to transports/cache): the sidecar (Meta) and its JSON line, the
// Cache-Control fields a private cache reads, and the small helpers the store and the decorator
// share. One entry file, `<root>/v2/<key>.entry`: the sidecar as one JSON line, '\n', the body.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/net/transport.hpp"

namespace wheelfit::transports::cache_detail {

using net::Headers;

inline constexpr int kFormat = 2;  // 2: one file per entry, the sidecar line then the body (v2/)
inline constexpr std::uintmax_t kMaxSidecar = 4u << 20;  // a sidecar is a few hundred bytes; refuse silly ones

/// Lower-case hex of SHA-256 ("" when OpenSSL fails).
std::string sha256_hex(std::string_view data);
/// Unix seconds now.
std::int64_t now_seconds();
/// HTTP's optional whitespace (RFC 9110: space and tab only) trimmed.
std::string_view trim_ows(std::string_view s);
/// A non-negative decimal number (quotes allowed), clamped at 2^40; nullopt when not all digits.
std::optional<std::int64_t> parse_seconds(std::string_view s);

/// What Cache-Control says (RFC 9111 5.2), as far as a private cache needs it.
struct CacheControl {
  bool no_store = false;
  bool no_cache = false;
  std::int64_t max_age = 0;  ///< 0 when absent or invalid (always revalidate)
};

CacheControl parse_cache_control(const Headers& headers);
std::string header_or_empty(const Headers& headers, std::string_view name);
bool has_header(const Headers& headers, std::string_view name);

/// An entry's sidecar.
struct Meta {
  std::string url;
  std::string accept;
  std::string final_url;
  std::string content_type;
  std::string etag;
  std::string last_modified;
  std::int64_t max_age = 0;
  bool no_cache = false;
  std::int64_t age = 0;        ///< the Age header when stored
  std::int64_t stored_at = 0;  ///< unix seconds
  std::string sha256;
  std::uint64_t size = 0;
  Headers headers;
  std::uint64_t offset = 0;  ///< where the body starts in the entry file (read, not stored)
  std::uint64_t file_size = 0;  ///< the entry file's size when the sidecar was read (not stored)
  std::uint64_t inode = 0;   ///< the entry file the sidecar was read from (read, not stored); on
  std::uint64_t device = 0;  ///< Windows its file index and its volume's serial number

  [[nodiscard]] bool fresh(std::int64_t now) const {
    if (no_cache || max_age <= 0 || now < stored_at) return false;
    return (now - stored_at) + age < max_age;
  }
  [[nodiscard]] bool has_validator() const { return !etag.empty() || !last_modified.empty(); }

  /// Validators and freshness from `hdrs` (a 200's headers, or the merged headers after a 304).
  void take_headers(Headers hdrs, std::int64_t now);
};

/// The sidecar as its one JSON line, '\n'-terminated.
std::string meta_to_json(const Meta& m);
/// Parses a sidecar; `why` says what is wrong on failure.
std::optional<Meta> meta_from_json(std::string_view text, std::string& why);
/// Headers of a 304 replace the stored ones of the same name (RFC 9111 4.3.4).
Headers merge_headers(const Headers& stored, const Headers& fresh);
/// Whether a 304 changes what a later run does, so its refreshed sidecar is worth a write.
bool worth_storing(const Meta& before, const Meta& after, std::int64_t now);

}  // namespace wheelfit::transports::cache_detail
