// Issue 13, end to end with real servers and a real client: a farm with real wheels served over
// loopback, mirrored for a fleet of three machines with `wheelfit mirror`, the mirror served by
// nginx (Debian's, started here on a loopback port with its own config), every machine resolved
// against it (the same picks as upstream, the URLs on the mirror), one picked wheel installed
// with pip from it; then the faults: a reset mid-download resumes (Range + If-Range), a body
// whose digest does not match is refused and nothing is published, and a mirror run killed
// mid-download leaves the served tree as it was.
// Run by ctest as integration.mirror (label "integration"), skipped (77) without nginx or pip.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace wheelfit;
using test::contains;
using test::read_file;
using test::write_file;
using testing::free_loopback_port;
using testing::loopback_accepts;

fs::path farmgen_exe() { return fs::path(WHEELFIT_BINARY_DIR) / "scripts/farmgen/wheelfit-farmgen"; }

std::string nginx_exe() {
  for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"})
    if (::access(p, X_OK) == 0) return p;
  return "nginx";
}

/// An nginx.conf's start, up to and into `http {`: this test's own pid file, logs and temp folders.
std::string nginx_prologue(const fs::path& prefix) {
  std::string out = ::geteuid() == 0 ? "user root;\n" : "";
  out += "daemon off;\nmaster_process on;\nworker_processes 1;\npid " + (prefix / "nginx.pid").string() + ";\n";
  out += "error_log " + (prefix / "logs/error.log").string() + " warn;\nevents { worker_connections 64; }\nhttp {\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    out += "  " + std::string(temp) + "_temp_path " + (prefix / temp).string() + ";\n";
  }
  return out;
}

