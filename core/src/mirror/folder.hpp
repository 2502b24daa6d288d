#pragma once
// Private to core/src/mirror: the mirror folder's names that are wheelfit's (folder.cpp), and the
// helpers publish.cpp and folder.cpp share. Decision 0022: wheelfit removes only these names.
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::mirror::detail {

/// OUT/.wheelfit-mirror: the mark of a folder wheelfit made (or adopted) as a mirror.
inline constexpr const char* kMark = ".wheelfit-mirror";

inline Error io_error(const std::filesystem::path& path, const std::string& what, int err) {
  return Error(Errc::io_error, path.string() + ": " + what + ": " + std::strerror(err));
}
inline Error io_error(const std::filesystem::path& path, const std::string& what, const std::error_code& ec) {
  return Error(Errc::io_error, path.string() + ": " + what + ": " + ec.message());
}

/// Calls f(entry) for each entry of `dir`; stops quietly where the folder cannot be read (every
/// caller tidies up or checks, and says what it could not do elsewhere). Never throws.
template <class F>
std::error_code each_entry(const std::filesystem::path& dir, F&& f) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) f(*it);
  return ec;
}

/// A snapshot's id, "20260101T000000Z" or, a second one within the second, "20260101T000000Z-2".
bool is_snapshot_id(std::string_view name);
/// A snapshot being built: ".tmp-<id>-<pid>".
bool is_snapshot_temp(std::string_view name);
/// `current`'s replacement being made: ".current.tmp-<pid>".
bool is_link_temp(std::string_view name);
/// A METADATA kept by its wheel's digest in OUT/pool/.metadata/: "<64 lower-case hex>.metadata",
/// or (`with_temp`) the temporary file of its atomic write.
bool is_metadata_name(std::string_view name, bool with_temp = false);
/// A METADATA an older wheelfit kept beside its wheel in OUT/pool: "<wheel name>.metadata".
bool is_named_metadata(std::string_view name);

}  // namespace wheelfit::mirror::detail
