// libFuzzer target: index pages (PEP 503 HTML, PEP 691 JSON) and packages.json.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wheelfit/index/links.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)wheelfit::index::parse_simple_html(body, "https://example.org/simple/pkg/");
  (void)wheelfit::index::parse_simple_json(body, "https://example.org/simple/pkg/");
  (void)wheelfit::index::parse_packages_json(body, "packages.json");
  return 0;
}
