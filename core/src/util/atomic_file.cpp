#include "wheelfit/util/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::util {
namespace fs = std::filesystem;

namespace {

// ---- the temporary files in flight, for the signal handler ----
// A fixed table the handler can read without locks or allocation: a slot is free (0), being
// filled (1) or holds the path of a temporary file that may exist (2). A write finding no free
// slot is not registered: a signal then leaves its file for remove_stale_temp_files().
constexpr int kSlots = 64;
#ifdef _WIN32
using SlotChar = wchar_t;  // the \\?\ form of a long path
constexpr std::size_t kSlotChars = 1024;
#else
using SlotChar = char;
constexpr std::size_t kSlotChars = PATH_MAX;
#endif
struct Slot {
  std::atomic<int> state{0};
  std::array<SlotChar, kSlotChars> path{};
};
std::array<Slot, kSlots> g_slots;

int register_temp(const fs::path& p) noexcept {
#ifdef _WIN32
  std::wstring text;
  try {
    text = win::os_path(p);
  } catch (...) {
    return -1;
  }
#else
  const auto& text = p.native();
#endif
  if (text.size() >= kSlotChars) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path.data(), text.c_str(), (text.size() + 1) * sizeof(SlotChar));
    g_slots[i].state.store(2);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) noexcept {
  if (slot >= 0) g_slots[slot].state.store(0);
}

#ifdef _WIN32
// Ctrl-C, Ctrl-Break, the console closed: runs on a thread of its own, then the process ends.
void on_console_stop() noexcept {
  for (auto& slot : g_slots) {
    if (slot.state.load() == 2) (void)win::remove(fs::path(slot.path.data()));
  }
}

