// The loopback servers of test_server.hpp on plain POSIX sockets, one thread per connection and
// OpenSSL for TLS (the test CA is in test_ca.cpp): independent of the Asio/Beast code they test.
// Stopping is prompt because every blocking call sits on a socket that stop() can shut down
// (accept, recv, send, SSL_accept) or in a poll() with a short timeout that re-reads the stop
// flag (the proxy's splice).

#include "support/net/test_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fstream>
#include <list>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace wheelfit::testing {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kMaxHead = 1u << 20;
constexpr std::size_t kMaxBody = 64u << 20;
constexpr auto kStopPoll = 50ms;  // how often a splice re-reads the stop flag

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail_errno(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

[[noreturn]] void fail_ssl_server(const std::string& what) {
  std::string detail;
  while (const unsigned long e = ERR_get_error()) {
    std::array<char, 256> buf{};
    ERR_error_string_n(e, buf.data(), buf.size());
    detail += std::string(detail.empty() ? "" : "; ") + buf.data();
  }
  throw std::runtime_error(what + ": " + (detail.empty() ? "unknown OpenSSL error" : detail));
}

// A peer that vanishes mid-write must give EPIPE, not kill the test process (SSL_write uses
// write(2), which has no MSG_NOSIGNAL).
void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// True when `fd` has something to read (data, EOF or an error) before `deadline`.
bool wait_readable(int fd, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, millis_until(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void set_linger_zero(int fd) {
  const linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

void set_io_timeout(int fd, std::chrono::seconds t) {
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

std::optional<HttpRequest> parse_head(std::string_view head) {
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

Connection& connection_of(Conn& c) { return static_cast<Connection&>(c); }

int listen_loopback(bool ipv6, int backlog, std::uint16_t& port) {
  const int fd = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail_errno("TestServer: socket");
  FdGuard guard(fd);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len;
  if (ipv6) {
    auto& a = reinterpret_cast<sockaddr_in6&>(ss);
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    len = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof a;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) fail_errno(ipv6 ? "TestServer: bind [::1]:0" : "TestServer: bind 127.0.0.1:0");
  if (::listen(fd, backlog) != 0) fail_errno("TestServer: listen");
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) fail_errno("TestServer: getsockname");
  port = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6&>(ss).sin6_port : reinterpret_cast<sockaddr_in&>(ss).sin_port);
  return guard.release();
}

SSL_CTX* server_context(const TlsFiles& files, const std::optional<std::filesystem::path>& client_ca) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) fail_ssl_server("TestServer: SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert_chain.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    SSL_CTX_free(ctx);
    fail_ssl_server("TestServer: loading " + files.cert_chain.string() + " / " + files.key.string());
  }
  if (client_ca) {
    if (SSL_CTX_load_verify_locations(ctx, client_ca->c_str(), nullptr) != 1) {
      SSL_CTX_free(ctx);
      fail_ssl_server("TestServer: loading the client CA " + client_ca->string());
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ctx;
}

}  // namespace

// =============================================================================================

std::optional<std::string> HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return std::nullopt;
}

std::string http_response(int status, std::string_view body, const TestHeaders& extra, bool keep_alive) {
  static const std::vector<std::pair<int, std::string_view>> kReasons = {
      {200, "OK"}, {201, "Created"}, {204, "No Content"}, {206, "Partial Content"}, {301, "Moved Permanently"},
      {302, "Found"}, {303, "See Other"}, {304, "Not Modified"}, {307, "Temporary Redirect"},
      {308, "Permanent Redirect"}, {400, "Bad Request"}, {401, "Unauthorized"}, {403, "Forbidden"},
      {404, "Not Found"}, {405, "Method Not Allowed"}, {407, "Proxy Authentication Required"},
      {408, "Request Timeout"}, {410, "Gone"}, {416, "Range Not Satisfiable"}, {429, "Too Many Requests"},
      {500, "Internal Server Error"}, {502, "Bad Gateway"}, {503, "Service Unavailable"}, {504, "Gateway Timeout"}};
  const auto it = std::find_if(kReasons.begin(), kReasons.end(), [&](const auto& r) { return r.first == status; });
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(it == kReasons.end() ? "Unknown" : it->second) + "\r\n";
  // A caller that frames the body itself (a lying Content-Length, chunked) keeps its framing.
  const bool framed = std::any_of(extra.begin(), extra.end(), [](const auto& h) {
    return iequals(h.first, "content-length") || iequals(h.first, "transfer-encoding");
  });
  if (!framed) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& [k, v] : extra) out += k + ": " + v + "\r\n";
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  out += body;
  return out;
}

// =============================================================================================
// TestServer

struct TestServer::Impl {
  struct Worker {
    std::thread thread;
    std::shared_ptr<Connection> conn;
    std::shared_ptr<std::atomic<bool>> done;
  };

  ConnScript script;
  Options options;
  Shared shared;
  SSL_CTX* ctx = nullptr;
  int listen_fd = -1;
  std::uint16_t port = 0;
  std::atomic<int> accepted{0};
  std::atomic<bool> stopped{false};
  std::mutex workers_mu;
  std::list<Worker> workers;
  std::thread acceptor;

  Impl(ConnScript s, Options o) : script(std::move(s)), options(std::move(o)) {
    ignore_sigpipe();
    if (options.tls) ctx = server_context(*options.tls, options.client_ca);
    try {
      listen_fd = listen_loopback(options.ipv6, options.backlog, port);
    } catch (...) {
      SSL_CTX_free(ctx);
      throw;
    }
    if (options.accept) acceptor = std::thread([this] { accept_loop(); });
  }

  ~Impl() {
    stop();
    SSL_CTX_free(ctx);
  }

  void accept_loop() {
    while (!shared.stopping) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (shared.stopping || errno == EINVAL || errno == EBADF) return;
        std::this_thread::sleep_for(10ms);  // EMFILE and friends: let the test release some
        continue;
      }
      if (shared.stopping) {
        ::close(fd);
        return;
      }
      auto conn = std::make_shared<Connection>(fd, accepted++, shared);
      auto done = std::make_shared<std::atomic<bool>>(false);
      const std::lock_guard lock(workers_mu);
      reap_finished();
      workers.push_back({std::thread([this, conn, done] { run(*conn, *done); }), conn, done});
    }
  }

  void run(Connection& conn, std::atomic<bool>& done) {
    if (ctx == nullptr || conn.handshake(ctx)) {
      try {
        script(conn);
      } catch (...) {
        // A failing script must not take the test process down with std::terminate; the test
        // sees the failure on the client side.
      }
      conn.close(true);
    } else {
      conn.close(false);
    }
    done = true;
  }

  // Long-running servers (the benchmark) accept thousands of connections: join the finished ones.
  void reap_finished() {
    for (auto it = workers.begin(); it != workers.end();) {
      if (*it->done) {
        it->thread.join();
        it = workers.erase(it);
      } else {
        ++it;
      }
    }
  }

  void stop() {
    if (stopped.exchange(true)) return;
    shared.stop();
    ::shutdown(listen_fd, SHUT_RDWR);  // wakes accept()
    if (acceptor.joinable()) acceptor.join();
    ::close(listen_fd);
    std::list<Worker> all;
    {
      const std::lock_guard lock(workers_mu);
      all.swap(workers);
    }
    for (Worker& w : all) w.conn->abort();
    for (Worker& w : all) w.thread.join();
  }
};

