#pragma once
// Running the built wheelfit executable from tests: one shell command with its environment,
// arguments quoted, stdout and stderr captured.

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace wheelfit::test {

struct CliRun {
  int code;  ///< the exit status, or -1 when the process did not exit normally
  std::string out, err;
};

/// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& text);

/// The wheelfit executable of this build tree.
std::filesystem::path built_wheelfit();

/// The shell prefix of a network test's run: `env` without the caller's index, policy, plugin
/// path, proxies, GitHub token and Releases repository, trust store or client certificate
/// variables, with quick retries (WHEELFIT_RETRY_BACKOFF_MS=5).
std::string clean_network_env();

/// Runs `env_prefix exe args...` through the shell (`env_prefix` is shell text such as
/// "env -u X Y=1"; may be empty) and captures its output.
CliRun run_program(const std::string& env_prefix, const std::filesystem::path& exe, const std::vector<std::string>& args);

/// A simple index in `index` with one project, pkg, and one wheel of it: pkg-1.0+cu128torch2.8
/// for CPython 3.12 on x86_64 (manylinux_2_28), its sha256 all 'a'.
void write_one_wheel_index(const std::filesystem::path& index);

/// A temporary folder holding that index in index/, and where a project's config goes,
/// proj/comfy-env.toml (left to the test to write): the base of the cli tests' worlds.
struct OneWheelProject {
  TempDir dir;
  std::filesystem::path index = dir / "index";
  std::filesystem::path config = dir / "proj" / "comfy-env.toml";
  OneWheelProject() { write_one_wheel_index(index); }
};

}  // namespace wheelfit::test
