// The Catch2 main of the test executable. When asked for fixture tests (a test spec naming
// "[fixtures]", not "~[fixtures]") and the shared fixtures folder is absent (a user's clone), it
// says so and exits 77, which ctest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string_view>

#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/register.hpp"

int main(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto at = arg.find("[fixtures]");
    const bool asks_fixtures = at != std::string_view::npos && (at == 0 || arg[at - 1] != '~');
    if (asks_fixtures && !std::filesystem::is_directory(WHEELFIT_SHARED_FIXTURES)) {
      std::printf("SKIPPED: the fixture tests need the shared fixtures at %s, which is absent "
                  "(a clone without ../shared); the unit tests still ran.\n",
                  WHEELFIT_SHARED_FIXTURES);
      return 77;
    }
  }
  // The one registration of the built-in transports, as the wheelfit executable makes it: the
  // façade tests read through net::default_registry().
  if (auto done = wheelfit::transports::register_transports(wheelfit::net::default_registry()); !done) {
    std::fprintf(stderr, "register_transports: %s\n", done.error().message.c_str());
    return 70;
  }
  if (auto done = wheelfit::policies::register_format(); !done) {
    std::fprintf(stderr, "register_format: %s\n", done.error().message.c_str());
    return 70;
  }
  return Catch::Session().run(argc, argv);
}
