#include "wheelfit/model/platform.hpp"

#include <algorithm>
#include <cctype>

#include "wheelfit/util/text.hpp"

namespace wheelfit::model {
namespace {
using util::ascii_lower;
}  // namespace

std::string_view to_string(Os os) noexcept {
  static constexpr std::pair<Os, std::string_view> kNames[] = {
      {Os::linux_, "linux"}, {Os::windows, "windows"}, {Os::macos, "macos"}};
  return util::name_of(kNames, os);
}

std::optional<Os> parse_os(std::string_view text) noexcept {
  const std::string s = ascii_lower(text);
  if (s == "linux") return Os::linux_;
  if (s == "windows" || s == "win32") return Os::windows;
  if (s == "macos" || s == "darwin") return Os::macos;
  return std::nullopt;
}

std::string normalize_cpu_arch(std::string_view text) {
  std::string s = ascii_lower(text);
  if (s == "amd64" || s == "x64" || s == "x86_64") return "x86_64";
  if (s == "arm64" || s == "aarch64") return "aarch64";
  return s;
}

std::optional<std::string> farm_platform(Os os, std::string_view cpu_arch) {
  const std::string arch = normalize_cpu_arch(cpu_arch);
  if (os == Os::linux_ && arch == "x86_64") return "linux";
  if (os == Os::linux_ && arch == "aarch64") return "linux_aarch64";
  if (os == Os::windows && arch == "x86_64") return "windows";
  return std::nullopt;
}

}  // namespace wheelfit::model
