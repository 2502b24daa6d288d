#include "wheelfit/transports/cache_transport.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <thread>
#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::transports {
namespace fs = std::filesystem;
namespace json = boost::json;
using transport::Headers;
using transport::Request;
using transport::Response;

namespace {

constexpr int kFormat = 2;  // 2: one file per entry, the sidecar line then the body (v2/)
constexpr std::uintmax_t kMaxSidecar = 4u << 20;  // a sidecar is a few hundred bytes; refuse silly ones

// ---------------------------------------------------------------------------------------------
// Small helpers

std::string hex(const unsigned char* data, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  return hex(md, len);
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// HTTP's optional whitespace (RFC 9110: space and tab only), not util::trim's ASCII whitespace: a header value
// such as "max-age=\v60" stays malformed, as it always was.
std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A non-negative decimal number, clamped; nullopt when not all digits.
std::optional<std::int64_t> parse_seconds(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  constexpr std::int64_t cap = std::int64_t{1} << 40;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > cap) v = cap;
  }
  return v;
}

/// What Cache-Control says (RFC 9111 5.2), as far as a private cache needs it.
struct CacheControl {
  bool no_store = false;
  bool no_cache = false;
  std::int64_t max_age = 0;  ///< 0 when absent or invalid (always revalidate)
};

CacheControl parse_cache_control(const Headers& headers) {
  CacheControl cc;
  bool seen_max_age = false;
  for (const auto& [name, value] : headers) {
    if (util::ascii_lower(name) != "cache-control") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      // Split on ',' outside quotes.
      std::size_t end = 0;
      bool quoted = false;
      for (; end < rest.size(); ++end) {
        if (rest[end] == '"') quoted = !quoted;
        else if (rest[end] == ',' && !quoted) break;
      }
      std::string_view item = trim_ows(rest.substr(0, end));
      rest = end < rest.size() ? rest.substr(end + 1) : std::string_view{};
      const auto eq = item.find('=');
      const std::string key = util::ascii_lower(trim_ows(item.substr(0, eq)));
      const std::string_view arg = eq == std::string_view::npos ? std::string_view{} : trim_ows(item.substr(eq + 1));
      if (key == "no-store") cc.no_store = true;
      else if (key == "no-cache") cc.no_cache = true;
      else if (key == "max-age" && !seen_max_age) {
        seen_max_age = true;
        cc.max_age = parse_seconds(arg).value_or(0);  // invalid: treat as stale (RFC 9111 4.2.1)
      }
    }
  }
  return cc;
}

std::string header_or_empty(const Headers& headers, std::string_view name) {
  auto v = transport::find_header(headers, name);
  return v ? std::string(*v) : std::string{};
}

bool has_header(const Headers& headers, std::string_view name) { return transport::find_header(headers, name).has_value(); }

// ---------------------------------------------------------------------------------------------
// Entries

struct Meta {
  std::string url;
  std::string accept;
  std::string final_url;
  std::string content_type;
  std::string etag;
  std::string last_modified;
  std::int64_t max_age = 0;
  bool no_cache = false;
  std::int64_t age = 0;        ///< the Age header when stored
  std::int64_t stored_at = 0;  ///< unix seconds
  std::string sha256;
  std::uint64_t size = 0;
  Headers headers;
  std::uint64_t offset = 0;  ///< where the body starts in the entry file (read, not stored)
  std::uint64_t file_size = 0;  ///< the entry file's size when the sidecar was read (not stored)
  ino_t inode = 0;           ///< the entry file the sidecar was read from (read, not stored)
  dev_t device = 0;

  [[nodiscard]] bool fresh(std::int64_t now) const {
    if (no_cache || max_age <= 0 || now < stored_at) return false;
    return (now - stored_at) + age < max_age;
  }
  [[nodiscard]] bool has_validator() const { return !etag.empty() || !last_modified.empty(); }

