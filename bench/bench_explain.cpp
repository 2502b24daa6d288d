// bench_explain: reading what a remote wheel demands from its binaries, with HTTP Range requests,
// next to downloading the same wheel whole, in the same run.
//
// Writes a ~500 MB wheel to a temp dir (streamed: one incompressible stored data member, plus a
// few small deflated .so members at its start and its end and the dist-info files), serves it on
// loopback with Range support (pread per request; 206 + Content-Range, keep-alive), then:
//   range   open_remote_source + read_zip_directory + read_zip_member for every *.so member:
//           bytes fetched as a fraction of the wheel (goal < 2% when the .so members are small)
//   full    one GET of the whole wheel through the same kind of transport (max_body = its size)
// Each figure is the median of --reps runs (a fresh transport each run). Plain std::chrono.
//
//   bench_explain [--size-mb N] [--reps N] [--so PATH] [--url URL]
// --url reads that wheel instead of building and serving one.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"
#include "wheelfit/transports/http_transport.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Built {
  std::uint64_t size = 0;
};

Built write_wheel(const fs::path& path, std::uint64_t filler_bytes, const std::string& so) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  test::ZipWriter w(out);
  w.add({"big_pkg/__init__.py", "from ._core import *\n", true});
  w.add({"big_pkg/_core.cpython-312-x86_64-linux-gnu.so", so, true});
  w.add({"big_pkg/_ops.cpython-312-x86_64-linux-gnu.so", so + "ops", true});
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  w.add_stored("big_pkg/lib/weights.bin", filler_bytes, [&x](char* buf, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::memcpy(buf + i, &x, 8);
    }
    for (; i < n; ++i) buf[i] = static_cast<char>(i);
  });
  w.add({"big_pkg/lib/libbig_kernels.so", so + "kernels", true});
  w.add({"big_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n", true});
  w.add({"big_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: big-pkg\nVersion: 1.0\n", true});
  w.add({"big_pkg-1.0.dist-info/RECORD", "", true});
  w.finish();
  out.close();
  Built b;
  b.size = fs::file_size(path);
  return b;
}

/// Serves one file with Range support: pread per request, written in 1 MiB chunks.
testing::ConnScript range_server(fs::path file) {
  return [file = std::move(file)](testing::Conn& conn) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    const std::uint64_t size = fs::file_size(file);
    std::string buf(1u << 20, '\0');
    while (auto rq = conn.read_request(std::chrono::seconds(60))) {
      std::uint64_t first = 0, last = size - 1;
      int status = 200;
      if (const auto range = rq->header("Range"); range && range->rfind("bytes=", 0) == 0) {
        const std::string_view v = std::string_view(*range).substr(6);
        const auto dash = v.find('-');
        std::uint64_t a = 0, b = 0;
        if (dash == 0) {
          std::from_chars(v.data() + 1, v.data() + v.size(), b);
          first = size - std::min(size, b);
        } else {
          std::from_chars(v.data(), v.data() + dash, a);
          if (dash + 1 < v.size()) std::from_chars(v.data() + dash + 1, v.data() + v.size(), b);
          else b = size - 1;
          first = a;
          last = std::min(b, size - 1);
        }
        status = 206;
      }
      std::string head = status == 206 ? "HTTP/1.1 206 Partial Content\r\n" : "HTTP/1.1 200 OK\r\n";
      head += "Content-Type: application/octet-stream\r\nContent-Length: " + std::to_string(last - first + 1) + "\r\n";
      if (status == 206) {
        head += "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(size) + "\r\n";
      }
      head += "\r\n";
      if (!conn.write(head)) break;
      bool ok = true;
      for (std::uint64_t at = first; at <= last && ok;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), last - at + 1));
        const ssize_t got = ::pread(fd, buf.data(), n, static_cast<off_t>(at));
        if (got <= 0) {
          ok = false;
          break;
        }
        ok = conn.write(std::string_view(buf.data(), static_cast<std::size_t>(got)));
        at += static_cast<std::uint64_t>(got);
      }
      if (!ok) break;
    }
    ::close(fd);
  };
}

