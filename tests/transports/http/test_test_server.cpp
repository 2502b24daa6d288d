// Self-tests of the loopback servers (tests/support/net) with raw sockets and a tiny blocking
// OpenSSL client, so the servers are proven independently of the transport they will test:
// serve_directory (200/304/404, traversal, keep-alive), resets, TLS with the test CA, the
// CONNECT proxy and its gate, and prompt shutdown of many servers.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/net/test_server.hpp"

using namespace wheelfit::testing;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

// A temporary directory removed at the end of the test.
class TestServerTempDir {
 public:
  TestServerTempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("wheelfit-net-" + std::to_string(rd()) + std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~TestServerTempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TestServerTempDir(const TestServerTempDir&) = delete;
  TestServerTempDir& operator=(const TestServerTempDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& p, std::string_view text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A client socket; closed at scope end.
class Client {
 public:
  explicit Client(std::uint16_t port, bool ipv6 = false) {
    fd_ = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    int rc;
    if (ipv6) {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      a.sin6_port = htons(port);
      rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(port);
      rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    REQUIRE(rc == 0);
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  [[nodiscard]] int fd() const { return fd_; }

  void send(std::string_view bytes) const {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      REQUIRE(n > 0);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // Raw bytes until EOF, an error (its errno in `error`) or the timeout.
  std::string read_all(int& error, std::chrono::milliseconds timeout = 5s) const {
    std::string out;
    error = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n < 0) {
        error = errno;
        break;
      }
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

  // One response framed by Content-Length (no body for 304 and HEAD).
  std::string read_response(bool head_only = false) const {
    std::string out;
    std::size_t end;
    while ((end = out.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more(out)) return out;
    }
    std::size_t length = 0;
    const std::string lower_head = lowered(out.substr(0, end));
    if (const auto p = lower_head.find("content-length: "); p != std::string::npos && !head_only) {
      length = std::stoul(lower_head.substr(p + 16));
    }
    if (lower_head.starts_with("http/1.1 304")) length = 0;
    while (out.size() < end + 4 + length) {
      if (!read_more(out)) break;
    }
    return out;
  }

  static std::string lowered(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

 private:
  bool read_more(std::string& out) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    out.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
};

std::string body_of(const std::string& response) {
  const auto p = response.find("\r\n\r\n");
  return p == std::string::npos ? std::string() : response.substr(p + 4);
}

std::string header_of(const std::string& response, std::string_view name) {
  const std::string lower = Client::lowered(response.substr(0, response.find("\r\n\r\n")));
  const auto p = lower.find("\r\n" + Client::lowered(std::string(name)) + ": ");
  if (p == std::string::npos) return {};
  const auto from = p + 4 + name.size();
  return response.substr(from, response.find("\r\n", from) - from);
}

std::string get(std::string_view target, std::string_view extra = "") {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) + "\r\n";
}

// A blocking TLS client over an already connected socket: verifies the peer against `ca_file`
// and the host name (or IP) with SNI, as the transport under test will.
struct TlsResult {
  bool handshake = false;
  long verify = X509_V_OK;
  std::string response;
};

TlsResult tls_get(int fd, const fs::path& ca_file, const std::string& host, const std::string& target = "/") {
  TlsResult result;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
  REQUIRE(ctx);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  REQUIRE(SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr) == 1);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
  REQUIRE(ssl);
  SSL_set_fd(ssl.get(), fd);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
  if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) {
    ERR_clear_error();
    SSL_set_tlsext_host_name(ssl.get(), host.c_str());
    SSL_set1_host(ssl.get(), host.c_str());
  }
  result.handshake = SSL_connect(ssl.get()) == 1;
  result.verify = SSL_get_verify_result(ssl.get());
  ERR_clear_error();
  if (!result.handshake) return result;
  const std::string request = get(target, "Connection: close\r\n");
  REQUIRE(SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) == static_cast<int>(request.size()));
  char buf[4096];
  int n;
  while ((n = SSL_read(ssl.get(), buf, sizeof buf)) > 0) result.response.append(buf, static_cast<std::size_t>(n));
  ERR_clear_error();
  return result;
}

ConnScript answer(std::string body) {
  return serve([body = std::move(body)](const HttpRequest&) { return http_response(200, body); });
}

}  // namespace

// =============================================================================================

TEST_CASE("http_response writes a complete HTTP/1.1 response", "[transports][test_server]") {
  struct Row {
    int status;
    std::string_view body;
    TestHeaders extra;
    bool keep_alive;
    std::string_view expected;
  };
  const std::vector<Row> rows = {
      {200, "hi", {}, true, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"},
      {404, "", {}, false, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
      {407, "", {{"Proxy-Authenticate", "Basic realm=\"t\""}}, true,
       "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\nProxy-Authenticate: Basic realm=\"t\"\r\n\r\n"},
      {503, "x", {{"Retry-After", "5"}}, true, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 1\r\nRetry-After: 5\r\n\r\nx"},
      {200, "short", {{"Content-Length", "1000"}}, true, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort"},
      {522, "", {}, true, "HTTP/1.1 522 Unknown\r\nContent-Length: 0\r\n\r\n"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.status);
    CHECK(http_response(r.status, r.body, r.extra, r.keep_alive) == r.expected);
  }
}

TEST_CASE("TestServer runs the script per connection and records requests", "[transports][test_server]") {
  TestServer server(serve([](const HttpRequest& r) { return http_response(200, r.method + " " + r.target + " " + r.body); }));
  CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/");
  CHECK(server.url("/x", "localhost") == "http://localhost:" + std::to_string(server.port()) + "/x");
  {
    Client c(server.port());
    c.send(get("/a"));
    CHECK(body_of(c.read_response()) == "GET /a ");
    c.send("POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nX-Case: Yes\r\n\r\nbody");
    CHECK(body_of(c.read_response()) == "POST /b body");
  }
  {
    Client c(server.port());
    c.send(get("/c", "Connection: close\r\n"));
    int error = 0;
    CHECK_THAT(c.read_all(error), StartsWith("HTTP/1.1 200 OK") && Contains("GET /c"));  // then EOF: closed
    CHECK(error == 0);
  }
  const auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].connection == 0);
  CHECK(requests[1].connection == 0);
  CHECK(requests[1].header("x-case") == "Yes");
  CHECK(requests[1].header("X-CASE") == "Yes");
  CHECK_FALSE(requests[1].header("missing"));
  CHECK(requests[2].connection == 1);
  CHECK(server.connections() == 2);
}

TEST_CASE("TestServer listens on [::1] when asked", "[transports][test_server]") {
  TestServer::Options options;
  options.ipv6 = true;
  TestServer server(answer("v6"), options);
  CHECK(server.url("/p") == "http://[::1]:" + std::to_string(server.port()) + "/p");
  CHECK(server.url("/p", "::1") == "http://[::1]:" + std::to_string(server.port()) + "/p");
  Client c(server.port(), true);
  c.send(get("/"));
  CHECK(body_of(c.read_response()) == "v6");
}

TEST_CASE("Conn::reset gives the client ECONNRESET", "[transports][test_server]") {
  SECTION("a script that resets after reading the request") {
    TestServer server([](Conn& c) {
      if (c.read_request()) c.reset();
    });
    Client c(server.port());
    c.send(get("/"));
    int error = 0;
    CHECK(c.read_all(error).empty());
    CHECK(error == ECONNRESET);
  }
  SECTION("serve() resets when the handler answers \"\"") {
    TestServer server(serve([](const HttpRequest&) { return std::string(); }));
    Client c(server.port());
    c.send(get("/"));
    int error = 0;
    CHECK(c.read_all(error).empty());
    CHECK(error == ECONNRESET);
  }
}

TEST_CASE("a connection can be scripted byte by byte (a response cut short)", "[transports][test_server]") {
  TestServer server([](Conn& c) {
    if (!c.read_request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
    c.write(std::string(600, 'x'));
    c.close();
  });
  Client c(server.port());
  c.send(get("/"));
  int error = 0;
  CHECK(body_of(c.read_all(error)).size() == 600);
  CHECK(error == 0);
}

TEST_CASE("serve_directory serves files with ETag, 304, 404 and keep-alive", "[transports][test_server]") {
  TestServerTempDir tmp;
  const fs::path root = tmp.path() / "root";
  write_file(root / "simple" / "index.html", "<html>index</html>");
  write_file(root / "simple" / "foo" / "index.html", "<a href='x.whl'>x</a>");
  write_file(root / "packages.json", "{}");
  write_file(root / "a+b.whl", "wheel");
  DirectoryOptions options;
  options.max_age = 600;
  TestServer server(serve_directory(root, options));
  Client c(server.port());

  struct Row {
    std::string_view target, status, body, content_type;
  };
  const Row rows[] = {
      {"/simple/", "200", "<html>index</html>", "text/html"},
      {"/simple/foo/", "200", "<a href='x.whl'>x</a>", "text/html"},
      {"/simple/foo/?q=1#f", "200", "<a href='x.whl'>x</a>", "text/html"},
      {"/packages.json", "200", "{}", "application/json"},
      {"/a+b.whl", "200", "wheel", "application/octet-stream"},
      {"/a%2Bb.whl", "200", "wheel", "application/octet-stream"},
      {"/simple/missing/", "404", "not found\n", "text/plain"},
      {"/nope.whl", "404", "not found\n", "text/plain"},
      {"/simple", "404", "not found\n", "text/plain"},  // a directory without its slash
  };
  for (const Row& r : rows) {
    CAPTURE(r.target);
    c.send(get(r.target));  // all on one keep-alive connection
    const std::string response = c.read_response();
    CHECK_THAT(response, StartsWith("HTTP/1.1 " + std::string(r.status)));
    CHECK(body_of(response) == r.body);
    CHECK(header_of(response, "Content-Type") == r.content_type);
    if (r.status == "200") CHECK(header_of(response, "Cache-Control") == "max-age=600");
  }
  CHECK(server.connections() == 1);

  SECTION("If-None-Match with the ETag answers 304 without a body") {
    c.send(get("/packages.json"));
    const std::string etag = header_of(c.read_response(), "ETag");
    REQUIRE_FALSE(etag.empty());
    for (const std::string& inm : {etag, "\"other\", " + etag, "W/" + etag, std::string("*")}) {
      CAPTURE(inm);
      c.send(get("/packages.json", "If-None-Match: " + inm + "\r\n"));
      const std::string response = c.read_response();
      CHECK_THAT(response, StartsWith("HTTP/1.1 304 Not Modified"));
      CHECK(header_of(response, "ETag") == etag);
      CHECK(body_of(response).empty());
    }
    c.send(get("/packages.json", "If-None-Match: \"stale\"\r\n"));
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 200"));
  }
  SECTION("HEAD has the headers only; other methods get 405") {
    c.send("HEAD /a+b.whl HTTP/1.1\r\nHost: t\r\n\r\n");
    const std::string head = c.read_response(true);
    CHECK(header_of(head, "Content-Length") == "5");
    CHECK(body_of(head).empty());
    c.send("DELETE /a+b.whl HTTP/1.1\r\nHost: t\r\n\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 405"));
  }
}

TEST_CASE("serve_directory refuses paths that escape the root (docs/network-faults.md M01)", "[transports][test_server]") {
  TestServerTempDir tmp;
  const fs::path root = tmp.path() / "root";
  write_file(root / "ok.txt", "ok");
  write_file(tmp.path() / "secret.txt", "TOP-SECRET");
  write_file(tmp.path() / "root2" / "secret.txt", "TOP-SECRET");
  fs::create_directory_symlink(tmp.path(), root / "link");
  fs::create_symlink(tmp.path() / "secret.txt", root / "file-link.txt");
  TestServer server(serve_directory(root));
  const char* targets[] = {
      "/../secret.txt",        "/../../secret.txt",   "/%2e%2e/secret.txt",     "/%2E%2E/secret.txt",
      "/%2e%2e%2fsecret.txt",  "/..%2fsecret.txt",    "/%252e%252e/secret.txt", "/..%5csecret.txt",
      "/%5c..%5csecret.txt",   "/ok.txt%00.html",     "/link/secret.txt",       "/file-link.txt",
      "/../root2/secret.txt",  "/./../secret.txt",    "secret.txt",             "/%zz",
      "/ok.txt/../../secret.txt",
  };
  Client c(server.port());
  for (const char* target : targets) {
    CAPTURE(target);
    c.send(get(target));
    const std::string response = c.read_response();
    CHECK_THAT(response, StartsWith("HTTP/1.1 404"));
    CHECK_THAT(response, !Contains("TOP-SECRET"));
  }
  c.send(get("/ok.txt"));
  CHECK(body_of(c.read_response()) == "ok");
}

TEST_CASE("serve_directory delays each response", "[transports][test_server]") {
  TestServerTempDir tmp;
  write_file(tmp.path() / "f.txt", "f");
  DirectoryOptions options;
  options.delay = 100ms;
  TestServer server(serve_directory(tmp.path(), options));
  Client c(server.port());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2; ++i) {
    c.send(get("/f.txt"));
    CHECK(body_of(c.read_response()) == "f");
  }
  CHECK(std::chrono::steady_clock::now() - start >= 200ms);
}

TEST_CASE("a listening-but-never-accepting server accepts nothing and stops", "[transports][test_server]") {
  TestServer::Options options;
  options.accept = false;
  options.backlog = 1;
  TestServer server(serve([](const HttpRequest&) { return http_response(200, "no"); }), options);
  Client c(server.port());  // the kernel completes the handshake into the backlog
  c.send(get("/"));
  int error = 0;
  CHECK(c.read_all(error, 200ms).empty());
  CHECK(server.connections() == 0);
  CHECK(server.requests().empty());
}

TEST_CASE("servers stop promptly, whatever their connections are doing", "[transports][test_server]") {
  TestServer::Options never_accept;
  never_accept.backlog = 4;
  never_accept.accept = false;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    TestServer idle([](Conn& c) { (void)c.read_request(std::chrono::hours(1)); });
    TestServer sleeping([](Conn& c) { (void)c.read_some(std::chrono::hours(1)); });
    TestServer unaccepted(answer(""), never_accept);
    TestServerTempDir tmp;
    DirectoryOptions slow;
    slow.delay = std::chrono::hours(1);
    TestServer delayed(serve_directory(tmp.path(), slow));
    Client a(idle.port());
    Client b(sleeping.port());
    Client u(unaccepted.port());
    Client d(delayed.port());
    d.send(get("/"));
    if (i % 10 == 0) {  // sometimes stop while the connection is surely inside its script
      while (idle.connections() == 0 || sleeping.connections() == 0 || delayed.requests().empty()) {
        std::this_thread::sleep_for(1ms);
      }
    }
    idle.stop();
    idle.stop();  // twice is fine
  }
  CHECK(std::chrono::steady_clock::now() - start < 20s);
}

// =============================================================================================
// TLS

TEST_CASE("TLS servers verify against the test CA; bad certificates fail", "[transports][test_server][tls]") {
  TestServerTempDir tmp;
  TestCa ca(tmp.path() / "ca");
  REQUIRE(fs::exists(ca.cert()));
  const TlsFiles good = ca.issue("localhost");
  REQUIRE(fs::exists(good.cert_chain));
  REQUIRE(fs::exists(good.key));

  struct Row {
    std::string_view what;
    TlsFiles files;
    std::string host;
    fs::path trust;
    bool ok;
    long verify;
  };
  TestCa other(tmp.path() / "other", "another CA");
  TestCa::Leaf expired;
  expired.not_before = -std::chrono::hours(48);
  expired.not_after = -std::chrono::hours(24);
  TestCa::Leaf wrong_name;
  wrong_name.dns = {"elsewhere.test"};
  wrong_name.ips = {};
  const std::vector<Row> rows = {
      {"DNS SAN localhost", good, "localhost", ca.cert(), true, X509_V_OK},
      {"IP SAN 127.0.0.1", good, "127.0.0.1", ca.cert(), true, X509_V_OK},
      {"wrong host name", good, "other.test", ca.cert(), false, X509_V_ERR_HOSTNAME_MISMATCH},
      {"wrong IP", good, "127.0.0.2", ca.cert(), false, X509_V_ERR_IP_ADDRESS_MISMATCH},
      {"expired leaf", ca.issue("expired", expired), "localhost", ca.cert(), false, X509_V_ERR_CERT_HAS_EXPIRED},
      {"SAN without localhost", ca.issue("wrong", wrong_name), "localhost", ca.cert(), false, X509_V_ERR_HOSTNAME_MISMATCH},
      {"signed by another CA", other.issue("other"), "localhost", ca.cert(), false,
       X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY},
      {"trusting the wrong CA", good, "localhost", other.cert(), false, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    TestServer::Options options;
    options.tls = r.files;
    TestServer server(answer("secure"), options);
    CHECK_THAT(server.url("/", "localhost"), StartsWith("https://localhost:"));
    Client c(server.port());
    const TlsResult result = tls_get(c.fd(), r.trust, r.host);
    CHECK(result.handshake == r.ok);
    CHECK(result.verify == r.verify);
    if (r.ok) {
      CHECK_THAT(result.response, StartsWith("HTTP/1.1 200 OK"));
      CHECK(body_of(result.response) == "secure");
      CHECK(server.requests().size() == 1);
    } else {
      CHECK(server.requests().empty());
    }
    CHECK(server.connections() == 1);
  }
}

TEST_CASE("TLS over IPv6 with the ::1 SAN", "[transports][test_server][tls]") {
  TestServerTempDir tmp;
  TestCa ca(tmp.path());
  TestServer::Options options;
  options.ipv6 = true;
  options.tls = ca.issue("v6");
  TestServer server(answer("v6"), options);
  CHECK_THAT(server.url(), StartsWith("https://[::1]:"));
  Client c(server.port(), true);
  const TlsResult result = tls_get(c.fd(), ca.cert(), "::1");
  CHECK(result.handshake);
  CHECK(body_of(result.response) == "v6");
}

TEST_CASE("TestServer rejects TLS files that do not load", "[transports][test_server][tls]") {
  TestServerTempDir tmp;
  TestServer::Options options;
  options.tls = TlsFiles{tmp.path() / "missing.crt", tmp.path() / "missing.key"};
  CHECK_THROWS_WITH(TestServer(answer(""), options), Contains("missing.crt"));
}

// =============================================================================================
// Proxy

TEST_CASE("TestProxy tunnels CONNECT to a server, plain and TLS", "[transports][test_server][proxy]") {
  TestProxy proxy;
  CHECK(proxy.url() == "http://127.0.0.1:" + std::to_string(proxy.port()));
  CHECK(proxy.url("u:p") == "http://u:p@127.0.0.1:" + std::to_string(proxy.port()));

  SECTION("plain bytes both ways, keep-alive inside the tunnel") {
    TestServer server(serve([](const HttpRequest& r) { return http_response(200, "via tunnel " + r.target); }));
    Client c(proxy.port());
    const std::string authority = "127.0.0.1:" + std::to_string(server.port());
    c.send("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 200"));
    for (std::string_view target : {"/one", "/two"}) {
      c.send(get(target));
      CHECK(body_of(c.read_response()) == "via tunnel " + std::string(target));
    }
    const auto seen = proxy.requests();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].method == "CONNECT");
    CHECK(seen[0].target == authority);
    CHECK(server.requests().size() == 2);
    CHECK(proxy.connections() == 1);
  }
  SECTION("a TLS handshake through the tunnel verifies the origin's certificate") {
    TestServerTempDir tmp;
    TestCa ca(tmp.path());
    TestServer::Options options;
    options.tls = ca.issue("localhost");
    TestServer server(answer("tls via proxy"), options);
    Client c(proxy.port());
    c.send("CONNECT localhost:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 200"));
    const TlsResult result = tls_get(c.fd(), ca.cert(), "localhost");
    CHECK(result.handshake);
    CHECK(body_of(result.response) == "tls via proxy");
  }
  SECTION("an unreachable target answers 502") {
    std::uint16_t dead_port;
    { dead_port = TestServer(answer("")).port(); }
    Client c(proxy.port());
    c.send("CONNECT 127.0.0.1:" + std::to_string(dead_port) + " HTTP/1.1\r\n\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 502"));
  }
  SECTION("an origin reset reaches the client as a reset") {
    TestServer server([](Conn& c) {
      (void)c.read_some(5s);
      c.reset();
    });
    Client c(proxy.port());
    c.send("CONNECT 127.0.0.1:" + std::to_string(server.port()) + " HTTP/1.1\r\n\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 200"));
    c.send(get("/"));
    int error = 0;
    CHECK(c.read_all(error).empty());
    CHECK(error == ECONNRESET);
  }
}

