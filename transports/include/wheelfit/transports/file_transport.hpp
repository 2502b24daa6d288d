#pragma once
// The file transport: reads `file://` URLs and plain local paths (a local mirror of an index).
// A URL ending in '/' names a directory page and reads its index.html (or, failing that,
// index.json: a PEP 691 page). A missing file or directory is Errc::not_found ("not on this
// index"); a file above Request::max_body is Errc::too_large, refused before it is read.
// Thread safety: stateless; get() may be called from several threads.

#include <memory>
#include <string>
#include <string_view>

#include "wheelfit/index/file_url.hpp"
#include "wheelfit/net/transport.hpp"

namespace wheelfit::transports {

std::unique_ptr<net::Transport> make_file_transport();

/// file:// URLs and plain paths (the core's index/file_url.hpp).
using index::is_local;
using index::to_path;
using index::to_url;

}  // namespace wheelfit::transports