/// A child process started with posix_spawn; killed (SIGKILL) and reaped on destruction.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (::posix_spawnp(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0) pid_ = -1;
  }
  ~Child() { kill(SIGKILL); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  [[nodiscard]] int pid() const { return pid_; }
  /// Sends `sig` and reaps the child.
  void kill(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

/// An nginx process on 127.0.0.1:<port>, stopped (SIGQUIT) on destruction.
class NginxProcess {
 public:
  NginxProcess(const NginxProcess&) = delete;
  NginxProcess& operator=(const NginxProcess&) = delete;
  [[nodiscard]] std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }

 protected:
  NginxProcess() : port_(free_loopback_port()) {}
  ~NginxProcess() {
    if (child_) child_->kill(SIGQUIT);
  }
  /// Starts nginx with `conf` under `prefix`, for at most `seconds`; FAILs when it does not accept.
  /// Under timeout(1): should this process die without stopping it (a fatal signal), nginx still
  /// goes before ctest's limit instead of holding the test's output pipe open; timeout relays
  /// the SIGQUIT of a normal stop.
  void launch(const fs::path& prefix, const std::string& conf, const char* seconds) {
    child_ = std::make_unique<Child>(std::vector<std::string>{"timeout", seconds, nginx_exe(), "-p", prefix.string(), "-c", conf});
    for (int i = 0; i < 500 && !loopback_accepts(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const fs::path error_log = prefix / "logs/error.log";
    if (!loopback_accepts(port_)) FAIL("nginx did not start: " << (fs::exists(error_log) ? read_file(error_log) : "(no error log)"));
  }

 private:
  std::uint16_t port_;
  std::unique_ptr<Child> child_;
};

/// nginx serving `root` on 127.0.0.1:<port>, with its own config, logs and temp folders.
class Nginx : public NginxProcess {
 public:
  Nginx(const fs::path& prefix, const fs::path& root) {
    fs::create_directories(prefix / "logs");
    const std::string conf = (prefix / "nginx.conf").string();
    std::ofstream(conf) << nginx_prologue(prefix) << "  access_log " << (prefix / "logs/access.log").string() << ";\n"
                        << "  types { text/html html; application/json json; application/octet-stream whl metadata; }\n"
                        << "  sendfile on;\n  server {\n    listen 127.0.0.1:" << port() << ";\n"
                        << "    root " << root.string() << ";\n  }\n}\n";
    launch(prefix, conf, "240");
  }
};

std::string python_with_pip() {
  for (const char* py : {"/usr/bin/python3", "python3"}) {
    if (std::system((std::string(py) + " -m pip --version >/dev/null 2>&1").c_str()) == 0) return py;
  }
  return {};
}

json::value parse(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec) FAIL("not JSON: " << text);
  return v;
}

/// filename -> url of every pick in a resolve --json object.
std::map<std::string, std::string> picks_of(const json::value& v) {
  std::map<std::string, std::string> out;
  for (const auto& p : v.at("packages").as_array()) {
    out[std::string(p.at("filename").as_string())] = std::string(p.at("url").as_string());
  }
  return out;
}

// The fleet: three machines the farm's grid covers, all resolving Python 3.11 environments
// (Debian 12's python3, so that its pip can install what the mirror holds).
const std::map<std::string, std::string> kFleet = {
    {"h100", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.11\"\ntorch = \"2.8.0+cu128\"\n"
             "backend = \"cuda\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n"},
    {"rtx4090", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.36\"\npython = \"3.11\"\nbackend = \"cuda\"\n"
                "driver_version = \"570.86.10\"\ncuda_driver = \"12.8\"\ngpus = [\"8.9\"]\n"},
    {"gh200", "os = \"linux\"\ncpu_arch = \"aarch64\"\nglibc = \"2.39\"\npython = \"3.11\"\nbackend = \"cuda\"\n"
              "driver_version = \"580.82.07\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n"},
};

constexpr const char* kConfig = "python = \"3.11\"\n\n[cuda]\npackages = [\"flash_attn\", \"cumm\"]\n";

}  // namespace

TEST_CASE("a fleet mirror served by nginx resolves like upstream and installs with pip", "[integration][nginx]") {
  test::TempDir tmp;
  const std::string env = test::clean_network_env() + " WHEELFIT_PLUGIN_PATH=";
  const auto wheelfit = test::built_wheelfit();

  // Upstream: a farm with real wheels, over loopback, behind a proxy that resets the connection
  // half-way through the first download of every wheel and honours Range (N02).
  testing::DirectoryOptions cutting;
  cutting.ranges = true;
  cutting.cut_after = 600;
  testing::TestServer upstream(testing::serve_directory(tmp / "farm", cutting));
  const auto gen = test::run_program("", farmgen_exe(), {"--out", (tmp / "farm").string(), "--with-files", "--packages", "13",
                                                         "--base-url", upstream.url("/")});
  REQUIRE(gen.code == 0);
  for (const auto& [name, profile] : kFleet) write_file(tmp / "fleet" / (name + ".toml"), profile);
  write_file(tmp / "comfy-env.toml", kConfig);
  const std::string cfg = (tmp / "comfy-env.toml").string();
  const std::string out = (tmp / "mirror").string();

  // The mirror, for the fleet.
  const auto mirrored = test::run_program(env, wheelfit, {"mirror", cfg, "--machines", (tmp / "fleet").string(), "--out", out,
                                                          "--index", upstream.url("/"), "--no-cache", "--json"});
  INFO(mirrored.err);
  REQUIRE(mirrored.code == 0);
  const auto report = parse(mirrored.out);
  REQUIRE(report.at("machines").as_array().size() == 3);
  const auto downloads = report.at("downloads").as_array();
  REQUIRE_FALSE(downloads.empty());
  for (const auto& d : downloads) {
    CHECK(d.at("status") == "fetched");
    CHECK(d.at("verified") == true);
    CHECK(d.at("continued") == true);  // each continued after its reset, not fetched again whole
    CHECK(d.at("resumed") == false);   // (no part of an earlier run)
  }
  {  // ... with Range from where the cut left it, and If-Range
    std::size_t continued = 0;
    for (const auto& r : upstream.requests()) {
      if (!r.target.ends_with(".whl") || !r.header("range")) continue;
      ++continued;
      CHECK(*r.header("range") == "bytes=600-");
      CHECK(r.header("if-range"));
    }
    CHECK(continued == downloads.size());
  }
  const std::string first_id = std::string(report.at("published").at("id").as_string());

  // nginx serves OUT/current.
  Nginx nginx(tmp / "nginx", fs::path(out) / "current");

  // Every machine resolves against the mirror as it does upstream, the URLs on the mirror.
  std::string x86_pick;
  for (const auto& [name, profile] : kFleet) {
    INFO(name);
    const std::string machine = (tmp / "fleet" / (name + ".toml")).string();
    const auto up = test::run_program(env, wheelfit, {"resolve", cfg, "--machine", machine, "--index", upstream.url("/"), "--no-cache", "--json"});
    const auto mine = test::run_program(env, wheelfit, {"resolve", cfg, "--machine", machine, "--index", nginx.url("/"), "--no-cache", "--json"});
    INFO(mine.err);
    REQUIRE(up.code == 0);
    REQUIRE(mine.code == 0);
    const auto mine_doc = parse(mine.out);
    const auto up_picks = picks_of(parse(up.out));
    const auto mine_picks = picks_of(mine_doc);
    REQUIRE(up_picks.size() == mine_picks.size());
    for (const auto& [file, url] : up_picks) {
      REQUIRE(mine_picks.count(file));
      CHECK(mine_picks.at(file).rfind(nginx.url("/files/"), 0) == 0);
    }
    for (const auto& p : mine_doc.at("packages").as_array()) {
      CHECK(p.at("sha256").is_string());  // hash-pinned from the mirror's pages
      if (name == "h100" && p.at("name") == "flash-attn") x86_pick = std::string(p.at("version").as_string());
    }
  }

  // The ordinary client: pip installs a picked wheel from the mirror (PEP 503 + PEP 658).
  const std::string python = python_with_pip();
  REQUIRE_FALSE(python.empty());
  REQUIRE_FALSE(x86_pick.empty());
  const auto pip = test::run_program("env PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1", python,
                                     {"-m", "pip", "install", "--no-deps", "--no-cache-dir", "--only-binary", ":all:", "--index-url",
                                      nginx.url("/"), "--target", (tmp / "site").string(), "flash-attn==" + x86_pick});
  INFO(pip.out << pip.err);
  REQUIRE(pip.code == 0);
  CHECK(fs::is_directory(tmp / "site" / "flash_attn"));

  // A body whose digest does not match: refused, nothing published, the served tree unchanged.
  const std::string page_before = read_file(fs::path(out) / "current/flash-attn/index.html");
  {
    std::string victim;
    for (const auto& d : downloads)
      if (contains(std::string(d.at("filename").as_string()), "cumm")) victim = std::string(d.at("filename").as_string());
    REQUIRE_FALSE(victim.empty());
    fs::remove(fs::path(out) / "pool" / victim);  // the re-run must fetch it again
    for (const auto& e : fs::recursive_directory_iterator(tmp / "farm" / "releases")) {
      if (e.path().filename() == victim) {
        std::string bytes = read_file(e.path());
        bytes[bytes.size() / 2] ^= 0x55;  // a stale proxy's copy
        fs::remove(e.path());
        write_file(e.path(), bytes);
      }
    }
    const auto bad = test::run_program(env, wheelfit, {"mirror", cfg, "--machines", (tmp / "fleet").string(), "--out", out, "--index",
                                                       upstream.url("/"), "--no-cache"});
    CHECK(bad.code == 5);
    CHECK(contains(bad.err, "sha256"));
    CHECK(contains(bad.err, "stale proxy"));
    CHECK_FALSE(fs::exists(fs::path(out) / "pool" / victim));
    CHECK(fs::read_symlink(fs::path(out) / "current").filename() == first_id);
    CHECK(read_file(fs::path(out) / "current/flash-attn/index.html") == page_before);
  }

  // A mirror run killed mid-download: the served tree stays the previous, complete one. The
  // pages come fast; the files from a server that waits 3 s before each answer.
  {
    testing::DirectoryOptions slow;
    slow.delay = std::chrono::milliseconds(3000);
    testing::TestServer files(testing::serve_directory(tmp / "farm2", slow));
    testing::TestServer pages(testing::serve_directory(tmp / "farm2"));
    REQUIRE(test::run_program("", farmgen_exe(), {"--out", (tmp / "farm2").string(), "--with-files", "--packages", "13", "--base-url",
                                                  files.url("/")}).code == 0);
    fs::remove_all(fs::path(out) / "pool");  // every wheel must be fetched again
    Child run({wheelfit.string(), "mirror", cfg, "--machines", (tmp / "fleet").string(), "--out", out, "--index", pages.url("/"),
               "--no-cache"});
    REQUIRE(run.pid() > 0);
    for (int i = 0; i < 300 && files.requests().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(files.requests().empty());  // it is downloading
    run.kill(SIGKILL);
    CHECK(fs::read_symlink(fs::path(out) / "current").filename() == first_id);
    CHECK(read_file(fs::path(out) / "current/flash-attn/index.html") == page_before);
    const auto still = test::run_program(env, wheelfit, {"resolve", cfg, "--machine", (tmp / "fleet/h100.toml").string(), "--index",
                                                         nginx.url("/"), "--no-cache", "--json"});
    CHECK(still.code == 0);
    // The next run completes and publishes.
    const auto again = test::run_program(env, wheelfit, {"mirror", cfg, "--machines", (tmp / "fleet").string(), "--out", out,
                                                         "--index", pages.url("/"), "--no-cache", "--jobs", "8"});
    INFO(again.err);
    CHECK(again.code == 0);
    CHECK(fs::read_symlink(fs::path(out) / "current").filename() != first_id);
  }
}

// Issue 21: the per-machine views, served by nginx with the shipped server block
// (packaging/nginx/wheelfit-mirror.conf), read by Debian's pip. Two x86_64 machine types on
// different combos and an aarch64 machine: against the union pip takes the other machine's build
// (the hazard the views exist for); against each view it takes that machine's own; each view's
// requirements.txt downloads with --require-hashes; pip is answered with the JSON pages; the view
// of a profile like this machine installs into a fresh venv; pylock.toml pins the served files.
namespace {

/// nginx with the shipped server block: its `listen` and `root` lines set, an access log that
/// names the file served and its Content-Type.
class ShippedNginx : public NginxProcess {
 public:
  ShippedNginx(const fs::path& prefix, const fs::path& root) {
    fs::create_directories(prefix / "logs");
    std::string block = read_file(fs::path(WHEELFIT_SOURCE_DIR) / "packaging/nginx/wheelfit-mirror.conf");
    const auto set_line = [&](const std::string& marker, const std::string& line) {
      const auto at = block.find(marker);
      REQUIRE(at != std::string::npos);
      const auto start = block.rfind('\n', at) + 1;
      block.replace(start, block.find('\n', at) - start, line);
    };
    set_line("# wheelfit: listen", "    listen 127.0.0.1:" + std::to_string(port()) + ";");
    set_line("# wheelfit: root", "    root " + root.string() + ";");
    log_ = prefix / "logs/access.log";
    const std::string conf = (prefix / "nginx.conf").string();
    std::ofstream(conf) << nginx_prologue(prefix) << "  log_format served '$request_uri $uri $status $sent_http_content_type';\n"
                        << "  access_log " << log_.string() << " served;\n"
                        << block << "}\n";
    launch(prefix, conf, "300");
  }
  [[nodiscard]] std::string log() const { return fs::exists(log_) ? read_file(log_) : std::string(); }

 private:
  fs::path log_;
};

// Two x86_64 machine types on different combos, and an aarch64 machine (Python 3.11: Debian's).
const std::map<std::string, std::string> kViewFleet = {
    {"h100", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.11\"\ntorch = \"2.8.0+cu128\"\n"
             "backend = \"cuda\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n"},
    {"rtx5090", "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.11\"\ntorch = \"2.9.0+cu130\"\n"
                "backend = \"cuda\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"12.0\"]\n"},
    {"gh200", "os = \"linux\"\ncpu_arch = \"aarch64\"\nglibc = \"2.39\"\npython = \"3.11\"\ntorch = \"2.8.0+cu128\"\n"
              "backend = \"cuda\"\ndriver_version = \"580.82.07\"\ncuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n"},
};

/// The first platform tag of a wheel name ("...-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
/// -> "manylinux_2_24_x86_64").
std::string platform_of(const std::string& wheel) {
  std::string tags = wheel.substr(wheel.rfind('-') + 1);
  tags = tags.substr(0, tags.size() - 4);
  return tags.substr(0, tags.find('.'));
}

/// `pip download` of one platform's wheels into `to`; the files it wrote.
/// pip with no configuration of this machine's (a config file, PIP_* variables: find-links, indexes).
const char* const kPipEnv =
    "env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_NO_INDEX -u PIP_REQUIRE_HASHES "
    "PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1";

std::pair<test::CliRun, std::vector<std::string>> pip_download(const std::string& python, const std::string& index,
                                                              const std::string& platform, const fs::path& to,
                                                              std::vector<std::string> what) {
  std::vector<std::string> args{"-m", "pip", "download", "--no-deps", "--no-cache-dir", "--only-binary", ":all:", "--platform",
                                platform, "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                                "--index-url", index, "-d", to.string()};
  args.insert(args.end(), what.begin(), what.end());
  auto run = test::run_program(kPipEnv, python, args);
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(to, ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path().filename().string());
  return {std::move(run), std::move(files)};
}

/// The response headers of a GET of `path` on 127.0.0.1:`port` (HTTP/1.0: the server closes),
/// names lower-cased, and the status line under "".
std::map<std::string, std::string> headers_of(std::uint16_t port, const std::string& path, const std::string& accept = "") {
  std::map<std::string, std::string> out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n" + (accept.empty() ? "" : "Accept: " + accept + "\r\n") + "\r\n";
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0 && response.find("\r\n\r\n") == std::string::npos;) response.append(buf, n);
  }
  ::close(fd);
  response = response.substr(0, response.find("\r\n\r\n"));
  std::size_t at = response.find("\r\n");
  out[""] = response.substr(0, at);
  while (at != std::string::npos) {
    const std::size_t next = response.find("\r\n", at + 2);
    const std::string line = response.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2);
    if (const auto colon = line.find(':'); colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    at = next;
  }
  return out;
}

}  // namespace

TEST_CASE("each fleet machine installs its own build from its view, with pip, served by the shipped nginx block",
          "[integration][nginx][views]") {
  const std::string python = python_with_pip();
  if (python.empty()) FAIL("no python3 with pip (scripts/install-deps.sh installs python3-pip)");
  test::TempDir tmp;
  const std::string env = test::clean_network_env() + " WHEELFIT_PLUGIN_PATH=";
  const auto wheelfit = test::built_wheelfit();
  REQUIRE(test::run_program("", farmgen_exe(), {"--out", (tmp / "farm").string(), "--with-files", "--only", "flash_attn,cumm"}).code == 0);
  for (const auto& [name, profile] : kViewFleet) write_file(tmp / "fleet" / (name + ".toml"), profile);
  write_file(tmp / "comfy-env.toml", "python = \"3.11\"\n\n[cuda]\npackages = [\"flash_attn\"]\n");
  const fs::path out = tmp / "mirror";
  const auto mirrored = test::run_program(env, wheelfit, {"mirror", (tmp / "comfy-env.toml").string(), "--machines",
                                                          (tmp / "fleet").string(), "--out", out.string(), "--index",
                                                          (tmp / "farm").string(), "--no-cache", "--json"});
  INFO(mirrored.out << mirrored.err);
  REQUIRE(mirrored.code == 0);
  CHECK(parse(mirrored.out).at("published").at("views") == 3);
  // Each machine's own flash-attn build, from the manifest.
  std::map<std::string, std::string> own;
  const auto manifest = parse(read_file(out / "current" / "mirror.json"));
  for (const auto& m : manifest.at("machines").as_array()) {
    for (const auto& f : m.at("files").as_array()) own[std::string(m.at("name").as_string())] = std::string(f.as_string());
  }
  REQUIRE(own.size() == 3);
  REQUIRE(own.at("h100") != own.at("rtx5090"));
  REQUIRE(platform_of(own.at("h100")) == platform_of(own.at("rtx5090")));  // one platform, two builds

  ShippedNginx nginx(tmp / "nginx", out / "current");

  SECTION("(a) the union: pip takes the highest local label, the other machine's build") {
    auto [run, files] = pip_download(python, nginx.url("/"), platform_of(own.at("h100")), tmp / "union", {"flash-attn"});
    INFO(run.out << run.err);
    REQUIRE(run.code == 0);
    CHECK(files == std::vector<std::string>{own.at("rtx5090")});  // not the H100's: the hazard
  }
  SECTION("(b, c) each view: that machine's build, and its requirements.txt with --require-hashes") {
    for (const auto& [name, wheel] : own) {
      INFO(name);
      const std::string view = nginx.url("/machines/" + name + "/");
      auto [run, files] = pip_download(python, view, platform_of(wheel), tmp / ("view-" + name), {"flash-attn"});
      INFO(run.out << run.err);
      REQUIRE(run.code == 0);
      CHECK(files == std::vector<std::string>{wheel});
      auto [locked, locked_files] = pip_download(python, view, platform_of(wheel), tmp / ("locked-" + name),
                                                 {"--require-hashes", "-r", (out / "current/machines" / name / "requirements.txt").string()});
      INFO(locked.out << locked.err);
      CHECK(locked.code == 0);
      CHECK(locked_files == std::vector<std::string>{wheel});
    }
    // (d) pip asked for JSON and got it: the log names index.json, served as PEP 691's type.
    const std::string log = nginx.log();
    INFO(log);
    CHECK(contains(log, "/machines/h100/flash-attn/ /machines/h100/flash-attn//index.json 200 application/vnd.pypi.simple.v1+json"));
  }
  SECTION("(f) Cache-Control: index pages revalidate each time, files/ is immutable (decision 0041)") {
    const std::string revalidate = "max-age=0, must-revalidate", immutable = "public, max-age=31536000, immutable";
    const auto mirror_encoded = [](const std::string& name) {  // the pages' href: '+' as %2B
      std::string out;
      for (const char c : name) out += c == '+' ? std::string("%2B") : std::string(1, c);
      return out;
    };
    struct Row {
      std::string path, accept, cache_control, type;
    };
    const std::vector<Row> rows = {
        {"/", "", revalidate, "text/html"},
        {"/flash-attn/", "", revalidate, "text/html"},
        {"/flash-attn/", "application/vnd.pypi.simple.v1+json", revalidate, "application/vnd.pypi.simple.v1+json"},
        {"/machines/h100/flash-attn/", "application/vnd.pypi.simple.v1+json", revalidate, "application/vnd.pypi.simple.v1+json"},
        {"/machines/h100/requirements.txt", "", revalidate, "text/plain"},
        {"/packages.json", "", revalidate, "application/json"},
        {"/mirror.json", "", revalidate, "application/json"},
        {"/files/" + mirror_encoded(own.at("h100")), "", immutable, "application/octet-stream"},
        {"/files/" + mirror_encoded(own.at("h100") + ".metadata"), "", immutable, "application/octet-stream"},
    };
    for (const auto& row : rows) {
      CAPTURE(row.path, row.accept);
      const auto h = headers_of(nginx.port(), row.path, row.accept);
      CHECK(contains(h.at(""), " 200 "));
      CHECK(h.count("cache-control"));
      if (h.count("cache-control")) CHECK(h.at("cache-control") == row.cache_control);
      if (h.count("content-type")) CHECK(h.at("content-type") == row.type);
    }
    // A name no snapshot has yet is not kept: a later one may publish it.
    const auto missing = headers_of(nginx.port(), "/files/none-1.0-py3-none-any.whl");
    CHECK(contains(missing.at(""), " 404 "));
    CHECK_FALSE(missing.count("cache-control"));
  }
  SECTION("(e) the view of a profile like this machine installs into a fresh venv; pylock.toml pins the served files") {
    const auto venv = test::run_program("", python, {"-m", "venv", (tmp / "venv").string()});
    INFO(venv.out << venv.err);
    REQUIRE(venv.code == 0);
    const auto install = test::run_program(kPipEnv, tmp / "venv/bin/python",
                                           {"-m", "pip", "install", "--no-deps", "--no-cache-dir", "--require-hashes",
                                            "--index-url", nginx.url("/machines/h100/"), "-r",
                                            (out / "current/machines/h100/requirements.txt").string()});
    INFO(install.out << install.err);
    REQUIRE(install.code == 0);
    const auto shown = test::run_program("", tmp / "venv/bin/python", {"-m", "pip", "show", "flash-attn"});
    CHECK(contains(shown.out, "Version: " + own.at("h100").substr(own.at("h100").find('-') + 1,
                                                                  own.at("h100").find('-', own.at("h100").find('-') + 1) - own.at("h100").find('-') - 1)));
    // pylock.toml: PEP 751's required keys, and each wheel's path and digest are the served file's.
    write_file(tmp / "check_pylock.py",
               "import hashlib, pathlib, sys, tomllib\n"
               "lock = pathlib.Path(sys.argv[1]); doc = tomllib.loads(lock.read_text())\n"
               "assert doc['lock-version'] == '1.0' and doc['created-by'], doc\n"
               "assert doc['packages'], doc\n"
               "for p in doc['packages']:\n"
               "    assert p['name'] and p['version'] and p['wheels'], p\n"
               "    for w in p['wheels']:\n"
               "        f = (lock.parent / w['path']).resolve()\n"
               "        data = f.read_bytes()\n"
               "        assert hashlib.sha256(data).hexdigest() == w['hashes']['sha256'], w\n"
               "        assert len(data) == w['size'] and f.name == w['name'], w\n"
               "print('ok', len(doc['packages']))\n");
    for (const auto& [name, wheel] : own) {
      const auto checked = test::run_program("", python, {(tmp / "check_pylock.py").string(), (out / "current/machines" / name / "pylock.toml").string()});
      INFO(name << ": " << checked.out << checked.err);
      CHECK(checked.code == 0);
      CHECK(contains(checked.out, "ok 1"));
    }
  }
}
