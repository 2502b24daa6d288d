#pragma once
// Writing a file whole or not at all: a temporary file in the target's folder, renamed over it.
// The temporary files of writes in flight are registered, so that a SIGINT / SIGTERM / SIGHUP
// handler (remove_temp_files_on_signal(), installed by the executable) removes them before the
// process dies; what a SIGKILL leaves behind, remove_stale_temp_files() removes on a later run.
//
// Thread safety: reentrant; writes to different targets may run concurrently.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

struct AtomicWriteOptions {
  /// fsync the file before the rename and its folder after it, so that the new content and its
  /// name survive a crash (two disk flushes).
  bool durable = true;
  /// The mode a new file is created with, before the umask.
  ::mode_t mode = 0644;
  /// An existing file keeps its permission bits (and its owner and group, where this process
  /// may set them) instead of `mode`.
  bool keep_mode = false;
  /// A symbolic link at the path is written through: the file it leads to (following a chain of
  /// links, at most 40) is replaced and the link stays a link. Otherwise the link is replaced.
  bool through_symlinks = false;
};

/// One atomic write in progress: create() makes the temporary file (".tmp-<name>-<pid>-<n>",
/// unique in this process) beside the target, write() appends, commit() renames it over the
/// target. Destroyed uncommitted, it removes the temporary file and leaves the target as it was.
/// Move-only.
class AtomicFile {
 public:
  /// Errc::io_error naming `path` when the temporary file cannot be created (or, with
  /// through_symlinks, a link cannot be read).
  [[nodiscard]] static Expected<AtomicFile> create(const std::filesystem::path& path, AtomicWriteOptions options = {});
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Appends `data`. On failure the temporary file is removed and every later call fails.
  [[nodiscard]] Expected<void> write(std::string_view data);
  /// fsync (durable), close, rename over the target, fsync the folder (durable). Errc::io_error
  /// names the target, the step that failed and the system error; the target is untouched
  /// unless the folder's fsync failed (the rename had happened).
  [[nodiscard]] Expected<void> commit();
  /// The file that is replaced (the link's target with through_symlinks).
  [[nodiscard]] const std::filesystem::path& target() const noexcept { return target_; }
  /// The temporary file ("" once committed or failed).
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return temp_; }

 private:
  AtomicFile() = default;
  Error fail(const std::string& what, int err);
  Error fail(const std::string& what, const std::string& reason);
  void discard() noexcept;
  std::filesystem::path path_, target_, temp_;
  AtomicWriteOptions options_;
  int fd_ = -1;
  int slot_ = -1;  ///< its place in the registry of temporary files in flight
};

/// Writes `pieces` one after another to a new temporary file in `path`'s folder, then renames it
/// over `path` (AtomicFile): readers see the old file or the new one, never a mix. On any failure
/// the temporary file is removed, `path` is untouched, and the Errc::io_error names `path`, the
/// step that failed and the system error.
Expected<void> write_file_atomic(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces,
                                 AtomicWriteOptions options = {});

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files of the atomic
/// writes in flight, then let the signal do what it did before (a signal this process ignores
/// stays ignored). For executables; a library never installs it. Idempotent.
void remove_temp_files_on_signal() noexcept;

/// Whether `name` is a temporary file name of write_file_atomic's (".tmp-<target>-<pid>-<n>"), for
/// `target` when given; its writer's process id when so (0 when the name carries none).
[[nodiscard]] std::optional<long> temp_file_writer(std::string_view name, std::optional<std::string_view> target = std::nullopt);

/// Removes from `dir` the temporary files atomic writes left behind (a process killed by SIGKILL,
/// a crash): names ".tmp-..." (".tmp-<target>-<pid>-<n>" only, when `target` is given), owned by
/// this user, whose writer process no longer runs, or older than `min_age` whatever their name
/// says (a writer on another machine sharing the folder, a reused pid). A write in flight is
/// younger than `min_age` and its process runs: it is left alone. Returns how many were removed;
/// never fails (what cannot be removed stays).
std::size_t remove_stale_temp_files(const std::filesystem::path& dir, std::optional<std::string_view> target = std::nullopt,
                                    std::chrono::seconds min_age = std::chrono::hours(1));

}  // namespace wheelfit::util
