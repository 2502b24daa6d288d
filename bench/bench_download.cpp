// bench_download: fetching a set of large wheels over loopback into an empty folder, wheelfit's
// deliver::download next to curl (and pip) measured in the same run, on a tmpfs and on disk.
//
// Generates --files wheels of --size-mb MiB each (default 8 x 128 MiB = 1 GiB): real zips (a
// stored member of random bytes, METADATA, WHEEL, RECORD; tag py3-none-any) that `pip download`
// accepts. Serves them with nginx (sendfile, 2 workers) on 127.0.0.1, then fetches them all, into
// a folder on a tmpfs (/dev/shm: the disk does not decide) and into one on disk (--tmpfs DIR,
// --disk DIR choose them; "-" skips one):
//   wheelfit   deliver::download, sha256 verified, --jobs at once (parts written, fsynced, read
//              back, renamed)
//   transport  the same http transport, --jobs at once, each body discarded (no hash, no write):
//              what the wire gives wheelfit without the digest and the disk
//   curl       one `curl -s -o` process per file, all started together (no check)
//   curl+sha   the same, each followed by `sha256sum` of its file (verified, as wheelfit is)
//   curl+sync  (on disk) the same, each followed by `sync FILE` (durable, as wheelfit is)
//   pip        (--pip) `python3 -m pip download --no-deps --no-index --no-cache-dir -d DIR URL...`
// The clients take turns within each rep (best of --reps each), so a load that comes and goes
// touches them alike. Each figure: MB/s (10^6 bytes) over the whole set and CPU seconds per GB
// (getrusage: the process's own for wheelfit and the transport, its waited-for children's for
// the others); then the ratios to the goals, and the floor: SHA-256 alone is timed first (one
// core, from memory), and curl's CPU per GB plus the hash's is what any verifying client pays,
// so the cores bound its speed to cores / that floor (or the wire's, curl's): wheelfit's speed
// against that bound and its CPU per GB above the floor. No nginx: a note, exit 0. No curl: skipped.
//
//   bench_download [--files N] [--size-mb N] [--reps N] [--jobs N] [--tmpfs DIR] [--disk DIR]
//                  [--pip] [--keep]

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <span>
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

/// A sink that drops the body: it lends one reused block, so the transport reads into it and
/// nothing else touches the bytes.
class DiscardSink final : public net::BodySink {
 public:
  void prepare(net::Headers&) override {}
  Expected<void> begin(int, const net::Headers&) override { return {}; }
  Expected<void> write(std::string_view) override { return {}; }
  std::span<char> room(std::size_t want) override { return {block_.data(), std::min(want, block_.size())}; }
  Expected<void> commit(std::size_t) override { return {}; }

 private:
  std::vector<char> block_ = std::vector<char>(1u << 20);
};

