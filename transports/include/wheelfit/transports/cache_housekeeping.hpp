#pragma once
// Housekeeping of the on-disk HTTP cache (cache_transport.hpp): what it holds, a size cap kept by
// removing the least recently used entries, and the temporary files a killed run left behind.
// `root` is the cache root, the folder holding v2/ (`--cache-dir`; by default
// $XDG_CACHE_HOME/wheelfit/http).
//
// Only wheelfit's own files are counted or removed: v2/<key>.entry (v1/<key>.json and
// v1/<key>.body of an older wheelfit), the key a lower-case sha256 in hex, and the temporary files
// of their atomic writes (".tmp-<name>-<pid>-<n>"). Anything else under the root stays as it is.
// A root that exists but holds neither v2/ nor v1/ (`--cache-dir ~/.cache`, `--cache-dir .`) is
// refused: Errc::invalid_input naming it, nothing touched.
//
// "Used" is an entry file's access time, which the cache sets when it writes an entry and when it
// serves one (fresh, or after a 304), whatever the mount's atime options.
//
// Thread safety: safe beside a running cache, in this process or another: an entry removed while
// another reader has it open is still read whole by it (or is a miss); a temporary file is only
// removed when its writer process is gone or it is older than the age given.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "wheelfit/net/options.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::transports {

/// The size cap when none is given (options.hpp): 1 GiB.
using net::kDefaultCacheMaxSize;
/// How old a temporary file of a writer that may still run must be before it is removed.
inline constexpr std::chrono::seconds kStaleTempAge = std::chrono::hours(1);

/// What the cache holds, and what a prune or clean did (options.hpp).
using net::CacheCleanup;
using net::CacheUsage;

/// What the cache under `root` holds. A missing root holds nothing. Errc::invalid_input naming
/// the folder when it holds no wheelfit cache; Errc::io_error naming it when it cannot be read.
[[nodiscard]] Expected<CacheUsage> cache_usage(const std::filesystem::path& root);

/// Removes the least recently used entries (oldest access time first; ties by name) until the
/// entries take at most `max_bytes`, and the temporary files whose writer is gone or that are
/// older than `temp_age` (util::remove_stale_temp_files). Errc::invalid_input naming the folder
/// when it holds no wheelfit cache; Errc::io_error naming it when it cannot be read; an entry that
/// cannot be removed is left (and counted in `after`).
[[nodiscard]] Expected<CacheCleanup> prune_cache(const std::filesystem::path& root, std::uint64_t max_bytes,
                                                std::chrono::seconds temp_age = kStaleTempAge);

/// Removes wheelfit's own files under `root`: every entry and temporary file, and a v1/ of an old
/// wheelfit (its folder too, once empty); the root, v2/ and other programs' files stay.
/// Errc::invalid_input naming the folder when it holds no wheelfit cache; Errc::io_error naming
/// what could not be removed.
[[nodiscard]] Expected<CacheCleanup> clean_cache(const std::filesystem::path& root);

}  // namespace wheelfit::transports
