// Byte sources: a local file (pread), an in-memory buffer, and a remote file read with HTTP Range
// requests (tail first, cached; Content-Range checked; a 200 answer means "Range ignored": the
// whole body is kept and served from memory; later reads pinned to the first version by If-Range).
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/util/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif

namespace wheelfit::inspect {
namespace {

using net::NetErrc;

/// Errc::invalid_input unless [offset, offset + length) lies inside [0, size).
std::optional<Error> check_range(const std::string& name, std::uint64_t size, std::uint64_t offset,
                                 std::uint64_t length) {
  if (offset > size || length > size - offset) {
    return Error(Errc::invalid_input, name + ": cannot read " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                          ": past the end of the " + std::to_string(size) + "-byte file");
  }
  return std::nullopt;
}

// --- memory -----------------------------------------------------------------------------------

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {}
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::uint64_t bytes_fetched() const override { return fetched_; }

 private:
  std::uint64_t size_impl() const override { return bytes_.size(); }
  Expected<std::string> read_impl(std::uint64_t offset, std::uint64_t length) override {
    if (auto e = check_range(name_, bytes_.size(), offset, length)) return *e;
    fetched_ += length;
    return bytes_.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
  }
  std::string bytes_;
  std::string name_;
  std::uint64_t fetched_ = 0;
};

// --- file -------------------------------------------------------------------------------------

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, std::uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }
  [[nodiscard]] std::string name() const override { return path_; }
  [[nodiscard]] std::uint64_t bytes_fetched() const override { return fetched_; }

 private:
  std::uint64_t size_impl() const override { return size_; }
  Expected<std::string> read_impl(std::uint64_t offset, std::uint64_t length) override {
    if (auto e = check_range(path_, size_, offset, length)) return *e;
    if (length > std::numeric_limits<std::size_t>::max() / 2) {
      return unexpected(Errc::too_large, path_ + ": a read of " + std::to_string(length) + " bytes is too large");
    }
    std::string out(static_cast<std::size_t>(length), '\0');
    std::size_t done = 0;
    while (done < out.size()) {
      const std::size_t chunk = std::min<std::size_t>(out.size() - done, std::size_t{1} << 30);
#ifdef _WIN32
      auto read = util::win::pread(fd_, out.data() + done, chunk, offset + done);
      if (!read) {
        return unexpected(Errc::io_error, path_ + ": read at offset " + std::to_string(offset + done) + " failed: " +
                                              read.error().message);
      }
      const std::size_t got = *read;
#else
      const ssize_t got = ::pread(fd_, out.data() + done, chunk, static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        return unexpected(Errc::io_error, path_ + ": read at offset " + std::to_string(offset + done) + " failed: " +
                                              std::strerror(errno));
      }
#endif
      if (got == 0) {
        return unexpected(Errc::io_error, path_ + ": the file ended at offset " + std::to_string(offset + done) +
                                              " (it was " + std::to_string(size_) + " bytes when opened: changed while reading?)");
      }
      done += static_cast<std::size_t>(got);
    }
    fetched_ += length;
    return out;
  }
  int fd_;
  std::uint64_t size_;
  std::string path_;
  std::uint64_t fetched_ = 0;
};

// --- remote -----------------------------------------------------------------------------------

constexpr std::uint64_t kTail = 65536;

struct ContentRange {
  std::uint64_t first = 0, last = 0, total = 0;
};

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// "bytes FIRST-LAST/TOTAL" (a known total only: "*" is useless to us).
std::optional<ContentRange> parse_content_range(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.size() < 6 || v.substr(0, 6) != "bytes ") return std::nullopt;
  v.remove_prefix(6);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  const std::size_t dash = v.find('-');
  const std::size_t slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) return std::nullopt;
  const auto first = parse_u64(v.substr(0, dash));
  const auto last = parse_u64(v.substr(dash + 1, slash - dash - 1));
  const auto total = parse_u64(v.substr(slash + 1));
  if (!first || !last || !total || *last < *first || *last >= *total) return std::nullopt;
  return ContentRange{*first, *last, *total};
}

std::size_t clamp_size(std::uint64_t v) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::size_t>::max()));
}

/// What pins a remote file between reads: RFC 9110 13.1.5, If-Range takes a strong ETag or a
/// Last-Modified date (a weak ETag cannot be used).
struct Pin {
  std::string etag, last_modified;

  static Pin of(const net::Headers& headers) {
    Pin p;
    if (auto e = net::find_header(headers, "etag"); e && !e->starts_with("W/")) p.etag = *e;
    if (auto m = net::find_header(headers, "last-modified")) p.last_modified = *m;
    return p;
  }
  /// The If-Range value, "" when the file cannot be pinned.
  [[nodiscard]] std::string if_range() const { return etag.empty() ? last_modified : etag; }
  /// True when `answer` names another version of the file (by the validator If-Range sends).
  [[nodiscard]] bool changed(const Pin& answer) const {
    if (!etag.empty()) return !answer.etag.empty() && answer.etag != etag;
    return !last_modified.empty() && !answer.last_modified.empty() && answer.last_modified != last_modified;
  }
};

