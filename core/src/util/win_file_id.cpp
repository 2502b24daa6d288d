// A file's identity and last-access time on Windows (win_file_id.hpp). Compiled only on Windows.
#ifdef _WIN32
#include "wheelfit/util/win_file_id.hpp"

#include <windows.h>

#include "wheelfit/util/win_file.hpp"

namespace wheelfit::util::win {

namespace {

FileId id_of(const BY_HANDLE_FILE_INFORMATION& bhfi) {
  return FileId{bhfi.dwVolumeSerialNumber, (std::uint64_t(bhfi.nFileIndexHigh) << 32) | bhfi.nFileIndexLow};
}

/// FILETIME (100 ns steps since 1601) as a system_clock time (since 1970).
std::chrono::system_clock::time_point time_of(const FILETIME& ft) {
  using Ticks = std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>;
  const auto since_1601 = Ticks(static_cast<std::int64_t>((std::uint64_t(ft.dwHighDateTime) << 32) | ft.dwLowDateTime));
  constexpr Ticks k1601To1970(116444736000000000LL);
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(since_1601 - k1601To1970));
}

}  // namespace

Expected<FileId> file_id(int fd) {
  BY_HANDLE_FILE_INFORMATION bhfi{};
  if (!::GetFileInformationByHandle(static_cast<HANDLE>(handle(fd)), &bhfi)) {
    return Error(Errc::io_error, "cannot read its identity: " + last_error_text());
  }
  return id_of(bhfi);
}

Expected<FileStamp> file_stamp(const std::filesystem::path& path) {
  // Attributes only: opens what others hold open, a folder, or a reparse point itself.
  const HANDLE h = ::CreateFileW(os_path(path).c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                                 nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    const DWORD e = ::GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return Error(Errc::not_found, u8(path) + ": no such file or folder");
    return Error(Errc::io_error, u8(path) + ": cannot read its attributes: " + error_text(e));
  }
  BY_HANDLE_FILE_INFORMATION bhfi{};
  const bool ok = ::GetFileInformationByHandle(h, &bhfi);
  const DWORD e = ::GetLastError();
  ::CloseHandle(h);
  if (!ok) return Error(Errc::io_error, u8(path) + ": cannot read its attributes: " + error_text(e));
  return FileStamp{id_of(bhfi), time_of(bhfi.ftLastAccessTime), (std::uint64_t(bhfi.nFileSizeHigh) << 32) | bhfi.nFileSizeLow,
                   (bhfi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0, (bhfi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0};
}

}  // namespace wheelfit::util::win
#endif  // _WIN32
