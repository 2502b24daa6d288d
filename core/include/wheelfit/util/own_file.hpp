#pragma once
// The files wheelfit writes in place and keeps open (a download's part, a folder's lock): opened
// without following a link, only when what is there is a regular file of one link, and locked.
//
// A folder that two runs write (`download -d DIR`, `mirror --out DIR`) is shared: without a lock
// held for the whole run, the second opens the first's part, truncates it (a server that ignores
// Range answers 200) and writes into the inode the first then renames into place. And a folder
// others may write (group-writable, shared) may hold a link planted where wheelfit writes: opened
// with O_NOFOLLOW, such a link is an error naming it, never a way to overwrite its target.
//
// Thread safety: FolderLock is move-only and owned by one run; open_own_file is reentrant.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// Opens `path` for writing (O_RDWR, plus O_CREAT with `mode` when `create`) without following a
/// symbolic link, without blocking on a FIFO, and only when it is (or becomes) a regular file with
/// one link: Errc::io_error naming `path` ("is a symbolic link", "is a FIFO, not a regular file",
/// "has 2 hard links") otherwise, or the system's error. Returns the descriptor (O_CLOEXEC,
/// blocking again); the caller closes it.
[[nodiscard]] Expected<int> open_own_file(const std::filesystem::path& path, bool create, ::mode_t mode = 0644);

/// Why the entry at `path` (not followed) is not a regular file ("is a symbolic link, not a
/// regular file"), or "" when it is one or nothing is there. For names about to be replaced by a
/// rename: a link, a FIFO or a folder there is not wheelfit's to replace.
[[nodiscard]] std::string not_regular_file(const std::filesystem::path& path);

struct FolderLockOptions {
  /// Wait while another run holds the lock (telling log::info once what it waits for); false:
  /// fail at once (Errc::usage, naming the lock and its holder).
  bool wait = true;
  /// Stop waiting then (Errc::io_error, naming the lock and its holder).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// What the holder is doing, for the messages ("writing into DIR").
  std::string purpose;
};

/// An exclusive lock (flock) on a lock file, for as long as the object lives. The file is made
/// when missing (0644), opened as open_own_file does, never removed (removing a lock file races
/// with a run about to lock it), and holds the holder's process id for the waiting run's message.
/// A process that dies releases it (the kernel drops the flock).
class FolderLock {
 public:
  [[nodiscard]] static Expected<FolderLock> take(const std::filesystem::path& lock_file, const FolderLockOptions& options);
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  FolderLock() = default;
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace wheelfit::util
