#pragma once
// Loopback servers for the network tests, in-process on 127.0.0.1:0 (or [::1]:0), scripted per
// connection: a fault-injecting HTTP/1.1 server (optionally TLS), a CONNECT proxy, and a test CA
// that issues certificates at test time with OpenSSL. Plain POSIX sockets and one thread per
// connection: deliberately independent of the code under test (no Asio, no Beast).
// Thread safety: the accessors (connections(), requests()) may be called from the test thread
// while the server runs.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfit::testing {

using TestHeaders = std::vector<std::pair<std::string, std::string>>;

/// One request as the server read it.
struct HttpRequest {
  std::string method, target, version;  ///< "GET", "/cumm/", "HTTP/1.1"
  TestHeaders headers;                  ///< as received (names as written)
  std::string body;
  int connection = 0;                   ///< the 0-based index of the connection it came on
  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;  ///< case-insensitive
};

/// One accepted connection (plain or TLS, after the handshake). All calls are blocking.
class Conn {
 public:
  virtual ~Conn() = default;
  /// Reads one request (request line, headers, a Content-Length body); nullopt on EOF, error or
  /// `timeout`. Records it in the server's requests().
  virtual std::optional<HttpRequest> read_request(std::chrono::milliseconds timeout = std::chrono::seconds(10)) = 0;
  /// Writes bytes as they are (false when the peer is gone).
  virtual bool write(std::string_view bytes) = 0;
  /// Closes with an RST (SO_LINGER 0) and, for TLS, without close_notify.
  virtual void reset() = 0;
  /// Closes cleanly (TLS: close_notify first unless `notify` is false).
  virtual void close(bool notify = true) = 0;
  /// Reads raw bytes until `timeout` (proxy tunnels); "" at EOF.
  virtual std::string read_some(std::chrono::milliseconds timeout) = 0;
  /// The 0-based index of this connection on its server.
  [[nodiscard]] virtual int index() const = 0;
  /// The underlying socket (for a proxy splicing two connections). -1 after close.
  [[nodiscard]] virtual int fd() const = 0;
};

/// A TCP port on 127.0.0.1 nothing listens on now (bound, read, released): for a server the
/// test starts as a process (nginx, squid, a KDC). Throws std::runtime_error when none is free.
std::uint16_t free_loopback_port();

/// Whether something accepts TCP connections on 127.0.0.1:`port` (a started server is ready).
bool loopback_accepts(std::uint16_t port);

/// A complete HTTP/1.1 response: status line with the standard reason, Content-Length, the extra
/// headers, "Connection: close" unless keep_alive, then the body.
std::string http_response(int status, std::string_view body, const TestHeaders& extra = {}, bool keep_alive = true);

/// The server's certificate and key for TLS (PEM files).
struct TlsFiles {
  std::filesystem::path cert_chain, key;
};

/// Handles one whole connection; returns when done (the server then closes it if still open).
using ConnScript = std::function<void(Conn&)>;