  /// Validators and freshness from `hdrs` (a 200's headers, or the merged headers after a 304).
  void take_headers(Headers hdrs, std::int64_t now) {
    headers = std::move(hdrs);
    std::erase_if(headers, [](const auto& h) { return util::is_credential_header(h.first); });  // Set-Cookie: not kept
    const auto cc = parse_cache_control(headers);
    max_age = cc.max_age;
    no_cache = cc.no_cache;
    etag = header_or_empty(headers, "etag");
    last_modified = header_or_empty(headers, "last-modified");
    age = parse_seconds(trim_ows(header_or_empty(headers, "age"))).value_or(0);
    stored_at = now;
  }
};

std::string meta_to_json(const Meta& m) {
  json::array hdrs;
  for (const auto& [k, v] : m.headers) hdrs.push_back(json::array{json::string(k), json::string(v)});
  json::object o;
  o["format"] = kFormat;
  o["url"] = m.url;
  o["accept"] = m.accept;
  o["final_url"] = m.final_url;
  o["status"] = 200;
  o["content_type"] = m.content_type;
  o["etag"] = m.etag;
  o["last_modified"] = m.last_modified;
  o["max_age"] = m.max_age;
  o["no_cache"] = m.no_cache;
  o["age"] = m.age;
  o["stored_at"] = m.stored_at;
  o["sha256"] = m.sha256;
  o["size"] = m.size;
  o["headers"] = std::move(hdrs);
  return json::serialize(o) + "\n";
}

/// Parses a sidecar; a description of what is wrong on failure.
std::optional<Meta> meta_from_json(std::string_view text, std::string& why) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) {
    why = "the sidecar is not JSON (" + ec.message() + ")";
    return std::nullopt;
  }
  const auto* o = v.if_object();
  if (!o) {
    why = "the sidecar is not a JSON object";
    return std::nullopt;
  }
  Meta m;
  auto str = [&](const char* key, std::string& out) {
    const auto* f = o->if_contains(key);
    if (!f || !f->is_string()) {
      why = std::string("the sidecar's '") + key + "' is missing or not a string";
      return false;
    }
    out = std::string(f->get_string());
    return true;
  };
  auto num = [&](const char* key, std::int64_t& out) {
    const auto* f = o->if_contains(key);
    if (f && f->is_int64() && f->get_int64() >= 0) {
      out = f->get_int64();
      return true;
    }
    if (f && f->is_uint64() && f->get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      out = static_cast<std::int64_t>(f->get_uint64());
      return true;
    }
    why = std::string("the sidecar's '") + key + "' is missing or not a non-negative integer";
    return false;
  };
  std::int64_t format = 0;
  if (!num("format", format)) return std::nullopt;
  if (format != kFormat) {
    why = "the sidecar has format " + std::to_string(format) + ", not " + std::to_string(kFormat);
    return std::nullopt;
  }
  std::int64_t size = 0;
  if (!str("url", m.url) || !str("accept", m.accept) || !str("final_url", m.final_url) ||
      !str("content_type", m.content_type) || !str("etag", m.etag) || !str("last_modified", m.last_modified) ||
      !str("sha256", m.sha256) || !num("max_age", m.max_age) || !num("age", m.age) ||
      !num("stored_at", m.stored_at) || !num("size", size)) {
    return std::nullopt;
  }
  m.size = static_cast<std::uint64_t>(size);
  const auto* nc = o->if_contains("no_cache");
  if (!nc || !nc->is_bool()) {
    why = "the sidecar's 'no_cache' is missing or not a boolean";
    return std::nullopt;
  }
  m.no_cache = nc->get_bool();
  if (m.sha256.size() != 64) {
    why = "the sidecar's 'sha256' is not 64 hex digits";
    return std::nullopt;
  }
  const auto* hs = o->if_contains("headers");
  if (!hs || !hs->is_array()) {
    why = "the sidecar's 'headers' is missing or not an array";
    return std::nullopt;
  }
  for (const auto& h : hs->get_array()) {
    const auto* pair = h.if_array();
    if (!pair || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string()) {
      why = "the sidecar's 'headers' holds something other than [name, value] pairs";
      return std::nullopt;
    }
    m.headers.emplace_back(std::string((*pair)[0].get_string()), std::string((*pair)[1].get_string()));
  }
  return m;
}

