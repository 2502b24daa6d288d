#pragma once
// PLACEHOLDER: the lockread branch's header (the agreed interface); replaced at its merge.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::locks {
enum class Format { pixi, requirements, pylock };
std::string_view format_name(Format f);
struct Entry {
  std::string name;
  std::string version;
  std::string filename;
  std::string url;
  std::string path;
  std::optional<std::string> sha256;
  std::optional<std::uint64_t> size;
  std::size_t line = 0;
};
struct LockFile {
  std::string path;
  Format format;
  std::vector<Entry> entries;
  std::optional<std::string> index;
  std::vector<std::string> warnings;
};
Expected<LockFile> parse_lock(std::string_view text, std::string_view name, std::optional<Format> format = std::nullopt);
Expected<LockFile> read_lock(const std::string& path, std::optional<Format> format = std::nullopt);
}  // namespace wheelfit::locks
