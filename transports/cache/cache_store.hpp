#pragma once
// The cache's store (internal to transports/cache): one file per entry under <root>/v2,
// `<key>.entry`: the sidecar (one line of JSON), '\n', then the body. One file means one inode to
// allocate per new entry (file creation, not the bytes, dominates a cold write: decision 0009)
// and no pair that can be half replaced. Reads happen on the caller's threads; every change (a
// new or rewritten entry, a removal, a use) is queued, in order, to one writer thread, so the
// caller has its answers while the bytes go to disk. drain() waits for the queue; the cache
// drains it before each batch reads, so a batch always sees what the batches before it stored.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "cache_entry.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::transports::cache_detail {

class Store {
 public:
  explicit Store(std::filesystem::path dir) : dir_(std::move(dir)) {}
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();  ///< finishes the queued changes

  /// The valid sidecar stored for (url, accept) under `key`, if any (Meta::offset set); a corrupt
  /// entry is deleted with a warning. Safe from several threads for different keys while the
  /// writer is idle.
  std::optional<Meta> load_meta(const std::string& key, const std::string& url, const std::string& accept) const;
  /// The body `meta` describes, when its size and sha256 match; otherwise the entry is deleted with
  /// a warning. It is read into `buffer` when that is already meta.size bytes long: a caller
  /// allocates it on its own thread, so a helper thread reading it adds no memory of its own.
  /// Same threading as load_meta.
  std::optional<std::string> load_body(const std::string& key, const Meta& meta, std::string buffer) const;

  /// Queues an entry (new, or rewritten with a refreshed sidecar); the writer fills in its sha256
  /// and size.
  void put(std::string key, Meta meta, std::string body) { enqueue({Job::put, std::move(key), std::move(meta), std::move(body)}); }
  /// Queues the removal of an entry.
  void erase(std::string key) { enqueue({Job::erase, std::move(key), {}, {}}); }
  /// Queues marking an entry used now (served from the cache), for the size cap's LRU order.
  void touch(std::string key) { enqueue({Job::touch, std::move(key), {}, {}}); }

  /// Returns when every queued change is on disk (or failed with a warning).
  void drain();
  /// drain(), then whether an entry was written since the last call.
  bool take_changes();
  /// The entry folder (<root>/v2).
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  struct Job {
    enum Kind { put, erase, touch } kind;
    std::string key;
    Meta meta;
    std::string body;
    std::shared_ptr<const log::Sink> sink = log::thread_sink();  ///< the enqueuing call's log sink
  };

  [[nodiscard]] std::filesystem::path entry_path(const std::string& key) const { return dir_ / (key + ".entry"); }
  /// Reads the body of the entry at `p` into `buffer` (resized only when it is not meta.size long).
  /// `replaced`: the file is no longer the one the sidecar came from (or is gone).
  static bool read_body(const std::filesystem::path& p, const Meta& meta, std::string& buffer, std::string& why,
                        bool& replaced);
  void enqueue(Job job);
  void work();
  void run(Job& job);
  void remove(const std::string& key) const;
  void mark_used(const std::string& key) const;
  void discard(const std::string& key, const std::string& url, const std::string& why) const;
  /// Writes the entry to a temporary file, then renames it over the old one: readers see the old
  /// entry or the new one, never a mix; a failed write leaves the old entry whole.
  void write_entry(const std::string& key, const Meta& meta, std::string_view body) const;

  std::filesystem::path dir_;
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  bool inline_ = false;
  std::atomic<bool> changed_{false};
  std::thread thread_;
};

}  // namespace wheelfit::transports::cache_detail