/// Headers of a 304 replace the stored ones of the same name (RFC 9111 4.3.4).
Headers merge_headers(const Headers& stored, const Headers& fresh) {
  Headers out;
  for (const auto& h : stored) {
    const auto lower = util::ascii_lower(h.first);
    // The stored Age described the old response; the 304's own Age (if any) replaces it.
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "age" || has_header(fresh, h.first)) {
      continue;
    }
    out.push_back(h);
  }
  for (const auto& h : fresh) {
    const auto lower = util::ascii_lower(h.first);
    if (lower == "content-length" || lower == "transfer-encoding") continue;
    out.push_back(h);
  }
  return out;
}

/// Runs `a` on a helper thread and `b` on this one, and returns when both are done (both inline,
/// one after the other, when no thread can be started). An exception from either is rethrown.
template <class A, class B>
void run_beside(A&& a, B&& b) {
  std::future<void> helper;
  try {
    helper = std::async(std::launch::async, [&a, sink = log::thread_sink()] {
      const log::ScopedSink carried(sink);  // the call's log sink, on the helper thread too
      a();
    });
  } catch (const std::system_error&) {
    a();
  }
  std::exception_ptr failed;
  try {
    b();
  } catch (...) {
    failed = std::current_exception();
  }
  if (helper.valid()) helper.get();  // joins; rethrows a's exception
  if (failed) std::rethrow_exception(failed);
}

// ---------------------------------------------------------------------------------------------
// The store: one file per entry under <root>/v2, `<key>.entry`: the sidecar (one line of JSON),
// '\n', then the body. One file means one inode to allocate per new entry (file creation, not
// the bytes, dominates a cold write: decision 0009) and no pair that can be half replaced.
// Reads happen on the caller's threads; every change (a new or rewritten entry, a removal) is
// queued, in order, to one writer thread, so the caller has its answers while the bytes go to
// disk. drain() waits for the queue; the cache drains it before each batch reads, so a batch
// always sees what the batches before it stored.