class TestServer {
 public:
  struct Options {
    bool ipv6 = false;                 ///< listen on [::1] instead of 127.0.0.1
    std::optional<TlsFiles> tls;       ///< serve TLS with this certificate
    /// Mutual TLS: require a client certificate issued by the CA in this PEM file (a client
    /// without one, or with another, fails the handshake and no script runs).
    std::optional<std::filesystem::path> client_ca;
    int backlog = 64;
    bool accept = true;                ///< false: listen but never accept (connect-timeout tests fill the backlog)
  };
  explicit TestServer(ConnScript script, Options options);
  explicit TestServer(ConnScript script);
  ~TestServer();  ///< stops: closes the listener and every connection, joins the threads
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  [[nodiscard]] std::uint16_t port() const;
  /// "http://127.0.0.1:<port><path>" ("https://" with TLS; "[::1]" with ipv6). `host` replaces
  /// the address in the URL (e.g. "localhost" for certificate tests).
  [[nodiscard]] std::string url(std::string_view path = "/", std::string_view host = "") const;
  [[nodiscard]] int connections() const;          ///< accepted so far (TLS: handshakes attempted)
  [[nodiscard]] std::vector<HttpRequest> requests() const;  ///< every request read so far, in order
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Serves a directory tree read-only with keep-alive: GET /a/b/ -> a/b/index.html, /x -> x;
/// 404 for what is missing or outside the root; Content-Type from the extension; ETag (the
/// file's size and mtime) and If-None-Match -> 304; `Cache-Control: max-age=<max_age>` when
/// max_age >= 0. `delay` before each response (the benchmark's round trip).
/// `ranges`: `Range: bytes=N-` answered 206 (416 past the end), unless an `If-Range` names
/// another ETag (then the whole file, 200), as nginx does.
/// `cut_after` (> 0): the first whole-file GET of each path ending in `cut_suffix` sends its
/// headers and that many body bytes, then resets the connection (N02, a proxy cutting a download).
struct DirectoryOptions {
  std::chrono::milliseconds delay{0};
  int max_age = -1;
  bool ranges = false;
  std::size_t cut_after = 0;
  std::string cut_suffix = ".whl";
};
ConnScript serve_directory(std::filesystem::path root, DirectoryOptions options = {});

/// Answers every request on the connection with `handler(request)` (keep-alive loop) until the
/// client closes; the handler returns the raw bytes to write, or "" to reset the connection.
ConnScript serve(std::function<std::string(const HttpRequest&)> handler);

/// An HTTP CONNECT proxy on 127.0.0.1:0. By default it tunnels CONNECT host:port to that target
/// (splicing bytes both ways) and forwards absolute-form plain-http requests. `script` sees each
/// client connection first and may answer it itself (407, 403 HTML, reset) and return false;
/// returning true lets the default tunnelling continue with the request already read.
/// `keep_answered`: after the gate answered (false), the next request on the same connection is
/// read (a 407 then another CONNECT with credentials, as a Negotiate proxy sees them); by default
/// the connection ends there.
class TestProxy {
 public:
  using Gate = std::function<bool(Conn&, const HttpRequest&)>;
  explicit TestProxy(Gate gate = nullptr, bool keep_answered = false);
  ~TestProxy();
  TestProxy(const TestProxy&) = delete;
  TestProxy& operator=(const TestProxy&) = delete;
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] std::string url(std::string_view userinfo = "") const;  ///< "http://[userinfo@]127.0.0.1:<port>"
  [[nodiscard]] std::vector<HttpRequest> requests() const;  ///< CONNECT / proxied requests as the proxy read them
  [[nodiscard]] int connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A certificate authority made at test time (EC P-256 keys, OpenSSL), writing PEM files into `dir`.
class TestCa {
 public:
  TestCa(std::filesystem::path dir, std::string name = "wheelfit test CA");
  [[nodiscard]] const std::filesystem::path& cert() const;  ///< the CA certificate (PEM)
  struct Leaf {
    std::vector<std::string> dns = {"localhost"};
    std::vector<std::string> ips = {"127.0.0.1", "::1"};
    std::chrono::seconds not_before{-3600};  ///< relative to now
    std::chrono::seconds not_after{86400};
  };
  /// Issues a leaf certificate signed by this CA, for a server or (mutual TLS) a client; files
  /// named <stem>.crt / <stem>.key in dir.
  [[nodiscard]] TlsFiles issue(const std::string& stem, const Leaf& leaf);
  [[nodiscard]] TlsFiles issue(const std::string& stem);
  /// Writes the CA certificate into `dir` under its subject-hash name (<hash>.0), as `openssl
  /// rehash` names it: `dir` is then a CA folder for SSL_CERT_DIR. Returns the file.
  std::filesystem::path write_hashed(const std::filesystem::path& dir) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace wheelfit::testing
