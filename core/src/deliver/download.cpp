// deliver::download: the files checked, the present ones kept, the rest streamed through one
// get_many into their parts, each verified and renamed as its answer comes in (on a finisher
// thread: the transport's thread goes on receiving the others meanwhile).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "part_sink.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/own_file.hpp"
#include "wheelfit/util/secrets.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#include "wheelfit/util/win_file_id.hpp"
#endif

namespace wheelfit::deliver {

namespace fs = std::filesystem;
using detail::PartPaths;
using detail::PartSink;

namespace {

/// Why `name` cannot be a file name in the folder, or "".
std::string bad_name(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name == "." || name == "..") return "is '" + std::string(name) + "'";
  if (name.find('/') != std::string_view::npos) return "has a '/'";
  if (name.find('\0') != std::string_view::npos) return "has a NUL byte";
#ifdef _WIN32
  // Windows' other separator, a drive or stream (':'), what its names cannot hold, and the
  // device names (CON, NUL, COM1 ...; any extension): each would write somewhere else.
  if (const auto bad = name.find_first_of("\\:*?\"<>|"); bad != std::string_view::npos) {
    return std::string("has a '") + name[bad] + "' (not allowed in a Windows file name)";
  }
  if (name.back() == '.' || name.back() == ' ') return "ends with a dot or a space (Windows drops it)";
  std::string stem(name.substr(0, name.find('.')));
  std::transform(stem.begin(), stem.end(), stem.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* device : {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}) {
    if (stem == device) return "is the Windows device name " + stem;
  }
  if (stem.size() == 4 && (stem.starts_with("COM") || stem.starts_with("LPT")) && stem[3] >= '0' && stem[3] <= '9') {
    return "is the Windows device name " + stem;
  }
#endif
  return "";
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// "<sha256> <size> <mtime s> <mtime ns> <inode> <device>": what a re-run compares before it
/// trusts the digest instead of reading the file again. A write changes the mtime (and a
/// replacement the inode); the ctime is left out because linking the file into a mirror snapshot
/// changes it every run. On Windows the inode and device are the file index and the volume's
/// serial number, the mtime the last-write time (100 ns steps).
#ifdef _WIN32
std::string identity_text(std::uint64_t size, std::chrono::system_clock::time_point modified, const util::win::FileId& id) {
  const auto since = modified.time_since_epoch();
  const auto s = std::chrono::floor<std::chrono::seconds>(since);
  return std::to_string(size) + " " + std::to_string(s.count()) + " " +
         std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(since - s).count()) + " " + std::to_string(id.index) +
         " " + std::to_string(id.volume);
}

/// The identity of the regular file at `file` (not followed), or "" when it is not one.
std::string identity_now(const fs::path& file) {
  auto fd = util::win::open(file, {.access = util::win::Access::read, .follow_links = false});
  if (!fd) return {};
  const auto info = util::win::info(*fd);
  const auto id = util::win::file_id(*fd);
  ::close(*fd);
  if (!info || !id) return {};
  return identity_text(info->size, info->modified, *id);
}
#else
std::string identity_of(const struct stat& st) {
  return std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + " " + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_ino) + " " + std::to_string(st.st_dev);
}

/// The identity of the regular file at `file` (not followed), or "" when it is not one.
std::string identity_now(const fs::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  return identity_of(st);
}
#endif

void record_digest(const fs::path& file, const std::string& sha256) {
  const std::string identity = identity_now(file);
  if (identity.empty()) return;
  util::AtomicWriteOptions o;
  o.durable = false;  // a lost record costs one read of the file, nothing else
  (void)util::write_file_atomic(digest_record_path(file), {sha256, " ", identity, "\n"}, o);
}

