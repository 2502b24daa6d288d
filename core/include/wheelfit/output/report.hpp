#pragma once
// What a resolve says: the human report, the one JSON object of `--json`, and the pixi.toml.
// All three read the same Resolution; none re-derives a decision.

#include <optional>
#include <string>
#include <vector>

#include "wheelfit/config/workspace.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::output {

/// What https was trusted with for a remote index (README "TLS"): each location of the trust
/// store with the flag or variable it came from (none: the system store), and the client
/// certificate, if any.
struct TlsNote {
  struct Location {
    std::string path, from;
  };
  std::string trust_from = "system";  ///< "--cert", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE + SSL_CERT_DIR", ...
  std::vector<Location> trust;        ///< empty: the system store
  std::optional<Location> client_cert;
};

struct ReportContext {
  const machine::Machine& machine;
  const config::Workspace& workspace;
  std::string index_url{};
  std::string index_origin{};
  std::string policy_source{};
  std::string packages_json_note{};
  /// Who answered and how the pages were fetched: "index" / "releases-api" / "index+releases-api",
  /// and a line such as "45 pages: 40 fetched, 5 from the cache; 2 retries" (both may be empty).
  std::string source = "index";
  std::string fetch_note{};
  std::string failover_note{};
  std::optional<TlsNote> tls{};  ///< a remote index read with wheelfit's own transport; nullopt otherwise
};

/// The human report (several lines, ends with '\n'). On failure it opens with the
/// predecessor's summary ("No cuda-wheels combo covers all required packages.") and then lists,
/// per package and per candidate wheel, every demand that failed.
std::string human_report(const resolve::Resolution& r, const ReportContext& ctx);

/// Exactly one JSON object: combo, tier, packages, pins, unresolved (per the CLI contract), plus
/// tiers, warnings, index and machine for the curious.
std::string json_report(const resolve::Resolution& r, const ReportContext& ctx);

/// The pixi.toml text for a successful resolution: [workspace] with the configs' channels and
/// the platform with its glibc floor, one feature per env (its config passed through, the
/// torch family pins, one url per wheel with "#sha256=<hex>" when known), one environment per
/// env. Errc::invalid_input when a config's pass-through TOML cannot be re-read.
/// How a pixi.toml pins each picked wheel.
struct PixiPins {
  /// nullopt: by URL with "#sha256=" (the default: the farm is no index pixi can search, and
  /// pixi installs a direct URL as it is). Set: `{ version = "==<exact>", index = <this URL> }`,
  /// for an index that serves exactly the machine's picks (a mirror's view): pixi then checks
  /// the index's hashes itself.
  std::optional<std::string> index;
  /// With `index`: the torch family pins come from it too (a mirror that holds them).
  bool torch_from_index = false;
};
Expected<std::string> pixi_manifest(const resolve::Resolution& r, const ReportContext& ctx, const PixiPins& pins = {});

/// Writes an output file (`-o pixi.toml`) atomically (util::write_file_atomic): a temp file in the
/// same folder, fsynced, renamed over `path`, the folder fsynced. An existing file keeps its mode
/// (and owner where allowed); a symbolic link at `path` is written through (its target replaced,
/// the link kept). Temporary files of earlier writes of `path` whose process was killed are
/// removed first. On any failure the temp file is removed and `path` is untouched.
Expected<void> write_file_atomically(const std::string& path, const std::string& content);

}  // namespace wheelfit::output
