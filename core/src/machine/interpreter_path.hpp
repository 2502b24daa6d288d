#pragma once
// Internal to wheelfit::machine (interpreter.cpp): what the interpreter inspection asks the file
// system, per platform (interpreter_path.cpp).
#include <string>

namespace wheelfit::machine::detail {

/// What must not change for a cached answer to hold: "dev:ino:size:mtime_ns" (Windows: volume
/// serial, file index, size, last write time), or "missing". `follow_links` false: the link itself.
[[nodiscard]] std::string file_stamp(const std::string& path, bool follow_links);
/// The path with every link resolved (realpath; Windows: fs::canonical); `p` itself when that fails.
[[nodiscard]] std::string real_path(const std::string& p);

}  // namespace wheelfit::machine::detail
