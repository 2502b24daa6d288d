// libFuzzer target: index pages (PEP 503 HTML, PEP 691 JSON) and packages.json, whole and for
// some projects (decision 0020: what the whole read accepts, the selective read accepts, with the
// same records; a difference traps).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/index/links.hpp"

namespace {

bool same_entry(const wheelfit::index::PackagesJsonEntry& a, const wheelfit::index::PackagesJsonEntry& b) {
  if (a.torch_free != b.torch_free || a.wheels.size() != b.wheels.size()) return false;
  for (std::size_t i = 0; i < a.wheels.size(); ++i) {
    const auto &x = a.wheels[i], &y = b.wheels[i];
    if (x.filename != y.filename || x.url != y.url || x.sha256 != y.sha256 || x.fields != y.fields) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)wheelfit::index::parse_simple_html(body, "https://example.org/simple/pkg/");
  (void)wheelfit::index::parse_simple_json(body, "https://example.org/simple/pkg/");
  const auto whole = wheelfit::index::parse_packages_json(body, "packages.json");
  const std::vector<std::string> only = {"pkg", "a", "b"};
  const auto some = wheelfit::index::parse_packages_json(body, "packages.json", only);
  if (whole) {
    if (!some || some->repo != whole->repo) __builtin_trap();
    for (const auto& name : only) {
      const auto w = whole->packages.find(name);
      const auto s = some->packages.find(name);
      if ((w == whole->packages.end()) != (s == some->packages.end())) __builtin_trap();
      if (s != some->packages.end() && !same_entry(s->second, w->second)) __builtin_trap();
    }
    if (some->packages.size() > only.size()) __builtin_trap();
  }
  return 0;
}
