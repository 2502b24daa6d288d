// bench_download: fetching a set of large wheels over loopback into an empty folder, wheelfit's
// deliver::download next to curl and pip measured in the same run.
//
// Generates --files wheels of --size-mb MiB each (default 8 x 128 MiB = 1 GiB): real zips (a
// stored member of random bytes, METADATA, WHEEL, RECORD; tag py3-none-any) that `pip download`
// accepts. Serves them with nginx (sendfile, 2 workers) on 127.0.0.1, then fetches them all:
//   wheelfit  deliver::download, sha256 verified, jobs 4 (parts written, fsynced, renamed)
//   curl      one `curl -s -o` process per file, all started together
//   curl+sha  the same, each followed by `sha256sum` of its file (verified, as wheelfit is)
//   pip       `python3 -m pip download --no-deps --no-index --no-cache-dir -d DIR URL...`
// Each figure: MB/s (10^6 bytes) over the whole set, best of --reps; then wheelfit/curl (goal >=
// 0.9) and wheelfit/pip. No nginx: a note, exit 0. No curl or pip: that figure is skipped.
//
//   bench_download [--files N] [--size-mb N] [--reps N] [--jobs N] [--keep]

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "wheelfit/deliver/download.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "zip_writer.hpp"

extern char** environ;

using namespace wheelfit;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Wheel {
  std::string name, sha256;
  std::uint64_t size = 0;
};

/// A wheel of `mib` MiB: a stored member of random bytes and the dist-info pip reads.
Wheel write_wheel(const fs::path& dir, int index, std::uint64_t mib) {
  const std::string project = "benchwheel" + std::to_string(index);
  Wheel w;
  w.name = project + "-1.0-py3-none-any.whl";
  std::ofstream out(dir / w.name, std::ios::binary);
  farmgen::ZipWriter zip(out);
  std::uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(index + 1);
  zip.add_stored(project + "/blob.bin", mib << 20, [&](char* buf, std::size_t n) {
    for (std::size_t i = 0; i + 8 <= n; i += 8) {  // xorshift64: incompressible, fast
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      std::memcpy(buf + i, &state, 8);
    }
    for (std::size_t i = n - n % 8; i < n; ++i) buf[i] = static_cast<char>(i);
  });
  const std::string info = project + "-1.0.dist-info/";
  zip.add({project + "/__init__.py", ""});
  zip.add({info + "METADATA", "Metadata-Version: 2.1\nName: " + project + "\nVersion: 1.0\n"});
  zip.add({info + "WHEEL", "Wheel-Version: 1.0\nGenerator: bench_download\nRoot-Is-Purelib: true\nTag: py3-none-any\n"});
  zip.add({info + "RECORD", project + "/blob.bin,,\n" + project + "/__init__.py,,\n" + info + "METADATA,,\n" + info +
                                "WHEEL,,\n" + info + "RECORD,,\n"});
  zip.finish();
  out.close();
  w.size = fs::file_size(dir / w.name);
  auto digest = deliver::sha256_file(dir / w.name);
  w.sha256 = digest ? *digest : "";
  return w;
}

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool can_connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

pid_t spawn(const std::vector<std::string>& args, bool quiet = true) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

