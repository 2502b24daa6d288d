#pragma once
// A net::BodySink that keeps the body in memory, for the transports' streaming tests: what
// prepare() added, every begin(), the bytes, and a failure to inject at begin or at write. With
// `lend` set it also lends room() (at most `lend` bytes at a time) for the body to be read into.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/net/transport.hpp"

namespace wheelfit::test {

struct MemorySink final : net::BodySink {
  std::string body;                      ///< since the last begin(200)
  std::optional<std::uint64_t> range;    ///< asks for bytes=<range>- in prepare() when set
  std::vector<int> begins;               ///< the status of each begin()
  std::vector<net::Headers> begin_headers;
  int prepares = 0;
  int writes = 0;
  int commits = 0;
  std::size_t lend = 0;                  ///< room() lends at most this much (0: none)
  std::optional<Error> fail_begin, fail_write;  ///< returned by the next begin() / write() / commit()

  void prepare(net::Headers& headers) override {
    ++prepares;
    if (range) headers.emplace_back("Range", "bytes=" + std::to_string(*range) + "-");
  }
  Expected<void> begin(int status, const net::Headers& headers) override {
    begins.push_back(status);
    begin_headers.push_back(headers);
    if (fail_begin) return *fail_begin;
    if (status == 200) body.clear();
    return {};
  }
  Expected<void> write(std::string_view bytes) override {
    ++writes;
    if (fail_write) return *fail_write;
    body.append(bytes);
    return {};
  }
  std::span<char> room(std::size_t want) override {
    lent.resize(std::min(want, lend));
    return lent;
  }
  Expected<void> commit(std::size_t n) override {
    ++commits;
    if (fail_write) return *fail_write;
    body.append(lent.data(), n);
    return {};
  }

 private:
  std::vector<char> lent;
};

}  // namespace wheelfit::test
