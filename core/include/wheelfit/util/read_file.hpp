#pragma once
// Reading a whole input file (a comfy-env.toml, a machine profile, a policy file) with a size
// limit, every failure an error that names the file.
#include <cstdint>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::util {

/// The whole of `path`, at most `max_bytes`. It reads one byte past the limit rather than
/// trusting the size the file system reports, so a file that grows or lies is caught too.
/// `what` names the kind of file in messages ("a policy file"). Errors, each starting with the
/// path: Errc::not_found ("no such <noun>" where `what` is "a <noun>"), Errc::io_error (a
/// directory, cannot open, read failed), Errc::too_large ("over the N MiB limit for <what>").
Expected<std::string> read_file(const std::string& path, std::uintmax_t max_bytes, std::string_view what);

}  // namespace wheelfit::util
