#pragma once
// Private to deliver: the BodySink of one file, writing DIR/.<filename>.part while hashing it.
//
// The part holds the body's first bytes(); its sidecar DIR/.<filename>.part.meta holds the
// validator (a strong ETag, else Last-Modified) those bytes came with, for If-Range. prepare()
// asks for the rest (Range: bytes=N- + If-Range); begin() takes a 200 as "start over" (the part
// truncated, the hash restarted) and a 206 as the continuation, after checking that its
// Content-Range starts at bytes() and hashing the part's earlier bytes (once per run).
// Writes are gathered into 1 MiB blocks (room() lends the transport the block itself, so a body
// is received straight into it); a thread of the sink's own hashes, checksums and writes them,
// starting the disk's writeback as it goes, so the transport's network thread only receives (a
// few blocks queued at most: a slow disk slows the download, memory stays bounded; used blocks
// are reused). Every step that reads the part or the hash (a 206's earlier bytes, finish,
// truncate) first waits for the queue to drain.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "checksum.hpp"
#include "wheelfit/deliver/download.hpp"

namespace wheelfit::deliver::detail {

/// The three names of one file in the folder.
struct PartPaths {
  std::filesystem::path final, part, meta;
  PartPaths(const std::filesystem::path& dir, const std::string& filename)
      : final(dir / filename), part(dir / ("." + filename + ".part")), meta(dir / ("." + filename + ".part.meta")) {}
};

class PartSink final : public net::BodySink {
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

  void prepare(net::Headers& headers) override;
  Expected<void> begin(int status, const net::Headers& headers) override;
  Expected<void> write(std::string_view bytes) override;
  std::span<char> room(std::size_t want) override;
  Expected<void> commit(std::size_t n) override;

  /// After the answer: every byte on disk; the digest of the whole part.
  [[nodiscard]] Expected<std::string> finish();
  /// fsync, read the part's bytes on disk again and compare them with those received (their
  /// checksum; on a difference the error names the sha256 on disk and `digest`, finish()'s),
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
  /// A block of kWriteBlock bytes, `size` of them taken.
  struct Block {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
  };
  using Reader = std::function<void(std::string_view)>;

  Expected<void> flush();  ///< the current block handed to the writer, and the queue drained
  Expected<void> take(std::size_t n);  ///< accounts for `n` more bytes in the current block
  Expected<void> write_out(std::string_view bytes);
  void start_writeback(std::uint64_t upto);  ///< asks the disk to write the part's bytes before `upto`
  void ready_block();  ///< the current block has memory (a reused one when there is one)
  void hand();  ///< queues the current block (waits while the queue is full)
  Expected<void> drain();        ///< waits until every queued block is hashed and written
  void stop_writer();            ///< drains and joins the writer thread
  void writer_loop();
  Expected<void> hash_part();
  Expected<void> read_part(std::uint64_t& from, std::uint64_t to, const Reader& reader, const char* when) const;
  Expected<void> verify_on_disk(const std::string& digest);
  Expected<void> truncate();
  void keep_validator(const net::Headers& headers);
  Error io_error(const std::string& what, int err) const;
  void report();

  std::size_t index_;
  PartPaths paths_;
  std::optional<std::uint64_t> total_;
  std::uint64_t max_file_;
  const ProgressHook& progress_;
  int fd_ = -1;
  Sha256 sha_;
  Checksum sum_;              ///< of the same bytes as sha_ (compared with the bytes on disk at commit)
  std::uint64_t done_ = 0;    ///< body bytes taken (on disk + buffered)
  std::uint64_t hashed_ = 0;  ///< of which the hash covers the first hashed_
  Block current_;             ///< taken, not yet handed to the writer
  std::string name_;          ///< the final file name, for progress
  std::string validator_;     ///< for If-Range
  std::optional<Error> pending_;  ///< a failure outside begin/write (prepare's flush), told at the next call
  bool begun_ = false, resumed_ = false, continued_ = false;
  // The writer: blocks queued by write(), hashed into sha_ and written by writer_.
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Block> queue_;
  std::vector<std::unique_ptr<char[]>> spare_;  ///< written blocks, for reuse
  std::uint64_t written_ = 0, synced_ = 0;  ///< the writer's: bytes written, of which writeback was asked for
  bool writing_ = false, stopping_ = false;
  std::optional<Error> write_error_;   ///< the writer's first failure (guarded by mutex_)
  std::atomic<bool> write_failed_{false};
};

}  // namespace wheelfit::deliver::detail
