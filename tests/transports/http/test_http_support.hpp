#pragma once
// Shared helpers of the http transport tests (test_http_*.cpp): fast options, a log capture,
// a free loopback port, a stopwatch, checks of an answer and of a failure.

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/transports/trust_store.hpp"
#include "wheelfit/util/log.hpp"

/// REQUIRE(x) for an Expected, showing the error message when it fails.
#define WHEELFIT_REQUIRE_OK(x)                              \
  do {                                                      \
    INFO(((x) ? std::string() : (x).error().message));      \
    REQUIRE((x));                                           \
  } while (false)

namespace wheelfit::test_http {

using namespace std::chrono_literals;
using net::NetErrc;
// The loopback servers every http test file uses (support/net/test_server.hpp).
using wheelfit::testing::Conn;
using wheelfit::testing::ConnScript;
using wheelfit::testing::http_response;
using wheelfit::testing::HttpRequest;
using wheelfit::testing::serve;
using wheelfit::testing::TestCa;
using wheelfit::testing::TestProxy;
using wheelfit::testing::TestServer;
using wheelfit::testing::TlsFiles;

/// Shrunken times: 1-10 ms backoff, 2 s connect / idle, no proxies, CA files or credentials
/// (netrc) from the environment (the tests set them explicitly); `retries` attempts after the first.
inline transports::HttpOptions fast_options(int retries = 3) {
  transports::HttpOptions o;
  o.proxy_from_env = false;
  o.proxy = {};
  o.ca_from_env = false;
  o.credentials_from_env = false;
  o.retry.retries = retries;
  o.retry.base = 1ms;
  o.retry.cap = 10ms;
  o.retry.max_wait = 5s;
  o.connect_timeout = 2s;
  o.idle_timeout = 2s;
  o.deadline = 20s;
  o.gss_wait = 200ms;  // a blocked fake GSS-API step is released only after its test's transport is gone
  return o;
}

/// A request with every field given (no -Wmissing-field-initializers).
inline net::Request req(std::string url, std::size_t max_body = 64u << 20, net::Headers headers = {}) {
  net::Request r;
  r.url = std::move(url);
  r.max_body = max_body;
  r.headers = std::move(headers);
  return r;
}

inline std::unique_ptr<net::Transport> make(transports::HttpOptions o = fast_options()) {
  auto t = transports::make_http_transport(std::move(o));
  REQUIRE(t);
  return std::move(*t);
}

/// Captures log lines for its lifetime (thread-safe), restoring the previous sink after.
class LogCapture {
 public:
  LogCapture() {
    previous_ = log::set_sink([this](log::Level level, std::string_view m) {
      std::lock_guard lock(mutex_);
      lines_.push_back({level, std::string(m)});
    });
  }
  ~LogCapture() { log::set_sink(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  /// Lines at `level` containing `needle`.
  std::vector<std::string> find(log::Level level, std::string_view needle) const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [l, m] : lines_) {
      if (l == level && m.find(needle) != std::string::npos) out.push_back(m);
    }
    return out;
  }

 private:
  struct Line {
    log::Level level;
    std::string text;
  };
  mutable std::mutex mutex_;
  std::vector<Line> lines_;
  log::Sink previous_;
};

/// Unsets every variable the trust store and the client certificate read (trust_store.hpp), for
/// its lifetime: tests that read the environment see only what they set.
class CleanTrustEnv {
 public:
  CleanTrustEnv() {
    for (const auto& name : transports::trust_variables()) saved_.emplace_back(name, std::nullopt);
    saved_.emplace_back("SSL_CLIENT_CERT", std::nullopt);
  }

 private:
  std::list<wheelfit::test::ScopedEnv> saved_;
};

/// A loopback port nothing listens on (bound, read, closed).
inline std::uint16_t unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Stopwatch {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  [[nodiscard]] std::chrono::milliseconds elapsed() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  }
};

inline bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

/// "127.0.0.1:<port>"
inline std::string loopback(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

/// REQUIREs an answer, then CHECKs its body and the retries `t` has taken so far.
inline void check_answer(const Expected<net::Response>& r, const net::Transport& t, std::string_view body,
                         std::uint64_t retries) {
  WHEELFIT_REQUIRE_OK(r);
  CHECK(r->body == body);
  CHECK(t.stats().retries == retries);
}

/// REQUIREs a failure, then CHECKs its kind and that its message holds each of `parts` (the
/// message is shown with any failed check).
inline void check_failure(const Expected<net::Response>& r, NetErrc kind,
                          std::initializer_list<std::string_view> parts = {}) {
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(net::is(r.error(), kind));
  for (std::string_view part : parts) CHECK(contains(r.error().message, part));
}

}  // namespace wheelfit::test_http
