// The BodySink of one file (part_sink.hpp): the part file, its hash, its validator, progress.
#include "part_sink.hpp"

#include <fcntl.h>
#ifndef _WIN32
#include <sys/file.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <algorithm>
#include <vector>

#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/own_file.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#include "wheelfit/util/win_file_id.hpp"
#endif

namespace wheelfit::deliver::detail {

namespace {

constexpr std::size_t kWriteBlock = 1u << 20;
constexpr std::size_t kMaxQueued = 4;  ///< blocks waiting for the writer, per file
/// Writeback is asked for in runs of this many bytes: the fsync before the rename then waits for
/// the last few MiB instead of the whole file (no effect on a tmpfs).
constexpr std::uint64_t kWritebackRun = 8u << 20;

std::optional<std::uint64_t> to_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

/// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*"): FIRST and TOTAL (when given).
struct ContentRange {
  std::uint64_t first = 0;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view v) {
  if (!v.starts_with("bytes ")) return std::nullopt;
  v.remove_prefix(6);
  const auto dash = v.find('-');
  const auto slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  ContentRange r;
  const auto first = to_u64(v.substr(0, dash));
  if (!first || !to_u64(v.substr(dash + 1, slash - dash - 1))) return std::nullopt;
  r.first = *first;
  if (v.substr(slash + 1) != "*") {
    r.total = to_u64(v.substr(slash + 1));
    if (!r.total) return std::nullopt;
  }
  return r;
}

/// The validator kept beside a part ("" when none, or when what is there is not a small regular
/// file: a link or a FIFO planted there is neither followed nor read).
std::string read_validator(const std::filesystem::path& meta) {
  auto fd = util::open_own_file(meta, false);
  if (!fd) return {};
  char buf[1024];
#ifdef _WIN32
  const auto got = util::win::pread(*fd, buf, sizeof buf, 0);
  const std::ptrdiff_t n = got ? static_cast<std::ptrdiff_t>(*got) : -1;
#else
  const ssize_t n = ::pread(*fd, buf, sizeof buf, 0);
#endif
  ::close(*fd);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof buf) return {};
  std::string v(buf, static_cast<std::size_t>(n));
  v = v.substr(0, v.find('\n'));
  if (std::any_of(v.begin(), v.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) return {};
  return v;
}

#ifdef _WIN32
/// A Windows error (win_file.hpp's, the reason only) as the part's: "<part>: <what>: <reason>".
Error part_error(const std::filesystem::path& part, const std::string& what, const Error& cause) {
  return Error(Errc::io_error, part.string() + ": " + what + ": " + cause.message);
}
#endif

}  // namespace

PartSink::~PartSink() {
  stop_writer();
  if (fd_ >= 0) ::close(fd_);
}

void PartSink::writer_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Block block = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    const bool skip = write_error_.has_value();  // after a failure the rest is dropped
    lock.unlock();
    std::optional<Error> failed;
    if (!skip) {
      const std::string_view bytes(block.data.get(), block.size);
      sha_.update(bytes);
      sum_.update(bytes);
      if (auto ok = write_out(bytes); !ok) failed = ok.error();
      written_ += block.size;
      start_writeback(written_);
    }
    lock.lock();
    if (spare_.size() <= kMaxQueued) spare_.push_back(std::move(block.data));
    writing_ = false;
    if (failed && !write_error_) {
      write_error_ = std::move(failed);
      write_failed_ = true;
    }
    changed_.notify_all();
  }
}

void PartSink::start_writeback(std::uint64_t upto) {
#ifdef SYNC_FILE_RANGE_WRITE
  if (upto < synced_ + kWritebackRun) return;
  // Only a request to start: it waits for nothing, and an error shows at the fsync.
  (void)::sync_file_range(fd_, static_cast<off_t>(synced_), static_cast<off_t>(upto - synced_), SYNC_FILE_RANGE_WRITE);
  synced_ = upto;
#else
  (void)upto;
#endif
}

void PartSink::ready_block() {
  if (current_.data) return;
  {
    const std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      current_.data = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  if (!current_.data) current_.data = std::make_unique_for_overwrite<char[]>(kWriteBlock);
  current_.size = 0;
}

void PartSink::hand() {
  std::unique_lock lock(mutex_);
  if (!writer_.joinable()) writer_ = std::thread([this] { writer_loop(); });
  changed_.wait(lock, [&] { return queue_.size() < kMaxQueued; });
  queue_.push_back(std::move(current_));
  current_ = Block{};
  changed_.notify_all();
}

Expected<void> PartSink::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !writing_; });
  if (write_error_) return *write_error_;
  return {};
}

