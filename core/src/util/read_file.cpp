#include "wheelfit/util/read_file.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace wheelfit::util {

namespace {
// "a policy file" -> "policy file"
std::string_view noun(std::string_view what) {
  if (what.starts_with("a ")) what.remove_prefix(2);
  else if (what.starts_with("an ")) what.remove_prefix(3);
  return what;
}

std::string limit_text(std::uintmax_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}
}  // namespace

Expected<std::string> read_file(const std::string& path, std::uintmax_t max_bytes, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) return unexpected(Errc::io_error, path + ": cannot read: " + ec.message());
    return unexpected(Errc::not_found, path + ": no such " + std::string(noun(what)));
  }
  if (fs::is_directory(status)) return unexpected(Errc::io_error, path + ": is a directory, not " + std::string(what));
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(Errc::io_error, path + ": cannot open for reading");
  std::string text;
  char buf[64 * 1024];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return unexpected(Errc::too_large, path + ": over the " + limit_text(max_bytes) + " limit for " + std::string(what));
    }
  }
  if (in.bad()) return unexpected(Errc::io_error, path + ": read failed");
  return text;
}

}  // namespace wheelfit::util