/// The recorded digest of `file`, when the record names this very file as it is now.
std::optional<std::string> recorded_digest(const fs::path& file) {
  const std::string identity = identity_now(file);
  if (identity.empty()) return std::nullopt;
  auto fd = util::open_own_file(digest_record_path(file), false);
  if (!fd) return std::nullopt;
  char buf[256];
#ifdef _WIN32
  const auto got = util::win::pread(*fd, buf, sizeof buf - 1, 0);
  const std::ptrdiff_t n = got ? static_cast<std::ptrdiff_t>(*got) : -1;
#else
  const ssize_t n = ::pread(*fd, buf, sizeof buf - 1, 0);
#endif
  ::close(*fd);
  if (n <= 65) return std::nullopt;
  const std::string text(buf, static_cast<std::size_t>(n));
  const std::string sha = text.substr(0, 64);
  if (!is_sha256_hex(sha) || text[64] != ' ' || text.substr(65) != identity + "\n") return std::nullopt;
  return sha;
}

/// A 416 to the Range of a part (the part already whole, or the file shorter now).
bool range_refused(const Error& e) {
  return net::is(e, net::NetErrc::http_status) && e.message.find("HTTP 416") != std::string::npos;
}

/// Runs jobs on up to `most` threads of its own (started as jobs come, each carrying the calling
/// thread's log sink); wait() runs what is queued and joins them.
class Finishers {
 public:
  explicit Finishers(std::size_t most) : most_(std::max<std::size_t>(1, most)) {}
  ~Finishers() { wait(); }
  Finishers(const Finishers&) = delete;
  Finishers& operator=(const Finishers&) = delete;

  void add(std::function<void()> job) {
    const std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (idle_ == 0 && threads_.size() < most_) threads_.emplace_back([this, sink = log::thread_sink()] { loop(sink); });
    changed_.notify_one();
  }

  void wait() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
      changed_.notify_all();
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
    stopping_ = false;
  }

 private:
  void loop(const std::shared_ptr<const log::Sink>& sink) {
    const log::ScopedSink carried(sink);
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();  // catches its own exceptions
      lock.lock();
    }
  }

  std::size_t most_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

/// At most this many files are finished (digest, fsync, read back, rename) at once.
constexpr std::size_t kFinishers = 4;

/// One download() call: the files, their sinks and results.
class Run {
 public:
  Run(const std::vector<Wanted>& files, const DownloadOptions& options)
      : files_(files), options_(options), out_(files.size()), sinks_(files.size()), again_(files.size(), false) {
    // The sinks report bytes on the transport's thread, the calling one: what the finishers
    // reported meanwhile goes first.
    if (options_.progress) {
      sink_progress_ = [this](const Progress& p) {
        if (std::this_thread::get_id() == caller_) pump();
        options_.progress(p);
      };
    }
  }

  std::vector<Delivered> go(net::Transport& transport) {
    std::vector<std::size_t> fetch;
    std::optional<Error> unusable;
    std::optional<util::FolderLock> lock;
    if (!options_.locked) {
      auto taken = lock_folder(options_.dir, {.wait = true, .deadline = {}, .purpose = "writing into " + options_.dir.string()});
      if (taken) lock.emplace(std::move(*taken));
      else unusable = taken.error();
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < files_.size(); ++i) {
      out_[i].filename = files_[i].filename;
      out_[i].url = files_[i].url;
      if (unusable) {
        fail(i, *unusable);
      } else if (check(i, seen) && !present(i) && open(i)) {
        fetch.push_back(i);
      }
    }
    if (!unusable) remove_unwanted_parts(seen);
    while (!fetch.empty()) fetch = batch(transport, fetch);
    return std::move(out_);
  }

 private:
  /// A progress event: on the calling thread at once (after those queued before it), else (a
  /// finisher's) queued for the calling thread's next report or the end of the batch.
  void tell(Progress::Kind kind, std::size_t i, std::uint64_t done, std::optional<std::uint64_t> total) {
    if (!options_.progress) return;
    const Progress p{kind, i, files_[i].filename, done, total, out_[i].status};
    if (std::this_thread::get_id() != caller_) {
      const std::lock_guard lock(mutex_);
      told_.push_back(p);
      return;
    }
    pump();
    options_.progress(p);
  }

