// libFuzzer target: policy JSON (parse_policy_json, format 2), read without a backend's
// functions: every input is a policy or an error naming its JSON path.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = wheelfit::policies::parse_policy_json(text, "fuzz/policy.json", nullptr);
  if (p) (void)p->notation();
  return 0;
}
