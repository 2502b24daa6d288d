#pragma once
// What the plugin trust check says, on Linux (plugin_trust.cpp) and Windows (plugin_trust_win.cpp)
// alike. Private to the registry component.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::registry::detail {

/// Errc::invalid_input for a relative `path`: plugins are never loaded relative to the current folder.
inline std::optional<Error> not_absolute(const std::filesystem::path& path) {
  if (path.is_absolute()) return std::nullopt;
  return Error(Errc::invalid_input, path.string() + ": not an absolute path (plugins are never loaded relative "
                                                    "to the current folder)");
}

/// `path` refused because `at` (the plugin folder or file itself when `last`, named `noun`; else a
/// folder on the way to it) is `why` ("world-writable", "writable by BUILTIN\Users").
inline Error untrusted(const std::filesystem::path& path, std::string_view noun, const std::filesystem::path& at,
                       const std::string& why, bool last) {
  if (last) return Error(Errc::invalid_input, path.string() + ": " + std::string(noun) + " is " + why + ", so someone else could have put code there");
  return Error(Errc::invalid_input, path.string() + ": the folder " + at.string() + " on the way to it is " + why +
                                        ", so someone else could have replaced what lies below it");
}

}  // namespace wheelfit::registry::detail
