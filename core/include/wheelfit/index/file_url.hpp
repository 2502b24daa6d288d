#pragma once
// Local indexes and wheels: file:// URLs and plain paths, as the file transport reads them and the
// façade names them (an index folder, a wheel on disk). Pure apart from to_url's absolute path.
// Kept for existing callers: each forwards to model/url.hpp (is_local, from_path, to_path).

#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::index {

/// True when `url_or_path` is something the file transport reads: a file:// URL or a path
/// without a scheme.
bool is_local(std::string_view url_or_path);

/// Turns a local path (relative or absolute) into an absolute file:// URL with the path's
/// reserved characters percent-encoded; file:// and other URLs come back unchanged. When
/// `directory` is true a trailing '/' is ensured.
std::string to_url(std::string_view url_or_path, bool directory);

/// The local path a file:// URL (or plain path) names, percent-decoded once. Errc::invalid_input
/// for a file URL with a host other than "" or "localhost", or a NUL byte; Errc::unsupported for
/// another scheme.
Expected<std::string> to_path(std::string_view url);

}  // namespace wheelfit::index
