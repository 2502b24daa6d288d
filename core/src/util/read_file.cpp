#include "wheelfit/util/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::util {

namespace {
// "a policy file" -> "policy file"
std::string_view noun(std::string_view what) {
  if (what.starts_with("a ")) what.remove_prefix(2);
  else if (what.starts_with("an ")) what.remove_prefix(3);
  return what;
}

std::string limit_text(std::uintmax_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}


// The error for a path that is there but is not a regular file.
Error not_regular(const std::string& path, std::filesystem::file_type type, std::string_view what) {
  if (type == std::filesystem::file_type::directory) {
    return Error(Errc::io_error, path + ": is a directory, not " + std::string(what));
  }
  return Error(Errc::io_error, path + ": " + not_regular_text(type));
}
}  // namespace

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

OpenFile::OpenFile(OpenFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

OpenFile& OpenFile::operator=(OpenFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

std::filesystem::file_type file_type_of(mode_t mode) {
  using std::filesystem::file_type;
  if (S_ISREG(mode)) return file_type::regular;
  if (S_ISDIR(mode)) return file_type::directory;
  if (S_ISFIFO(mode)) return file_type::fifo;
  if (S_ISCHR(mode)) return file_type::character;
  if (S_ISBLK(mode)) return file_type::block;
#ifdef S_ISSOCK
  if (S_ISSOCK(mode)) return file_type::socket;
#endif
#ifdef S_ISLNK
  if (S_ISLNK(mode)) return file_type::symlink;
#endif
  return file_type::unknown;
}

std::string not_regular_text(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  const char* kind = nullptr;
  switch (type) {
    case file_type::directory: kind = "a directory"; break;
    case file_type::fifo: kind = "a FIFO"; break;
    case file_type::character: kind = "a character device"; break;
    case file_type::block: kind = "a block device"; break;
    case file_type::socket: kind = "a socket"; break;
    case file_type::symlink: kind = "a symlink"; break;
    default: return "is not a regular file";
  }
  return std::string("is ") + kind + ", not a regular file";
}

#ifdef _WIN32
Expected<OpenFile> open_regular_file(const std::string& path, std::string_view what) {
  // Links followed, as on Linux; a pipe, a device (NUL, CON) or a folder is named, never read.
  win::OpenOptions options;
  options.regular_only = false;
  auto fd = win::open(win::from_utf8(path), options);
  if (!fd) {
    if (fd.error().is(Errc::not_found)) return unexpected(Errc::not_found, path + ": no such " + std::string(noun(what)));
    return unexpected(Errc::io_error, path + ": cannot open for reading: " + win::reason_of(fd.error()));
  }
  OpenFile file(*fd);
  auto info = win::info(file.fd());
  if (!info) return unexpected(Errc::io_error, path + ": cannot open for reading: " + info.error().message);
  if (info->type != std::filesystem::file_type::regular) return not_regular(path, info->type, what);
  return file;
}
#else
Expected<OpenFile> open_regular_file(const std::string& path, std::string_view what) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever.
  OpenFile file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (file.fd() < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return unexpected(Errc::not_found, path + ": no such " + std::string(noun(what)));
    // A socket cannot be opened at all (ENXIO): say what it is rather than the errno's words.
    if (struct stat st {}; ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular(path, file_type_of(st.st_mode), what);
    return unexpected(Errc::io_error, path + ": cannot open for reading: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) return unexpected(Errc::io_error, path + ": cannot open for reading: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return not_regular(path, file_type_of(st.st_mode), what);
  const int flags = ::fcntl(file.fd(), F_GETFL);
  if (flags < 0 || ::fcntl(file.fd(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return unexpected(Errc::io_error, path + ": cannot open for reading: " + std::strerror(errno));
  }
  return file;
}

#endif

Expected<std::string> read_file(const std::string& path, std::uintmax_t max_bytes, std::string_view what) {
  auto file = open_regular_file(path, what);
  if (!file) return file.error();
  std::string text;
  char buf[64 * 1024];
  for (;;) {
#ifdef _WIN32
    auto got = win::pread(file->fd(), buf, sizeof buf, text.size());
    if (!got) return unexpected(Errc::io_error, path + ": read failed: " + got.error().message);
    const std::size_t n = *got;
#else
    const ssize_t n = ::read(file->fd(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unexpected(Errc::io_error, path + ": read failed: " + std::strerror(errno));
#endif
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      return unexpected(Errc::too_large, path + ": over the " + limit_text(max_bytes) + " limit for " + std::string(what));
    }
  }
  return text;
}

}  // namespace wheelfit::util
