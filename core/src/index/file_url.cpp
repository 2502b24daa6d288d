// file:// URLs and plain paths (file_url.hpp).
#include "wheelfit/index/file_url.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "wheelfit/index/links.hpp"
#include "wheelfit/transport/registry.hpp"
#include "wheelfit/util/native_text.hpp"

namespace wheelfit::index {
namespace fs = std::filesystem;

namespace {

std::string encode_path(std::string_view path) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(path.size());
  for (unsigned char c : path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '@' ||
                       c == ',' || c == '=' || c == ':';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

bool is_local(std::string_view s) { return transport::scheme_of(s).empty() || s.starts_with("file://") || s.starts_with("FILE://"); }

std::string to_url(std::string_view s, bool directory) {
  std::string out;
  if (!transport::scheme_of(s).empty()) {
    out = std::string(s);
  } else {
    std::error_code ec;
    const fs::path given = util::path_from_utf8(s);  // UTF-8 (Windows: not the ANSI code page)
    fs::path abs = fs::absolute(given, ec);
    std::string path = (ec ? given : abs).lexically_normal().generic_string();
    if (!s.empty() && s.back() == '/' && (path.empty() || path.back() != '/')) path += '/';
#ifdef _WIN32
    // A drive's path, "C:/Users/x", is the URL file:///C:/Users/x (RFC 8089), never host "C:".
    if (path.size() >= 2 && path[1] == ':') path.insert(0, "/");
#endif
    out = "file://" + encode_path(path);
  }
  if (directory && (out.empty() || out.back() != '/')) out += '/';
  return out;
}

Expected<std::string> to_path(std::string_view url) {
  if (transport::scheme_of(url).empty()) return std::string(url);
  std::string_view rest = url.substr(7);
  if (!url.substr(0, 7).starts_with("file://") && !url.substr(0, 7).starts_with("FILE://")) {
    return unexpected(Errc::unsupported, std::string(url) + ": the file transport reads only file:// URLs and paths");
  }
  std::string_view host = rest.substr(0, rest.find('/'));
  if (!host.empty() && host != "localhost") {
    return unexpected(Errc::invalid_input, std::string(url) + ": a file URL with host '" + std::string(host) + "' is not local");
  }
  rest.remove_prefix(host.size());
  if (auto q = rest.find_first_of("?#"); q != std::string_view::npos) rest = rest.substr(0, q);
#ifdef _WIN32
  // file:///C:/Users/x names C:/Users/x.
  if (rest.size() >= 3 && rest[0] == '/' && std::isalpha(static_cast<unsigned char>(rest[1])) && rest[2] == ':') rest.remove_prefix(1);
#endif
  std::string path = percent_decode(rest);
  if (path.find('\0') != std::string::npos) return unexpected(Errc::invalid_input, std::string(url) + ": NUL byte in path");
  return path;
}

}  // namespace wheelfit::index