double cpu_seconds(int who) {
  rusage ru{};
  ::getrusage(who, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

/// One way of fetching the set into a folder: `run` returns false on a failure.
struct Client {
  std::string name, what;
  std::function<bool(const fs::path& dest)> run;
  bool own_cpu = false;  ///< its CPU is this process's (else its children's)
  double best = 0;       ///< seconds, best of the reps
  double cpu = 0;        ///< CPU seconds of the best rep
};

/// The clients in turn, `reps` times, each into an empty `dest`; best of each.
void measure(std::vector<Client>& clients, int reps, const fs::path& dest) {
  for (int r = 0; r < reps; ++r) {
    for (auto& c : clients) {
      fs::remove_all(dest);
      fs::create_directories(dest);
      ::sync();  // the previous run's writeback is not charged to this one
      const int who = c.own_cpu ? RUSAGE_SELF : RUSAGE_CHILDREN;
      const double cpu0 = cpu_seconds(who);
      const auto t0 = Clock::now();
      if (!c.run(dest)) {
        std::fprintf(stderr, "%s failed\n", c.name.c_str());
        c.best = -1;
        continue;
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (c.best >= 0 && (c.best == 0 || s < c.best)) {
        c.best = s;
        c.cpu = cpu_seconds(who) - cpu0;
      }
    }
  }
  fs::remove_all(dest);
}

/// `exe args...` for each file at once (`args` holds FILE and URL for each); all succeeded.
bool each_at_once(const std::vector<std::vector<std::string>>& commands) {
  std::vector<pid_t> pids;
  for (const auto& c : commands) pids.push_back(spawn(c));
  bool ok = true;
  for (auto p : pids) ok = wait_ok(p) && ok;
  return ok;
}

// CPU seconds per GB that SHA-256 (deliver::Sha256, OpenSSL) costs on one core here, hashing
// `total` bytes from a buffer that stays in the cache: the part of a verified download's CPU no
// unverified client pays. The best of three.
double sha256_cpu_per_gb(std::uint64_t total) {
  std::string block(8u << 20, '\0');
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 2654435761u >> 24);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    timespec a{}, b{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    deliver::Sha256 h;
    for (std::uint64_t done = 0; done < total; done += block.size()) h.update(block);
    (void)h.hex();
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    const double s = static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-9;
    if (rep == 0 || s < best) best = s;
  }
  return best / (static_cast<double>(total) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  int files = 8, reps = 3;
  unsigned jobs = 0;
  std::uint64_t size_mb = 128;
  bool keep = false, with_pip = false;
  std::string tmpfs_dir = "/dev/shm", disk_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--files" && i + 1 < argc) files = std::max(1, std::atoi(argv[++i]));
    else if (a == "--size-mb" && i + 1 < argc) size_mb = std::max<std::uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--jobs" && i + 1 < argc) jobs = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--tmpfs" && i + 1 < argc) tmpfs_dir = argv[++i];
    else if (a == "--disk" && i + 1 < argc) disk_dir = argv[++i];
    else if (a == "--pip") with_pip = true;
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: bench_download [--files N] [--size-mb N] [--reps N] [--jobs N] [--tmpfs DIR] "
                           "[--disk DIR] [--pip] [--keep]\n");
      return 2;
    }
  }
  if (jobs == 0) jobs = static_cast<unsigned>(files);
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
  const double gb = static_cast<double>(total) / 1e9;
  std::printf("bench_download: %d wheels, %.1f MB in all, nginx on loopback, jobs %u, best of %d; %u cores, load %s\n",
              files, static_cast<double>(total) / 1e6, jobs, reps, std::thread::hardware_concurrency(), loadavg().c_str());
  int rc = 0;
  {
    Nginx server(nginx, work / "nginx", src);
    if (!server.up()) {
      std::printf("nginx did not start (see %s); nothing measured\n", (work / "nginx/logs/error.log").c_str());
      if (!keep) fs::remove_all(work);
      return 0;
    }
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
    const std::string curl = find_program({"curl"});
    const std::string sum = find_program({"sha256sum"});
    const std::string sync = find_program({"sync"});
    std::string python = find_program({"/usr/bin/python3"});
    if (python.empty()) python = find_program({"python3"});
    if (with_pip && (python.empty() || !wait_ok(spawn({python, "-m", "pip", "--version"})))) {
      std::printf("  pip: not installed (python3 -m pip)\n");
      python.clear();
    }
    // Each file's curl, then `then FILE` when given, in one shell per file.
    const auto curls = [&](const fs::path& dest, const std::string& then) {
      std::vector<std::vector<std::string>> commands;
      for (const auto& w : wheels) {
        const std::string file = (dest / w.name).string();
        if (then.empty()) commands.push_back({curl, "-s", "-f", "-o", file, server.url(w.name)});
        else commands.push_back({"sh", "-c", "\"$0\" -s -f -o \"$1\" \"$2\" && \"$3\" \"$1\"", curl, file, server.url(w.name), then});
      }
      return each_at_once(commands);
    };

    const double sha_cpu = sha256_cpu_per_gb(total);
    std::printf(" SHA-256 alone (deliver::Sha256, one core, from memory): %.2f CPU-s per GB (%.0f MB/s)\n", sha_cpu, 1e3 / sha_cpu);
    for (const auto& [label, base] : {std::pair<std::string, std::string>{"tmpfs", tmpfs_dir}, {"disk", disk_dir}}) {
      if (base == "-") continue;
      fs::path dest_root = base.empty() ? work : fs::path(base) / ("wheelfit-bench-download-" + std::to_string(::getpid()));
      fs::create_directories(dest_root);
      const fs::path dest = dest_root / "dest";
      std::vector<Client> clients;
      clients.push_back({"wheelfit", "deliver::download, sha256 verified", [&](const fs::path& d) {
                           auto t = transports::make_http_transport(o);
                           if (!t) return false;
                           deliver::DownloadOptions opts;
                           opts.dir = d;
                           bool ok = true;
                           for (const auto& got : deliver::download(**t, wanted, opts)) {
                             if (got.status == deliver::Delivered::Status::fetched) continue;
                             std::fprintf(stderr, "wheelfit: %s\n", got.error ? got.error->message.c_str() : "not fetched");
                             ok = false;
                           }
                           return ok;
                         }, true});
      clients.push_back({"transport", "http transport, bodies discarded", [&](const fs::path&) {
                           auto t = transports::make_http_transport(o);
                           if (!t) return false;
                           std::vector<DiscardSink> sinks(wanted.size());
                           std::vector<net::Request> rs(wanted.size());
                           for (std::size_t i = 0; i < rs.size(); ++i) {
                             rs[i].url = wanted[i].url;
                             rs[i].max_body = std::size_t{1} << 40;
                             rs[i].sink = &sinks[i];
                           }
                           bool ok = true;
                           for (const auto& a : (*t)->get_many(rs)) ok = ok && a.has_value();
                           return ok;
                         }, true});
      if (!curl.empty()) {
        clients.push_back({"curl", std::to_string(files) + " processes at once, no check",
                           [&](const fs::path& d) { return curls(d, ""); }});
        if (!sum.empty()) {
          clients.push_back({"curl+sha", "each then sha256sum", [&](const fs::path& d) { return curls(d, sum); }});
        }
        if (label == "disk" && !sync.empty()) {
          clients.push_back({"curl+sync", "each then sync FILE (durable)", [&](const fs::path& d) { return curls(d, sync); }});
        }
      }
      if (with_pip && !python.empty()) {
        clients.push_back({"pip", "python3 -m pip download", [&](const fs::path& d) {
                             std::vector<std::string> args = {python, "-m", "pip", "download", "-q", "--no-deps",
                                                              "--no-index", "--no-cache-dir",
                                                              "--disable-pip-version-check", "-d", d.string()};
                             for (const auto& w : wheels) args.push_back(server.url(w.name));
                             return wait_ok(spawn(args));
                           }});
      }
      measure(clients, reps, dest);
      if (!base.empty()) fs::remove_all(dest_root);
      std::printf(" %s (%s):\n", label.c_str(), (base.empty() ? work : fs::path(base)).c_str());
      const auto find = [&](const std::string& name) -> const Client* {
        for (const auto& c : clients) {
          if (c.name == name && c.best > 0) return &c;
        }
        return nullptr;
      };
      for (const auto& c : clients) {
        if (c.best <= 0) {
          std::printf("  %-10s %-40s failed\n", c.name.c_str(), c.what.c_str());
          continue;
        }
        std::printf("  %-10s %-40s %8.1f MB/s  (%.2f s; %.2f CPU-s per GB)\n", c.name.c_str(), c.what.c_str(),
                    static_cast<double>(total) / 1e6 / c.best, c.best, c.cpu / gb);
      }
      const Client* wf = find("wheelfit");
      if (!wf) rc = 1;
      const auto ratio = [&](const char* what, const Client* a, const Client* b, const char* goal) {
        if (a && b) std::printf("  %s: %.2fx%s\n", what, b->best / a->best, goal);
      };
      ratio("wheelfit / curl", wf, find("curl"), " (goal >= 0.9)");
      ratio("wheelfit / curl+sha256sum", wf, find("curl+sha"), " (goal >= 1.5)");
      ratio("wheelfit / curl+sync", wf, find("curl+sync"), "");
      ratio("transport (no hash, no write) / curl", find("transport"), find("curl"), "");
      ratio("wheelfit / pip", wf, find("pip"), "");
      if (const Client* cs = find("curl+sha"); wf && cs && cs->cpu > 0) {
        std::printf("  CPU per GB, wheelfit / curl+sha256sum: %.2fx (goal <= 1.2)\n", wf->cpu / cs->cpu);
      }
      // The floor of a verified download on these cores: curl's own CPU plus the hash's. When
      // curl alone keeps every core busy, no client that hashes can reach curl's speed.
      if (const Client* c = find("curl"); wf && c && c->cpu > 0) {
        const double floor_cpu = c->cpu / gb + sha_cpu;
        const double cores = std::max(1u, std::thread::hardware_concurrency());
        const double curl_mbs = static_cast<double>(total) / 1e6 / c->best, wf_mbs = static_cast<double>(total) / 1e6 / wf->best;
        const double floor_mbs = std::min(cores / floor_cpu * 1e3, curl_mbs);  // nor faster than the wire curl saw
        std::printf("  floor: curl's %.2f + SHA-256's %.2f = %.2f CPU-s per GB; %u cores give at most %.1f MB/s = %.2fx curl; "
                    "wheelfit / floor: %.2fx; wheelfit's CPU per GB above the floor: %+.2f\n",
                    c->cpu / gb, sha_cpu, floor_cpu, static_cast<unsigned>(cores), floor_mbs, floor_mbs / curl_mbs,
                    wf_mbs / floor_mbs, wf->cpu / gb - floor_cpu);
      }
    }
    std::printf(" load after: %s\n", loadavg().c_str());
  }
  if (!keep) fs::remove_all(work);
  else std::printf("kept %s\n", work.c_str());
  return rc;
}
