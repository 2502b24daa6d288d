// libFuzzer target: the lock readers (locks/read.hpp). The first byte picks the format (its value
// mod 4: '0' by content, '1' pixi, '2' requirements, '3' pylock), the rest is the file. Besides
// "no crash": a refusal names the file and is invalid_input, too_large or unsupported; every
// entry has a PEP 503 name, a sha256 of 64 lower-case hex digits when it has one, and a file name
// that is one (no '/' or '\'); every warning names the file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "wheelfit/locks/read.hpp"
#include "wheelfit/model/name.hpp"

namespace locks = wheelfit::locks;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
  std::abort();
}

bool lower_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  constexpr std::optional<locks::Format> kFormats[] = {std::nullopt, locks::Format::pixi, locks::Format::requirements,
                                                       locks::Format::pylock};
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr std::string_view kName = "fuzz/lock";
  auto lock = locks::parse_lock(text, kName, kFormats[data[0] % 4]);
  if (!lock) {
    const auto& e = lock.error();
    if (!e.message.starts_with(kName)) fail("a refusal that does not name the file", e.message);
    if (!e.is(wheelfit::Errc::invalid_input) && !e.is(wheelfit::Errc::too_large) && !e.is(wheelfit::Errc::unsupported)) {
      fail("a refusal of an unexpected kind", e.message);
    }
    return 0;
  }
  for (const auto& entry : lock->entries) {
    if (entry.name.empty() || wheelfit::model::normalize_name(entry.name) != entry.name) fail("an entry's name", entry.name);
    if (entry.sha256 && !lower_hex64(*entry.sha256)) fail("an entry's sha256", *entry.sha256);
    for (const auto& other : entry.other_sha256) {
      if (!lower_hex64(other)) fail("an entry's other sha256", other);
    }
    if (entry.filename.find_first_of("/\\") != std::string::npos) fail("an entry's file name", entry.filename);
  }
  for (const auto& w : lock->warnings) {
    if (!w.starts_with(kName)) fail("a warning that does not name the file", w);
  }
  return 0;
}