  /// The queued progress events, on the calling thread.
  void pump() {
    std::deque<Progress> ready;
    {
      const std::lock_guard lock(mutex_);
      ready.swap(told_);
    }
    for (const auto& p : ready) options_.progress(p);
  }

  void fail(std::size_t i, Error e) {
    out_[i].status = Delivered::Status::failed;
    out_[i].error = std::move(e);
    tell(Progress::Kind::finished, i, out_[i].bytes, files_[i].size);
  }

  /// The name and the digest are usable, the name not listed before.
  bool check(std::size_t i, std::set<std::string>& seen) {
    const Wanted& w = files_[i];
    if (const auto why = bad_name(w.filename); !why.empty()) {
      fail(i, Error(Errc::invalid_input, "the file name '" + util::redact(w.filename) + "' for " + util::redact(w.url) +
                                             " " + why + " (a plain file name is needed)"));
      return false;
    }
    if (w.sha256 && !is_sha256_hex(*w.sha256)) {
      fail(i, Error(Errc::invalid_input, w.filename + ": the expected sha256 '" + *w.sha256 +
                                             "' is not 64 lower-case hex digits"));
      return false;
    }
    if (!seen.insert(w.filename).second) {
      fail(i, Error(Errc::invalid_input, w.filename + " is listed twice"));
      return false;
    }
    return true;
  }

  /// The file is already in place with the expected digest (then settled as present); offline,
  /// a file not in place fails here.
  bool present(std::size_t i) {
    const Wanted& w = files_[i];
    Delivered& d = out_[i];
    const fs::path final = options_.dir / w.filename;
    std::error_code ec;
    if (const auto why = util::not_regular_file(final); !why.empty()) {
      fail(i, Error(Errc::io_error, final.string() + ": " + why + "; wheelfit replaces only regular files: remove it, "
                                                                  "then run again"));
      return true;
    }
    if (w.sha256 && fs::is_regular_file(final, ec)) {
      // The digest recorded when the file got its name, while it is the same file unchanged;
      // else the file read whole (and the digest recorded for the next run).
      std::optional<std::string> digest = recorded_digest(final);
      if (!digest) {
        if (auto read = sha256_file(final)) {
          digest = std::move(*read);
          record_digest(final, *digest);
        }
      }
      if (digest && *digest == *w.sha256) {
        d.path = final;
        d.bytes = fs::file_size(final, ec);
        d.sha256 = std::move(*digest);
        d.status = Delivered::Status::present;
        d.verified = true;
        tell(Progress::Kind::finished, i, d.bytes, d.bytes);
        return true;
      }
      if (digest) {
        log::info(final.string() + " has sha256 " + *digest + ", not the expected " + *w.sha256 + ": fetching it again");
      }
    }
    if (options_.offline) {
      fail(i, net::net_error(net::NetErrc::offline,
                                   w.filename + " is not in " + options_.dir.string() + (w.sha256 ? " with its expected sha256" : "") +
                                       ", and nothing is fetched offline (" + util::redact(w.url) + ")"));
      return true;
    }
    return false;
  }

  bool open(std::size_t i) {
    sinks_[i] = std::make_unique<PartSink>(i, PartPaths(options_.dir, files_[i].filename), files_[i].size,
                                           options_.max_file, sink_progress_);
    if (auto ok = sinks_[i]->open(); !ok) {
      fail(i, ok.error());
      return false;
    }
    return true;
  }

