// The scripts of test_server.hpp a TestServer runs on each connection: a folder served over
// HTTP/1.1 (ETags, ranges, a cut body, a delay) and a handler of one request at a time.

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "support/net/server_connection.hpp"
#include "support/net/test_server.hpp"

namespace wheelfit::testing {

using namespace detail;

namespace {

std::optional<std::string> percent_decode_strict(std::string_view s) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) return std::nullopt;
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}

bool inside(const std::filesystem::path& root, const std::filesystem::path& p) {
  const auto [r, _] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}

// The file a target names under `root`, or nullopt for anything missing or escaping it: ".."
// segments after one decoding (so "%2e%2e" too), backslashes, NUL, symlinks pointing out.
std::optional<std::filesystem::path> file_for(const std::filesystem::path& root, std::string_view target) {
  const std::string_view path = target.substr(0, target.find_first_of("?#"));
  if (path.empty() || path.front() != '/') return std::nullopt;
  const auto decoded = percent_decode_strict(path);
  if (!decoded || decoded->find_first_of(std::string_view("\\\0", 2)) != std::string::npos) return std::nullopt;
  std::string_view rest(*decoded);
  while (!rest.empty()) {
    const std::size_t slash = std::min(rest.find('/'), rest.size());
    if (rest.substr(0, slash) == "..") return std::nullopt;
    rest.remove_prefix(std::min(slash + 1, rest.size()));
  }
  std::string relative = decoded->substr(1);
  if (decoded->back() == '/') relative += "index.html";
  std::error_code ec;
  const auto real = std::filesystem::canonical(root / relative, ec);
  if (ec || !inside(root, real) || !std::filesystem::is_regular_file(real, ec)) return std::nullopt;
  return real;
}

std::string content_type_of(const std::filesystem::path& p) {
  const std::string ext = lowered(p.extension().string());
  if (ext == ".html" || ext == ".htm") return "text/html";
  if (ext == ".json") return "application/json";
  if (ext == ".txt") return "text/plain";
  return "application/octet-stream";
}

std::string etag_of(const std::filesystem::path& p) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(p, ec);
  const auto mtime = std::filesystem::last_write_time(p, ec).time_since_epoch().count();
  std::ostringstream out;
  out << '"' << std::hex << size << '-' << mtime << '"';
  return out.str();
}

bool etag_matches(std::string_view if_none_match, const std::string& etag) {
  while (!if_none_match.empty()) {
    const std::size_t comma = std::min(if_none_match.find(','), if_none_match.size());
    std::string_view tag = trim(if_none_match.substr(0, comma));
    if_none_match.remove_prefix(std::min(comma + 1, if_none_match.size()));
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
  }
  return false;
}

std::string directory_response(const std::filesystem::path& root, const DirectoryOptions& options, const HttpRequest& r,
                               bool keep_alive) {
  if (r.method != "GET" && r.method != "HEAD") {
    return http_response(405, "method not allowed\n", {{"Allow", "GET, HEAD"}}, keep_alive);
  }
  const auto file = file_for(root, r.target);
  if (!file) return http_response(404, "not found\n", {{"Content-Type", "text/plain"}}, keep_alive);
  TestHeaders headers = {{"ETag", etag_of(*file)}};
  if (options.max_age >= 0) headers.emplace_back("Cache-Control", "max-age=" + std::to_string(options.max_age));
  if (const auto inm = r.header("if-none-match"); inm && etag_matches(*inm, headers.front().second)) {
    return http_response(304, "", headers, keep_alive);
  }
  std::ifstream in(*file, std::ios::binary);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  headers.emplace_back("Content-Type", content_type_of(*file));
  int status = 200;
  const auto range = r.header("range");
  const auto if_range = r.header("if-range");
  if (options.ranges && range && range->starts_with("bytes=") && range->ends_with("-") &&
      (!if_range || *if_range == headers.front().second)) {
    const std::string from_text(range->substr(6, range->size() - 7));
    std::size_t from = 0;
    const auto [end, ec] = std::from_chars(from_text.data(), from_text.data() + from_text.size(), from);
    if (ec != std::errc() || end != from_text.data() + from_text.size()) {
      return http_response(400, "bad Range\n", {}, keep_alive);
    }
    if (from >= body.size()) {
      return http_response(416, "", {{"Content-Range", "bytes */" + std::to_string(body.size())}}, keep_alive);
    }
    headers.emplace_back("Content-Range", "bytes " + std::to_string(from) + "-" + std::to_string(body.size() - 1) + "/" +
                                              std::to_string(body.size()));
    body.erase(0, from);
    status = 206;
  }
  std::string out = http_response(status, body, headers, keep_alive);
  if (r.method == "HEAD") out.resize(out.size() - body.size());
  return out;
}

/// Whether this request is the one whose body is cut (the first whole GET of its path).
bool cut_now(const DirectoryOptions& options, const HttpRequest& r, std::set<std::string>& cut, std::mutex& mutex) {
  if (options.cut_after == 0 || r.method != "GET" || r.header("range")) return false;
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (!path.ends_with(options.cut_suffix)) return false;
  const std::lock_guard lock(mutex);
  return cut.insert(path).second;
}

}  // namespace

ConnScript serve_directory(std::filesystem::path root, DirectoryOptions options) {
  std::error_code ec;
  auto canonical_root = std::filesystem::weakly_canonical(root, ec);
  if (ec) canonical_root = std::move(root);
  auto cut = std::make_shared<std::pair<std::set<std::string>, std::mutex>>();
  return [root = std::move(canonical_root), options, cut](Conn& conn) {
    while (auto request = conn.read_request(std::chrono::seconds(30))) {
      const bool keep_alive = !client_wants_close(*request);
      if (options.delay.count() > 0 && !connection_of(conn).shared().sleep_for(options.delay)) return;
      std::string response = directory_response(root, options, *request, keep_alive);
      if (cut_now(options, *request, cut->first, cut->second) && response.starts_with("HTTP/1.1 200")) {
        const std::size_t body = response.find("\r\n\r\n") + 4;
        if (response.size() - body > options.cut_after) {
          conn.write(std::string_view(response).substr(0, body + options.cut_after));
          // An RST can overtake bytes the client has not read yet; let it read them first.
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          conn.reset();
          return;
        }
      }
      if (!conn.write(response) || !keep_alive) return;
    }
  };
}

ConnScript serve(std::function<std::string(const HttpRequest&)> handler) {
  return [handler = std::move(handler)](Conn& conn) {
    while (auto request = conn.read_request(std::chrono::seconds(30))) {
      const std::string response = handler(*request);
      if (response.empty()) {
        conn.reset();
        return;
      }
      if (!conn.write(response) || client_wants_close(*request) || response_closes(response)) return;
    }
  };
}

}  // namespace wheelfit::testing
