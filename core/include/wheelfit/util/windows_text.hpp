#pragma once
// Windows only: UTF-8 <-> UTF-16 for the W APIs (wheelfit keeps text in UTF-8 everywhere else).
// Error texts and paths as UTF-8: win_file.hpp; the environment as UTF-8: user_folders.hpp.
#ifdef _WIN32

#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/util/win_file.hpp"

namespace wheelfit::util::win {

/// UTF-8 -> UTF-16 (invalid sequences become U+FFFD).
[[nodiscard]] std::wstring widen(std::string_view utf8);
/// UTF-16 -> UTF-8 (unpaired surrogates become U+FFFD).
[[nodiscard]] std::string narrow(std::wstring_view utf16);

}  // namespace wheelfit::util::win

#endif
