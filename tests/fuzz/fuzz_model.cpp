// libFuzzer target: PEP 440 versions and PEP 427 wheel names. Besides "no crash", a parsed
// version must survive a round trip through its normalised text (parse(str()) == itself).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wheelfit/model/version.hpp"
#include "wheelfit/model/wheel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = wheelfit::model::Version::parse(text);
  if (v) {
    const std::string norm = v->str();
    auto again = wheelfit::model::Version::parse(norm);
    if (!again || !(*again == *v) || again->str() != norm) {
      std::fprintf(stderr, "version round trip failed: '%s' -> '%s'\n", std::string(text).c_str(), norm.c_str());
      std::abort();
    }
  }
  auto w = wheelfit::model::WheelName::parse(text);
  if (w) (void)w->version.str();
  return 0;
}