// The file a chain of links leads to (GetFinalPathNameByHandleW); the path itself when it is no
// link. A dangling link is an error here (Linux creates its target): its target cannot be resolved
// without reading the reparse data.
Expected<fs::path> follow_links(const fs::path& path) {
  auto there = win::info_of(path, false);
  if (!there || there->type != fs::file_type::symlink) return path;
  auto final = win::final_path(path);
  if (!final) return unexpected(Errc::io_error, final.error().message);
  return final;
}
#else
constexpr std::array<int, 3> kCleanupSignals = {SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, kCleanupSignals.size()> g_previous{};

void on_signal(int sig) {
  const int saved = errno;
  for (auto& slot : g_slots) {
    if (slot.state.load() == 2) ::unlink(slot.path.data());
  }
  // Then what the signal did before us (by default: end the process, as by this signal).
  for (std::size_t i = 0; i < kCleanupSignals.size(); ++i) {
    if (kCleanupSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  }
  errno = saved;
  ::raise(sig);  // delivered once this handler returns (the signal is blocked while it runs)
}

// `path` with its symbolic links followed (a chain, relative targets against the link's folder),
// up to the first name that is not a link or does not exist (a dangling link's target is created).
Expected<fs::path> follow_links(const fs::path& path) {
  fs::path at = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    std::array<char, PATH_MAX> buf{};
    const auto n = ::readlink(at.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) return unexpected(Errc::io_error, path.string() + ": cannot read the link " + at.string() + ": " + std::strerror(errno));
    const fs::path to(std::string(buf.data(), static_cast<std::size_t>(n)));
    at = to.is_absolute() ? to : at.parent_path() / to;
  }
  return unexpected(Errc::io_error, path.string() + ": too many symbolic links");
}
#endif

bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

// ---- AtomicFile ----

Expected<AtomicFile> AtomicFile::create(const fs::path& path, AtomicWriteOptions options) {
  static std::atomic<std::uint64_t> counter{0};
  AtomicFile f;
  f.path_ = path;
  f.options_ = options;
  f.target_ = path;
  if (options.through_symlinks) {
    auto followed = follow_links(path);
    if (!followed) return followed.error();
    f.target_ = std::move(*followed);
  }
  const fs::path dir = f.target_.has_parent_path() ? f.target_.parent_path() : fs::path(".");
  fs::path name(".tmp-");
  name += f.target_.filename();  // as the OS has it (UTF-16 on Windows), never through a narrow string
  name += "-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  f.temp_ = dir / name;
  f.slot_ = register_temp(f.temp_);  // before the file exists: a signal never misses it
#ifdef _WIN32
  // CREATE_NEW is O_EXCL; the new file takes its folder's ACL (there are no mode bits to keep).
  win::OpenOptions open_options;
  open_options.access = win::Access::write;
  open_options.disposition = win::Disposition::create_new;
  open_options.follow_links = false;
  open_options.regular_only = false;
  auto opened = win::open(f.temp_, open_options);
  if (!opened) {
    unregister_temp(std::exchange(f.slot_, -1));
    return unexpected(Errc::io_error, path.string() + ": cannot create a temporary file in " + dir.string() + ": " +
                                          win::reason_of(opened.error()));
  }
  f.fd_ = *opened;
#else
  f.fd_ = ::open(f.temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, options.mode);
  if (f.fd_ < 0) {
    const int e = errno;
    unregister_temp(std::exchange(f.slot_, -1));
    return unexpected(Errc::io_error, path.string() + ": cannot create a temporary file in " + dir.string() + ": " +
                                          std::strerror(e));
  }
  struct stat old {};
  if (options.keep_mode && ::stat(f.target_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    // The owner first: changing it clears set-id bits, which the mode then restores.
    struct stat now {};
    if (::fstat(f.fd_, &now) == 0 && (now.st_uid != old.st_uid || now.st_gid != old.st_gid)) {
      (void)!::fchown(f.fd_, old.st_uid, old.st_gid);  // not allowed (another user's file): ours, its mode kept
    }
    if (::fchmod(f.fd_, old.st_mode & 07777) != 0) return unexpected(f.fail("cannot keep the file's mode", errno));
  }
#endif
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      temp_(std::exchange(other.temp_, {})),
      options_(other.options_),
      fd_(std::exchange(other.fd_, -1)),
      slot_(std::exchange(other.slot_, -1)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, {});
    options_ = other.options_;
    fd_ = std::exchange(other.fd_, -1);
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
#ifdef _WIN32
  if (!temp_.empty()) (void)win::remove(temp_);
#else
  if (!temp_.empty()) ::unlink(temp_.c_str());
#endif
  temp_.clear();
  unregister_temp(std::exchange(slot_, -1));
}

Error AtomicFile::fail(const std::string& what, int err) { return fail(what, std::string(std::strerror(err))); }

Error AtomicFile::fail(const std::string& what, const std::string& reason) {
  discard();
  return Error(Errc::io_error, path_.string() + ": " + what + ": " + reason);
}

Expected<void> AtomicFile::write(std::string_view data) {
  if (fd_ < 0) return unexpected(Errc::io_error, path_.string() + ": the write already failed or was committed");
#ifdef _WIN32
  if (auto put = win::append_all(fd_, data); !put) return unexpected(fail("write failed", put.error().message));
#else
  while (!data.empty()) {
    const auto n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return unexpected(fail("write failed", errno));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
#endif
  return {};
}

Expected<void> AtomicFile::commit() {
  if (fd_ < 0) return unexpected(Errc::io_error, path_.string() + ": the write already failed or was committed");
#ifdef _WIN32
  // FlushFileBuffers is fsync; MOVEFILE_WRITE_THROUGH makes the rename durable (a folder cannot
  // be flushed on Windows).
  if (options_.durable) {
    if (auto flushed = win::flush(fd_); !flushed) return unexpected(fail("flush failed", flushed.error().message));
  }
  if (::close(std::exchange(fd_, -1)) != 0) return unexpected(fail("close failed", errno));
  if (auto moved = win::replace(temp_, target_); !moved) return unexpected(fail("rename failed", moved.error().message));
  temp_.clear();
  unregister_temp(std::exchange(slot_, -1));
  return {};
#else
  if (options_.durable && ::fsync(fd_) != 0) return unexpected(fail("fsync failed", errno));
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return unexpected(fail("close failed", errno));
  if (::rename(temp_.c_str(), target_.c_str()) != 0) return unexpected(fail("rename failed", errno));
  temp_.clear();
  unregister_temp(std::exchange(slot_, -1));
  if (options_.durable) {
    // The rename is in the folder: flush it too, or a crash may bring the old name back.
    const fs::path dir = target_.has_parent_path() ? target_.parent_path() : fs::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || ::fsync(dfd) != 0) {
      const int e = errno;
      if (dfd >= 0) ::close(dfd);
      return unexpected(Errc::io_error, path_.string() + ": written, but the fsync of its folder " + dir.string() +
                                            " failed: " + std::strerror(e));
    }
    ::close(dfd);
  }
  return {};
#endif
}

Expected<void> write_file_atomic(const fs::path& path, std::initializer_list<std::string_view> pieces,
                                 AtomicWriteOptions options) {
  auto file = AtomicFile::create(path, options);
  if (!file) return file.error();
  for (std::string_view data : pieces) {
    if (auto w = file->write(data); !w) return w;
  }
  return file->commit();
}

// ---- signals and leftovers ----

void remove_temp_files_on_signal() noexcept {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
#ifdef _WIN32
  win::on_console_stop(&on_console_stop);
#else
  for (std::size_t i = 0; i < kCleanupSignals.size(); ++i) {
    struct sigaction now {};
    if (::sigaction(kCleanupSignals[i], nullptr, &now) != 0 || now.sa_handler == SIG_IGN) continue;  // nohup's choice stays
    g_previous[i] = now;
    struct sigaction ours {};
    ours.sa_handler = &on_signal;
    ::sigemptyset(&ours.sa_mask);
    for (int s : kCleanupSignals) ::sigaddset(&ours.sa_mask, s);  // one cleanup at a time
    ::sigaction(kCleanupSignals[i], &ours, nullptr);
  }
#endif
}

std::optional<long> temp_file_writer(std::string_view name, std::optional<std::string_view> target) {
  constexpr std::string_view prefix = ".tmp-";
  if (!name.starts_with(prefix)) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  if (target) {
    if (!rest.starts_with(*target) || rest.size() <= target->size() || rest[target->size()] != '-') return std::nullopt;
  }
  // "<target>-<pid>-<n>": the last two dash-separated fields.
  const auto last = rest.rfind('-');
  const auto before = last == std::string_view::npos || last == 0 ? std::string_view::npos : rest.rfind('-', last - 1);
  if (before == std::string_view::npos || (target && before != target->size())) return target ? std::nullopt : std::optional<long>(0);
  const std::string_view pid = rest.substr(before + 1, last - before - 1), n = rest.substr(last + 1);
  if (!all_digits(pid) || !all_digits(n) || pid.size() > 9) return target ? std::nullopt : std::optional<long>(0);
  return std::stol(std::string(pid));
}

std::size_t remove_stale_temp_files(const fs::path& dir, std::optional<std::string_view> target, std::chrono::seconds min_age) {
  std::size_t removed = 0;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  const auto now = std::chrono::system_clock::now();
#ifdef _WIN32
  // No owner check: a folder's ACL decides who may remove what in it, and DeleteFileW asks it.
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto writer = temp_file_writer(name, target);
    if (!writer) continue;
    const auto there = win::info_of(it->path(), false);
    if (!there || there->type != fs::file_type::regular) continue;
    const bool old = now - there->modified > min_age;
    const bool writer_gone = *writer > 0 && *writer != ::getpid() && !win::process_running(*writer);
    if ((old || writer_gone) && win::remove(it->path())) ++removed;
  }
#else
  const uid_t me = ::geteuid();
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto writer = temp_file_writer(name, target);
    if (!writer) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me) continue;
    const auto modified = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec));
    const bool old = now - modified > min_age;
    // A writer that no longer runs will never rename its file. Our own pid: a write in flight.
    const bool writer_gone = *writer > 0 && *writer != ::getpid() && ::kill(static_cast<pid_t>(*writer), 0) != 0 && errno == ESRCH;
    if ((old || writer_gone) && ::unlink(it->path().c_str()) == 0) ++removed;
  }
#endif
  return removed;
}

}  // namespace wheelfit::util
