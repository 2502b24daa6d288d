// The cache's store (cache_store.hpp): reading entries, and one writer thread for every change.
#include "cache_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <utility>

#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/secrets.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#include "wheelfit/util/win_file_id.hpp"
#endif

namespace wheelfit::transports::cache_detail {
namespace fs = std::filesystem;

Store::~Store() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  if (thread_.joinable()) thread_.join();  // the worker empties the queue before it stops
}

namespace {

// The entry's first line, the sidecar (a few hundred bytes), read from `fd` into `head` in steps up
// to its limit: where its newline is, or npos with `why`.
std::size_t read_sidecar_line(int fd, std::string& head, std::string& why) {
  std::size_t newline = std::string::npos;
  while (newline == std::string::npos && why.empty()) {
    const std::size_t old = head.size();
    if (old >= kMaxSidecar) {
      why = "the sidecar line is longer than " + std::to_string(kMaxSidecar) + " bytes";
      break;
    }
    head.resize(old + std::min<std::size_t>(16384, kMaxSidecar - old));
#ifdef _WIN32
    const auto got = util::win::pread(fd, head.data() + old, head.size() - old, old);
    if (!got || *got == 0) {
      why = !got ? "the entry cannot be read: " + got.error().message : std::string("the entry has no sidecar line");
      break;
    }
    const std::size_t n = *got;
#else
    const auto n = ::read(fd, head.data() + old, head.size() - old);
    if (n < 0 && errno == EINTR) {
      head.resize(old);
      continue;
    }
    if (n <= 0) {
      why = n < 0 ? std::string("the entry cannot be read: ") + std::strerror(errno)
                  : std::string("the entry has no sidecar line");
      break;
    }
#endif
    head.resize(old + static_cast<std::size_t>(n));
    newline = head.find('\n', old);
  }
  return newline;
}

}  // namespace

std::optional<Meta> Store::load_meta(const std::string& key, const std::string& url, const std::string& accept) const {
  // Only a regular file is read: a FIFO (or a device) under an entry's name would otherwise block
  // the open, and the resolve, forever. Anything else is a miss, and removed as corrupt.
  auto file = util::open_regular_file(entry_path(key).string(), "a cache entry");
  if (!file) {
    if (!file.error().is(Errc::not_found)) discard(key, url, "the entry cannot be read: " + file.error().message);
    return std::nullopt;
  }
  const int fd = file->fd();
#ifdef _WIN32
  const auto info = util::win::info(fd);
  const auto id = info ? util::win::file_id(fd) : Expected<util::win::FileId>(info.error());
  if (!id) {
    discard(key, url, "the entry cannot be read: " + id.error().message);
    return std::nullopt;
  }
#else
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    discard(key, url, std::string("the entry cannot be read: ") + std::strerror(errno));
    return std::nullopt;
  }
#endif
  std::string head;
  std::string why;
  const std::size_t newline = read_sidecar_line(fd, head, why);
  if (!why.empty()) {
    discard(key, url, why);
    return std::nullopt;
  }
  auto meta = meta_from_json(std::string_view(head).substr(0, newline), why);
  if (!meta) {
    discard(key, url, why);
    return std::nullopt;
  }
  if (meta->url != url || meta->accept != accept) {
    discard(key, url, "the sidecar is for another request (" + meta->url + ")");
    return std::nullopt;
  }
  meta->offset = newline + 1;
#ifdef _WIN32
  meta->file_size = info->size;
  meta->inode = id->index;
  meta->device = id->volume;
#else
  meta->file_size = static_cast<std::uint64_t>(st.st_size);
  meta->inode = st.st_ino;
  meta->device = st.st_dev;
#endif
  return meta;
}

std::optional<std::string> Store::load_body(const std::string& key, const Meta& meta, std::string buffer) const {
  std::string why;
  bool replaced = false;
  if (!read_body(entry_path(key), meta, buffer, why, replaced)) {
    // Another writer (this cache's own, or another process) renamed a new entry in since the
    // sidecar was read: not corrupt, just not the entry planned for. A miss, nothing deleted.
    if (!replaced) discard(key, meta.url, why);
    return std::nullopt;
  }
  const auto digest = sha256_hex(buffer);
  if (digest != meta.sha256) {
    discard(key, meta.url, "the body's sha256 is " + digest + ", the sidecar says " + meta.sha256);
    return std::nullopt;
  }
  return buffer;
}

void Store::drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

