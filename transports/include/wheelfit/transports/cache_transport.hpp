#pragma once
// The on-disk HTTP cache: a decorator over another transport for http(s) URLs (file:// passes
// through uncached). One entry per URL (+ the Accept header): one file under <dir>/v2/ holding a
// one-line JSON sidecar (url, status, content-type, ETag, Last-Modified, Cache-Control max-age,
// stored-at, the body's sha256 and size), a newline, then the body; written atomically (temp
// file + rename). (A v1/ beside it, from wheelfit before format 2, is not read: delete it.)
//
// - Fresh (within max-age of Cache-Control; 0 when absent, no-store never cached): served without
//   a request (Response::from_cache, Stats::cache_fresh).
// - Stale with a validator: a conditional request (If-None-Match / If-Modified-Since); a 304
//   serves the stored body (Stats::cache_revalidated) and rewrites the sidecar only when a later
//   run reads what changed (fresh for a while now, or new validators).
// - A 200 replaces the entry; a 404 removes it (and stays Errc::not_found).
// - A corrupt entry (sidecar does not parse, body size or sha256 differs) is deleted with a
//   log::warn and never served.
// - Offline mode: no request at all; a stored entry is served (stale or not); a missing one is
//   NetErrc::offline naming the URL.
// Concurrency: get_many passes the misses and revalidations to the inner get_many in one batch;
// the stored bodies are read and verified on a helper thread while that batch is on the wire.
// Changes to the directory go, in order, to one writer thread (a new entry the moment its answer
// is in, through the inner transport's answer hook): flush() waits for them, as do destruction
// and the next get_many (a batch reads what the batches before it stored). Decision 0009.
// - Housekeeping (cache_housekeeping.hpp): entries served are marked used; after a batch of
//   writes the least recently used entries beyond CacheOptions::max_size are removed, and
//   temporary files left by a killed run (their writer gone) with them.
// Thread safety: one caller at a time; two processes sharing a directory are safe (atomic
// renames; the last writer wins).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "wheelfit/net/transport.hpp"
#include "wheelfit/transports/cache_housekeeping.hpp"

namespace wheelfit::transports {

/// The options (options.hpp).
using net::CacheOptions;

/// $XDG_CACHE_HOME/wheelfit, else $HOME/.cache/wheelfit; Errc::invalid_input when neither is
/// set (or is relative).
Expected<std::filesystem::path> default_cache_dir();

/// Errc::io_error naming the directory when it cannot be created or is not writable.
Expected<std::unique_ptr<net::Transport>> make_cache_transport(std::unique_ptr<net::Transport> inner,
                                                                      CacheOptions options);

}  // namespace wheelfit::transports
