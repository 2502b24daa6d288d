#pragma once
// The cache tests' fixture: an in-memory inner transport (a scripted handler, a record of every
// request and batch) under a cache in a temporary folder, warnings captured.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#ifdef _WIN32
#include <io.h>
#else
#include <sys/stat.h>
#endif

#include "support/memory_transport.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/cache_transport.hpp"
#include "wheelfit/util/log.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#include "wheelfit/util/win_file_id.hpp"
#endif

namespace wheelfit::test_cache {

namespace fs = std::filesystem;
using test::ScopedEnv;
using test::TempDir;
using net::Headers;
using net::NetErrc;
using net::Request;
using net::Response;

/// Which file is at `p` (its inode; on Windows its file index): a rewrite renamed in place changes it.
inline std::uint64_t file_identity(const fs::path& p) {
#ifdef _WIN32
  auto fd = util::win::open(p, {});
  REQUIRE(fd);
  const auto id = util::win::file_id(*fd);
  ::_close(*fd);
  REQUIRE(id);
  return id->index;
#else
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_ino;
#endif
}

// The inner transport is test::MemoryTransport: a scripted handler (state->handle), and a record
// of every request and batch (state->requests(), state->batch_sizes()), shared by the reopened
// caches.

inline Response ok(std::string body, Headers headers = {}, std::string url = {}) {
  Response r;
  r.url = std::move(url);
  r.content_type = "text/html";
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

inline Response not_modified(Headers headers = {}) {
  Response r;
  r.status = 304;
  r.headers = std::move(headers);
  return r;
}

inline Request req(std::string url) {
  Request r;
  r.url = std::move(url);
  return r;
}

inline std::string header(const Request& r, std::string_view name) {
  auto v = net::find_header(r.headers, name);
  return v ? std::string(*v) : std::string("<absent>");
}

/// An entry file's two parts: the sidecar line (without its newline) and the body.
struct EntryParts {
  std::string sidecar, body;
};
inline EntryParts split_entry(const fs::path& p) {
  const auto text = test::read_file(p);
  const auto nl = text.find('\n');
  REQUIRE(nl != std::string::npos);
  return {text.substr(0, nl), text.substr(nl + 1)};
}
inline void write_entry(const fs::path& p, const std::string& sidecar, const std::string& body) {
  test::write_file(p, sidecar + "\n" + body);
}

struct Fixture {
  TempDir dir;
  std::shared_ptr<test::MemoryOrigin> state = std::make_shared<test::MemoryOrigin>();
  std::unique_ptr<net::Transport> cache;
  std::vector<std::string> warnings;
  log::Sink old_sink;

  explicit Fixture(bool offline = false) {
    old_sink = log::set_sink([this](log::Level level, std::string_view m) {
      if (level == log::Level::warn) warnings.emplace_back(m);
    });
    reopen(offline);
  }
  ~Fixture() { log::set_sink(old_sink); }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  void reopen(bool offline, std::uint64_t max_size = transports::kDefaultCacheMaxSize) {
    cache.reset();  // the old one's writes and housekeeping finish first
    auto c = transports::make_cache_transport(test::MemoryOrigin::transport_over(state),
                                              {dir.path() / "cache", offline, max_size});
    REQUIRE(c);
    cache = std::move(*c);
  }
  [[nodiscard]] fs::path root() const { return dir.path() / "cache"; }
  [[nodiscard]] fs::path v2() const { return root() / "v2"; }
  /// Entry files by extension (".entry"); temporaries counted as ".tmp".
  [[nodiscard]] std::vector<fs::path> files(std::string_view kind) const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(v2())) {
      const auto name = e.path().filename().string();
      if (kind == ".tmp" ? name.rfind(".tmp", 0) == 0 : (name[0] != '.' && e.path().extension() == kind)) {
        out.push_back(e.path());
      }
    }
    return out;
  }
  Expected<Response> get(const std::string& url, Headers headers = {}) {
    Request r;
    r.url = url;
    r.headers = std::move(headers);
    auto out = cache->get(r);
    cache->flush();  // the entry files are on disk when the checks look
    return out;
  }
};

inline const std::string kUrl = "https://comfy-forge.github.io/cuda-wheels/flash-attn/";
inline const std::string kPage = "<a href='flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl'>x</a>";

}  // namespace wheelfit::test_cache
