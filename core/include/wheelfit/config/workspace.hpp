#pragma once
// comfy-env.toml: one isolated env. The keys wheelfit reads:
//   python = "3.12"            optional; must be a string "X.Y" (exactly major.minor). A float
//                              (python = 3.12) is refused: as a float, 3.10 would read as 3.1.
//                              Free-threaded "3.13t" is not accepted here: the config names the
//                              env's Python line; free-threading is a machine fact (machine.hpp).
//   [cuda] packages = [...]    the compiled packages to resolve against the wheel farm
//   [workspace] channels = [...]  optional; an array of non-empty strings, kept in order
// Everything else is pixi configuration passed through to the generated pixi.toml.
// Config errors are Errc::invalid_input; their message starts "<file>:<line>:<col>: " and names
// the key:
//   - a TOML syntax error (with toml++'s description);
//   - torch / torchvision / torchaudio under [cuda] packages (the torch family is derived from the
//     resolved combo), in any spelling that differs only in case and separators ("Torch_Vision");
//   - python not a string "X.Y";
//   - [cuda] not a table; packages not an array of non-empty strings; an invalid package name
//     (PEP 508); a duplicate after PEP 503 normalisation ("flash_attn" and "flash-attn");
//   - [workspace] not a table; channels not an array of non-empty strings.
// Unknown keys under [cuda] and [workspace] warn (Env::warnings) and are ignored.
// Inputs over 4 MiB are Errc::too_large.
// Thread safety: the functions are pure apart from reading the named files; call them freely.

#include <optional>
#include <string>
#include <string_view>
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
  /// Feature name: the parent folder's name when the file is called "comfy-env.toml", else the
  /// file name up to its first '.' ("geometrypack.comfy-env.toml" -> "geometrypack"); then
  /// lower-cased, every run of characters outside [a-z0-9] made one '-', '-' trimmed from both
  /// ends ("ComfyUI_Foo" -> "comfyui-foo"); "env" if nothing is left.
  std::string name;
  std::optional<model::NumericVersion> python; ///< the env's own Python (major.minor), if set
  std::vector<Package> packages;               ///< [cuda] packages, in order
  std::vector<std::string> channels;           ///< [workspace] channels, in order
  /// The rest of the file, re-serialised as TOML (without python, [cuda] and [workspace]),
  /// for the pixi.toml writer to nest under [feature.<name>]. It re-parses to the same table.
  /// Empty when nothing is left.
  std::string passthrough_toml;
  std::vector<std::string> warnings;           ///< "cfg.toml: [cuda] unknown key 'extra' ignored"
};

/// Parses one comfy-env.toml from text. `file` names it in errors.
Expected<Env> parse_env_config(std::string_view text, const std::string& file);
/// Reads and parses one comfy-env.toml (Errc::not_found / io_error / too_large name the path).
Expected<Env> load_env_config(const std::string& file);

/// A workspace: every env resolved with one combo. Env names are made unique in file order: a
/// name already taken gets the first free "-2", "-3", ... suffix ("a", "a-2").
struct Workspace {
  std::vector<Env> envs;
};
/// Loads each file in order and stops at the first that fails (its error names the file).
/// An empty list is Errc::usage.
Expected<Workspace> load_workspace(const std::vector<std::string>& files);

}  // namespace wheelfit::config