class Store {
 public:
  explicit Store(fs::path dir) : dir_(std::move(dir)) {}
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    if (thread_.joinable()) thread_.join();  // the worker empties the queue before it stops
  }

  /// The valid sidecar stored for (url, accept) under `key`, if any (Meta::offset set); a corrupt
  /// entry is deleted with a warning. Safe from several threads for different keys while the
  /// writer is idle.
  std::optional<Meta> load_meta(const std::string& key, const std::string& url, const std::string& accept) const {
    const auto path = entry_path(key);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      discard(key, url, std::string("the entry cannot be read: ") + std::strerror(errno));
      return std::nullopt;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      discard(key, url, std::string("the entry cannot be read: ") + std::strerror(err));
      return std::nullopt;
    }
    // The sidecar is the first line: a few hundred bytes; read in steps up to its limit.
    std::string head;
    std::size_t newline = std::string::npos;
    std::string why;
    while (newline == std::string::npos && why.empty()) {
      const std::size_t old = head.size();
      if (old >= kMaxSidecar) {
        why = "the sidecar line is longer than " + std::to_string(kMaxSidecar) + " bytes";
        break;
      }
      head.resize(old + std::min<std::size_t>(16384, kMaxSidecar - old));
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
      head.resize(old + static_cast<std::size_t>(n));
      newline = head.find('\n', old);
    }
    ::close(fd);
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
    meta->file_size = static_cast<std::uint64_t>(st.st_size);
    meta->inode = st.st_ino;
    meta->device = st.st_dev;
    return meta;
  }

  /// The body `meta` describes, when its size and sha256 match; otherwise the entry is deleted with
  /// a warning. It is read into `buffer` when that is already meta.size bytes long: a caller
  /// allocates it on its own thread, so a helper thread reading it adds no memory of its own.
  /// Same threading as load_meta.
  std::optional<std::string> load_body(const std::string& key, const Meta& meta, std::string buffer) const {
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

  /// Queues an entry (new, or rewritten with a refreshed sidecar); the writer fills in its sha256
  /// and size.
  void put(std::string key, Meta meta, std::string body) { enqueue({Job::put, std::move(key), std::move(meta), std::move(body)}); }
  /// Queues the removal of an entry.
  void erase(std::string key) { enqueue({Job::erase, std::move(key), {}, {}}); }

  /// Returns when every queued change is on disk (or failed with a warning).
  void drain() {
    std::unique_lock lock(mu_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

 private:
  struct Job {
    enum Kind { put, erase } kind;
    std::string key;
    Meta meta;
    std::string body;
    std::shared_ptr<const log::Sink> sink = log::thread_sink();  ///< the enqueuing call's log sink
  };

  [[nodiscard]] fs::path entry_path(const std::string& key) const { return dir_ / (key + ".entry"); }

  /// Reads the body of the entry at `p` into `buffer` (resized only when it is not meta.size long).
  /// `replaced`: the file is no longer the one the sidecar came from (or is gone).
  static bool read_body(const fs::path& p, const Meta& meta, std::string& buffer, std::string& why, bool& replaced) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
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
    if (file_size < meta.offset || file_size - meta.offset != meta.size) {
      ::close(fd);
      why = "the body has " + std::to_string(file_size < meta.offset ? 0 : file_size - meta.offset) +
            " bytes, the sidecar says " + std::to_string(meta.size);
      return false;
    }
    buffer.resize(static_cast<std::size_t>(meta.size));
    std::size_t done = 0;
    while (done < buffer.size()) {
      const auto n = ::pread(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(meta.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        why = n < 0 ? std::string("the body cannot be read: ") + std::strerror(errno) : "the entry shrank while it was read";
        ::close(fd);
        return false;
      }
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return true;
  }

  void enqueue(Job job) {
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

  void work() {
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

  void run(Job& job) {
    switch (job.kind) {
      case Job::put:
        job.meta.sha256 = sha256_hex(job.body);
        job.meta.size = job.body.size();
        write_entry(job.key, job.meta, job.body);
        return;
      case Job::erase: remove(job.key); return;
    }
  }

  void remove(const std::string& key) const {
    std::error_code ec;
    fs::remove(entry_path(key), ec);
  }

  void discard(const std::string& key, const std::string& url, const std::string& why) const {
    log::warn("cache: discarded the corrupt entry for " + util::redact(url) + " (" + util::redact(why) + ") in " + dir_.string());
    remove(key);
  }

  /// Writes the entry to a temporary file, then renames it over the old one: readers see the old
  /// entry or the new one, never a mix; a failed write leaves the old entry whole.
  void write_entry(const std::string& key, const Meta& meta, std::string_view body) const {
    const std::string head = meta_to_json(meta);  // one line, '\n'-terminated
    // No fsync: a cache entry needs atomicity, not durability; the sidecar's size and sha256 catch a body torn by
    // a crash, and a torn entry is refetched. An fsync per page made a cold 45-page read cost several round trips
    // of disk flushes.
    if (auto w = util::write_file_atomic(entry_path(key), {head, body}, {.durable = false, .mode = 0600}); !w) {
      log::warn("cache: could not store " + meta.url + ": " + w.error().message);
    }
  }

  fs::path dir_;
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  bool inline_ = false;
  std::thread thread_;
};

/// Whether a 304 changes what a later run does, so its refreshed sidecar is worth a write: the entry
/// becomes fresh for a while (max-age > 0), or the validators changed. Under max-age=0 or no-cache
/// the new stored-at would never be read: every later run revalidates anyway.
bool worth_storing(const Meta& before, const Meta& after, std::int64_t now) {
  return after.fresh(now) || after.etag != before.etag || after.last_modified != before.last_modified;
}

// ---------------------------------------------------------------------------------------------
// The decorator

class CacheTransport final : public transport::Transport {
 public:
  CacheTransport(std::unique_ptr<transport::Transport> inner, fs::path dir, bool offline)
      : inner_(std::move(inner)), store_(std::move(dir)), offline_(offline) {}

  [[nodiscard]] transport::Stats stats() const override {
    auto s = inner_->stats();
    s.cache_fresh += fresh_;
    s.cache_revalidated += revalidated_;
    return s;
  }

  void flush() override {
    store_.drain();
    inner_->flush();
  }

 private:
  struct Plan {
    bool cached = false;       ///< a cacheable URL (http/https, no caller validators)
    bool serve = false;        ///< answered from the stored entry without a request (fresh, or offline)
    bool conditional = false;  ///< we add If-None-Match / If-Modified-Since
    std::string key;
    std::string accept;
    std::optional<Meta> meta;                  ///< a valid stored sidecar (stale ones too)
    std::string buffer;                        ///< meta->size bytes, allocated here for the body's read
    std::optional<std::string> body;           ///< its verified body, when serve or conditional
    std::optional<Expected<Response>> answer;  ///< set once the plan is settled
  };

  Expected<Response> get_impl(const Request& request) override {
    auto out = get_many_impl({request});
    return std::move(out.front());
  }

  std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) override {
    store_.drain();  // this batch reads what the batches before it stored
    const auto now = now_seconds();
    std::vector<Plan> plans(requests.size());
    std::vector<std::size_t> to_inner;  // plans whose request goes to the inner transport

    // 1. The sidecars (small) decide what to ask.
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const auto& req = requests[i];
      auto& plan = plans[i];
      plan.cached = util::is_http_url(req.url) && !has_header(req.headers, "if-none-match") &&
                    !has_header(req.headers, "if-modified-since") && !has_header(req.headers, "range");
      if (!plan.cached) {
        if (offline_ && util::is_http_url(req.url)) plan.answer.emplace(offline_miss(req.url));
        else to_inner.push_back(i);
        continue;
      }
      plan.accept = header_or_empty(req.headers, "accept");
      // Keyed and stored without credentials: no secret in a file name or an entry.
      const std::string url = util::strip_credentials(req.url);
      plan.key = sha256_hex(url + "\n" + plan.accept);
      plan.meta = store_.load_meta(plan.key, url, plan.accept);
      if (plan.meta && plan.meta->size > req.max_body) {
        plan.answer.emplace(unexpected(Errc::too_large, url + ": " + std::to_string(plan.meta->size) +
                                                            " bytes (cached) exceeds the limit of " +
                                                            std::to_string(req.max_body) + " bytes"));
        continue;
      }
      if (offline_) {
        if (plan.meta) plan.serve = true;
        else plan.answer.emplace(offline_miss(req.url));
        continue;
      }
      if (plan.meta && plan.meta->fresh(now)) {
        plan.serve = true;
        continue;
      }
      plan.conditional = plan.meta && plan.meta->has_validator();
      to_inner.push_back(i);
    }

    // 2. The bodies (the bulk of the bytes) are read and verified while the requests are on the
    //    wire; with nothing to send, on two threads.
    std::vector<std::size_t> need;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].serve || plans[i].conditional) need.push_back(i);
    }
    for (auto i : need) {  // sized here only when the file is that size: a lying sidecar allocates nothing
      const Meta& m = *plans[i].meta;
      if (m.file_size == m.offset + m.size) plans[i].buffer.resize(m.size);
    }
    auto load = [&](const std::vector<std::size_t>& which) {
      for (auto i : which) plans[i].body = store_.load_body(plans[i].key, *plans[i].meta, std::move(plans[i].buffer));
    };
    std::vector<Expected<Response>> inner_answers;
    std::vector<char> stored(to_inner.size(), 0);  // stored[j]: the answer to inner request j is queued
    if (!to_inner.empty()) {
      std::vector<Request> inner_requests;
      inner_requests.reserve(to_inner.size());
      for (auto i : to_inner) inner_requests.push_back(with_validators(requests[i], plans[i]));
      // A new entry goes to the writer the moment its answer is in, while the rest still arrive.
      auto on_answer = [&](std::size_t j, const Expected<Response>& a) {
        if (j >= to_inner.size() || !plans[to_inner[j]].cached || !a || a->status != 200) return;
        if (parse_cache_control(a->headers).no_store) return;  // settle removes the old entry
        const auto i = to_inner[j];
        store_.put(plans[i].key, new_meta(requests[i], plans[i], *a), a->body);  // a copy: the caller keeps its own
        stored[j] = 1;
      };
      auto fetch = [&] { inner_answers = inner_->get_many(inner_requests, on_answer); };
      if (need.empty()) fetch();
      else run_beside([&] { load(need); }, fetch);
    } else if (need.size() > 1) {
      auto [one, two] = split_by_size(need, plans);
      run_beside([&] { load(one); }, [&] { load(two); });
    } else {
      load(need);
    }

    // 3. Settle. A body found corrupt under a fresh sidecar or a 304 is fetched again, plainly.
    std::vector<std::size_t> refetch;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      auto& plan = plans[i];
      if (!plan.serve) continue;
      if (plan.body) {
        ++fresh_;
        plan.answer.emplace(from_entry(*plan.meta, std::move(*plan.body)));
      } else if (offline_) {
        plan.answer.emplace(offline_miss(requests[i].url));
      } else {
        refetch.push_back(i);
      }
    }
    for (std::size_t j = 0; j < to_inner.size(); ++j) {
      const auto i = to_inner[j];
      auto& plan = plans[i];
      if (j >= inner_answers.size()) {
        plan.answer.emplace(unexpected(Errc::io_error, requests[i].url + ": the inner transport returned no answer"));
        continue;
      }
      auto& answer = inner_answers[j];
      if (plan.cached && answer && answer->status == 304 && plan.conditional && !plan.body) {
        refetch.push_back(i);
        continue;
      }
      plan.answer.emplace(plan.cached ? settle(requests[i], plan, std::move(answer), stored[j] != 0) : std::move(answer));
    }
    if (!refetch.empty()) {
      std::vector<Request> again;
      again.reserve(refetch.size());
      for (auto i : refetch) {
        plans[i].meta.reset();
        plans[i].body.reset();
        plans[i].conditional = false;
        again.push_back(requests[i]);
      }
      auto answers = inner_->get_many(again);
      for (std::size_t j = 0; j < refetch.size(); ++j) {
        auto& plan = plans[refetch[j]];
        plan.answer.emplace(j < answers.size() ? settle(requests[refetch[j]], plan, std::move(answers[j]))
                                               : Expected<Response>(unexpected(Errc::io_error, requests[refetch[j]].url +
                                                                          ": the inner transport returned no answer")));
      }
    }

    std::vector<Expected<Response>> out;
    out.reserve(plans.size());
    for (auto& plan : plans) out.push_back(std::move(*plan.answer));
    return out;
  }

  static Request with_validators(const Request& req, const Plan& plan) {
    Request r = req;
    if (plan.conditional) {
      if (!plan.meta->etag.empty()) r.headers.emplace_back("If-None-Match", plan.meta->etag);
      if (!plan.meta->last_modified.empty()) r.headers.emplace_back("If-Modified-Since", plan.meta->last_modified);
    }
    return r;
  }

  /// Two lists of about equal bytes (largest first, each to the lighter list).
  static std::pair<std::vector<std::size_t>, std::vector<std::size_t>> split_by_size(std::vector<std::size_t> which,
                                                                                     const std::vector<Plan>& plans) {
    std::sort(which.begin(), which.end(), [&](auto a, auto b) { return plans[a].meta->size > plans[b].meta->size; });
    std::pair<std::vector<std::size_t>, std::vector<std::size_t>> out;
    std::uint64_t first = 0, second = 0;
    for (auto i : which) {
      if (first <= second) {
        out.first.push_back(i);
        first += plans[i].meta->size;
      } else {
        out.second.push_back(i);
        second += plans[i].meta->size;
      }
    }
    return out;
  }

  /// The sidecar of a new entry for `r`, the 200 answering `req` (its sha256 and size: the writer's).
  static Meta new_meta(const Request& req, const Plan& plan, const Response& r) {
    Meta m;
    m.url = util::strip_credentials(req.url);
    m.accept = plan.accept;
    m.final_url = util::strip_credentials(r.url.empty() ? req.url : r.url);
    m.content_type = r.content_type;
    m.take_headers(r.headers, now_seconds());
    return m;
  }

  /// What a cacheable request's inner answer means for the entry and for the caller; `queued`: a
  /// 200 already went to the writer as it arrived.
  Expected<Response> settle(const Request& req, Plan& plan, Expected<Response> answer, bool queued = false) {
    if (!answer) {
      // A clean "not published" removes the entry; network errors pass through, the entry kept.
      if (answer.error().is(Errc::not_found)) store_.erase(plan.key);
      return answer;
    }
    Response& r = *answer;
    if (r.status == 304) {
      if (!plan.conditional || !plan.meta || !plan.body) {
        return transport::net_error(transport::NetErrc::protocol,
                                    req.url + ": a 304 Not Modified answered a request that was not conditional");
      }
      const auto now = now_seconds();
      Meta updated = *plan.meta;
      updated.take_headers(merge_headers(plan.meta->headers, r.headers), now);
      if (parse_cache_control(updated.headers).no_store) store_.erase(plan.key);
      else if (worth_storing(*plan.meta, updated, now)) store_.put(plan.key, updated, *plan.body);  // a copy
      ++revalidated_;
      return from_entry(updated, std::move(*plan.body));
    }
    if (r.status != 200) return answer;  // not cacheable; the caller sees what came
    if (parse_cache_control(r.headers).no_store) {
      store_.erase(plan.key);
      return answer;
    }
    if (!queued) store_.put(plan.key, new_meta(req, plan, r), r.body);  // a copy: the caller keeps its own
    return answer;
  }

  static Error offline_miss(const std::string& url) {
    return transport::net_error(transport::NetErrc::offline, util::strip_credentials(url) + ": not in the cache (offline mode)");
  }

  static Response from_entry(const Meta& meta, std::string body) {
    Response r;
    r.url = meta.final_url;
    r.content_type = meta.content_type;
    r.body = std::move(body);
    r.status = 200;
    r.headers = meta.headers;
    r.from_cache = true;
    return r;
  }

  std::unique_ptr<transport::Transport> inner_;
  Store store_;  ///< <root>/v2; destroyed (its writes finished) before inner_
  bool offline_;
  std::uint64_t fresh_ = 0;
  std::uint64_t revalidated_ = 0;
};

