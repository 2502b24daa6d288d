// Windows file primitives (win_file.hpp): CreateFileW behind CRT descriptors, positional I/O with
// OVERLAPPED offsets, LockFileEx, FlushFileBuffers, MoveFileExW. Compiled only on Windows.
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"

#include <fcntl.h>
#include <io.h>
#include <windows.h>
#include <shlobj.h>

#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/read_file.hpp"

namespace wheelfit::util::win {
namespace fs = std::filesystem;

namespace {

// 100 ns intervals between 1601-01-01 (FILETIME) and 1970-01-01 (system_clock's epoch on MinGW).
constexpr std::uint64_t kEpochDelta = 116444736000000000ULL;

std::chrono::system_clock::time_point from_filetime(const FILETIME& ft) {
  const std::uint64_t t = (std::uint64_t(ft.dwHighDateTime) << 32) | ft.dwLowDateTime;
  const auto since = std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>(std::int64_t(t) - std::int64_t(kEpochDelta));
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(since));
}

FILETIME to_filetime(std::chrono::system_clock::time_point tp) {
  const auto ticks = std::chrono::duration_cast<std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>>(tp.time_since_epoch()).count();
  const std::uint64_t t = std::uint64_t(ticks) + kEpochDelta;
  return FILETIME{static_cast<DWORD>(t & 0xffffffffu), static_cast<DWORD>(t >> 32)};
}

// A reparse point that stands for another name (a symlink, a junction, an app-exec link) is a
// link; other reparse points (deduplicated files, cloud placeholders) are what they hold.
bool is_link(HANDLE h, DWORD attributes) {
  if (!(attributes & FILE_ATTRIBUTE_REPARSE_POINT)) return false;
  FILE_ATTRIBUTE_TAG_INFO tag{};
  if (!::GetFileInformationByHandleEx(h, FileAttributeTagInfo, &tag, sizeof tag)) return true;  // cannot tell: a link
  return IsReparseTagNameSurrogate(tag.ReparseTag);
}

fs::file_type type_of(HANDLE h, DWORD attributes) {
  const DWORD file_type = ::GetFileType(h);
  if (file_type == FILE_TYPE_PIPE) return fs::file_type::fifo;
  if (file_type == FILE_TYPE_CHAR) return fs::file_type::character;
  if (is_link(h, attributes)) return fs::file_type::symlink;
  if (attributes & FILE_ATTRIBUTE_DIRECTORY) return fs::file_type::directory;
  return fs::file_type::regular;
}

Error io(const std::string& what) { return Error(Errc::io_error, what); }

}  // namespace

std::string error_text(unsigned long code) {
  wchar_t* buf = nullptr;
  const DWORD n = ::FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                                   nullptr, code, 0, reinterpret_cast<wchar_t*>(&buf), 0, nullptr);
  std::wstring text(buf ? buf : L"", n);
  if (buf) ::LocalFree(buf);
  while (!text.empty() && (text.back() == L'\n' || text.back() == L'\r' || text.back() == L'.' || text.back() == L' ')) text.pop_back();
  if (text.empty()) text = L"system error";
  return u8(fs::path(text)) + " (error " + std::to_string(code) + ")";
}

std::string last_error_text() { return error_text(::GetLastError()); }

std::string u8(const fs::path& path) {
  const auto s = path.u8string();
  return std::string(s.begin(), s.end());
}

fs::path from_utf8(std::string_view text) { return path_from_utf8(text); }

std::wstring os_path(const fs::path& path) {
  const std::wstring& native = path.native();
  if (native.size() < 248 || native.starts_with(LR"(\\?\)")) return native;
  std::error_code ec;
  fs::path full = fs::absolute(path, ec);
  if (ec) return native;
  std::wstring w = full.lexically_normal().make_preferred().native();
  if (w.starts_with(LR"(\\?\)")) return w;
  if (w.starts_with(LR"(\\)")) return LR"(\\?\UNC\)" + w.substr(2);
  return LR"(\\?\)" + w;
}

std::string why_not_regular(const FileInfo& info, bool single_link) {
  if (info.type != fs::file_type::regular) return not_regular_text(info.type);
  if (single_link && info.links > 1) return "has " + std::to_string(info.links) + " hard links (another name shares its bytes)";
  return {};
}

std::string reason_of(const Error& error) {
  for (std::string_view step : {": cannot open: ", ": cannot read its attributes: "}) {
    if (const auto at = error.message.rfind(step); at != std::string::npos) return error.message.substr(at + step.size());
  }
  return error.message;
}

