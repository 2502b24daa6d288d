// The CONNECT / absolute-form HTTP proxy of test_server.hpp (TestProxy): a TestServer whose
// script tunnels CONNECT and forwards plain http:// requests, each after the test's gate.

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <string>
#include <string_view>

#include "support/net/server_connection.hpp"
#include "support/net/test_server.hpp"

namespace wheelfit::testing {

using namespace detail;

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