class RemoteSource final : public ByteSource {
 public:
  RemoteSource(net::Transport& t, std::string url) : transport_(t), url_(std::move(url)) {}

  /// The first request: the tail (or the whole body when the server ignores Range).
  Expected<void> open(std::uint64_t max_download) {
    max_download_ = max_download;
    net::Request rq;
    rq.url = url_;
    // A 206 carries at most kTail bytes; a 200 (Range ignored) carries the whole wheel.
    rq.max_body = clamp_size(std::max(max_download, kTail));
    rq.headers.emplace_back("Range", "bytes=-" + std::to_string(kTail));
    auto r = transport_.get(rq);
    if (!r) {
      if (r.error().is(Errc::too_large)) {
        return unexpected(Errc::too_large, url_ + ": the server ignored the Range request and the whole file is "
                                                  "above the " + std::to_string(max_download) + "-byte download limit (" +
                                                  r.error().message + ")");
      }
      return r.error();
    }
    fetched_ += r->body.size();
    if (r->status == 200) {
      if (r->body.size() > max_download) {
        return unexpected(Errc::too_large, url_ + ": the server ignored the Range request and sent " +
                                               std::to_string(r->body.size()) + " bytes, above the " + std::to_string(max_download) +
                                               "-byte download limit");
      }
      whole_ = true;
      size_ = r->body.size();
      tail_offset_ = 0;
      tail_ = std::move(r->body);
      return {};
    }
    if (r->status != 206) {
      return net::net_error(NetErrc::protocol, url_ + ": HTTP " + std::to_string(r->status) +
                                                         " in answer to a Range request (expected 206 or 200)");
    }
    const auto header = net::find_header(r->headers, "content-range");
    if (!header) {
      return net::net_error(NetErrc::protocol, url_ + ": a 206 answer without Content-Range");
    }
    const auto cr = parse_content_range(*header);
    if (!cr) {
      return net::net_error(NetErrc::protocol,
                                  url_ + ": a 206 answer with a malformed Content-Range '" + std::string(*header) + "'");
    }
    const std::uint64_t want_first = cr->total - std::min(cr->total, kTail);
    if (cr->first != want_first || cr->last != cr->total - 1) {
      return net::net_error(NetErrc::protocol, url_ + ": asked for the last " + std::to_string(kTail) +
                                                         " bytes, the server answered Content-Range '" +
                                                         std::string(*header) + "' (expected bytes " + std::to_string(want_first) +
                                                         "-" + std::to_string(cr->total - 1) + "/" + std::to_string(cr->total) + ")");
    }
    if (r->body.size() != cr->last - cr->first + 1) {
      return net::net_error(NetErrc::protocol, url_ + ": Content-Range '" + std::string(*header) + "' announces " +
                                                         std::to_string(cr->last - cr->first + 1) + " bytes, the body has " +
                                                         std::to_string(r->body.size()));
    }
    size_ = cr->total;
    tail_offset_ = cr->first;
    tail_ = std::move(r->body);
    pin_ = Pin::of(r->headers);
    return {};
  }

  [[nodiscard]] std::string name() const override { return url_; }
  [[nodiscard]] std::uint64_t bytes_fetched() const override { return fetched_; }
  [[nodiscard]] bool downloaded_whole() const override { return whole_; }
  [[nodiscard]] std::uint64_t generation() const override { return generation_; }

 private:
  std::uint64_t size_impl() const override { return size_; }

  Expected<std::string> read_impl(std::uint64_t offset, std::uint64_t length) override {
    if (auto e = check_range(url_, size_, offset, length)) return *e;
    if (length == 0) return std::string();
    const std::uint64_t end = offset + length;
    if (offset >= tail_offset_) {
      return tail_.substr(static_cast<std::size_t>(offset - tail_offset_), static_cast<std::size_t>(length));
    }
    // Fetch what lies before the cached tail, then append the cached part.
    const std::uint64_t fetch_end = std::min(end, tail_offset_);
    auto head = fetch(offset, fetch_end - offset);
    if (!head) return head;
    if (end > tail_offset_) head->append(tail_, 0, static_cast<std::size_t>(end - tail_offset_));
    return head;
  }