void* handle(int fd) noexcept { return reinterpret_cast<void*>(::_get_osfhandle(fd)); }

Expected<FileInfo> info(int fd) {
  const HANDLE h = handle(fd);
  BY_HANDLE_FILE_INFORMATION bhfi{};
  if (h == INVALID_HANDLE_VALUE || !::GetFileInformationByHandle(h, &bhfi)) {
    // A console or a pipe has no such information: say what it is.
    const DWORD ft = h == INVALID_HANDLE_VALUE ? FILE_TYPE_UNKNOWN : ::GetFileType(h);
    if (ft == FILE_TYPE_PIPE) return FileInfo{fs::file_type::fifo, 0, 1, {}};
    if (ft == FILE_TYPE_CHAR) return FileInfo{fs::file_type::character, 0, 1, {}};
    return io("cannot read its attributes: " + last_error_text());
  }
  FileInfo out;
  out.type = type_of(h, bhfi.dwFileAttributes);
  out.size = (std::uint64_t(bhfi.nFileSizeHigh) << 32) | bhfi.nFileSizeLow;
  out.links = bhfi.nNumberOfLinks;
  out.modified = from_filetime(bhfi.ftLastWriteTime);
  return out;
}

Expected<FileInfo> info_of(const fs::path& path, bool follow_links) {
  const std::wstring p = os_path(path);
  // No access rights asked (attributes only): works on folders and files others hold open.
  const DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | (follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
  const HANDLE h = ::CreateFileW(p.c_str(), FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                 OPEN_EXISTING, flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    const DWORD e = ::GetLastError();
    const bool missing = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND || e == ERROR_INVALID_NAME;
    return Error(missing ? Errc::not_found : Errc::io_error, u8(path) + ": cannot read its attributes: " + error_text(e));
  }
  const int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(h), _O_RDONLY | _O_BINARY);
  if (fd < 0) {
    ::CloseHandle(h);
    return io(u8(path) + ": cannot read its attributes: out of descriptors");
  }
  auto got = info(fd);
  ::_close(fd);
  if (!got) return got.error().with_context(u8(path));
  return got;
}

Expected<int> open(const fs::path& path, const OpenOptions& options) {
  const std::wstring p = os_path(path);
  DWORD access = 0;
  switch (options.access) {
    case Access::read: access = GENERIC_READ; break;
    case Access::write: access = GENERIC_WRITE; break;
    case Access::read_write: access = GENERIC_READ | GENERIC_WRITE; break;
  }
  DWORD disposition = OPEN_EXISTING;
  if (options.disposition == Disposition::open_or_create) disposition = OPEN_ALWAYS;
  if (options.disposition == Disposition::create_new) disposition = CREATE_NEW;
  // BACKUP_SEMANTICS lets a folder open, so that it is refused by name rather than by "access denied".
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS | (options.follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
  const HANDLE h = ::CreateFileW(p.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, disposition,
                                 flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    const DWORD e = ::GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return Error(Errc::not_found, u8(path) + ": cannot open: " + error_text(e));
    if (options.regular_only) {
      // A folder opened for writing, say: name what is there.
      if (auto there = info_of(path, options.follow_links); there && there->type != fs::file_type::regular) {
        return Error(Errc::invalid_input, u8(path) + ": " + why_not_regular(*there, false));
      }
    }
    return io(u8(path) + ": cannot open: " + error_text(e));
  }
  int flags_crt = _O_BINARY | _O_NOINHERIT;
  flags_crt |= options.access == Access::read ? _O_RDONLY : (options.access == Access::write ? _O_WRONLY : _O_RDWR);
  const int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(h), flags_crt);
  if (fd < 0) {
    ::CloseHandle(h);
    return io(u8(path) + ": cannot open: out of descriptors");
  }
  if (options.regular_only || options.single_link) {
    auto got = info(fd);
    std::string why = got ? why_not_regular(*got, options.single_link) : got.error().message;
    if (got && !options.regular_only && got->type != fs::file_type::regular) why.clear();
    if (!why.empty()) {
      ::_close(fd);
      return Error(got ? Errc::invalid_input : Errc::io_error, u8(path) + ": " + why);
    }
  }
  return fd;
}

Expected<std::size_t> pread(int fd, void* buf, std::size_t n, std::uint64_t offset) {
  OVERLAPPED ov{};
  ov.Offset = static_cast<DWORD>(offset & 0xffffffffu);
  ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD got = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(n, 1u << 30));
  if (!::ReadFile(handle(fd), buf, want, &got, &ov)) {
    const DWORD e = ::GetLastError();
    if (e == ERROR_HANDLE_EOF) return std::size_t{0};
    return io(error_text(e));
  }
  return static_cast<std::size_t>(got);
}

