// Whether a plugin folder or file may be trusted to hold code wheelfit loads: it, and every folder
// on the way to it from /, owned by root or by us and writable by nobody else (ssh's StrictModes,
// sudo's rule), a root-owned sticky folder such as /tmp excepted on the way. (Windows:
// plugin_trust_win.cpp.)
#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>

#include "trust_text.hpp"
#include "wheelfit/registry/registry.hpp"

namespace wheelfit::registry {

namespace fs = std::filesystem;

std::optional<std::string> untrusted_because(unsigned uid, unsigned mode, bool parent, unsigned euid) {
  if (uid != 0 && uid != euid) return "owned by uid " + std::to_string(uid) + " (neither root nor you)";
  const bool sticky_root_folder = parent && uid == 0 && S_ISDIR(mode) && (mode & S_ISVTX) != 0;
  if (sticky_root_folder) return std::nullopt;  // like /tmp: others may add, not replace
  if ((mode & S_IWOTH) != 0) return std::string("world-writable");
  if ((mode & S_IWGRP) != 0) return std::string("group-writable");
  return std::nullopt;
}

namespace {

// `text`'s names, in order ("/a//b/" -> a, b); "." and ".." kept for the walk to apply.
std::deque<std::string> names_of(const std::string& text) {
  std::deque<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto slash = text.find('/', start);
    const std::string name = text.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!name.empty() && name != ".") out.push_back(name);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

using detail::untrusted;

}  // namespace

Expected<fs::path> check_trusted_path(const fs::path& path, std::string_view noun) {
  if (auto relative = detail::not_absolute(path)) return unexpected(*relative);
  const unsigned euid = ::geteuid();
  auto judge = [&](const fs::path& at, const struct stat& st, bool last) -> std::optional<Error> {
    if (auto why = untrusted_because(st.st_uid, st.st_mode, !last, euid)) return untrusted(path, noun, at, *why, last);
    return std::nullopt;
  };
  struct stat st {};
  if (::stat("/", &st) != 0) return unexpected(Errc::io_error, path.string() + ": cannot examine /: " + std::strerror(errno));
  std::deque<std::string> todo = names_of(path.string());
  if (auto bad = judge("/", st, todo.empty())) return unexpected(*bad);

  fs::path at = "/";
  int links = 0;
  while (!todo.empty()) {
    const std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == "..") {
      at = at.parent_path();  // already judged on the way down
      continue;
    }
    const fs::path next = at / name;
    if (::lstat(next.c_str(), &st) != 0) {
      const int e = errno;
      if (e == ENOENT) return unexpected(Errc::not_found, path.string() + ": " + next.string() + " does not exist");
      return unexpected(Errc::io_error, path.string() + ": cannot examine " + next.string() + ": " + std::strerror(e));
    }
    if (S_ISLNK(st.st_mode)) {
      // The link lies in `at`, which was judged: only a trusted user could have made it. Go where
      // it points, judging that way as well.
      if (++links > 40) return unexpected(Errc::io_error, path.string() + ": too many symbolic links");
      char target[PATH_MAX];
      const auto n = ::readlink(next.c_str(), target, sizeof target - 1);
      if (n < 0) return unexpected(Errc::io_error, path.string() + ": cannot read the link " + next.string() + ": " + std::strerror(errno));
      const std::string to(target, static_cast<std::size_t>(n));
      auto more = names_of(to);
      todo.insert(todo.begin(), more.begin(), more.end());
      if (!to.empty() && to.front() == '/') at = "/";
      continue;
    }
    const bool last = todo.empty();
    if (!last && !S_ISDIR(st.st_mode)) return unexpected(Errc::io_error, path.string() + ": " + next.string() + " is not a folder");
    if (auto bad = judge(next, st, last)) return unexpected(*bad);
    at = next;
  }
  return at;
}

}  // namespace wheelfit::registry

#endif  // !_WIN32