TestServer::TestServer(ConnScript script, Options options) : impl_(std::make_unique<Impl>(std::move(script), std::move(options))) {}
TestServer::TestServer(ConnScript script) : TestServer(std::move(script), Options{}) {}
TestServer::~TestServer() = default;

std::uint16_t TestServer::port() const { return impl_->port; }

std::string TestServer::url(std::string_view path, std::string_view host) const {
  std::string h(host);
  if (h.empty()) h = impl_->options.ipv6 ? "[::1]" : "127.0.0.1";
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";
  return std::string(impl_->options.tls ? "https://" : "http://") + h + ":" + std::to_string(impl_->port) + std::string(path);
}

int TestServer::connections() const { return impl_->accepted; }

std::vector<HttpRequest> TestServer::requests() const {
  const std::lock_guard lock(impl_->shared.mu);
  return impl_->shared.requests;
}

void TestServer::stop() { impl_->stop(); }

// =============================================================================================
// Scripts

namespace {

bool client_wants_close(const HttpRequest& r) {
  const auto c = r.header("connection");
  return (c && iequals(trim(*c), "close")) || r.version == "HTTP/1.0";
}

bool response_closes(std::string_view response) {
  const std::string head = lowered(response.substr(0, response.find("\r\n\r\n")));
  return head.find("\r\nconnection: close") != std::string::npos;
}

std::optional<std::string> percent_decode_strict(std::string_view s) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) return std::nullopt;
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}

