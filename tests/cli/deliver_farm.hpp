#pragma once
// What the `wheelfit download` / `mirror` CLI tests share (test_cli_deliver.cpp,
// test_cli_locks.cpp): the CLI run without the environment's overrides, its JSON, a file's
// digest, and a farm with real wheel files.

#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace wheelfit::test::cli_deliver {

namespace fs = std::filesystem;
namespace json = boost::json;

inline CliRun run_wheelfit_cli_deliver(const std::vector<std::string>& args) {
  return run_program("env -u WHEELFIT_OVERRIDE_PYTHON -u WHEELFIT_OVERRIDE_GPUS " + clean_network_env(), built_wheelfit(), args);
}

inline json::object parse_object_cli_deliver(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) FAIL("not a JSON object: " << text);
  return v.as_object();
}

inline std::string sha256_of(const fs::path& p) {
  const auto r = run_program("", "sha256sum", {p.string()});
  return r.out.substr(0, 64);
}

// Two packages of the farm (cc_torch, cubvh) with real files; a config asking for both; an H100
// and an A6000 (both resolve cu12.8/torch2.8 and pick the same two files) and a K40 (sm 3.5:
// nothing covers it).
struct Farm {
  TempDir dir;
  fs::path index = dir / "farm";
  fs::path config = dir / "proj" / "comfy-env.toml";
  fs::path machines = dir / "machines";
  /// A profile: the common facts and these GPUs.
  static std::string profile(const char* gpus) {
    return "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\n"
           "torch = \"2.8.0+cu128\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"" +
           std::string(gpus) + "\"]\n";
  }
  Farm() {
    const auto gen = run_program("", fs::path(WHEELFIT_BINARY_DIR) / "scripts/farmgen/wheelfit-farmgen",
                                 {"--out", index.string(), "--with-files", "--packages", "2"});
    REQUIRE(gen.code == 0);
    write_file(config, "python = \"3.12\"\n[cuda]\npackages = [\"cc_torch\", \"cubvh\"]\n");
    write_file(machines / "h100.toml", profile("9.0"));
    write_file(machines / "a6000.toml", profile("8.6"));
  }
  [[nodiscard]] std::string machine(const char* name) const { return (machines / (std::string(name) + ".toml")).string(); }
  [[nodiscard]] std::vector<std::string> download(const fs::path& to, std::vector<std::string> more) const {
    std::vector<std::string> out{"download", config.string(), "--index", index.string(), "-d", to.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  [[nodiscard]] std::vector<std::string> mirror(const fs::path& out_dir, std::vector<std::string> more) const {
    std::vector<std::string> out{"mirror", config.string(), "--index", index.string(), "--out", out_dir.string()};
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  /// The farm's file of `filename` (under releases/download/<tag>/).
  [[nodiscard]] fs::path file_of(const std::string& filename) const {
    for (const auto& e : fs::recursive_directory_iterator(index / "releases")) {
      if (e.path().filename() == filename) return e.path();
    }
    FAIL("no farm file " << filename);
    return {};
  }
};

}  // namespace wheelfit::test::cli_deliver
