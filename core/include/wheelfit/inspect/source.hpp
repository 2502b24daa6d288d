#pragma once
// Random access to a wheel's bytes, wherever they are: a local file, or a remote URL read with
// HTTP Range requests through a net::Transport (falling back to one full download when the
// server ignores Range). The zip reader asks only for the byte ranges it needs, so explaining a
// 500 MB wheel fetches its central directory and its extension modules, not the wheel.
// Thread safety: one caller at a time.

#include <cstdint>
#include <memory>
#include <string>

#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::inspect {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// The total size in bytes.
  [[nodiscard]] std::uint64_t size() const { return size_impl(); }
  /// Exactly `length` bytes from `offset`; Errc::invalid_input (naming the source) when the range
  /// passes the end; the transport's or the file's error otherwise.
  [[nodiscard]] Expected<std::string> read(std::uint64_t offset, std::uint64_t length) { return read_impl(offset, length); }
  /// What this source is, for messages ("wheel.whl", "https://.../x.whl").
  [[nodiscard]] virtual std::string name() const = 0;
  /// Bytes transferred so far (a local file: bytes read).
  [[nodiscard]] virtual std::uint64_t bytes_fetched() const = 0;
  /// True once the source fell back to a full download (the server ignored Range).
  [[nodiscard]] virtual bool downloaded_whole() const { return false; }
  /// Counts the times the bytes behind the source were replaced: a remote file that changed on
  /// the server while it was read (the source then holds the new file whole, and its size may
  /// differ). A reader that saw another generation must start again from the start.
  [[nodiscard]] virtual std::uint64_t generation() const { return 0; }

 protected:
  ByteSource() = default;

 private:
  virtual std::uint64_t size_impl() const = 0;
  virtual Expected<std::string> read_impl(std::uint64_t offset, std::uint64_t length) = 0;
};

/// A local file. Errc::not_found / io_error naming the path.
Expected<std::unique_ptr<ByteSource>> open_file_source(const std::string& path);

/// A remote file over `transport` (which must outlive the source). The size comes from a first
/// `Range: bytes=-65536` request (the tail, which holds the zip's end records: served from a
/// cache inside the source, so the zip reader's first reads cost nothing more); a 200 answer
/// instead of 206 means the server ignores Range: the whole body (at most `max_download` bytes,
/// else Errc::too_large) is kept and served from memory. A 206 whose Content-Range does not
/// match the request is NetErrc::protocol (never misplaced bytes; FAULTS N05).
/// The file is pinned by the first answer's validator (a strong ETag, else Last-Modified): every
/// later Range request carries it as If-Range, so a file replaced on the server comes back whole
/// (a 200), as does a 206 whose validator differs (then fetched again whole, without Range); the
/// source then holds the new file and its generation() moves on (docs/network-faults.md N13).
Expected<std::unique_ptr<ByteSource>> open_remote_source(net::Transport& transport, const std::string& url,
                                                         std::uint64_t max_download = 2ull << 30);

/// An in-memory buffer (tests, fuzzers, and the body of a full download).
std::unique_ptr<ByteSource> memory_source(std::string bytes, std::string name);

}  // namespace wheelfit::inspect