TEST_CASE("TestProxy forwards absolute-form http requests", "[transports][test_server][proxy]") {
  TestServer server(serve([](const HttpRequest& r) {
    return http_response(200, r.target + (r.header("proxy-authorization") ? " leaked" : " clean"));
  }));
  TestProxy proxy;
  Client c(proxy.port());
  const std::string origin = "http://127.0.0.1:" + std::to_string(server.port());
  c.send(get(origin + "/simple/?x=1", "Proxy-Authorization: Basic dTpw\r\n"));
  CHECK(body_of(c.read_response()) == "/simple/?x=1 clean");
  c.send(get(origin));  // keep-alive to the proxy; no path means "/"
  CHECK(body_of(c.read_response()) == "/ clean");
  const auto seen = proxy.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].target == origin + "/simple/?x=1");
  CHECK(seen[0].header("proxy-authorization") == "Basic dTpw");
  CHECK(server.requests().size() == 2);

  SECTION("origin-form is refused") {
    Client d(proxy.port());
    d.send(get("/relative"));
    CHECK_THAT(d.read_response(), StartsWith("HTTP/1.1 400"));
  }
}

TEST_CASE("TestProxy's gate answers 407 / 403 or resets before any tunnel", "[transports][test_server][proxy]") {
  TestServer origin(answer("origin"));
  const std::string authority = "127.0.0.1:" + std::to_string(origin.port());
  const std::string connect = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";

  SECTION("407 unless Proxy-Authorization is right (docs/network-faults.md P02)") {
    TestProxy proxy([](Conn& c, const HttpRequest& r) {
      if (r.header("Proxy-Authorization") == "Basic dTpw") return true;
      c.write(http_response(407, "", {{"Proxy-Authenticate", "Basic realm=\"test\""}}, false));
      return false;
    });
    {
      Client c(proxy.port());
      c.send(connect + "\r\n");
      int error = 0;
      const std::string response = c.read_all(error);
      CHECK_THAT(response, StartsWith("HTTP/1.1 407 Proxy Authentication Required"));
      CHECK(header_of(response, "Proxy-Authenticate") == "Basic realm=\"test\"");
    }
    {
      Client c(proxy.port());
      c.send(connect + "Proxy-Authorization: Basic dTpw\r\n\r\n");
      CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 200"));
      c.send(get("/"));
      CHECK(body_of(c.read_response()) == "origin");
    }
    CHECK(origin.connections() == 1);
    CHECK(proxy.requests().size() == 2);
  }
  SECTION("403 with an HTML page (docs/network-faults.md P03)") {
    TestProxy proxy([](Conn& c, const HttpRequest&) {
      c.write(http_response(403, "<html>blocked</html>", {{"Content-Type", "text/html"}}, false));
      return false;
    });
    Client c(proxy.port());
    c.send(connect + "\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 403 Forbidden") && Contains("blocked"));
    CHECK(origin.connections() == 0);
  }
  SECTION("reset of the first CONNECTs (docs/network-faults.md P01)") {
    std::atomic<int> seen{0};
    TestProxy proxy([&seen](Conn& c, const HttpRequest&) {
      if (seen++ >= 2) return true;
      c.reset();
      return false;
    });
    for (int i = 0; i < 2; ++i) {
      Client c(proxy.port());
      c.send(connect + "\r\n");
      int error = 0;
      CHECK(c.read_all(error).empty());
      CHECK(error == ECONNRESET);
    }
    Client c(proxy.port());
    c.send(connect + "\r\n");
    CHECK_THAT(c.read_response(), StartsWith("HTTP/1.1 200"));
    CHECK(proxy.connections() == 3);
  }
}