Expected<void> pwrite_all(int fd, std::string_view data, std::uint64_t offset) {
  while (!data.empty()) {
    OVERLAPPED ov{};
    ov.Offset = static_cast<DWORD>(offset & 0xffffffffu);
    ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
    DWORD put = 0;
    const DWORD want = static_cast<DWORD>(std::min<std::size_t>(data.size(), 1u << 30));
    if (!::WriteFile(handle(fd), data.data(), want, &put, &ov)) return io(last_error_text());
    if (put == 0) return io("wrote nothing");
    data.remove_prefix(put);
    offset += put;
  }
  return {};
}

Expected<void> append_all(int fd, std::string_view data) {
  while (!data.empty()) {
    // Offset 0xFFFFFFFF:FFFFFFFF writes at the end of the file.
    OVERLAPPED ov{};
    ov.Offset = 0xffffffffu;
    ov.OffsetHigh = 0xffffffffu;
    DWORD put = 0;
    const DWORD want = static_cast<DWORD>(std::min<std::size_t>(data.size(), 1u << 30));
    if (!::WriteFile(handle(fd), data.data(), want, &put, &ov)) return io(last_error_text());
    if (put == 0) return io("wrote nothing");
    data.remove_prefix(put);
  }
  return {};
}

Expected<void> truncate(int fd, std::uint64_t size) {
  FILE_END_OF_FILE_INFO eof{};
  eof.EndOfFile.QuadPart = static_cast<LONGLONG>(size);
  if (!::SetFileInformationByHandle(handle(fd), FileEndOfFileInfo, &eof, sizeof eof)) return io(last_error_text());
  return {};
}

Expected<void> flush(int fd) {
  if (!::FlushFileBuffers(handle(fd))) return io(last_error_text());
  return {};
}

Expected<void> set_times(int fd, std::chrono::system_clock::time_point modified,
                         std::optional<std::chrono::system_clock::time_point> accessed) {
  const FILETIME m = to_filetime(modified);
  FILETIME a{};
  if (accessed) a = to_filetime(*accessed);
  if (!::SetFileTime(handle(fd), nullptr, accessed ? &a : nullptr, &m)) return io(last_error_text());
  return {};
}

