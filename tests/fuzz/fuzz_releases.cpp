// libFuzzer target: the GitHub Releases API's JSON (one page of GET /repos/{repo}/releases) and
// the Link header that pages it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "wheelfit/transports/releases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, wheelfit::index::Page> pages;
  (void)wheelfit::transports::parse_releases_page(text, "fuzz/releases?page=1", pages);
  (void)wheelfit::transports::link_next(text);
  return 0;
}
