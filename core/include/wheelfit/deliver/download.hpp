#pragma once
// Fetching wheels into a folder: concurrent, resumable, verified, atomic, idempotent.
//
// Each file goes to DIR/<filename> only once its sha256 is known to be the one expected: the
// bytes stream (net::BodySink, read straight into the part's 1 MiB blocks) into
// DIR/.<filename>.part, hashed as they arrive; once its answer is in, a thread of the run's own
// (the transport goes on receiving the others) fsyncs the part, reads its bytes on disk back and
// compares them with those received (a 64-bit checksum of each; a difference is an error naming
// the sha256 on disk), and renames it to its final name only when the digest is the one expected. The whole run holds DIR/.wheelfit.lock (lock_folder); each part is opened
// without following a link, only as a regular file of one link, and locked while written; a link,
// FIFO or folder at a final name is an error naming it, never replaced. A file at its final name
// is never written in place: only replaced by a rename. Parts of files the run does not want
// (only for names wheelfit writes: is_delivered_name; a user's .notes.part stays), and parts left
// empty (a 404) or by a failing disk, are removed. A part left by an
// earlier run continues with `Range: bytes=N-` + `If-Range` (the ETag or Last-Modified it was
// fetched with, kept in DIR/.<filename>.part.meta); a server that ignores the range (200) or
// whose file changed restarts it from zero. A file already at its final name whose digest is the
// expected one is not fetched again ("present"). A digest mismatch is an error naming both
// digests (a stale proxy cache is the usual cause) and leaves nothing under the final name.
// Transient failures are retried by the transport (its RetryPolicy), continuing where the body
// stopped. Files without a known digest are fetched, hashed and reported as unverified.
//
// Thread safety: one download() at a time per transport; the progress hook is called on the
// calling thread (what the finishing threads report waits for the calling thread's next report).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/expected.hpp"
#include "wheelfit/util/own_file.hpp"

namespace wheelfit::deliver {

/// One file to fetch.
struct Wanted {
  std::string url;                    ///< http(s), file:// or a path
  std::string filename;               ///< its name in the folder (a plain file name, checked)
  std::optional<std::string> sha256;  ///< lower-case hex; nullopt: fetched and hashed, not verified
  std::optional<std::uint64_t> size;  ///< when known: the progress total before a response says it
};

/// What became of one file.
struct Delivered {
  std::string filename, url;
  std::filesystem::path path;     ///< DIR/<filename> (when ok)
  std::uint64_t bytes = 0;        ///< its size
  std::string sha256;             ///< its digest (computed)
  enum class Status { fetched, present, failed } status = Status::failed;
  bool verified = false;          ///< the digest was compared with an expected one
  bool resumed = false;           ///< a partial file from before (an earlier run's) was continued
  bool continued = false;         ///< some answer was a 206: an earlier part, or an attempt of this run cut mid-body
  std::optional<Error> error;     ///< set when failed
};

/// A progress report, for a terminal's progress lines or a log.
struct Progress {
  enum class Kind { started, bytes, finished } kind = Kind::bytes;
  std::size_t index = 0;                ///< the file's position in the request
  std::string_view filename;            ///< its name (valid during the call)
  std::uint64_t done = 0;               ///< bytes of this file on disk so far (a resumed part counts)
  std::optional<std::uint64_t> total;   ///< its size, once known
  Delivered::Status outcome = Delivered::Status::fetched;  ///< with Kind::finished: what became of it
};
using ProgressHook = std::function<void(const Progress&)>;

struct DownloadOptions {
  std::filesystem::path dir;                   ///< created when missing
  std::uint64_t max_file = 64ull << 30;        ///< a body above this is Errc::too_large
  ProgressHook progress;                       ///< optional
  bool offline = false;                        ///< fetch nothing: a file not already present fails
  /// The caller holds DIR's lock already (lock_folder(), kept for its whole run); otherwise
  /// download() takes it for the call, waiting for another holder (every file fails with the
  /// lock's error when it cannot be taken).
  bool locked = false;
};

/// Makes DIR when missing and takes its lock, DIR/.wheelfit.lock, for as long as the object
/// lives: two runs never write one folder at once. With options.wait another run's lock is
/// waited for (a log::info line says whose); without, Errc::usage names it. Errc::io_error
/// names DIR when it cannot be made, or the lock file when it is a link or not a regular file.
Expected<util::FolderLock> lock_folder(const std::filesystem::path& dir, util::FolderLockOptions options);

/// Fetches every file (concurrently, as many at once as the transport's get_many allows); the
/// answers come back in request order. Never throws for anything the network or the disk does.
/// Errc::invalid_input (in Delivered::error) for a file name with a '/' or that is "." / "..".
std::vector<Delivered> download(net::Transport& transport, const std::vector<Wanted>& files,
                                const DownloadOptions& options);

/// Whether `filename` is a name wheelfit downloads under: a wheel's (PEP 427, model::WheelName)
/// or a package version's variants file ("{name}-{version}-variants.json", PEP 825). A run
/// removes the leftovers (.<name>.part, .<name>.part.meta, .<name>.sha256) of such names only.
bool is_delivered_name(std::string_view filename);

/// DIR/.<file>.sha256, where download() records the digest of DIR/<file> with the file's size,
/// mtime, inode and device: a later run trusts it while they are unchanged and reads the file
/// whole otherwise. Whoever removes DIR/<file> removes it too.
std::filesystem::path digest_record_path(const std::filesystem::path& file);

/// The sha256 of a file, lower-case hex (reads it in large blocks).
Expected<std::string> sha256_file(const std::filesystem::path& path);

/// Incremental sha256 (OpenSSL), lower-case hex at the end.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  [[nodiscard]] std::string hex();  ///< finishes; the object is reset for reuse
 private:
  void* ctx_;
};

}  // namespace wheelfit::deliver
