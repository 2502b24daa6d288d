// libFuzzer target: machine profiles, TOML and JSON (parse_machine_profile picks by the first
// character). Besides "no crash", a parsed profile must survive a round trip through its JSON
// form (to_json, then parse again: the same facts).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wheelfit/machine/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = wheelfit::machine::parse_machine_profile(text, "fuzz.toml");
  if (!m) return 0;
  const std::string json = wheelfit::machine::to_json(*m);
  auto again = wheelfit::machine::parse_machine_profile(json, "fuzz.json");
  if (!again || !wheelfit::machine::same_facts(*m, *again)) {
    std::fprintf(stderr, "profile round trip failed: %s -> %s\n", json.c_str(),
                 again ? wheelfit::machine::to_json(*again).c_str() : again.error().message.c_str());
    std::abort();
  }
  return 0;
}
