// libFuzzer target: index pages (PEP 503 HTML, PEP 691 JSON) and packages.json, whole and for
// some projects (decision 0020: what the whole read accepts, the selective read accepts, with the
// same records; a difference traps). Every URL a reader yields is one token (no control
// character, whitespace or raw non-ASCII), and every text it yields, messages included, is UTF-8
// (decision 0021); anything else traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/index/links.hpp"
#include "wheelfit/util/safe_text.hpp"

namespace {

bool same_entry(const wheelfit::index::PackagesJsonEntry& a, const wheelfit::index::PackagesJsonEntry& b) {
  if (a.torch_free != b.torch_free || a.wheels.size() != b.wheels.size()) return false;
  for (std::size_t i = 0; i < a.wheels.size(); ++i) {
    const auto &x = a.wheels[i], &y = b.wheels[i];
    if (x.filename != y.filename || x.url != y.url || x.sha256 != y.sha256 || x.fields != y.fields) return false;
  }
  return true;
}

void check_utf8(std::string_view text) {
  if (!wheelfit::util::is_utf8(text)) __builtin_trap();
}

void check_url(std::string_view url) {
  if (!wheelfit::util::url_token_problem(url).empty()) __builtin_trap();
}

template <class T>
void check_error(const wheelfit::Expected<T>& result) {
  if (!result) check_utf8(result.error().message);
}

void check_page(const wheelfit::Expected<wheelfit::index::Page>& page) {
  check_error(page);
  if (!page) return;
  for (const auto& link : page->links) {
    check_url(link.url);
    for (std::string_view text : {std::string_view(link.text), std::string_view(link.filename), std::string_view(link.yank_reason)}) {
      check_utf8(text);
    }
    if (link.sha256) check_url(*link.sha256);
    if (link.requires_python) check_utf8(*link.requires_python);
  }
  for (const auto& m : page->skipped) check_utf8(m);
  for (const auto& m : page->warnings) check_utf8(m);
}

void check_packages(const wheelfit::Expected<wheelfit::index::PackagesJson>& doc) {
  check_error(doc);
  if (!doc) return;
  check_utf8(doc->repo);
  for (const auto& [name, entry] : doc->packages) {
    check_utf8(name);
    for (const auto& w : entry.wheels) {
      check_url(w.url);
      check_utf8(w.filename);
      for (const auto& [key, value] : w.fields) {
        check_utf8(key);
        check_utf8(value);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  check_page(wheelfit::index::parse_simple_html(body, "https://example.org/simple/pkg/"));
  check_page(wheelfit::index::parse_simple_json(body, "https://example.org/simple/pkg/"));
  const auto whole = wheelfit::index::parse_packages_json(body, "packages.json");
  const std::vector<std::string> only = {"pkg", "a", "b"};
  const auto some = wheelfit::index::parse_packages_json(body, "packages.json", only);
  check_packages(whole);
  check_packages(some);
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