void PartSink::stop_writer() {
  {
    std::unique_lock lock(mutex_);
    if (!writer_.joinable()) return;
    stopping_ = true;
    changed_.notify_all();
  }
  writer_.join();
  stopping_ = false;
  spare_.clear();  // idle until the next write: the memory goes
  current_ = Block{};
}

Error PartSink::io_error(const std::string& what, int err) const {
  return Error(Errc::io_error, paths_.part.string() + ": " + what + ": " + std::strerror(err));
}

Expected<void> PartSink::open() {
  auto fd = util::open_own_file(paths_.part, true);
  if (!fd) return fd.error();
  fd_ = *fd;
  // Another process writing this part (a run on the same folder that took no folder lock, an
  // older wheelfit): its bytes are not ours to truncate.
#ifdef _WIN32
  // LockFileEx, failing at once; the writes go at their offsets (write_out), so no seek.
  const auto locked = util::win::try_lock(fd_);
  if (!locked) return part_error(paths_.part, "cannot lock", locked.error());
  if (!*locked) {
#else
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
#endif
    return Error(Errc::io_error, paths_.part.string() + ": another process is writing it (it holds its lock); "
                                                        "wait for it to end");
  }
#ifdef _WIN32
  const auto info = util::win::info(fd_);
  if (!info) return part_error(paths_.part, "cannot stat", info.error());
  done_ = info->size;
  written_ = synced_ = done_;
  if (done_ == 0) return {};
#else
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return io_error("cannot stat", errno);
  done_ = static_cast<std::uint64_t>(st.st_size);
  written_ = synced_ = done_;
  if (done_ == 0) return {};
  if (::lseek(fd_, 0, SEEK_END) < 0) return io_error("cannot seek", errno);
#endif
  validator_ = read_validator(paths_.meta);
  return {};
}

void PartSink::prepare(net::Headers& headers) {
  if (auto ok = flush(); !ok) pending_ = ok.error();
  if (done_ == 0) return;
  headers.emplace_back("Range", "bytes=" + std::to_string(done_) + "-");
  if (!validator_.empty()) headers.emplace_back("If-Range", validator_);
}

Expected<void> PartSink::truncate() {
  current_.size = 0;
  (void)drain();  // what was queued is dropped with the part; a write error of it no longer matters
  {
    const std::lock_guard lock(mutex_);
    write_error_.reset();
    write_failed_ = false;
  }
#ifdef _WIN32
  if (auto cut = util::win::truncate(fd_, 0); !cut) return part_error(paths_.part, "cannot truncate", cut.error());
#else
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) < 0) return io_error("cannot truncate", errno);
#endif
  done_ = 0;
  hashed_ = 0;
  written_ = synced_ = 0;
  (void)sha_.hex();  // resets it
  sum_.reset();
  return {};
}

/// Hashes the part's bytes the hash does not cover yet (an earlier run's, before the first 206).
Expected<void> PartSink::hash_part() {
  if (auto ok = drain(); !ok) return ok;
  return read_part(hashed_, done_, [this](std::string_view bytes) {
    sha_.update(bytes);
    sum_.update(bytes);
  }, "while hashing it");
}

/// Hands the part's bytes [from, to) to `reader` (pread in large blocks), advancing `from` as it
/// goes. `when` names the step in an error ("while hashing it").
Expected<void> PartSink::read_part(std::uint64_t& from, std::uint64_t to, const Reader& reader, const char* when) const {
  std::vector<char> block(kWriteBlock);
  while (from < to) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), to - from));
#ifdef _WIN32
    const auto read = util::win::pread(fd_, block.data(), want, from);
    if (!read) return part_error(paths_.part, std::string("cannot read ") + when, read.error());
    const auto got = static_cast<std::ptrdiff_t>(*read);
#else
    const ssize_t got = ::pread(fd_, block.data(), want, static_cast<off_t>(from));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error(std::string("cannot read ") + when, errno);
#endif
    if (got == 0) return Error(Errc::io_error, paths_.part.string() + ": shorter than received " + when);
    reader(std::string_view(block.data(), static_cast<std::size_t>(got)));
    from += static_cast<std::uint64_t>(got);
  }
  return {};
}