bool inside(const std::filesystem::path& root, const std::filesystem::path& p) {
  const auto [r, _] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}

// The file a target names under `root`, or nullopt for anything missing or escaping it: ".."
// segments after one decoding (so "%2e%2e" too), backslashes, NUL, symlinks pointing out.
std::optional<std::filesystem::path> file_for(const std::filesystem::path& root, std::string_view target) {
  const std::string_view path = target.substr(0, target.find_first_of("?#"));
  if (path.empty() || path.front() != '/') return std::nullopt;
  const auto decoded = percent_decode_strict(path);
  if (!decoded || decoded->find_first_of(std::string_view("\\\0", 2)) != std::string::npos) return std::nullopt;
  std::string_view rest(*decoded);
  while (!rest.empty()) {
    const std::size_t slash = std::min(rest.find('/'), rest.size());
    if (rest.substr(0, slash) == "..") return std::nullopt;
    rest.remove_prefix(std::min(slash + 1, rest.size()));
  }
  std::string relative = decoded->substr(1);
  if (decoded->back() == '/') relative += "index.html";
  std::error_code ec;
  const auto real = std::filesystem::canonical(root / relative, ec);
  if (ec || !inside(root, real) || !std::filesystem::is_regular_file(real, ec)) return std::nullopt;
  return real;
}

std::string content_type_of(const std::filesystem::path& p) {
  const std::string ext = lowered(p.extension().string());
  if (ext == ".html" || ext == ".htm") return "text/html";
  if (ext == ".json") return "application/json";
  if (ext == ".txt") return "text/plain";
  return "application/octet-stream";
}

std::string etag_of(const std::filesystem::path& p) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(p, ec);
  const auto mtime = std::filesystem::last_write_time(p, ec).time_since_epoch().count();
  std::ostringstream out;
  out << '"' << std::hex << size << '-' << mtime << '"';
  return out.str();
}

