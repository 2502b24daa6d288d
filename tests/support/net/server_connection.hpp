#pragma once
// The parts of the loopback servers (test_server.hpp) that the server, its scripts and the proxy
// share: one accepted connection (plain or TLS) and the socket and header helpers under it.
// Internal to tests/support/net/*.cpp.

#include "support/net/test_server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfit::testing::detail {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline constexpr std::size_t kMaxHead = 1u << 20;
inline constexpr std::size_t kMaxBody = 64u << 20;
inline constexpr auto kStopPoll = 50ms;  // how often a splice re-reads the stop flag

inline char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

inline std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

inline std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// True when `fd` has something to read (data, EOF or an error) before `deadline`.
inline bool wait_readable(int fd, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, millis_until(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

inline bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

inline void set_linger_zero(int fd) {
  const linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

inline void set_io_timeout(int fd, std::chrono::seconds t) {
  const timeval tv{static_cast<time_t>(t.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// What a connection shares with its server: the stop flag (and a sleep it cuts short) and the
// request log.
struct Shared {
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<HttpRequest> requests;

  void record(const HttpRequest& r) {
    const std::lock_guard lock(mu);
    requests.push_back(r);
  }
  // False when the server stopped during the wait.
  bool sleep_for(std::chrono::milliseconds d) {
    std::unique_lock lock(mu);
    return !cv.wait_for(lock, d, [&] { return stopping.load(); });
  }
  void stop() {
    {
      const std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
  }
};

inline std::optional<HttpRequest> parse_head(std::string_view head) {
  const std::size_t line_end = std::min(head.find("\r\n"), head.size());
  const std::string_view line = head.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = line.find(' ', sp1 == std::string_view::npos ? line.size() : sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) return std::nullopt;
  HttpRequest r;
  r.method = line.substr(0, sp1);
  r.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  r.version = line.substr(sp2 + 1);
  std::string_view rest = head.substr(std::min(line_end + 2, head.size()));
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find("\r\n"), rest.size());
    const std::string_view h = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 2, rest.size()));
    const std::size_t colon = h.find(':');
    if (colon == std::string_view::npos) continue;
    r.headers.emplace_back(std::string(h.substr(0, colon)), std::string(trim(h.substr(colon + 1))));
  }
  return r;
}

// One accepted socket, plain or TLS. The script's thread does all I/O; stop() may only
// shut the socket down (under mu_), which wakes whatever that thread is blocked in.
class Connection final : public Conn {
 public:
  Connection(int fd, int index, Shared& shared) : fd_(fd), index_(index), shared_(shared) {}
  ~Connection() override { close(false); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool handshake(SSL_CTX* ctx) {
    ssl_ = SSL_new(ctx);
    if (ssl_ == nullptr) return false;
    SSL_set_fd(ssl_, fd_);
    set_io_timeout(fd_, 10s);  // a client that connects and never says hello
    const bool ok = SSL_accept(ssl_) == 1;
    set_io_timeout(fd_, 0s);
    ERR_clear_error();
    return ok;
  }

  std::optional<HttpRequest> read_request(std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    while (buffer_.starts_with("\r\n")) buffer_.erase(0, 2);
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (buffer_.size() > kMaxHead || fill(deadline) <= 0) return std::nullopt;
      while (buffer_.starts_with("\r\n")) buffer_.erase(0, 2);
    }
    auto request = parse_head(std::string_view(buffer_).substr(0, end));
    if (!request) return std::nullopt;
    std::size_t length = 0;
    if (const auto cl = request->header("content-length")) {
      const auto [ptr, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), length);
      if (ec != std::errc() || ptr != cl->data() + cl->size() || length > kMaxBody) return std::nullopt;
    }
    const std::size_t total = end + 4 + length;
    while (buffer_.size() < total) {
      if (fill(deadline) <= 0) return std::nullopt;
    }
    request->body = buffer_.substr(end + 4, length);
    buffer_.erase(0, total);
    request->connection = index_;
    shared_.record(*request);
    return request;
  }

  bool write(std::string_view bytes) override {
    if (fd_ < 0) return false;
    if (ssl_ == nullptr) return send_all(fd_, bytes);
    while (!bytes.empty()) {
      const int chunk = static_cast<int>(std::min<std::size_t>(bytes.size(), 1 << 20));
      const int n = SSL_write(ssl_, bytes.data(), chunk);
      if (n <= 0) {
        ERR_clear_error();
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  void reset() override {
    const std::lock_guard lock(mu_);
    if (fd_ < 0) return;
    free_ssl(false);
    set_linger_zero(fd_);
    ::close(fd_);
    fd_ = -1;
  }

  void close(bool notify) override {
    const std::lock_guard lock(mu_);
    if (fd_ < 0) return;
    free_ssl(notify);
    // Unread request bytes would turn close() into an RST that can overtake the response
    // still in flight, so half-close and drop what already arrived first.
    ::shutdown(fd_, SHUT_WR);
    std::array<char, 4096> sink{};
    while (::recv(fd_, sink.data(), sink.size(), MSG_DONTWAIT) > 0) {
    }
    ::close(fd_);
    fd_ = -1;
  }

  std::string read_some(std::chrono::milliseconds timeout) override {
    if (buffer_.empty() && fill(Clock::now() + timeout) <= 0) return {};
    return std::exchange(buffer_, {});
  }

  [[nodiscard]] int index() const override { return index_; }
  [[nodiscard]] int fd() const override { return fd_; }

  // From stop(): wakes the script's thread wherever it blocks on this socket.
  void abort() {
    const std::lock_guard lock(mu_);
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  }
  // Bytes read past the last request (a client that sent its TLS hello right after CONNECT).
  std::string take_buffered() { return std::exchange(buffer_, {}); }
  [[nodiscard]] Shared& shared() const { return shared_; }

 private:
  // Reads more into buffer_: > 0 bytes, 0 at EOF, -1 on error or at the deadline.
  long fill(Clock::time_point deadline) {
    if (fd_ < 0) return -1;
    std::array<char, 16384> buf{};
    while (true) {
      if ((ssl_ == nullptr || SSL_pending(ssl_) == 0) && !wait_readable(fd_, deadline)) return -1;
      long n;
      if (ssl_ == nullptr) {
        n = ::recv(fd_, buf.data(), buf.size(), 0);
        if (n < 0 && errno == EINTR) continue;
      } else {
        n = SSL_read(ssl_, buf.data(), static_cast<int>(buf.size()));
        if (n <= 0) {
          const int err = SSL_get_error(ssl_, static_cast<int>(n));
          ERR_clear_error();
          if (err == SSL_ERROR_WANT_READ) continue;
          return err == SSL_ERROR_ZERO_RETURN ? 0 : -1;
        }
      }
      if (n > 0) buffer_.append(buf.data(), static_cast<std::size_t>(n));
      return n;
    }
  }

  void free_ssl(bool notify) {
    if (ssl_ == nullptr) return;
    if (notify) SSL_shutdown(ssl_);
    ERR_clear_error();
    SSL_free(ssl_);
    ssl_ = nullptr;
  }

  std::mutex mu_;
  int fd_;
  SSL* ssl_ = nullptr;
  const int index_;
  Shared& shared_;
  std::string buffer_;
};

inline Connection& connection_of(Conn& c) { return static_cast<Connection&>(c); }

inline bool client_wants_close(const HttpRequest& r) {
  const auto c = r.header("connection");
  return (c && iequals(trim(*c), "close")) || r.version == "HTTP/1.0";
}

inline bool response_closes(std::string_view response) {
  const std::string head = lowered(response.substr(0, response.find("\r\n\r\n")));
  return head.find("\r\nconnection: close") != std::string::npos;
}

}  // namespace wheelfit::testing::detail