  Expected<std::string> fetch(std::uint64_t offset, std::uint64_t length) {
    const std::uint64_t last = offset + length - 1;
    net::Request rq;
    rq.url = url_;
    rq.max_body = clamp_size(length);
    rq.headers.emplace_back("Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(last));
    const std::string if_range = pin_.if_range();
    if (!if_range.empty()) {
      rq.headers.emplace_back("If-Range", if_range);
      rq.max_body = clamp_size(std::max(length, max_download_));  // a changed file comes back whole
    }
    auto r = transport_.get(rq);
    if (!r) return r.error();
    fetched_ += r->body.size();
    const std::string what = url_ + ": asked for bytes " + std::to_string(offset) + "-" + std::to_string(last);
    if (r->status == 200) {
      // With If-Range: the file changed since it was pinned (or Range is no longer honoured).
      // Without: only a whole body of the known size is usable.
      if (if_range.empty() && r->body.size() != size_) {
        return net::net_error(NetErrc::protocol, what + ", the server answered 200 with " +
                                                           std::to_string(r->body.size()) + " bytes (the file has " + std::to_string(size_) + ")");
      }
      return replaced(std::move(*r), offset, length, false);
    }
    if (r->status == 206 && pin_.changed(Pin::of(r->headers))) return read_whole_again(offset, length);
    if (r->status != 206) {
      return net::net_error(NetErrc::protocol, what + ", the server answered HTTP " + std::to_string(r->status));
    }
    const auto header = net::find_header(r->headers, "content-range");
    if (!header) return net::net_error(NetErrc::protocol, what + ", the 206 answer has no Content-Range");
    const auto cr = parse_content_range(*header);
    if (!cr || cr->first != offset || cr->last != last || cr->total != size_) {
      return net::net_error(NetErrc::protocol, what + " of " + std::to_string(size_) + ", the server answered Content-Range '" +
                                                         std::string(*header) + "'");
    }
    if (r->body.size() != length) {
      return net::net_error(NetErrc::protocol, what + ", the 206 body has " + std::to_string(r->body.size()) + " bytes");
    }
    return std::move(r->body);
  }

  /// The server ignored If-Range and answered a 206 of another version: the new file, whole.
  Expected<std::string> read_whole_again(std::uint64_t offset, std::uint64_t length) {
    net::Request rq;
    rq.url = url_;
    rq.max_body = clamp_size(max_download_);
    auto r = transport_.get(rq);
    if (!r) return r.error();
    fetched_ += r->body.size();
    if (r->status != 200) {
      return net::net_error(NetErrc::protocol, url_ + ": the file changed on the server; reading it again whole, "
                                                            "the server answered HTTP " + std::to_string(r->status));
    }
    return replaced(std::move(*r), offset, length, true);
  }

  /// From now on the source serves `whole` (a whole body) from memory. Unless it is the pinned
  /// file again (same size and validator), the bytes read so far may belong to another file: the
  /// generation moves on and readers start again.
  Expected<std::string> replaced(net::Response whole, std::uint64_t offset, std::uint64_t length, bool changed) {
    const Pin now = Pin::of(whole.headers);
    const bool same = !changed && whole.body.size() == size_ && !pin_.if_range().empty() && now.if_range() == pin_.if_range();
    if (!same) ++generation_;
    pin_ = now;
    whole_ = true;
    size_ = whole.body.size();
    tail_offset_ = 0;
    tail_ = std::move(whole.body);
    if (auto e = check_range(url_, size_, offset, length)) return *e;
    return tail_.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
  }

  net::Transport& transport_;
  std::string url_;
  std::uint64_t size_ = 0;
  std::uint64_t tail_offset_ = 0;  ///< where tail_ starts (0 with the whole body)
  std::string tail_;
  std::uint64_t fetched_ = 0;
  bool whole_ = false;
  std::uint64_t max_download_ = 0;
  Pin pin_;                      ///< the version the first answer named
  std::uint64_t generation_ = 0;  ///< bumped when the bytes were replaced
};

}  // namespace

#ifdef _WIN32
Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path) {
  // A pipe or a device (NUL, CON) is refused below, never read.
  util::win::OpenOptions options;
  options.regular_only = false;
  auto fd = util::win::open(util::win::from_utf8(path), options);
  if (!fd) {
    if (fd.error().is(Errc::not_found)) return unexpected(Errc::not_found, path + ": no such file");
    return unexpected(Errc::io_error, path + ": cannot open: " + util::win::reason_of(fd.error()));
  }
  auto info = util::win::info(*fd);
  if (!info || info->type != std::filesystem::file_type::regular) {
    ::close(*fd);
    if (!info) return unexpected(Errc::io_error, path + ": cannot stat: " + info.error().message);
    return unexpected(Errc::io_error, path + ": " + util::not_regular_text(info->type));
  }
  return std::unique_ptr<ByteSource>(new FileSource(*fd, info->size, path));
}
#else
Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path) {
  // Non-blocking: a FIFO is refused below rather than waited on (on a regular file it changes nothing).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return unexpected(Errc::not_found, path + ": no such file");
    return unexpected(Errc::io_error, path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return unexpected(Errc::io_error, path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return unexpected(Errc::io_error, path + ": " + util::not_regular_text(util::file_type_of(st.st_mode)));  // a FIFO: never read
  }
  return std::unique_ptr<ByteSource>(new FileSource(fd, static_cast<std::uint64_t>(st.st_size), path));
}
#endif

Expected<std::unique_ptr<ByteSource>> open_remote_source(net::Transport& transport, const std::string& url,
                                                         std::uint64_t max_download) {
  auto source = std::make_unique<RemoteSource>(transport, url);
  if (auto opened = source->open(max_download); !opened) return opened.error();
  return std::unique_ptr<ByteSource>(std::move(source));
}

std::unique_ptr<ByteSource> memory_source(std::string bytes, std::string name) {
  return std::make_unique<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace wheelfit::inspect
