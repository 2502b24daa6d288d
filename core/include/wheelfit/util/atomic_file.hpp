#pragma once
// Writing a file whole or not at all: a temporary file in the target's folder, renamed over it.

#include <sys/types.h>

#include <filesystem>
#include <initializer_list>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

struct AtomicWriteOptions {
  /// fsync before the rename, so that the new content also survives a crash (a disk flush per file).
  bool durable = true;
  /// The mode the file is created with, before the umask.
  ::mode_t mode = 0644;
};

/// Writes `pieces` one after another to a new temporary file in `path`'s folder (".tmp-<name>-<pid>-<n>",
/// unique in this process), then renames it over `path`: readers see the old file or the new one, never a mix. On
/// any failure the temporary file is removed, `path` is untouched, and the Errc::io_error names `path`, the step
/// that failed and the system error.
Expected<void> write_file_atomic(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces,
                                 AtomicWriteOptions options = {});

}  // namespace wheelfit::util
