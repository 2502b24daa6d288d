// The BodySink of one file (part_sink.hpp): the part file, its hash, its validator, progress.
#include "part_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/read_file.hpp"

namespace wheelfit::deliver::detail {

namespace {

constexpr std::size_t kWriteBlock = 1u << 20;
constexpr std::size_t kMaxQueued = 4;  ///< blocks waiting for the writer, per file
constexpr std::uintmax_t kMaxValidatorFile = 64u << 10;  ///< a part's .meta: one ETag or date line

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
    std::string block = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    const bool skip = write_error_.has_value();  // after a failure the rest is dropped
    lock.unlock();
    std::optional<Error> failed;
    if (!skip) {
      sha_.update(block);
      if (auto ok = write_out(block); !ok) failed = ok.error();
    }
    lock.lock();
    writing_ = false;
    if (failed && !write_error_) {
      write_error_ = std::move(failed);
      write_failed_ = true;
    }
    changed_.notify_all();
  }
}

void PartSink::hand(std::string block) {
  std::unique_lock lock(mutex_);
  if (!writer_.joinable()) writer_ = std::thread([this] { writer_loop(); });
  changed_.wait(lock, [&] { return queue_.size() < kMaxQueued; });
  queue_.push_back(std::move(block));
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
}

Error PartSink::io_error(const std::string& what, int err) const {
  return Error(Errc::io_error, paths_.part.string() + ": " + what + ": " + std::strerror(err));
}

Expected<void> PartSink::open() {
  fd_ = ::open(paths_.part.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return io_error("cannot open", errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return io_error("cannot stat", errno);
  done_ = static_cast<std::uint64_t>(st.st_size);
  if (done_ == 0) return {};
  if (::lseek(fd_, 0, SEEK_END) < 0) return io_error("cannot seek", errno);
  // The validator's file, if a regular one: a FIFO left under its name must not block the download.
  if (auto meta = util::read_file(paths_.meta.string(), kMaxValidatorFile, "a part's validator file")) {
    validator_ = meta->substr(0, meta->find('\n'));
  }
  return {};
}

void PartSink::prepare(transport::Headers& headers) {
  if (auto ok = flush(); !ok) pending_ = ok.error();
  if (done_ == 0) return;
  headers.emplace_back("Range", "bytes=" + std::to_string(done_) + "-");
  if (!validator_.empty()) headers.emplace_back("If-Range", validator_);
}

Expected<void> PartSink::truncate() {
  buffer_.clear();
  (void)drain();  // what was queued is dropped with the part; a write error of it no longer matters
  {
    const std::lock_guard lock(mutex_);
    write_error_.reset();
    write_failed_ = false;
  }
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) < 0) return io_error("cannot truncate", errno);
  done_ = 0;
  hashed_ = 0;
  (void)sha_.hex();  // resets it
  return {};
}

/// Hashes the part's bytes the hash does not cover yet (an earlier run's, before the first 206).
Expected<void> PartSink::hash_part() {
  if (auto ok = drain(); !ok) return ok;
  std::vector<char> block(kWriteBlock);
  while (hashed_ < done_) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), done_ - hashed_));
    const ssize_t got = ::pread(fd_, block.data(), want, static_cast<off_t>(hashed_));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error("cannot read", errno);
    if (got == 0) return Error(Errc::io_error, paths_.part.string() + ": shorter than expected while hashing it");
    sha_.update(std::string_view(block.data(), static_cast<std::size_t>(got)));
    hashed_ += static_cast<std::uint64_t>(got);
  }
  return {};
}

/// A strong ETag, else Last-Modified: what If-Range may carry (RFC 9110 13.1.5; a weak ETag may not).
void PartSink::keep_validator(const transport::Headers& headers) {
  std::string v;
  if (auto etag = transport::find_header(headers, "etag"); etag && !etag->starts_with("W/")) {
    v = std::string(*etag);
  } else if (auto lm = transport::find_header(headers, "last-modified")) {
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

Expected<void> PartSink::begin(int status, const transport::Headers& headers) {
  if (pending_) return *pending_;
  const bool first = !begun_;
  begun_ = true;
  if (status == 206) {
    const auto cr = transport::find_header(headers, "content-range");
    const auto range = cr ? parse_content_range(*cr) : std::nullopt;
    if (!range || range->first != done_) {
      return transport::net_error(transport::NetErrc::protocol,
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
    if (auto len = transport::find_header(headers, "content-length")) {
      if (auto n = to_u64(*len)) total_ = n;
    }
  }
  keep_validator(headers);
  report();
  return {};
}

Expected<void> PartSink::write_out(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("cannot write", errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Expected<void> PartSink::flush() {
  if (!buffer_.empty()) {
    hand(std::move(buffer_));
    buffer_ = std::string();
  }
  return drain();
}

Expected<void> PartSink::write(std::string_view bytes) {
  if (pending_) return *pending_;
  if (write_failed_) return drain();  // the writer's error
  if (bytes.size() > max_file_ - std::min(done_, max_file_)) {
    return Error(Errc::too_large, name_ + " exceeds the limit of " + std::to_string(max_file_) + " bytes");
  }
  done_ += bytes.size();
  hashed_ = done_;  // once the writer has the bytes (drain() before anything reads the hash)
  if (buffer_.capacity() < kWriteBlock) buffer_.reserve(kWriteBlock + (256u << 10));  // a block and the read that fills it
  buffer_.append(bytes);
  if (buffer_.size() >= kWriteBlock) {
    hand(std::move(buffer_));
    buffer_ = std::string();
  }
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

Expected<void> PartSink::commit() {
  stop_writer();  // idle: finish() drained it
  if (::fsync(fd_) != 0) return io_error("cannot fsync", errno);
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::rename(paths_.part, paths_.final, ec);
  if (ec) return Error(Errc::io_error, "cannot rename " + paths_.part.string() + " to " + paths_.final.string() + ": " + ec.message());
  std::filesystem::remove(paths_.meta, ec);
  if (const int dir = ::open(paths_.final.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
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
