#pragma once
// The file transport: reads `file://` URLs and plain local paths (a local mirror of an index).
// A URL ending in '/' names a directory page and reads its index.html (or, failing that,
// index.json: a PEP 691 page). A missing file or directory is Errc::not_found ("not on this
// index"); a file above Request::max_body is Errc::too_large, refused before it is read.
// Thread safety: stateless; get() may be called from several threads.

#include <memory>
#include <string>
#include <string_view>

#include "wheelfit/transport/transport.hpp"

namespace wheelfit::transports {

std::unique_ptr<transport::Transport> make_file_transport();

/// True when `url_or_path` is something the file transport reads: a file:// URL or a path
/// without a scheme.
bool is_local(std::string_view url_or_path);

/// Turns a local path (relative or absolute) into an absolute file:// URL with the path's
/// reserved characters percent-encoded; file:// and other URLs come back unchanged. When
/// `directory` is true a trailing '/' is ensured.
std::string to_url(std::string_view url_or_path, bool directory);

/// The local path a file:// URL (or plain path) names, percent-decoded once. Errc::invalid_input
/// for a file URL with a host other than "" or "localhost", or a NUL byte.
Expected<std::string> to_path(std::string_view url);

}  // namespace wheelfit::transports