std::unique_ptr<net::Transport> http() {
  transports::HttpOptions o;
  o.proxy_from_env = false;
  o.proxy = {};
  auto t = transports::make_http_transport(std::move(o));
  if (!t) {
    std::fprintf(stderr, "bench_explain: %s\n", t.error().message.c_str());
    std::exit(1);
  }
  return std::move(*t);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t size_mb = 500;
  int reps = 3;
  fs::path so_path = "/bin/true";
  std::string given_url;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size-mb" && i + 1 < argc) size_mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--so" && i + 1 < argc) so_path = argv[++i];
    else if (a == "--url" && i + 1 < argc) given_url = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_explain [--size-mb N] [--reps N] [--so PATH] [--url URL]\n");
      return 2;
    }
  }
  std::string so = read_all(so_path);
  if (so.empty()) so = std::string("\x7f" "ELF", 4) + std::string(40000, 's');

  test::TempDir dir;
  std::unique_ptr<testing::TestServer> server;
  std::string url = given_url;
  Built built;
  if (url.empty()) {
    const fs::path wheel = dir / "big_pkg-1.0-cp312-cp312-linux_x86_64.whl";
    const auto tb = Clock::now();
    built = write_wheel(wheel, size_mb << 20, so);
    const double build_s = std::chrono::duration<double>(Clock::now() - tb).count();
    std::printf("bench_explain: a %.1f MB wheel (3 .so members of ~%zu bytes each, from %s), written in %.2f s\n",
                static_cast<double>(built.size) / 1e6, so.size(), so_path.c_str(), build_s);
    server = std::make_unique<testing::TestServer>(range_server(wheel));
    url = server->url("/" + wheel.filename().string());
  } else {
    auto t = http();
    auto src = inspect::open_remote_source(*t, url);
    if (!src) {
      std::fprintf(stderr, "open_remote_source: %s\n", src.error().message.c_str());
      return 1;
    }
    built.size = (*src)->size();
    std::printf("bench_explain: %s, %.1f MB\n", url.c_str(), static_cast<double>(built.size) / 1e6);
  }

  std::vector<double> range_s, full_s;
  std::uint64_t fetched = 0, so_out = 0, requests = 0;
  std::size_t so_members = 0;
  for (int r = 0; r < reps; ++r) {
    auto t = http();
    const auto t0 = Clock::now();
    auto src = inspect::open_remote_source(*t, url);
    if (!src) {
      std::fprintf(stderr, "open_remote_source: %s\n", src.error().message.c_str());
      return 1;
    }
    auto zd = inspect::read_zip_directory(**src);
    if (!zd) {
      std::fprintf(stderr, "read_zip_directory: %s\n", zd.error().message.c_str());
      return 1;
    }
    so_members = 0;
    so_out = 0;
    for (const auto& e : zd->entries) {
      if (!e.name.ends_with(".so")) continue;
      auto m = inspect::read_zip_member(**src, e);
      if (!m) {
        std::fprintf(stderr, "read_zip_member: %s\n", m.error().message.c_str());
        return 1;
      }
      ++so_members;
      so_out += m->size();
    }
    range_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    fetched = (*src)->bytes_fetched();
    requests = t->stats().requests;
    if ((*src)->downloaded_whole()) std::printf("  warning: the server's Range support was not used\n");
  }
  for (int r = 0; r < reps; ++r) {
    auto t = http();
    net::Request rq;
    rq.url = url;
    rq.max_body = static_cast<std::size_t>(built.size + 1);
    const auto t0 = Clock::now();
    auto resp = t->get(rq);
    full_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (!resp || resp->body.size() != built.size) {
      std::fprintf(stderr, "full download failed: %s\n", resp ? "short body" : resp.error().message.c_str());
      return 1;
    }
  }
  const double rs = median(range_s), fs_ = median(full_s);
  std::printf("  range   %9.1f ms  %4llu requests  %10llu bytes fetched = %.4f%% of the wheel (goal < 2%%)"
              "  %zu .so members, %llu bytes inflated\n",
              rs * 1e3, static_cast<unsigned long long>(requests), static_cast<unsigned long long>(fetched),
              100.0 * static_cast<double>(fetched) / static_cast<double>(built.size), so_members,
              static_cast<unsigned long long>(so_out));
  std::printf("  full    %9.1f ms     1 request   %10llu bytes fetched = 100%% of the wheel\n", fs_ * 1e3,
              static_cast<unsigned long long>(built.size));
  std::printf("  range / full: %.4f of the time, %.4f of the bytes (median of %d runs each)\n", rs / fs_,
              static_cast<double>(fetched) / static_cast<double>(built.size), reps);
  return 0;
}
