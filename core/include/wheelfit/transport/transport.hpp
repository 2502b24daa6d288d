#pragma once
// The transport seam: bytes by URL. The core reads indexes only through this interface; the
// implementations (file:// and plain paths now, http/https with retries and caching later)
// live in transports/. Callers never see sockets or Asio.
//
// Errors: Errc::not_found means the resource cleanly does not exist (a 404, a missing file):
// for a package page that is "not published on this index", never "the network failed".
// Every other error means the source could not be read.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::transport {

struct Request {
  std::string url;
  std::size_t max_body = 64u << 20;  ///< bodies above this are Errc::too_large
};

struct Response {
  std::string url;           ///< the URL finally answered (after redirects / index.html)
  std::string content_type;  ///< "text/html", "application/vnd.pypi.simple.v1+json", ... or empty
  std::string body;
};

/// Reads resources by URL. Thread safety: get() and get_many() may be called from one thread
/// at a time; implementations document more where they offer it.
class Transport {
 public:
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  /// One resource.
  [[nodiscard]] Expected<Response> get(const Request& request) { return get_impl(request); }
  /// Several resources; the answers come back in request order. Network transports fetch them
  /// concurrently; the default fetches one after another.
  [[nodiscard]] std::vector<Expected<Response>> get_many(const std::vector<Request>& requests) {
    return get_many_impl(requests);
  }

 protected:
  Transport() = default;

 private:
  virtual Expected<Response> get_impl(const Request& request) = 0;
  virtual std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) {
    std::vector<Expected<Response>> out;
    out.reserve(requests.size());
    for (const auto& r : requests) out.push_back(get_impl(r));
    return out;
  }
};

}  // namespace wheelfit::transport