  /// Fetches `which` in one get_many; returns those to fetch once more from zero.
  std::vector<std::size_t> batch(net::Transport& transport, const std::vector<std::size_t>& which) {
    Finishers finishers(std::min(kFinishers, which.size()));
    std::vector<net::Request> requests(which.size());
    for (std::size_t j = 0; j < which.size(); ++j) {
      const std::size_t i = which[j];
      requests[j].url = files_[i].url;
      requests[j].max_body = static_cast<std::size_t>(std::min<std::uint64_t>(options_.max_file, SIZE_MAX));
      requests[j].sink = sinks_[i].get();
      tell(Progress::Kind::started, i, sinks_[i]->bytes(), files_[i].size);
    }
    std::vector<char> settled(which.size(), 0);
    auto answers = transport.get_many(requests, [&](std::size_t j, const Expected<net::Response>& a) {
      if (j >= which.size() || settled[j]) return;
      settled[j] = 1;
      settle(which[j], a, finishers);
    });
    for (std::size_t j = 0; j < which.size(); ++j) {
      if (settled[j]) continue;
      settle(which[j], j < answers.size() ? answers[j] : Expected<net::Response>(Error(
                                                             Errc::io_error, "the transport returned no answer")),
             finishers);
    }
    finishers.wait();
    pump();
    std::vector<std::size_t> again;
    again.swap(again_next_);
    std::sort(again.begin(), again.end());
    return again;
  }

  /// Asks for `i` again from zero, once: true when it will be.
  bool refetch(std::size_t i, const std::string& why) {
    if (again_[i]) return false;
    again_[i] = true;
    log::info(files_[i].filename + ": " + why + "; fetching it again from the start");
    sinks_[i]->restart();
    const std::lock_guard lock(mutex_);
    again_next_.push_back(i);
    return true;
  }

  /// An answer, on the calling thread: a failure settled here, a body handed to the finishers.
  void settle(std::size_t i, const Expected<net::Response>& answer, Finishers& finishers) {
    const Wanted& w = files_[i];
    Delivered& d = out_[i];
    PartSink& sink = *sinks_[i];
    d.bytes = sink.bytes();
    if (!answer) {
      // The part stays (with its validator) for a later run to continue, unless it holds nothing
      // (a 404) or the disk refused it (ENOSPC: keeping it keeps the disk full).
      if (range_refused(answer.error()) && refetch(i, "the server refused the range of the partial file")) return;
      if (sink.bytes() == 0 || sink.disk_failed()) discard_part(i);
      fail(i, answer.error().with_context(w.filename));
      return;
    }
    if (!sink.begun()) {
      discard_part(i);
      fail(i, Error(Errc::io_error, w.filename + ": " + util::redact(answer->url) + " answered HTTP " +
                                        std::to_string(answer->status) + " without a body"));
      return;
    }
    finishers.add([this, i] {
      try {
        complete(i);
      } catch (const std::exception& e) {  // never expected (an allocation failure)
        fail(i, Error(Errc::io_error, files_[i].filename + ": " + e.what()));
      }
    });
  }

  /// A body received whole: its digest checked, the part made durable, read back and renamed
  /// (on a finisher thread).
  void complete(std::size_t i) {
    const Wanted& w = files_[i];
    Delivered& d = out_[i];
    PartSink& sink = *sinks_[i];
    auto digest = sink.finish();
    if (!digest) {
      if (sink.disk_failed()) discard_part(i);
      fail(i, digest.error());
      return;
    }
    d.bytes = sink.bytes();
    d.sha256 = *digest;
    if (w.sha256 && *digest != *w.sha256) {
      if (sink.continued() && refetch(i, "the digest of the continued partial file is wrong")) return;
      discard(i);
      fail(i, Error(Errc::invalid_input, w.filename + ": sha256 mismatch: expected " + *w.sha256 + ", got " + *digest +
                                             " (" + std::to_string(d.bytes) + " bytes from " + util::redact(w.url) +
                                             "): the asset changed upstream, or was cut or altered on the way; a "
                                             "stale proxy or cache in between is the usual cause"));
      return;
    }
    if (!w.sha256 && w.size && d.bytes != *w.size) {
      discard(i);
      fail(i, Error(Errc::invalid_input, w.filename + ": " + std::to_string(d.bytes) + " bytes from " + util::redact(w.url) +
                                             ", expected " + std::to_string(*w.size)));
      return;
    }
    if (auto ok = sink.commit(*digest); !ok) {
      discard_part(i);
      fail(i, ok.error());
      return;
    }
    d.path = sink.paths().final;
    record_digest(d.path, d.sha256);
    d.status = Delivered::Status::fetched;
    d.verified = w.sha256.has_value();
    d.resumed = sink.resumed();
    d.continued = sink.continued();
    d.error.reset();
    tell(Progress::Kind::finished, i, d.bytes, d.bytes);
  }