bool Store::read_body(const fs::path& p, const Meta& meta, std::string& buffer, std::string& why, bool& replaced) {
#ifdef _WIN32
  // Followed, as on Linux; only a regular file; shared with writers, a rename over it, a removal.
  auto opened = util::win::open(p, {.access = util::win::Access::read, .follow_links = true, .regular_only = true});
  if (!opened) {
    replaced = opened.error().is(Errc::not_found);
    why = replaced ? "the entry file is gone"
          : opened.error().is(Errc::invalid_input) ? "the entry is not a regular file"
                                                   : "the entry cannot be read: " + opened.error().message;
    return false;
  }
  const int fd = *opened;
  const auto info = util::win::info(fd);
  const auto id = info ? util::win::file_id(fd) : Expected<util::win::FileId>(info.error());
  if (!id) {
    ::close(fd);
    why = "the entry cannot be read: " + id.error().message;
    return false;
  }
  if (id->index != meta.inode || id->volume != meta.device) {
    ::close(fd);
    replaced = true;
    why = "the entry was replaced while it was read";
    return false;
  }
  const std::uint64_t file_size = info->size;
#else
  // Non-blocking, as in load_meta: the entry may have been replaced by a FIFO since. (Only a
  // regular file is read below, and on one O_NONBLOCK changes nothing.)
  const int fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    replaced = errno == ENOENT;
    why = replaced ? "the entry file is gone" : std::string("the entry cannot be read: ") + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    why = "the entry is not a regular file";
    return false;
  }
  if (st.st_ino != meta.inode || st.st_dev != meta.device) {
    ::close(fd);
    replaced = true;
    why = "the entry was replaced while it was read";
    return false;
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
#endif
  if (file_size < meta.offset || file_size - meta.offset != meta.size) {
    ::close(fd);
    why = "the body has " + std::to_string(file_size < meta.offset ? 0 : file_size - meta.offset) +
          " bytes, the sidecar says " + std::to_string(meta.size);
    return false;
  }
  buffer.resize(static_cast<std::size_t>(meta.size));
  std::size_t done = 0;
  while (done < buffer.size()) {
#ifdef _WIN32
    const auto got = util::win::pread(fd, buffer.data() + done, buffer.size() - done, meta.offset + done);
    if (!got || *got == 0) {
      why = !got ? "the body cannot be read: " + got.error().message : std::string("the entry shrank while it was read");
      ::close(fd);
      return false;
    }
    done += *got;
#else
    const auto n = ::pread(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(meta.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = n < 0 ? std::string("the body cannot be read: ") + std::strerror(errno) : "the entry shrank while it was read";
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
#endif
  }
  ::close(fd);
  return true;
}

void Store::enqueue(Job job) {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable() && !inline_) {
      try {
        thread_ = std::thread([this] { work(); });
      } catch (const std::system_error&) {
        inline_ = true;  // no thread to be had: write in the caller's time instead
      }
    }
    if (!inline_) {
      queue_.push_back(std::move(job));
      work_cv_.notify_one();
      return;
    }
  }
  run(job);
}

void Store::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to write
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    const log::ScopedSink carried(job.sink);
    try {
      run(job);
    } catch (const std::exception& e) {  // bad_alloc, filesystem_error: the entry is lost, not the run
      log::warn("cache: could not store " + job.meta.url + ": " + e.what());
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

void Store::run(Job& job) {
  switch (job.kind) {
    case Job::put:
      job.meta.sha256 = sha256_hex(job.body);
      job.meta.size = job.body.size();
      write_entry(job.key, job.meta, job.body);
      changed_ = true;
      return;
    case Job::erase: remove(job.key); return;
    case Job::touch: mark_used(job.key); return;
  }
}

void Store::remove(const std::string& key) const {
  std::error_code ec;
  fs::remove(entry_path(key), ec);
}

void Store::mark_used(const std::string& key) const {
  // The access time is the entry's "last used" for the size cap's least-recently-used order
  // (cache_housekeeping.cpp): set explicitly, since relatime and noatime mounts do not keep it.
#ifdef _WIN32
  // SetFileTime: the last-access time now, the last-write time as it was. NTFS keeps a time set
  // so even where it updates none itself (often off by default): decision 0036.
  auto fd = util::win::open(entry_path(key), {.access = util::win::Access::write, .follow_links = false});
  if (!fd) return;
  if (const auto info = util::win::info(*fd)) (void)util::win::set_times(*fd, info->modified, std::chrono::system_clock::now());
  ::close(*fd);
#else
  const struct timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  ::utimensat(AT_FDCWD, entry_path(key).c_str(), times, 0);
#endif
}

void Store::discard(const std::string& key, const std::string& url, const std::string& why) const {
  log::warn("cache: discarded the corrupt entry for " + util::redact(url) + " (" + util::redact(why) + ") in " + dir_.string());
  remove(key);
}

void Store::write_entry(const std::string& key, const Meta& meta, std::string_view body) const {
  const std::string head = meta_to_json(meta);  // one line, '\n'-terminated
  // No fsync: a cache entry needs atomicity, not durability; the sidecar's size and sha256 catch a body torn by
  // a crash, and a torn entry is refetched. An fsync per page made a cold 45-page read cost several round trips
  // of disk flushes.
  if (auto w = util::write_file_atomic(entry_path(key), {head, body}, {.durable = false, .mode = 0600}); !w) {
    log::warn("cache: could not store " + meta.url + ": " + w.error().message);
  }
}

bool Store::take_changes() {
  drain();
  return changed_.exchange(false);
}

}  // namespace wheelfit::transports::cache_detail
