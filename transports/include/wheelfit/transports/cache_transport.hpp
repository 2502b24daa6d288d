#pragma once
// The on-disk HTTP cache: a decorator over another transport for http(s) URLs (file:// passes
// through uncached). One entry per URL (+ the Accept header) under <dir>/v1/: the body and a
// small JSON sidecar (url, status, content-type, ETag, Last-Modified, Cache-Control max-age,
// stored-at, the body's sha256 and size), both written atomically (temp file + rename).
//
// - Fresh (within max-age of Cache-Control; 0 when absent, no-store never cached): served without
//   a request (Response::from_cache, Stats::cache_fresh).
// - Stale with a validator: a conditional request (If-None-Match / If-Modified-Since); a 304
//   serves the stored body and refreshes the sidecar (Stats::cache_revalidated).
// - A 200 replaces the entry; a 404 removes it (and stays Errc::not_found).
// - A corrupt entry (sidecar does not parse, body size or sha256 differs) is deleted with a
//   log::warn and never served.
// - Offline mode: no request at all; a stored entry is served (stale or not); a missing one is
//   NetErrc::offline naming the URL.
// Concurrency: get_many passes the misses and revalidations to the inner get_many in one batch.
// Thread safety: one caller at a time; two processes sharing a directory are safe (atomic
// renames; the last writer wins).

#include <filesystem>
#include <memory>
#include <string>

#include "wheelfit/transport/transport.hpp"

namespace wheelfit::transports {

struct CacheOptions {
  std::filesystem::path dir;   ///< the cache root; default_cache_dir() when empty
  bool offline = false;
};

/// $XDG_CACHE_HOME/wheelfit, else $HOME/.cache/wheelfit; Errc::invalid_input when neither is
/// set (or is relative).
Expected<std::filesystem::path> default_cache_dir();

/// Errc::io_error naming the directory when it cannot be created or is not writable.
Expected<std::unique_ptr<transport::Transport>> make_cache_transport(std::unique_ptr<transport::Transport> inner,
                                                                      CacheOptions options);

}  // namespace wheelfit::transports
