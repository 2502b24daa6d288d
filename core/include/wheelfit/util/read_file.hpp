#pragma once
// Reading a whole input file (a comfy-env.toml, a machine profile, a policy file) with a size
// limit, every failure an error that names the file; and opening an input file only when it is a
// regular file, so a FIFO or a device given as input is refused instead of blocking forever.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// An open file descriptor, closed when this goes. Move-only.
class OpenFile {
 public:
  OpenFile() = default;
  explicit OpenFile(int fd) noexcept : fd_(fd) {}
  ~OpenFile();
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&& other) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  [[nodiscard]] int fd() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

/// What a stat mode is, as std::filesystem names it (symlink for an lstat of a link).
std::filesystem::file_type file_type_of(mode_t mode);

/// What a path that is not a regular file is, for messages: "is a FIFO, not a regular file" (a
/// directory, a character device, a block device, a socket, a symlink), else "is not a regular
/// file".
std::string not_regular_text(std::filesystem::file_type type);

/// Opens `path` (symlinks followed) for reading only when it is a regular file. The open is
/// non-blocking, so a FIFO without a writer (or a device) cannot block it; the descriptor is then
/// checked with fstat and made blocking again for the reads. `what` names the kind of file in
/// messages ("a policy file"). Errors, each starting with the path: Errc::not_found ("no such
/// <noun>" where `what` is "a <noun>"), Errc::io_error ("is a directory, not <what>", "is a FIFO,
/// not a regular file" and the like, "cannot open for reading: <reason>").
Expected<OpenFile> open_regular_file(const std::string& path, std::string_view what);

/// The whole of `path`, at most `max_bytes`, opened by open_regular_file (a FIFO, a device or a
/// socket is refused, never read). It reads one byte past the limit rather than trusting the
/// size the file system reports, so a file that grows or lies is caught too. `what` names the
/// kind of file in messages ("a policy file"). Errors, each starting with the path: those of
/// open_regular_file, Errc::io_error ("read failed"), Errc::too_large ("over the N MiB limit for
/// <what>").
Expected<std::string> read_file(const std::string& path, std::uintmax_t max_bytes, std::string_view what);

}  // namespace wheelfit::util