/// A strong ETag, else Last-Modified: what If-Range may carry (RFC 9110 13.1.5; a weak ETag may not).
void PartSink::keep_validator(const net::Headers& headers) {
  std::string v;
  if (auto etag = net::find_header(headers, "etag"); etag && !etag->starts_with("W/")) {
    v = std::string(*etag);
  } else if (auto lm = net::find_header(headers, "last-modified")) {
    v = std::string(*lm);
  }
  if (v == validator_) return;
  validator_ = std::move(v);
  std::error_code ec;
  if (validator_.empty()) {
    std::filesystem::remove(paths_.meta, ec);
    return;
  }
  util::AtomicWriteOptions o;
  o.durable = false;
  if (auto ok = util::write_file_atomic(paths_.meta, {validator_, "\n"}, o); !ok) {
    log::debug("cannot keep the validator of " + paths_.part.string() + ": " + ok.error().message);
  }
}

Expected<void> PartSink::begin(int status, const net::Headers& headers) {
  if (pending_) return *pending_;
  const bool first = !begun_;
  begun_ = true;
  if (status == 206) {
    const auto cr = net::find_header(headers, "content-range");
    const auto range = cr ? parse_content_range(*cr) : std::nullopt;
    if (!range || range->first != done_) {
      return net::net_error(net::NetErrc::protocol,
                                  "the server answered " + (cr ? "'Content-Range: " + std::string(*cr) + "'" :
                                                                 std::string("206 without a Content-Range")) +
                                      " to a request for bytes " + std::to_string(done_) + "- of " +
                                      paths_.final.filename().string());
    }
    if (auto ok = hash_part(); !ok) return ok;
    if (range->total) total_ = range->total;
    if (first) resumed_ = done_ > 0;
    continued_ = true;
  } else {
    if (auto ok = truncate(); !ok) return ok;
    resumed_ = false;
    if (auto len = net::find_header(headers, "content-length")) {
      if (auto n = to_u64(*len)) total_ = n;
    }
  }
  keep_validator(headers);
  report();
  return {};
}

