// file:// URLs and plain paths (file_url.hpp): model/url.hpp implements them.
#include "wheelfit/index/file_url.hpp"

#include "wheelfit/model/url.hpp"

namespace wheelfit::index {

bool is_local(std::string_view s) { return model::url::is_local(s); }

std::string to_url(std::string_view s, bool directory) { return model::url::from_path(s, directory); }

Expected<std::string> to_path(std::string_view url) { return model::url::to_path(url); }

}  // namespace wheelfit::index