Expected<bool> try_lock(int fd) {
  // One byte far past any content: Windows byte-range locks are mandatory, and a lock on the
  // content would keep everyone else from reading it (the holder's process id in a lock file).
  OVERLAPPED ov{};
  ov.Offset = 0;
  ov.OffsetHigh = 0x7fffffffu;
  if (::LockFileEx(handle(fd), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) return true;
  const DWORD e = ::GetLastError();
  if (e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING) return false;
  return io(error_text(e));
}

namespace {
// \\?\<absolute path>, whatever its length (what FILE_RENAME_INFO wants).
std::wstring verbatim(const fs::path& path) {
  std::wstring w = os_path(path);
  if (w.starts_with(LR"(\\?\)")) return w;
  std::error_code ec;
  w = fs::absolute(path, ec).lexically_normal().make_preferred().native();
  if (w.starts_with(LR"(\\)")) return LR"(\\?\UNC\)" + w.substr(2);
  return LR"(\\?\)" + w;
}

// The rename with POSIX semantics (Windows 10 1809 and later, NTFS): it replaces a target that
// readers hold open (with FILE_SHARE_DELETE); they go on reading the old bytes, as on Linux.
bool posix_replace(const std::wstring& from, const fs::path& to) {
  const HANDLE h = ::CreateFileW(from.c_str(), DELETE | SYNCHRONIZE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                 OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) return false;
  const std::wstring target = verbatim(to);
  const std::size_t size = offsetof(FILE_RENAME_INFO, FileName) + (target.size() + 1) * sizeof(wchar_t);
  std::vector<unsigned char> buf(size, 0);
  auto* info = reinterpret_cast<FILE_RENAME_INFO*>(buf.data());
  info->Flags = FILE_RENAME_FLAG_REPLACE_IF_EXISTS | FILE_RENAME_FLAG_POSIX_SEMANTICS;
  info->RootDirectory = nullptr;
  info->FileNameLength = static_cast<DWORD>(target.size() * sizeof(wchar_t));
  std::memcpy(info->FileName, target.c_str(), (target.size() + 1) * sizeof(wchar_t));
  // FileRenameInfoEx (22): MinGW declares it only for _WIN32_WINNT above Windows 10's first release.
  const auto rename_info_ex = static_cast<FILE_INFO_BY_HANDLE_CLASS>(22);
  const bool ok = ::SetFileInformationByHandle(h, rename_info_ex, info, static_cast<DWORD>(size));
  const DWORD e = ::GetLastError();
  ::CloseHandle(h);
  ::SetLastError(e);
  return ok;
}
}  // namespace

Expected<void> replace(const fs::path& from, const fs::path& to) {
  const std::wstring f = os_path(from), t = os_path(to);
  for (int attempt = 0;; ++attempt) {
    if (::MoveFileExW(f.c_str(), t.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return {};
    const DWORD e = ::GetLastError();
    if (e != ERROR_SHARING_VIOLATION && e != ERROR_ACCESS_DENIED && e != ERROR_LOCK_VIOLATION) return io(error_text(e));
    const DWORD a = ::GetFileAttributesW(t.c_str());
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) return io(error_text(e));  // never a folder
    // A read-only target: on Linux the folder, not the file, decides whether it may be replaced.
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_READONLY) && attempt == 0 &&
        ::SetFileAttributesW(t.c_str(), a & ~DWORD{FILE_ATTRIBUTE_READONLY})) {
      continue;
    }
    // The target is open somewhere (a reader, a scanner): POSIX semantics replace it anyway where
    // the system has them; else wait for the holder, a while.
    if (posix_replace(f, to)) return {};
    if (attempt >= 40) return io(error_text(e));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Expected<void> create_folder(const fs::path& path) {
  const std::wstring p = os_path(path);
  if (::CreateDirectoryW(p.c_str(), nullptr)) return {};
  const DWORD e = ::GetLastError();
  if (e == ERROR_ALREADY_EXISTS) {
    if (auto there = info_of(path, true); there && there->type == fs::file_type::directory) return {};
  }
  return io(error_text(e));
}

bool remove(const fs::path& path) noexcept {
  const std::wstring p = os_path(path);
  if (::DeleteFileW(p.c_str())) return true;
  const DWORD e = ::GetLastError();
  return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;
}

Expected<fs::path> final_path(const fs::path& path) {
  const std::wstring p = os_path(path);
  const HANDLE h = ::CreateFileW(p.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                                 FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    const DWORD e = ::GetLastError();
    const bool missing = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;
    return Error(missing ? Errc::not_found : Errc::io_error, u8(path) + ": cannot follow its links: " + error_text(e));
  }
  std::wstring buf(1024, L'\0');
  DWORD n = ::GetFinalPathNameByHandleW(h, buf.data(), static_cast<DWORD>(buf.size()), FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  if (n >= buf.size()) {
    buf.resize(n + 1);
    n = ::GetFinalPathNameByHandleW(h, buf.data(), static_cast<DWORD>(buf.size()), FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  }
  const DWORD e = ::GetLastError();
  ::CloseHandle(h);
  if (n == 0 || n >= buf.size()) return io(u8(path) + ": cannot follow its links: " + error_text(e));
  buf.resize(n);
  if (buf.starts_with(LR"(\\?\UNC\)")) buf = LR"(\\)" + buf.substr(8);
  else if (buf.starts_with(LR"(\\?\)") && buf.size() < 4 + 248) buf = buf.substr(4);
  return fs::path(buf);
}

namespace {
void (*g_console_cleanup)() noexcept = nullptr;

BOOL WINAPI on_console_event(DWORD) {
  if (auto* cleanup = g_console_cleanup) cleanup();
  return FALSE;  // not handled: the next handler runs (the default one ends the process)
}
}  // namespace

void on_console_stop(void (*cleanup)() noexcept) noexcept {
  g_console_cleanup = cleanup;
  ::SetConsoleCtrlHandler(&on_console_event, TRUE);
}

bool process_running(long pid) noexcept {
  if (pid <= 0) return false;
  const HANDLE h = ::OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (!h) return ::GetLastError() == ERROR_ACCESS_DENIED;  // there, but not ours to look at
  // Signalled once it has ended (an exit code could be STILL_ACTIVE's 259 by chance).
  const bool running = ::WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
  ::CloseHandle(h);
  return running;
}

std::optional<fs::path> local_app_data() {
  wchar_t* p = nullptr;
  std::optional<fs::path> out;
  if (SUCCEEDED(::SHGetKnownFolderPath(FOLDERID_LocalAppData, KF_FLAG_DEFAULT, nullptr, &p)) && p && *p) out = fs::path(p);
  if (p) ::CoTaskMemFree(p);
  return out;
}

}  // namespace wheelfit::util::win
#endif  // _WIN32
