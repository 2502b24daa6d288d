// libFuzzer target: comfy-env.toml (parse_env_config): every input is an env or an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wheelfit/config/workspace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto env = wheelfit::config::parse_env_config(text, "fuzz/comfy-env.toml");
  if (env) (void)env->packages.size();
  return 0;
}