bool wait_ok(pid_t pid) {
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string find_program(const std::vector<std::string>& candidates) {
  for (const auto& c : candidates) {
    if (c.find('/') != std::string::npos) {
      if (::access(c.c_str(), X_OK) == 0) return c;
      continue;
    }
    const char* path = std::getenv("PATH");
    std::string rest = path ? path : "";
    for (std::size_t p = 0; p <= rest.size();) {
      const auto e = std::min(rest.find(':', p), rest.size());
      const std::string f = rest.substr(p, e - p) + "/" + c;
      if (!rest.substr(p, e - p).empty() && ::access(f.c_str(), X_OK) == 0) return f;
      p = e + 1;
    }
  }
  return "";
}

/// nginx on 127.0.0.1:<port> serving `root`, stopped with the object.
class Nginx {
 public:
  Nginx(const std::string& exe, const fs::path& prefix, const fs::path& root) : port_(free_port()) {
    fs::create_directories(prefix / "logs");
    std::ofstream(prefix / "nginx.conf")
        << (::geteuid() == 0 ? "user root;\n" : "") << "daemon off;\nworker_processes 2;\nerror_log "
        << (prefix / "logs/error.log").string() << ";\npid " << (prefix / "nginx.pid").string()
        << ";\nevents {}\nhttp {\n  access_log off;\n  sendfile on;\n  types { application/octet-stream whl; }\n"
        << "  server {\n    listen 127.0.0.1:" << port_ << ";\n    root " << root.string() << ";\n  }\n}\n";
    pid_ = spawn({exe, "-c", (prefix / "nginx.conf").string(), "-p", prefix.string() + "/", "-e",
                  (prefix / "logs/error.log").string()});
    for (int i = 0; i < 100 && pid_ > 0 && !can_connect(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~Nginx() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGQUIT);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;
  [[nodiscard]] bool up() const { return pid_ > 0 && can_connect(port_); }
  [[nodiscard]] std::string url(const std::string& name) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + name;
  }

 private:
  std::uint16_t port_;
  pid_t pid_ = -1;
};

/// Best-of-reps seconds of `once` (which returns false on a failure), each into an empty `dest`.
template <class F>
double best_of(int reps, const fs::path& dest, F once) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    fs::remove_all(dest);
    fs::create_directories(dest);
    ::sync();  // the previous run's writeback is not charged to this one
    const auto t0 = Clock::now();
    if (!once()) return 0;
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (best == 0 || s < best) best = s;
  }
  fs::remove_all(dest);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int files = 8, reps = 3;
  unsigned jobs = 4;
  std::uint64_t size_mb = 128;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--files" && i + 1 < argc) files = std::max(1, std::atoi(argv[++i]));
    else if (a == "--size-mb" && i + 1 < argc) size_mb = std::max<std::uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--jobs" && i + 1 < argc) jobs = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: bench_download [--files N] [--size-mb N] [--reps N] [--jobs N] [--keep]\n");
      return 2;
    }
  }
  const std::string nginx = find_program({"nginx", "/usr/sbin/nginx", "/sbin/nginx"});
  if (nginx.empty()) {
    std::printf("bench_download: nginx is not installed (Debian: nginx-light); nothing measured\n");
    return 0;
  }
  char tmpl[] = "/tmp/wheelfit-bench-download-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  const fs::path work = tmpl;
  fs::permissions(work, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const fs::path src = work / "wheels";
  fs::create_directories(src);
  std::vector<Wheel> wheels;
  std::uint64_t total = 0;
  for (int i = 0; i < files; ++i) {
    wheels.push_back(write_wheel(src, i, size_mb));
    total += wheels.back().size;
  }
  std::printf("bench_download: %d wheels, %.1f MB in all, nginx on loopback, best of %d\n", files,
              static_cast<double>(total) / 1e6, reps);
  int rc = 0;
  {
    Nginx server(nginx, work / "nginx", src);
    if (!server.up()) {
      std::printf("nginx did not start (see %s); nothing measured\n", (work / "nginx/logs/error.log").c_str());
      if (!keep) fs::remove_all(work);
      return 0;
    }
    const fs::path dest = work / "dest";
    const auto mbps = [&](double s) { return s > 0 ? static_cast<double>(total) / 1e6 / s : 0.0; };

    // wheelfit
    transports::HttpOptions o;
    o.jobs = jobs;
    o.per_host = jobs;
    o.proxy_from_env = false;
    o.proxy = {};
    o.credentials_from_env = false;
    std::vector<deliver::Wanted> wanted;
    for (const auto& w : wheels) {
      deliver::Wanted x;
      x.url = server.url(w.name);
      x.filename = w.name;
      x.sha256 = w.sha256;
      x.size = w.size;
      wanted.push_back(std::move(x));
    }
    rusage ru0{};
    ::getrusage(RUSAGE_SELF, &ru0);
    const double wf = best_of(reps, dest, [&] {
      auto t = transports::make_http_transport(o);
      if (!t) return false;
      deliver::DownloadOptions d;
      d.dir = dest;
      for (const auto& got : deliver::download(**t, wanted, d)) {
        if (got.status != deliver::Delivered::Status::fetched) {
          std::fprintf(stderr, "wheelfit: %s\n", got.error ? got.error->message.c_str() : "not fetched");
          return false;
        }
      }
      return true;
    });
    rusage ru1{};
    ::getrusage(RUSAGE_SELF, &ru1);
    const auto secs = [](const timeval& a, const timeval& b) {
      return static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_usec - a.tv_usec) / 1e6;
    };
    std::printf("  wheelfit  deliver::download, sha256, jobs %u  %8.1f MB/s  (%.2f s; CPU per run: %.2f s user, %.2f s sys)\n",
                jobs, mbps(wf), wf, secs(ru0.ru_utime, ru1.ru_utime) / reps, secs(ru0.ru_stime, ru1.ru_stime) / reps);

    // curl: one process per file, all at once
    double cu = 0, cv = 0;
    if (const std::string curl = find_program({"curl"}); !curl.empty()) {
      cu = best_of(reps, dest, [&] {
        std::vector<pid_t> pids;
        for (const auto& w : wheels) pids.push_back(spawn({curl, "-s", "-f", "-o", (dest / w.name).string(), server.url(w.name)}));
        bool ok = true;
        for (auto p : pids) ok = wait_ok(p) && ok;
        return ok;
      });
      std::printf("  curl      %d processes at once               %8.1f MB/s  (%.2f s)\n", files, mbps(cu), cu);
      // The same verified as wheelfit verifies: each file's sha256 checked once it is there.
      if (const std::string sum = find_program({"sha256sum"}); !sum.empty()) {
        cv = best_of(reps, dest, [&] {
          std::vector<pid_t> pids;
          for (const auto& w : wheels) {
            const std::string file = (dest / w.name).string();
            pids.push_back(spawn({"sh", "-c", "\"$0\" -s -f -o \"$1\" \"$2\" && \"$3\" \"$1\"", curl, file, server.url(w.name), sum}));
          }
          bool ok = true;
          for (auto p : pids) ok = wait_ok(p) && ok;
          return ok;
        });
        std::printf("  curl+sha  the same, then sha256sum each      %8.1f MB/s  (%.2f s)\n", mbps(cv), cv);
      }
    } else {
      std::printf("  curl      not installed\n");
    }

    // pip download
    double pp = 0;
    std::string python = find_program({"/usr/bin/python3"});
    if (python.empty()) python = find_program({"python3"});
    if (!python.empty() && wait_ok(spawn({python, "-m", "pip", "--version"}))) {
      pp = best_of(reps, dest, [&] {
        std::vector<std::string> args = {python, "-m", "pip", "download", "-q", "--no-deps", "--no-index",
                                         "--no-cache-dir", "--disable-pip-version-check", "-d", dest.string()};
        for (const auto& w : wheels) args.push_back(server.url(w.name));
        return wait_ok(spawn(args));
      });
      std::printf("  pip       %s -m pip download             %8.1f MB/s  (%.2f s)\n", python.c_str(), mbps(pp), pp);
    } else {
      std::printf("  pip       not installed (python3 -m pip)\n");
    }
    if (wf > 0 && cu > 0) std::printf("  wheelfit / curl: %.2fx (goal >= 0.9)\n", cu / wf);
    if (wf > 0 && cv > 0) std::printf("  wheelfit / curl+sha256sum: %.2fx\n", cv / wf);
    if (wf > 0 && pp > 0) std::printf("  wheelfit / pip:  %.2fx\n", pp / wf);
    if (wf == 0) rc = 1;
  }
  if (!keep) fs::remove_all(work);
  else std::printf("kept %s\n", work.c_str());
  return rc;
}
