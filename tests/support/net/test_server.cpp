// The loopback servers of test_server.hpp on plain POSIX sockets, one thread per connection and
// OpenSSL for TLS (the test CA is in test_ca.cpp): independent of the Asio/Beast code they test.
// Stopping is prompt because every blocking call sits on a socket that stop() can shut down
// (accept, recv, send, SSL_accept) or in a poll() with a short timeout that re-reads the stop
// flag (the proxy's splice). The scripts (serve_directory, serve) are in serve_scripts.cpp, the
// proxy in connect_proxy.cpp, what they share in server_connection.hpp.

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

#include "support/net/server_connection.hpp"

namespace wheelfit::testing {

using namespace detail;
using namespace std::chrono_literals;

namespace {

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

}  // namespace wheelfit::testing