bool etag_matches(std::string_view if_none_match, const std::string& etag) {
  while (!if_none_match.empty()) {
    const std::size_t comma = std::min(if_none_match.find(','), if_none_match.size());
    std::string_view tag = trim(if_none_match.substr(0, comma));
    if_none_match.remove_prefix(std::min(comma + 1, if_none_match.size()));
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

std::string directory_response(const std::filesystem::path& root, const DirectoryOptions& options, const HttpRequest& r,
                               bool keep_alive) {
  if (r.method != "GET" && r.method != "HEAD") {
    return http_response(405, "method not allowed\n", {{"Allow", "GET, HEAD"}}, keep_alive);
  }
  const auto file = file_for(root, r.target);
  if (!file) return http_response(404, "not found\n", {{"Content-Type", "text/plain"}}, keep_alive);
  TestHeaders headers = {{"ETag", etag_of(*file)}};
  if (options.max_age >= 0) headers.emplace_back("Cache-Control", "max-age=" + std::to_string(options.max_age));
  if (const auto inm = r.header("if-none-match"); inm && etag_matches(*inm, headers.front().second)) {
    return http_response(304, "", headers, keep_alive);
  }
  std::ifstream in(*file, std::ios::binary);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  headers.emplace_back("Content-Type", content_type_of(*file));
  int status = 200;
  const auto range = r.header("range");
  const auto if_range = r.header("if-range");
  if (options.ranges && range && range->starts_with("bytes=") && range->ends_with("-") &&
      (!if_range || *if_range == headers.front().second)) {
    const std::string from_text(range->substr(6, range->size() - 7));
    std::size_t from = 0;
    const auto [end, ec] = std::from_chars(from_text.data(), from_text.data() + from_text.size(), from);
    if (ec != std::errc() || end != from_text.data() + from_text.size()) {
      return http_response(400, "bad Range\n", {}, keep_alive);
    }
    if (from >= body.size()) {
      return http_response(416, "", {{"Content-Range", "bytes */" + std::to_string(body.size())}}, keep_alive);
    }
    headers.emplace_back("Content-Range", "bytes " + std::to_string(from) + "-" + std::to_string(body.size() - 1) + "/" +
                                              std::to_string(body.size()));
    body.erase(0, from);
    status = 206;
  }
  std::string out = http_response(status, body, headers, keep_alive);
  if (r.method == "HEAD") out.resize(out.size() - body.size());
  return out;
}

/// Whether this request is the one whose body is cut (the first whole GET of its path).
bool cut_now(const DirectoryOptions& options, const HttpRequest& r, std::set<std::string>& cut, std::mutex& mutex) {
  if (options.cut_after == 0 || r.method != "GET" || r.header("range")) return false;
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (!path.ends_with(options.cut_suffix)) return false;
  const std::lock_guard lock(mutex);
  return cut.insert(path).second;
}

}  // namespace

ConnScript serve_directory(std::filesystem::path root, DirectoryOptions options) {
  std::error_code ec;
  auto canonical_root = std::filesystem::weakly_canonical(root, ec);
  if (ec) canonical_root = std::move(root);
  auto cut = std::make_shared<std::pair<std::set<std::string>, std::mutex>>();
  return [root = std::move(canonical_root), options, cut](Conn& conn) {
    while (auto request = conn.read_request(std::chrono::seconds(30))) {
      const bool keep_alive = !client_wants_close(*request);
      if (options.delay.count() > 0 && !connection_of(conn).shared().sleep_for(options.delay)) return;
      std::string response = directory_response(root, options, *request, keep_alive);
      if (cut_now(options, *request, cut->first, cut->second) && response.starts_with("HTTP/1.1 200")) {
        const std::size_t body = response.find("\r\n\r\n") + 4;
        if (response.size() - body > options.cut_after) {
          conn.write(std::string_view(response).substr(0, body + options.cut_after));
          // An RST can overtake bytes the client has not read yet; let it read them first.
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          conn.reset();
          return;
        }
      }
      if (!conn.write(response) || !keep_alive) return;
    }
  };
}

ConnScript serve(std::function<std::string(const HttpRequest&)> handler) {
  return [handler = std::move(handler)](Conn& conn) {
    while (auto request = conn.read_request(std::chrono::seconds(30))) {
      const std::string response = handler(*request);
      if (response.empty()) {
        conn.reset();
        return;
      }
      if (!conn.write(response) || client_wants_close(*request) || response_closes(response)) return;
    }
  };
}

// =============================================================================================
// TestProxy

namespace {

// "host:port" / "[v6]:port" -> a connected socket, or -1.
int connect_to(std::string_view authority, std::uint16_t default_port) {
  std::string host;
  std::string port = std::to_string(default_port);
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return -1;
    host = authority.substr(1, close - 1);
    if (authority.substr(close + 1).starts_with(":")) port = authority.substr(close + 2);
  } else {
    const std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (const addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

enum class SpliceEnd { closed, reset, stopped };

// Copies bytes both ways until both sides closed (a FIN is passed on as a half-close), one side
// failed, or the server stops.
SpliceEnd splice(int a, int b, const std::atomic<bool>& stopping) {
  std::array<bool, 2> open = {true, true};
  const std::array<int, 2> src = {a, b};
  const std::array<int, 2> dst = {b, a};
  std::array<char, 16384> buf{};
  while (open[0] || open[1]) {
    if (stopping) return SpliceEnd::stopped;
    std::array<pollfd, 2> fds = {pollfd{a, static_cast<short>(open[0] ? POLLIN : 0), 0},
                                 pollfd{b, static_cast<short>(open[1] ? POLLIN : 0), 0}};
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(kStopPoll.count()));
    if (n < 0 && errno != EINTR) return SpliceEnd::reset;
    for (std::size_t i = 0; n > 0 && i < 2; ++i) {
      if (!open[i] || fds[i].revents == 0) continue;
      const ssize_t got = ::recv(src[i], buf.data(), buf.size(), 0);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return SpliceEnd::reset;
      if (got == 0) {
        ::shutdown(dst[i], SHUT_WR);
        open[i] = false;
      } else if (!send_all(dst[i], std::string_view(buf.data(), static_cast<std::size_t>(got)))) {
        return SpliceEnd::reset;
      }
    }
  }
  return SpliceEnd::closed;
}

void tunnel(Connection& client, const HttpRequest& request) {
  const FdGuard upstream(connect_to(request.target, 443));
  if (upstream.get() < 0) {
    client.write(http_response(502, "proxy: cannot reach " + request.target + "\n", {}, false));
    return;
  }
  if (!client.write("HTTP/1.1 200 Connection established\r\n\r\n")) return;
  if (!send_all(upstream.get(), client.take_buffered())) return;
  if (splice(client.fd(), upstream.get(), client.shared().stopping) == SpliceEnd::reset) {
    set_linger_zero(upstream.get());
    client.reset();
  }
}

// Forwards one absolute-form request over a fresh upstream connection (asking it to close after
// the answer) and relays the answer until the upstream closes. False when the client connection
// must end.
bool forward(Connection& client, const HttpRequest& request) {
  constexpr std::string_view kScheme = "http://";
  if (!iequals(std::string_view(request.target).substr(0, kScheme.size()), kScheme)) {
    client.write(http_response(400, "proxy: expected CONNECT or an absolute http:// URL\n", {}, false));
    return false;
  }
  const std::string_view rest = std::string_view(request.target).substr(kScheme.size());
  const std::size_t slash = std::min(rest.find_first_of("/?"), rest.size());
  const FdGuard upstream(connect_to(rest.substr(0, slash), 80));
  if (upstream.get() < 0) {
    client.write(http_response(502, "proxy: cannot reach " + request.target + "\n", {}, false));
    return false;
  }
  std::string out = request.method + " " + (slash == rest.size() ? "/" : "") + std::string(rest.substr(slash)) + " " +
                    request.version + "\r\n";
  for (const auto& [k, v] : request.headers) {
    if (iequals(k, "proxy-authorization") || iequals(k, "proxy-connection") || iequals(k, "connection")) continue;
    out += k + ": " + v + "\r\n";
  }
  out += "Connection: close\r\n\r\n" + request.body;
  if (!send_all(upstream.get(), out)) return false;
  std::string response_head;
  std::array<char, 16384> buf{};
  while (!client.shared().stopping) {
    if (!wait_readable(upstream.get(), Clock::now() + kStopPoll)) continue;
    const ssize_t got = ::recv(upstream.get(), buf.data(), buf.size(), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      client.reset();
      return false;
    }
    if (got == 0) break;
    const std::string_view bytes(buf.data(), static_cast<std::size_t>(got));
    if (response_head.size() < kMaxHead) response_head.append(bytes);
    if (!client.write(bytes)) return false;
  }
  // Without framing the client reads to EOF, so the connection ends here.
  const std::string head = lowered(response_head.substr(0, response_head.find("\r\n\r\n")));
  const bool framed = head.find("\r\ncontent-length:") != std::string::npos ||
                      head.find("\r\ntransfer-encoding:") != std::string::npos;
  return framed && !response_closes(response_head) && !client_wants_close(request);
}

}  // namespace

struct TestProxy::Impl {
  Gate gate;
  bool keep_answered;
  TestServer server;  // last: it stops (joining every script using `gate`) before gate goes

  Impl(Gate g, bool keep) : gate(std::move(g)), keep_answered(keep), server([this](Conn& c) { handle(connection_of(c)); }) {}

  void handle(Connection& client) const {
    while (auto request = client.read_request(std::chrono::seconds(30))) {
      if (gate && !gate(client, *request)) {
        if (keep_answered) continue;
        return;
      }
      if (iequals(request->method, "CONNECT")) {
        tunnel(client, *request);
        return;
      }
      if (!forward(client, *request)) return;
    }
  }
};

std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(a.sin_port);
}

bool loopback_accepts(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

TestProxy::TestProxy(Gate gate, bool keep_answered) : impl_(std::make_unique<Impl>(std::move(gate), keep_answered)) {}
TestProxy::~TestProxy() = default;
std::uint16_t TestProxy::port() const { return impl_->server.port(); }
std::string TestProxy::url(std::string_view userinfo) const {
  return "http://" + (userinfo.empty() ? std::string() : std::string(userinfo) + "@") + "127.0.0.1:" +
         std::to_string(port());
}
std::vector<HttpRequest> TestProxy::requests() const { return impl_->server.requests(); }
int TestProxy::connections() const { return impl_->server.connections(); }

}  // namespace wheelfit::testing