  /// The parts (and metas) in the folder of files this run does not want, and the digest records
  /// of files no longer there: left by a run that wanted other files (or a prune), they would
  /// stay for ever. Only wheelfit's names, regular files of this user; the folder's lock is held,
  /// so no other run is writing them.
  void remove_unwanted_parts(const std::set<std::string>& wanted) const {
    std::error_code ec;
    for (fs::directory_iterator it(options_.dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::string_view file = name;
      if (!file.starts_with('.')) continue;
      bool record = false;
      if (file.ends_with(".part.meta")) file.remove_suffix(10);
      else if (file.ends_with(".part")) file.remove_suffix(5);
      else if (file.ends_with(".whl.sha256")) file.remove_suffix(7), record = true;
      else continue;
      file.remove_prefix(1);
      if (!is_delivered_name(file)) continue;  // a user's .notes.part: not wheelfit's to remove
      // A part this run does not continue goes; a digest record only once its file is gone.
      if (record ? fs::exists(options_.dir / file, ec) : wanted.count(std::string(file)) > 0) continue;
      ec.clear();
#ifdef _WIN32
      // No owner check: Windows has no uid; the folder's ACL decides who may write into it, and
      // a reparse point (a symlink, a junction) is not a regular file, so it stays.
      if (auto info = util::win::info_of(it->path(), false); !info || info->type != fs::file_type::regular) continue;
#else
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
#endif
      log::debug("removing " + it->path().string() + ": a part of a file this run does not want");
      fs::remove(it->path(), ec);
      ec.clear();
    }
  }

  /// A part worth nothing to a later run: it goes (with its meta).
  void discard_part(std::size_t i) { sinks_[i]->remove(); }

  /// Bytes that are not the file: the part goes, and a wrong file at the final name too.
  void discard(std::size_t i) {
    sinks_[i]->remove();
    std::error_code ec;
    fs::remove(sinks_[i]->paths().final, ec);
    fs::remove(digest_record_path(sinks_[i]->paths().final), ec);
  }

  const std::vector<Wanted>& files_;
  const DownloadOptions& options_;
  std::vector<Delivered> out_;
  std::vector<std::unique_ptr<PartSink>> sinks_;
  std::vector<char> again_;  ///< already fetched again from zero
  const std::thread::id caller_ = std::this_thread::get_id();
  ProgressHook sink_progress_;  ///< options_.progress, after the queued events
  std::mutex mutex_;            ///< guards told_ and again_next_
  std::deque<Progress> told_;   ///< progress events of the finishers, for the calling thread
  std::vector<std::size_t> again_next_;  ///< to fetch once more from zero, after this batch
};

}  // namespace

bool is_delivered_name(std::string_view filename) {
  return model::WheelName::parse(filename).has_value() || model::variants_file_name(filename).has_value();
}

fs::path digest_record_path(const fs::path& file) { return file.parent_path() / ("." + file.filename().string() + ".sha256"); }

Expected<util::FolderLock> lock_folder(const fs::path& dir, util::FolderLockOptions options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error(Errc::io_error, dir.string() + ": cannot create the folder: " + ec.message());
  if (options.purpose.empty()) options.purpose = "writing into " + dir.string();
  return util::FolderLock::take(dir / ".wheelfit.lock", options);
}

std::vector<Delivered> download(net::Transport& transport, const std::vector<Wanted>& files,
                                const DownloadOptions& options) {
  return Run(files, options).go(transport);
}

}  // namespace wheelfit::deliver