Expected<void> PartSink::write_out(std::string_view bytes) {
#ifdef _WIN32
  // At its offset (the writer's count): a read of the part (its hash, its read-back) moves no
  // write position.
  if (auto put = util::win::pwrite_all(fd_, bytes, written_); !put) return part_error(paths_.part, "cannot write", put.error());
#else
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("cannot write", errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
#endif
  return {};
}

Expected<void> PartSink::flush() {
  if (current_.size > 0) hand();
  return drain();
}

Expected<void> PartSink::take(std::size_t n) {
  if (pending_) return *pending_;
  if (write_failed_) return drain();  // the writer's error
  if (n > max_file_ - std::min(done_, max_file_)) {
    return Error(Errc::too_large, name_ + " exceeds the limit of " + std::to_string(max_file_) + " bytes");
  }
  done_ += n;
  hashed_ = done_;  // once the writer has the bytes (drain() before anything reads the hash)
  current_.size += n;
  if (current_.size == kWriteBlock) hand();
  return {};
}

Expected<void> PartSink::write(std::string_view bytes) {
  while (!bytes.empty()) {
    ready_block();
    const std::size_t n = std::min(bytes.size(), kWriteBlock - current_.size);
    std::memcpy(current_.data.get() + current_.size, bytes.data(), n);
    if (auto ok = take(n); !ok) return ok;
    bytes.remove_prefix(n);
  }
  report();
  return {};
}

std::span<char> PartSink::room(std::size_t want) {
  if (pending_ || write_failed_) return {};  // write() tells the error
  ready_block();
  return {current_.data.get() + current_.size, std::min(want, kWriteBlock - current_.size)};
}

Expected<void> PartSink::commit(std::size_t n) {
  if (auto ok = take(n); !ok) return ok;
  report();
  return {};
}

void PartSink::report() {
  if (!progress_) return;
  progress_(Progress{Progress::Kind::bytes, index_, name_, done_, total_});
}

Expected<std::string> PartSink::finish() {
  if (auto ok = flush(); !ok) return ok.error();
  if (auto ok = hash_part(); !ok) return ok.error();  // an empty 206 after a resume
  return sha_.hex();
}

/// The part's bytes as they are on disk, hashed again: what is renamed into place is what was
/// verified, whatever wrote to the part meanwhile (the folder and part locks keep wheelfit's own
/// runs out; this catches anything else).
Expected<void> PartSink::verify_on_disk(const std::string& digest) {
#ifdef _WIN32
  // The file at the part's name (not followed) is the one written: same volume, same file index.
  const auto info = util::win::info(fd_);
  if (!info) return part_error(paths_.part, "cannot stat", info.error());
  const auto mine = util::win::file_id(fd_);
  if (!mine) return part_error(paths_.part, "cannot stat", mine.error());
  const auto there = util::win::file_stamp(paths_.part);
  if (!there || there->id != *mine) {
#else
  struct stat st {}, at {};
  if (::fstat(fd_, &st) != 0) return io_error("cannot stat", errno);
  if (::lstat(paths_.part.c_str(), &at) != 0 || at.st_ino != st.st_ino || at.st_dev != st.st_dev) {
#endif
    return Error(Errc::io_error, paths_.part.string() + ": replaced by another file while it was written; nothing is "
                                                        "renamed into place");
  }
#ifdef _WIN32
  const std::uint64_t on_disk = info->size;
#else
  const auto on_disk = static_cast<std::uint64_t>(st.st_size);
#endif
  if (on_disk != done_) {
    return Error(Errc::io_error, paths_.part.string() + ": " + std::to_string(on_disk) + " bytes on disk, " +
                                     std::to_string(done_) + " received: changed by another process while it was written");
  }
  Checksum sum;
  std::uint64_t read = 0;
  if (auto ok = read_part(read, done_, [&](std::string_view b) { sum.update(b); }, "while reading it back"); !ok) return ok;
  if (sum.value() == sum_.value()) return {};
  // They differ: the digest of what is there, for the message.
  Sha256 sha;
  read = 0;
  if (auto ok = read_part(read, done_, [&](std::string_view b) { sha.update(b); }, "while reading it back"); !ok) return ok;
  return Error(Errc::io_error, paths_.part.string() + ": the bytes on disk have sha256 " + sha.hex() + ", not the " + digest +
                                   " received: changed by another process while it was written");
}

Expected<void> PartSink::commit(const std::string& digest) {
  stop_writer();  // idle: finish() drained it
  if (const auto why = util::not_regular_file(paths_.final); !why.empty()) {
    return Error(Errc::io_error, paths_.final.string() + ": " + why + "; wheelfit replaces only regular files: remove it, "
                                                                      "then run again");
  }
#ifdef _WIN32
  if (auto flushed = util::win::flush(fd_); !flushed) return part_error(paths_.part, "cannot flush", flushed.error());
#else
  if (::fsync(fd_) != 0) return io_error("cannot fsync", errno);
#endif
  if (auto ok = verify_on_disk(digest); !ok) return ok;
  std::error_code ec;
#ifdef _WIN32
  // MoveFileExW, replacing and written through: the rename is on disk when it returns. (The part
  // is open with FILE_SHARE_DELETE, so it can be renamed while this handle holds its lock.)
  if (auto moved = util::win::replace(paths_.part, paths_.final); !moved) {
    return Error(Errc::io_error, "cannot rename " + paths_.part.string() + " to " + paths_.final.string() + ": " +
                                     moved.error().message);
  }
#else
  if (::rename(paths_.part.c_str(), paths_.final.c_str()) != 0) {
    return Error(Errc::io_error, "cannot rename " + paths_.part.string() + " to " + paths_.final.string() + ": " +
                                     std::strerror(errno));
  }
#endif
  ::close(fd_);  // after the rename: the part's lock is held until it has its final name
  fd_ = -1;
  std::filesystem::remove(paths_.meta, ec);
  // Windows has no fsync of a folder (FlushFileBuffers flushes a file or a whole volume, not a
  // folder's entries): there MOVEFILE_WRITE_THROUGH above is what makes the new name durable.
#ifndef _WIN32
  if (const int dir = ::open(paths_.final.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
#endif
  return {};
}

void PartSink::restart() {
  if (auto ok = truncate(); !ok) pending_ = ok.error();
  validator_.clear();
  std::error_code ec;
  std::filesystem::remove(paths_.meta, ec);
  begun_ = resumed_ = continued_ = false;
}

void PartSink::remove() {
  stop_writer();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(paths_.part, ec);
  std::filesystem::remove(paths_.meta, ec);
}

}  // namespace wheelfit::deliver::detail
