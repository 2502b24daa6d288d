#pragma once
// Private to deliver: the BodySink of one file, writing DIR/.<filename>.part while hashing it.
//
// The part holds the body's first bytes(); its sidecar DIR/.<filename>.part.meta holds the
// validator (a strong ETag, else Last-Modified) those bytes came with, for If-Range. prepare()
// asks for the rest (Range: bytes=N- + If-Range); begin() takes a 200 as "start over" (the part
// truncated, the hash restarted) and a 206 as the continuation, after checking that its
// Content-Range starts at bytes() and hashing the part's earlier bytes (once per run).
// Writes are gathered into 1 MiB blocks; a thread of the sink's own hashes and writes them, so
// the transport's network thread only receives (a few blocks queued at most: a slow disk slows
// the download, memory stays bounded). Every step that reads the part or the hash (a 206's
// earlier bytes, finish, truncate) first waits for the queue to drain.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "wheelfit/deliver/download.hpp"

namespace wheelfit::deliver::detail {

/// The three names of one file in the folder.
struct PartPaths {
  std::filesystem::path final, part, meta;
  PartPaths(const std::filesystem::path& dir, const std::string& filename)
      : final(dir / filename), part(dir / ("." + filename + ".part")), meta(dir / ("." + filename + ".part.meta")) {}
};

class PartSink final : public transport::BodySink {
 public:
  PartSink(std::size_t index, PartPaths paths, std::optional<std::uint64_t> size, std::uint64_t max_file,
           const ProgressHook& progress)
      : index_(index), paths_(std::move(paths)), total_(size), max_file_(max_file), progress_(progress),
        name_(paths_.final.filename().string()) {}
  ~PartSink() override;
  PartSink(const PartSink&) = delete;
  PartSink& operator=(const PartSink&) = delete;

  /// Opens (or creates, 0644) the part: the bytes an earlier run left are continued, with the
  /// validator of its meta. Errc::io_error naming the part.
  [[nodiscard]] Expected<void> open();

  void prepare(transport::Headers& headers) override;
  Expected<void> begin(int status, const transport::Headers& headers) override;
  Expected<void> write(std::string_view bytes) override;

  /// After the answer: every byte on disk; the digest of the whole part.
  [[nodiscard]] Expected<std::string> finish();
  /// fsync, hash the part's bytes on disk again and compare them with `digest` (finish()'s),
  /// rename the part to its final name (and fsync the folder), remove the meta. Errc::io_error,
  /// nothing renamed, when the bytes on disk differ or a link, FIFO or folder holds the final name.
  [[nodiscard]] Expected<void> commit(const std::string& digest);
  /// Empties the part and forgets its validator: the next attempt fetches from zero.
  void restart();
  /// Removes the part and its meta (closing the part).
  void remove();

  [[nodiscard]] std::uint64_t bytes() const { return done_; }
  [[nodiscard]] std::optional<std::uint64_t> total() const { return total_; }
  [[nodiscard]] bool begun() const { return begun_; }
  /// The body began with a 206: an earlier run's part was continued.
  [[nodiscard]] bool resumed() const { return resumed_; }
  /// Some 206 was taken (an earlier part or an attempt cut short in this run).
  [[nodiscard]] bool continued() const { return continued_; }
  [[nodiscard]] const PartPaths& paths() const { return paths_; }
  /// Writing the part failed (ENOSPC, EIO): what is on disk is worth nothing to a later run.
  [[nodiscard]] bool disk_failed() const { return write_failed_; }

 private:
  Expected<void> flush();  ///< the buffer handed to the writer, and the queue drained
  Expected<void> write_out(std::string_view bytes);
  void hand(std::string block);  ///< queues a block (waits while the queue is full)
  Expected<void> drain();        ///< waits until every queued block is hashed and written
  void stop_writer();            ///< drains and joins the writer thread
  void writer_loop();
  Expected<void> hash_part();
  Expected<void> hash_bytes(std::uint64_t& from, std::uint64_t to, Sha256& sha, const char* when) const;
  Expected<void> verify_on_disk(const std::string& digest);
  Expected<void> truncate();
  void keep_validator(const transport::Headers& headers);
  Error io_error(const std::string& what, int err) const;
  void report();

  std::size_t index_;
  PartPaths paths_;
  std::optional<std::uint64_t> total_;
  std::uint64_t max_file_;
  const ProgressHook& progress_;
  int fd_ = -1;
  Sha256 sha_;
  std::uint64_t done_ = 0;    ///< body bytes taken (on disk + buffered)
  std::uint64_t hashed_ = 0;  ///< of which the hash covers the first hashed_
  std::string buffer_;        ///< taken, not yet handed to the writer
  std::string name_;          ///< the final file name, for progress
  std::string validator_;     ///< for If-Range
  std::optional<Error> pending_;  ///< a failure outside begin/write (prepare's flush), told at the next call
  bool begun_ = false, resumed_ = false, continued_ = false;
  // The writer: blocks queued by write(), hashed into sha_ and written by writer_.
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  bool writing_ = false, stopping_ = false;
  std::optional<Error> write_error_;   ///< the writer's first failure (guarded by mutex_)
  std::atomic<bool> write_failed_{false};
};

}  // namespace wheelfit::deliver::detail
