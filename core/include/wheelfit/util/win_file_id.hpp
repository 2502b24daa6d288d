#pragma once
// Windows only: what identifies a file and when it was last used, beside win_file.hpp's
// primitives. A file's identity is its volume's serial number and its file index
// (GetFileInformationByHandle): what a stat's device and inode are on Linux, for the checks that
// a file is still the one read before (a download's part before its rename, a digest record, a
// cache entry read in two steps). The last-access time is the cache's "last used" for its
// least-recently-used order: NTFS keeps a time set with SetFileTime even where its automatic
// updates are off (the default), so the cache sets it itself, as on Linux (decision 0036).
//
// Thread safety: reentrant.
#ifdef _WIN32

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util::win {

struct FileId {
  std::uint64_t volume = 0;  ///< the volume's serial number (a stat's st_dev)
  std::uint64_t index = 0;   ///< the file's index on it (a stat's st_ino)
  bool operator==(const FileId&) const = default;
};

/// What the entry at `path` (not followed: a reparse point is itself) is and when it was last
/// used, read through one handle that asks for attributes only: the identity, the last-access
/// time, the size, and whether it is a folder or a reparse point (a symlink, a junction).
struct FileStamp {
  FileId id;
  std::chrono::system_clock::time_point accessed;
  std::uint64_t size = 0;
  bool directory = false;
  bool reparse_point = false;
};

/// The identity of the file behind a CRT descriptor (win_file.hpp's open()). Errors carry the
/// reason only; callers add the path.
[[nodiscard]] Expected<FileId> file_id(int fd);

/// The stamp of the entry at `path`, not followed. Errc::not_found when nothing is there;
/// Errc::io_error naming the path otherwise. (Under wine, win_file.hpp's info_of() moves a file's
/// last-access time to now on a relatime mount; this does not: the cache's scans use it.)
[[nodiscard]] Expected<FileStamp> file_stamp(const std::filesystem::path& path);

}  // namespace wheelfit::util::win

#endif  // _WIN32