std::optional<fs::path> absolute_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  fs::path p(v);
  if (!p.is_absolute()) return std::nullopt;
  return p;
}

}  // namespace

Expected<fs::path> default_cache_dir() {
  if (auto xdg = absolute_env("XDG_CACHE_HOME")) return *xdg / "wheelfit";
  if (auto home = absolute_env("HOME")) return *home / ".cache" / "wheelfit";
  return unexpected(Errc::invalid_input,
                    "no cache directory: neither XDG_CACHE_HOME nor HOME is set to an absolute path");
}

Expected<std::unique_ptr<transport::Transport>> make_cache_transport(std::unique_ptr<transport::Transport> inner,
                                                                      CacheOptions options) {
  if (!inner) return unexpected(Errc::invalid_input, "make_cache_transport: no inner transport");
  fs::path root = options.dir;
  if (root.empty()) {
    auto d = default_cache_dir();
    if (!d) return d.error();
    root = std::move(*d);
  }
  const fs::path dir = root / "v2";  // format 2; a v1/ beside it (two files an entry) is not read
  // Private: entries may name internal hosts (folders 0700, files 0600).
  if (auto made = util::create_private_directories(dir); !made) {
    return unexpected(Errc::io_error, "cache directory " + dir.string() + ": " + made.error().message);
  }
  std::error_code ec;
  // A ".tmp-" name: never read as an entry, should a crash leave it behind.
  const fs::path probe = dir / ".tmp-probe";
  if (auto w = util::write_file_atomic(probe, {}, {.durable = false}); !w) {
    return unexpected(Errc::io_error, "cache directory " + dir.string() + " is not writable: " + w.error().message);
  }
  fs::remove(probe, ec);
  return std::unique_ptr<transport::Transport>(std::make_unique<CacheTransport>(std::move(inner), dir, options.offline));
}

}  // namespace wheelfit::transports
