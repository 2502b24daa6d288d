#pragma once
// Windows only: the few file primitives wheelfit's file layer needs there, on top of Win32 (the
// POSIX calls the Linux code makes: open/O_NOFOLLOW, pread/pwrite, fstat/lstat, flock, fsync,
// rename-over, kill(pid, 0)). docs/decisions/0032-windows-files.md has the rules.
//
// Files are opened with CreateFileW and handed out as CRT descriptors (_open_osfhandle), so the
// code keeps its `int fd` interfaces (OpenFile, open_own_file) and `::close(fd)` closes the
// handle; handle(fd) gives the HANDLE back for the calls below. Every open shares read, write
// and delete (FILE_SHARE_DELETE): as on POSIX, a reader never blocks a writer, a rename over the
// file or its removal. Every path reaches the OS as UTF-16, through os_path() (the \\?\ form for
// long paths). Messages are UTF-8.
//
// Thread safety: reentrant; positional reads/writes on one descriptor may run concurrently.
#ifdef _WIN32

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util::win {

/// The text of a Win32 error code (FormatMessageW, as UTF-8, no trailing period or newline),
/// e.g. "Access is denied (error 5)".
[[nodiscard]] std::string error_text(unsigned long code);
/// error_text(GetLastError()).
[[nodiscard]] std::string last_error_text();
/// The path as UTF-8, for messages and JSON.
[[nodiscard]] std::string u8(const std::filesystem::path& path);

/// The path a UTF-8 text names (what the CLI and the config files give): native_text.hpp's
/// path_from_utf8.
[[nodiscard]] std::filesystem::path from_utf8(std::string_view text);

/// The path as handed to a W API: as it is when short (under 248 UTF-16 units, where the
/// classic MAX_PATH rules hold); when longer, made absolute and normalised, with '\' separators
/// and the "\\?\" prefix ("\\?\UNC\" for a share), so long paths work without the process
/// manifest's longPathAware and the LongPathsEnabled registry switch.
[[nodiscard]] std::wstring os_path(const std::filesystem::path& path);

enum class Access { read, write, read_write };
enum class Disposition {
  open_existing,   ///< OPEN_EXISTING
  open_or_create,  ///< OPEN_ALWAYS (never truncates)
  create_new,      ///< CREATE_NEW (fails when anything is there, like O_CREAT|O_EXCL)
};

struct OpenOptions {
  Access access = Access::read;
  Disposition disposition = Disposition::open_existing;
  /// false: FILE_FLAG_OPEN_REPARSE_POINT (like O_NOFOLLOW): a symlink or junction at the path is
  /// opened itself, and refused when regular_only.
  bool follow_links = true;
  /// Refuse what is not a regular file: a folder, a device/pipe/console, a reparse point not
  /// followed (Errc::invalid_input via refusal text; see open()).
  bool regular_only = true;
  /// Refuse a file with more than one hard link.
  bool single_link = false;
};

struct FileInfo {
  /// regular, directory, symlink (a name-surrogate reparse point: a symlink, a junction, an
  /// app-exec link), fifo (a pipe), character (a device, a console), unknown.
  std::filesystem::file_type type = std::filesystem::file_type::unknown;
  std::uint64_t size = 0;
  std::uint32_t links = 1;
  std::chrono::system_clock::time_point modified;
};

/// Why `info` is not a file wheelfit may use ("is a symlink, not a regular file", "has 2 hard
/// links ..."), or "" (the texts of read_file.hpp's not_regular_text).
[[nodiscard]] std::string why_not_regular(const FileInfo& info, bool single_link);

/// Opens `path` (CreateFileW, share read|write|delete, no handle inheritance) and returns a CRT
/// descriptor (binary) that owns the handle. Errors name the path: Errc::not_found ("<path>:
/// cannot open: <reason>" when the file or a folder on the way is missing), Errc::invalid_input ("<path>: is a symlink, not a regular file" and the like, when
/// the options refuse what is there), Errc::io_error ("<path>: cannot open: <reason>").
[[nodiscard]] Expected<int> open(const std::filesystem::path& path, const OpenOptions& options);

/// The reason in an error of open() or info_of() ("Access is denied (error 5)"), without the path
/// and the step, for callers that word their own message.
[[nodiscard]] std::string reason_of(const Error& error);

/// The HANDLE behind a CRT descriptor (INVALID_HANDLE_VALUE when none), as void*.
[[nodiscard]] void* handle(int fd) noexcept;

/// GetFileInformationByHandle (+ the reparse flag).
[[nodiscard]] Expected<FileInfo> info(int fd);
/// The entry at `path`: the link itself when !follow_links (like lstat). Errc::not_found when
/// nothing is there ("<path>: cannot read its attributes: <reason>").
[[nodiscard]] Expected<FileInfo> info_of(const std::filesystem::path& path, bool follow_links);

/// ReadFile at `offset` (an OVERLAPPED offset; does not move the descriptor's position):
/// the bytes read, 0 at the end of the file. Errors carry only the reason; callers add the path.
[[nodiscard]] Expected<std::size_t> pread(int fd, void* buf, std::size_t n, std::uint64_t offset);
/// WriteFile of all of `data` at `offset`.
[[nodiscard]] Expected<void> pwrite_all(int fd, std::string_view data, std::uint64_t offset);
/// WriteFile of all of `data` at the end of the file (the temp file of an atomic write).
[[nodiscard]] Expected<void> append_all(int fd, std::string_view data);
/// SetFileInformationByHandle(FileEndOfFileInfo): truncates or extends to `size`.
[[nodiscard]] Expected<void> truncate(int fd, std::uint64_t size);
/// FlushFileBuffers (fsync). A folder cannot be flushed on Windows: MoveFileExW's
/// MOVEFILE_WRITE_THROUGH is what makes a rename durable.
[[nodiscard]] Expected<void> flush(int fd);
/// SetFileTime: the last-write time (and the last-access time when given).
[[nodiscard]] Expected<void> set_times(int fd, std::chrono::system_clock::time_point modified,
                                       std::optional<std::chrono::system_clock::time_point> accessed = std::nullopt);

/// LockFileEx, exclusive, LOCKFILE_FAIL_IMMEDIATELY, on one byte far past the end of the file
/// (the lock is mandatory: on the content it would block others' reads): true when locked, false
/// when another handle (this or another process) holds it. The lock goes with the handle
/// (closing it or the process ending releases it), like flock. Everyone locking a file must use
/// this (the same byte).
[[nodiscard]] Expected<bool> try_lock(int fd);

/// MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH): `from` replaces `to`
/// atomically (same volume). A sharing violation or access denied (a reader without
/// FILE_SHARE_DELETE, an antivirus scanner) is retried for up to about 2 s. Errors carry the
/// reason only.
[[nodiscard]] Expected<void> replace(const std::filesystem::path& from, const std::filesystem::path& to);
/// CreateDirectoryW (one level, the parent must exist; the ACL inherited from the parent):
/// success when made or already a folder. Errors carry the reason only.
[[nodiscard]] Expected<void> create_folder(const std::filesystem::path& path);
/// DeleteFileW; true when removed (or not there).
bool remove(const std::filesystem::path& path) noexcept;

/// Where `path` leads once every link on the way is followed (GetFinalPathNameByHandleW), without
/// the \\?\ prefix when short. Errors name the path (a dangling link: Errc::not_found).
[[nodiscard]] Expected<std::filesystem::path> final_path(const std::filesystem::path& path);

/// SetConsoleCtrlHandler: on Ctrl-C, Ctrl-Break, the console's close, logoff or shutdown, calls
/// `cleanup` (on a thread of its own, as Windows does), then lets the handlers before it (by
/// default: end the process) do what they did. Windows' stand-in for SIGINT/SIGTERM/SIGHUP.
void on_console_stop(void (*cleanup)() noexcept) noexcept;

/// Whether process `pid` runs (OpenProcess + GetExitCodeProcess; a process that cannot be opened
/// for lack of rights counts as running).
[[nodiscard]] bool process_running(long pid) noexcept;

/// SHGetKnownFolderPath(FOLDERID_LocalAppData) ("C:\Users\<name>\AppData\Local"); nullopt when
/// the shell has none.
[[nodiscard]] std::optional<std::filesystem::path> local_app_data();

}  // namespace wheelfit::util::win

#endif  // _WIN32
