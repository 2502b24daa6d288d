#pragma once
// Helpers shared by the tests: the fixture folder, temporary directories, scoped env changes.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace wheelfit::test {

/// ../shared/fixtures (as configured at build time). Tests tagged [fixtures] may assume it exists.
std::filesystem::path fixtures_dir();
/// ../shared/fixtures/cuda-wheels/index
std::filesystem::path farm_index_dir();
/// The source tree (for tests reading repository data such as policies/data).
std::filesystem::path source_dir();
/// The build tree (for tests running built programs).
std::filesystem::path binary_dir();

/// `needle` occurs in `haystack`; some line of `lines` contains `needle`.
inline bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }
inline bool any_contains(const std::vector<std::string>& lines, std::string_view needle) {
  for (const auto& l : lines)
    if (contains(l, needle)) return true;
  return false;
}

std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, std::string_view content);
/// The permission bits of `p` (0600, 0755, ...); throws when it cannot be read.
unsigned file_mode(const std::filesystem::path& p);

/// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::filesystem::path operator/(std::string_view rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

/// Sets (or, with nullopt, unsets) an environment variable and restores it on destruction.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// A FIFO made at `path` (parents created), for tests of inputs that must be refused rather than
/// read. While this lives, a thread keeps opening it for writing without blocking: that succeeds
/// only when a reader is blocked in open(2) on it, and lets that reader go with an empty read. So
/// code that would hang on the FIFO (the bug) gets "" instead, and its test fails instead of
/// blocking forever.
class Fifo {
 public:
  explicit Fifo(std::filesystem::path path);
  ~Fifo() = default;  // the thread stops and is joined
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
  std::jthread releaser_;
};

}  // namespace wheelfit::test
