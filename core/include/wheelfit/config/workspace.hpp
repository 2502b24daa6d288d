#pragma once
// comfy-env.toml: one isolated env. The keys wheelfit reads:
//   python = "3.12"            optional; must be a string "X.Y"
//   [cuda] packages = [...]    the compiled packages to resolve against the wheel farm
// Everything else is pixi configuration passed through to the generated pixi.toml.
// Config errors name the file and the key:
//   - torch / torchvision / torchaudio under [cuda] packages (the torch family is derived);
//   - python not a string ("python = 3.12" is a float and loses "3.10" -> 3.1);
//   - packages not an array of non-empty strings; an invalid package name; a duplicate.
// Unknown keys under [cuda] warn (Env::warnings) and are ignored.

#include <optional>
#include <string>
#include <vector>

#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::config {

struct Package {
  std::string requested;   ///< as written in the config ("flash_attn")
  std::string name;        ///< PEP 503 normalised ("flash-attn")
};

struct Env {
  std::string file;                            ///< the config's path, as given
  std::string name;                            ///< feature name: the config's folder name, else its stem
  std::optional<model::NumericVersion> python; ///< the env's own Python (major.minor), if set
  std::vector<Package> packages;               ///< [cuda] packages, in order
  std::vector<std::string> channels;           ///< [workspace] channels, in order
  /// The rest of the file, re-serialised as TOML (without python, [cuda] and [workspace]),
  /// for the pixi.toml writer to nest under [feature.<name>].
  std::string passthrough_toml;
  std::vector<std::string> warnings;           ///< "cfg.toml: [cuda] unknown key 'extra' ignored"
};

/// Parses one comfy-env.toml from text. `file` names it in errors.
Expected<Env> parse_env_config(std::string_view text, const std::string& file);
/// Reads and parses one comfy-env.toml (Errc::not_found / io_error name the path).
Expected<Env> load_env_config(const std::string& file);

/// A workspace: every env resolved with one combo. Env names are made unique ("a", "a-2").
struct Workspace {
  std::vector<Env> envs;
};
Expected<Workspace> load_workspace(const std::vector<std::string>& files);

}  // namespace wheelfit::config
