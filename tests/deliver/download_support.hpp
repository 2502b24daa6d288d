#pragma once
// Shared helpers of the deliver::download tests (test_download*.cpp): a server's file and its
// Range-honouring answer (the rest, needing no server, is download_files.hpp).

#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "deliver/download_files.hpp"
#include "support/test_support.hpp"
#include "transports/http/test_http_support.hpp"
#include "wheelfit/deliver/download.hpp"

namespace wheelfit::test_deliver {

using deliver::Delivered;
using test_http::HttpRequest;
using test_http::http_response;
using test_http::TestServer;

/// A file as a server holds it.
struct Served {
  std::string body;
  std::string etag = "\"v1\"";
  bool ignore_range = false;
};

/// The answer of a server that honours "Range: bytes=N-" (206) when If-Range is absent or names
/// its ETag, and sends the whole file (200) otherwise.
inline std::string answer(const HttpRequest& r, const Served& f) {
  const auto range = r.header("range");
  const auto if_range = r.header("if-range");
  if (range && !f.ignore_range && (!if_range || *if_range == f.etag) && range->starts_with("bytes=")) {
    std::size_t n = 0;
    std::from_chars(range->data() + 6, range->data() + range->size(), n);
    if (n >= f.body.size()) return http_response(416, "", {{"Content-Range", "bytes */" + std::to_string(f.body.size())}});
    return http_response(206, std::string_view(f.body).substr(n),
                         {{"Content-Range", "bytes " + std::to_string(n) + "-" + std::to_string(f.body.size() - 1) + "/" +
                                                std::to_string(f.body.size())},
                          {"ETag", f.etag}});
  }
  return http_response(200, f.body, {{"ETag", f.etag}});
}

/// deliver::download of `file` alone, as kName from `server`, into `dir`.
inline std::vector<Delivered> download_one(net::Transport& t, const TestServer& server, const Served& file,
                                           const std::filesystem::path& dir) {
  return deliver::download(t, {wanted(server.url("/" + kName), kName, file.body)}, options_for(dir));
}

/// The setting of most download tests: `file` served with Range honoured, a folder to download
/// into and a transport.
struct ServedFile {
  ServedFile(std::size_t size, unsigned seed)
      : file{random_bytes(size, seed)}, server(testing::serve([this](const HttpRequest& r) { return answer(r, file); })) {}
  const Served file;
  TestServer server;
  test::TempDir dir;
  std::unique_ptr<net::Transport> t = test_http::make();

  /// download_one of `file` into `dir`.
  std::vector<Delivered> download() { return download_one(*t, server, file, dir.path()); }
};

}  // namespace wheelfit::test_deliver
