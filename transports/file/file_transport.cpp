#include "wheelfit/transports/file_transport.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "wheelfit/index/links.hpp"
#include "wheelfit/util/native_text.hpp"

namespace wheelfit::transports {
namespace fs = std::filesystem;

namespace {

std::string content_type_for(const fs::path& p) {
  const auto ext = p.extension().string();
  if (ext == ".json") return "application/json";
  if (ext == ".html" || ext == ".htm") return "text/html";
  return "application/octet-stream";
}

/// The first byte of a "Range: bytes=N-" header (the only form a BodySink asks for); 0 without one.
std::uint64_t range_start(const net::Headers& headers) {
  const auto range = net::find_header(headers, "range");
  if (!range || !range->starts_with("bytes=") || !range->ends_with("-")) return 0;
  const std::string_view digits = range->substr(6, range->size() - 7);
  std::uint64_t start = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), start);
  return ec == std::errc{} && end == digits.data() + digits.size() ? start : 0;
}

/// Streams `p` (`size` bytes) to the request's sink in 1 MiB blocks, from the Range the sink
/// asks for (206) or from the start (200).
Expected<net::Response> stream_file(const net::Request& request, const fs::path& p, std::uintmax_t size) {
  net::Headers headers = request.headers;
  request.sink->prepare(headers);
  std::uint64_t start = range_start(headers);
  if (start > size) start = 0;  // a file shorter than the part: the whole of it again
  if (size - start > request.max_body) {
    return unexpected(Errc::too_large, request.url + ": " + std::to_string(size - start) +
                                           " bytes exceeds the limit of " + std::to_string(request.max_body) + " bytes");
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) return unexpected(Errc::io_error, request.url + ": cannot open for reading");
  const int status = start > 0 ? 206 : 200;
  net::Headers answer{{"content-length", std::to_string(size - start)}};
  if (start > 0) {
    in.seekg(static_cast<std::streamoff>(start));
    answer.emplace_back("content-range", "bytes " + std::to_string(start) + "-" + std::to_string(size - 1) + "/" +
                                             std::to_string(size));
  }
  if (auto ok = request.sink->begin(status, answer); !ok) return ok.error();
  std::vector<char> block(1u << 20);
  std::uint64_t left = size - start;
  while (left > 0) {
    in.read(block.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(left, block.size())));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) return unexpected(Errc::io_error, request.url + ": short read");
    if (auto ok = request.sink->write(std::string_view(block.data(), got)); !ok) return ok.error();
    left -= got;
  }
  net::Response response;
  response.url = to_url(p.string(), false);
  response.content_type = content_type_for(p);
  response.status = status;
  return response;
}

class FileTransport final : public net::Transport {
 private:
  Expected<net::Response> get_impl(const net::Request& request) override {
    auto path = to_path(request.url);
    if (!path) return path.error();
    fs::path p = util::path_from_utf8(*path);  // the URL's path is UTF-8 (Windows: not the ANSI code page)
    std::error_code ec;
    if (!path->empty() && path->back() == '/') {
      if (!fs::is_directory(p, ec)) return unexpected(Errc::not_found, request.url + ": no such directory");
      if (fs::is_regular_file(p / "index.html", ec)) p /= "index.html";
      else if (fs::is_regular_file(p / "index.json", ec)) p /= "index.json";
      else return unexpected(Errc::not_found, request.url + ": directory has no index.html");
    }
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) return unexpected(Errc::not_found, request.url + ": no such file");
    if (!fs::is_regular_file(status)) return unexpected(Errc::not_found, request.url + ": not a regular file");
    const auto size = fs::file_size(p, ec);
    if (ec) return unexpected(Errc::io_error, request.url + ": " + ec.message());
    if (request.sink) return stream_file(request, p, size);
    if (size > request.max_body) {
      return unexpected(Errc::too_large, request.url + ": " + std::to_string(size) + " bytes exceeds the limit of " +
                                             std::to_string(request.max_body) + " bytes");
    }
    std::ifstream in(p, std::ios::binary);
    if (!in) return unexpected(Errc::io_error, request.url + ": cannot open for reading");
    net::Response response;
    response.body.resize(static_cast<std::size_t>(size));
    in.read(response.body.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::uintmax_t>(in.gcount()) != size) return unexpected(Errc::io_error, request.url + ": short read");
    response.url = to_url(p.string(), false);
    response.content_type = content_type_for(p);
    return response;
  }
};

}  // namespace

std::unique_ptr<net::Transport> make_file_transport() { return std::make_unique<FileTransport>(); }


}  // namespace wheelfit::transports
