#include "wheelfit/util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cerrno>
#include <cstring>
#include <string>

namespace wheelfit::util {
namespace fs = std::filesystem;

Expected<void> write_file_atomic(const fs::path& path, std::initializer_list<std::string_view> pieces,
                                 AtomicWriteOptions options) {
  static std::atomic<std::uint64_t> counter{0};
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path tmp = dir / (".tmp-" + path.filename().string() + "-" + std::to_string(::getpid()) + "-" +
                              std::to_string(counter.fetch_add(1)));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, options.mode);
  if (fd < 0) {
    return unexpected(Errc::io_error, path.string() + ": cannot create a temporary file in " + dir.string() + ": " +
                                          std::strerror(errno));
  }
  // Reads errno first: close() and unlink() may change it.
  auto fail = [&](const std::string& what, bool open) {
    const std::string err = std::strerror(errno);
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    return unexpected(Errc::io_error, path.string() + ": " + what + ": " + err);
  };
  for (std::string_view data : pieces) {
    while (!data.empty()) {
      const auto n = ::write(fd, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail("write failed", true);
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  if (options.durable && ::fsync(fd) != 0) return fail("fsync failed", true);
  if (::close(fd) != 0) return fail("close failed", false);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename failed", false);
  return {};
}

}  // namespace wheelfit::util
