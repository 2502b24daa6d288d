// Files wheelfit writes in place (own_file.hpp): no link followed, regular files only, a lock
// held for a whole run.
#include "wheelfit/util/own_file.hpp"

#include <fcntl.h>
#ifndef _WIN32
#include <sys/file.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "wheelfit/util/log.hpp"
#include "wheelfit/util/read_file.hpp"

#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::util {
namespace fs = std::filesystem;

namespace {

#ifndef _WIN32
/// "" for a regular file of one link; else why not.
std::string why_not_own(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return not_regular_text(file_type_of(st.st_mode));
  if (st.st_nlink > 1) return "has " + std::to_string(st.st_nlink) + " hard links (another name shares its bytes)";
  return {};
}
#endif

Error refused(const fs::path& path, const std::string& why) {
  return Error(Errc::invalid_input, path.string() + ": " + why + "; wheelfit writes only its own regular files here and "
                                                            "leaves this as it is: remove it, then run again");
}

/// The holder's process id as its lock file says ("" when it says none).
std::string holder_of(int fd) {
  char buf[32] = {};
#ifdef _WIN32
  const auto got = win::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, got ? *got : 0);
#else
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
#endif
  pid.erase(std::remove_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
  return pid.empty() ? std::string("another wheelfit run") : "another wheelfit run (process " + pid + ")";
}

}  // namespace

#ifdef _WIN32
// FILE_FLAG_OPEN_REPARSE_POINT is O_NOFOLLOW: a symlink or junction is opened itself, then refused.
Expected<int> open_own_file(const fs::path& path, bool create, ::mode_t /*mode: Windows files take the folder's ACL*/) {
  win::OpenOptions options;
  options.access = win::Access::read_write;
  options.disposition = create ? win::Disposition::open_or_create : win::Disposition::open_existing;
  options.follow_links = false;
  options.regular_only = false;
  auto fd = win::open(path, options);
  if (!fd) {
    auto there = win::info_of(path, false);
    if (there && there->type != fs::file_type::regular) return refused(path, win::why_not_regular(*there, false));
    return Error(Errc::io_error, path.string() + ": cannot open: " + win::reason_of(fd.error()));
  }
  auto info = win::info(*fd);
  const std::string why = info ? win::why_not_regular(*info, true) : "cannot stat: " + info.error().message;
  if (!why.empty()) {
    ::close(*fd);
    return refused(path, why);
  }
  return fd;
}

std::string not_regular_file(const fs::path& path) {
  auto there = win::info_of(path, false);
  if (!there || there->type == fs::file_type::regular) return {};
  return win::why_not_regular(*there, false);
}
#else
Expected<int> open_own_file(const fs::path& path, bool create, ::mode_t mode) {
  const int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (create ? O_CREAT : 0);
  const int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return refused(path, why_not_own(st));
    return Error(Errc::io_error, path.string() + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::string("cannot stat: ") + std::strerror(errno);
  else why = why_not_own(st);
  if (why.empty() && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) why = std::string("cannot set it blocking: ") + std::strerror(errno);
  if (!why.empty()) {
    ::close(fd);
    return refused(path, why);
  }
  return fd;
}

std::string not_regular_file(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  return why_not_own(st);
}
#endif

Expected<FolderLock> FolderLock::take(const fs::path& lock_file, const FolderLockOptions& options) {
  auto fd = open_own_file(lock_file, true);
  if (!fd) return fd.error();
  FolderLock lock;
  lock.path_ = lock_file;
  lock.fd_ = *fd;
  auto pause = std::chrono::milliseconds(20);
  for (bool told = false;;) {
#ifdef _WIN32
    auto locked = win::try_lock(lock.fd_);
    if (!locked) return Error(Errc::io_error, lock_file.string() + ": cannot lock: " + locked.error().message);
    if (*locked) break;
#else
    if (::flock(lock.fd_, LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return Error(Errc::io_error, lock_file.string() + ": cannot lock: " + std::strerror(errno));
#endif
    const std::string holder = holder_of(lock.fd_);
    if (!options.wait) {
      return Error(Errc::usage, lock_file.string() + ": " + holder + " is " + options.purpose +
                                    " and holds this lock; wait for it to end (run without --no-wait to wait)");
    }
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
      return Error(Errc::io_error, lock_file.string() + ": gave up waiting for " + holder + ", which is " + options.purpose);
    }
    if (!told) {
      log::info("waiting for " + holder + ", which is " + options.purpose + " (it holds " + lock_file.string() +
                "; --no-wait fails at once instead)");
      told = true;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
  // Ours: the process id for a waiting run's message (best effort: the lock is what counts).
  const std::string pid = std::to_string(::getpid()) + "\n";
#ifdef _WIN32
  if (win::truncate(lock.fd_, 0)) (void)win::pwrite_all(lock.fd_, pid, 0);
#else
  if (::ftruncate(lock.fd_, 0) == 0) (void)!::pwrite(lock.fd_, pid.data(), pid.size(), 0);
#endif
  return lock;
}

FolderLock::FolderLock(FolderLock&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace wheelfit::util
