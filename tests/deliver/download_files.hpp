#pragma once
// Helpers of the deliver::download tests that need no server (download_support.hpp adds the
// server's side): random bytes and their digest, the wanted entry for them, a part left by an
// earlier run, and the check of a delivered file. The Windows tests use them too.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support/memory_transport.hpp"
#include "support/test_support.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/net/transport.hpp"

namespace wheelfit::test_deliver {

using deliver::Delivered;

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

inline const std::string kName = "pkg-1.0-py3-none-any.whl";

/// The names in a folder, sorted.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Counts get and get_many calls on the way to an inner transport: CountingTransport t(inner).
using CountingTransport = test::MemoryTransport;

}  // namespace wheelfit::test_deliver
