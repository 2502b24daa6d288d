#pragma once
// Shared helpers of the deliver::download tests (test_download*.cpp): a server's file and its
// Range-honouring answer, the wanted entry for it, and the check of a delivered file.

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

#include "support/test_support.hpp"
#include "transports/http/test_http_support.hpp"
#include "wheelfit/deliver/download.hpp"

namespace wheelfit::test_deliver {

using deliver::Delivered;
using test_http::HttpRequest;
using test_http::http_response;
using test_http::TestServer;

inline std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen() & 0xff);
  return s;
}

inline std::string sha(std::string_view s) {
  deliver::Sha256 h;
  h.update(s);
  return h.hex();
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

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

inline deliver::Wanted wanted(std::string url, std::string name, std::string_view body) {
  deliver::Wanted w;
  w.url = std::move(url);
  w.filename = std::move(name);
  w.sha256 = sha(body);
  w.size = body.size();
  return w;
}

inline deliver::DownloadOptions options_for(const std::filesystem::path& dir) {
  deliver::DownloadOptions o;
  o.dir = dir;
  return o;
}

/// A part (and its meta) as an earlier, interrupted run left them.
inline void leave_part(const std::filesystem::path& dir, const std::string& name, std::string_view bytes, std::string_view validator) {
  test::write_file(dir / ("." + name + ".part"), bytes);
  if (!validator.empty()) test::write_file(dir / ("." + name + ".part.meta"), std::string(validator) + "\n");
}

/// CHECKs that `d` is `body`, fetched (or `status`) and verified, with nothing else left beside it.
inline void check_delivered(const Delivered& d, const std::filesystem::path& dir, std::string_view body,
                     Delivered::Status status = Delivered::Status::fetched) {
  INFO(d.filename << ": " << (d.error ? d.error->message : std::string("ok")));
  REQUIRE(d.status == status);
  CHECK(d.verified);
  CHECK(d.bytes == body.size());
  CHECK(d.sha256 == sha(body));
  CHECK(d.path == dir / d.filename);
  CHECK(slurp(dir / d.filename) == body);
  CHECK_FALSE(std::filesystem::exists(dir / ("." + d.filename + ".part")));
  CHECK_FALSE(std::filesystem::exists(dir / ("." + d.filename + ".part.meta")));
}

/// Counts get_many calls on the way to `inner`.
class CountingTransport final : public transport::Transport {
 public:
  explicit CountingTransport(transport::Transport& inner) : inner_(inner) {}
  int batches = 0;
  std::size_t largest = 0;

 private:
  Expected<transport::Response> get_impl(const transport::Request& r) override {
    ++batches;
    return inner_.get(r);
  }
  std::vector<Expected<transport::Response>> get_many_hooked_impl(const std::vector<transport::Request>& rs,
                                                                  const AnswerHook& hook) override {
    ++batches;
    largest = std::max(largest, rs.size());
    return inner_.get_many(rs, hook);
  }
  transport::Transport& inner_;
};

inline const std::string kName = "pkg-1.0-py3-none-any.whl";

/// The names in a folder, sorted.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// deliver::download of `file` alone, as kName from `server`, into `dir`.
inline std::vector<Delivered> download_one(transport::Transport& t, const TestServer& server, const Served& file,
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
  std::unique_ptr<transport::Transport> t = test_http::make();

  /// download_one of `file` into `dir`.
  std::vector<Delivered> download() { return download_one(*t, server, file, dir.path()); }
};

}  // namespace wheelfit::test_deliver
