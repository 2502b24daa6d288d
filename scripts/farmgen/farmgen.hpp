#pragma once
// The farm generator: writes a full-grid synthetic wheel index laid out exactly like the
// cuda-wheels farm's deployed site (the gh-pages snapshot in ../shared/fixtures/cuda-wheels/index):
//
//   DIR/index.html                                  root: one <a href="{index_name}/"> per package
//   DIR/{index_name}/index.html                     every anchor of the package
//   DIR/cu{nodot}/torch{minor}/index.html           a per-combo channel's root
//   DIR/cu{nodot}/torch{minor}/{index_name}/index.html   the package's anchors for that combo
//   DIR/packages.json                               schema 1, sha256 per real file
//
// The grid: every cell of Policy::shipped_cells() with Python >= 3.10, a CUDA line the farm
// builds (12.4, 12.6, 12.8, 12.9, 13.0, 13.2) and an arch list for the platform
// (Policy::platform_arch_list non-null: no cu12.4 on aarch64). Each package keeps the cells of
// its platforms, restricted to its own_combinations when it has them and to torch >= its
// min_pytorch.
//
// File names are the farm's: {name}-{version}+{label}-cp{py}-cp{py}-{tags}.whl, the label written
// by the backend's first combo template (+cu128torch2.8 for CUDA, +rocm6.3torch2.7 for ROCm); the
// grid is every cell of the policy's PyTorch matrix that has an arch list (the lines it builds).
// with hrefs {base}/releases/download/{name}-latest/{file name, '+' as %2B}. A torch-free
// package (links_torch false) has one real file per (CUDA line, Python, platform), built against
// the newest torch minor of its cells there, listed under every torch minor of that line with an
// anchor text naming that minor (anchor text != href basename, like the farm's cumm page).
// packages.json lists real files only; sha256 is the SHA-256 of the file name (deterministic),
// or with --with-files the SHA-256 of the wheel written (wheel_files.hpp), and every anchor
// carries it as its #sha256= fragment.
//
// Output is deterministic (same inputs, byte-identical files) and written to a sibling temp
// directory renamed into place at the end: a failure never leaves a half-written index.
// Thread safety: the functions share no state; generate_farm may run concurrently for
// different output directories.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::farmgen {

inline constexpr std::string_view kDefaultBaseUrl = "https://github.com/Comfy-Forge/cuda-wheels";
/// The compressed platform tag the farm writes for a platform key ("linux" ->
/// "manylinux_2_24_x86_64.manylinux_2_28_x86_64"); empty for an unknown key.
std::string_view platform_tags(std::string_view platform) noexcept;

/// A package's own build grid row (torch and Python as major.minor).
struct OwnCombination {
  model::NumericVersion line;  ///< the accelerator line ("cuda" in farm_packages.json)
  model::NumericVersion torch;
  std::vector<model::NumericVersion> pythons;
};

struct FarmPackage {
  std::string name;         ///< wheel distribution name ("flash_attn")
  std::string index_name;   ///< PEP 503 directory name ("flash-attn")
  std::string version;      ///< PEP 440 public version ("2.8.3", "0.0.0")
  bool links_torch = true;  ///< false: torch-free (one file per CUDA line, aliased per torch minor)
  std::vector<std::string> platforms;           ///< farm platform keys
  std::vector<OwnCombination> own_combinations; ///< empty: the whole grid
  std::optional<model::NumericVersion> min_pytorch;  ///< torch major.minor floor
};

/// Parses the package list (scripts/farmgen/data/farm_packages.json's format 1). Errors are
/// Errc::invalid_input naming `source` and the JSON path.
Expected<std::vector<FarmPackage>> parse_package_list(std::string_view json, std::string_view source);
/// The package list embedded at build time (44 packages from the farm's summary). Throws
/// std::logic_error if the embedded copy does not parse (a build defect, caught by the tests).
const std::vector<FarmPackage>& builtin_packages();
/// The first `n` packages of `list`; when n exceeds its size, "synthetic-pkg-K" packages
/// (K = 1, 2, ...; links_torch true, version 1.0.0, every platform) fill it up to n.
std::vector<FarmPackage> select_packages(const std::vector<FarmPackage>& list, std::size_t n);

/// One cell of the farm's grid.
struct GridCell {
  model::Combo combo;            ///< accelerator line, torch minor
  model::NumericVersion python;  ///< major.minor
  std::string platform;          ///< farm platform key
};
/// The full grid for a policy, in shipped_cells() order.
std::vector<GridCell> farm_grid(const semantics::Policy& policy);
/// The cells `package` is built for (its platforms, own_combinations, min_pytorch).
std::vector<GridCell> package_cells(const FarmPackage& package, const std::vector<GridCell>& grid);

/// "{name}-{version}+{label}-cp{py}-cp{py}-{tags}.whl"; `label` is the combo's local label as
/// the backend's first combo template writes it ("cu128torch2.8", "rocm6.3torch2.7").
std::string wheel_filename(const FarmPackage& package, const std::string& label,
                           const model::NumericVersion& python, std::string_view platform);
/// Lower-case hex SHA-256 of `data` (OpenSSL EVP).
std::string sha256_hex(std::string_view data);

struct FarmOptions {
  std::filesystem::path out;               ///< the index directory (created or replaced)
  std::optional<std::size_t> packages;     ///< how many packages; nullopt = the whole list
  std::string base_url{kDefaultBaseUrl};   ///< release download base (no trailing '/')
  /// The package list; nullopt = builtin_packages().
  std::optional<std::vector<FarmPackage>> package_list;
  /// Also write every real file (wheel_files.hpp: a valid, installable wheel) under
  /// out/releases/download/{name}-latest/{file name}, with its true sha256 in the pages'
  /// #sha256= fragments and packages.json (instead of the file name's digest). Serve `out` and
  /// give its URL as base_url, or keep the default a caller sets: file://{out}.
  bool with_files = false;
};

struct FarmStats {
  std::size_t packages = 0;  ///< package pages written
  std::size_t wheels = 0;    ///< real files (packages.json entries)
  std::size_t anchors = 0;   ///< anchors on the package pages (torch-free aliases included)
  std::size_t pages = 0;     ///< HTML pages written
  std::size_t files = 0;     ///< files written (pages + packages.json)
  std::uintmax_t bytes = 0;  ///< bytes written
};

/// Generates the index into options.out. `out` may be absent (created, parents too), an empty
/// directory, or a directory holding an earlier farm (index.html + packages.json: replaced
/// whole). Errors: Errc::usage for a bad option (packages == 0, a blank base URL, `out` naming a
/// file or a non-empty directory that is not a farm), Errc::io_error naming the path that could
/// not be written. On error `out` is left as it was.
Expected<FarmStats> generate_farm(const FarmOptions& options, const semantics::Policy& policy);

}  // namespace wheelfit::farmgen
