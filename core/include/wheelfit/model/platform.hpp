#pragma once
// The operating systems and CPU architectures wheelfit reasons about, and the farm's platform
// keys ("linux" = Linux x86_64, "linux_aarch64", "windows" = Windows x86_64) that the policy
// data is keyed by.

#include <optional>
#include <string>
#include <string_view>

namespace wheelfit::model {

enum class Os { linux_, windows, macos };

/// "linux", "windows", "macos".
std::string_view to_string(Os os) noexcept;
/// Accepts "linux", "windows", "macos" (also "win32", "darwin"), case-insensitive.
std::optional<Os> parse_os(std::string_view text) noexcept;

/// Canonical CPU architecture spelling: "amd64"/"x64"/"x86_64" -> "x86_64",
/// "arm64"/"aarch64" -> "aarch64"; other spellings are lower-cased and returned as they are.
std::string normalize_cpu_arch(std::string_view text);

/// The farm's platform key for an OS and (canonical) CPU arch: "linux", "linux_aarch64",
/// "windows"; nullopt where the farm builds nothing (macOS, Windows on ARM, i686, ...).
std::optional<std::string> farm_platform(Os os, std::string_view cpu_arch);

}  // namespace wheelfit::model
