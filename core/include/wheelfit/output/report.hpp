#pragma once
// What a resolve says: the human report, the one JSON object of `--json`, and the pixi.toml.
// All three read the same Resolution; none re-derives a decision.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
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

/// Where a text goes as it is made, piece by piece.
using TextSink = std::function<void(std::string_view)>;

/// A text in pieces: its own, and pieces shared with other texts (a verdict list's, made once by
/// a VerdictTexts), so that many texts holding the same megabytes hold them once.
class TextPieces {
 public:
  void add(std::string_view own);
  void add(std::shared_ptr<const std::string> shared);
  /// Each piece to `sink`, in order, the first `skip` bytes of the text left out.
  void write(const TextSink& sink, std::size_t skip = 0) const;
  [[nodiscard]] std::string str() const;

 private:
  std::vector<std::variant<std::string, std::shared_ptr<const std::string>>> pieces_;
};

/// The texts of the candidates' verdict lists (resolve::CandidateVerdicts, shared by the machines
/// of a fleet whose judging of a package is the same): each list's JSON array and report lines
/// made once, at its first use, and shared by every report that lists it. Keyed by the list's
/// identity: a list must outlive the VerdictTexts. Not thread-safe.
class VerdictTexts {
 public:
  std::shared_ptr<const std::string> json(const resolve::CandidateVerdicts& list, const semantics::LineNotation& notation);
  std::shared_ptr<const std::string> lines(const resolve::CandidateVerdicts& list, const semantics::LineNotation& notation);
  [[nodiscard]] std::size_t made() const { return made_; }  ///< texts made so far

 private:
  using Make = std::string (*)(const resolve::CandidateVerdicts&, const semantics::LineNotation&);
  using Key = std::tuple<const void*, std::string, bool>;
  std::shared_ptr<const std::string> made(const resolve::CandidateVerdicts& list, const semantics::LineNotation& n, bool lines,
                                          Make make);
  std::map<Key, std::shared_ptr<const std::string>> texts_;
  std::size_t made_ = 0;
};

/// The two reports in the part that depends on the machine's profile and the part that does
/// not, for a fleet whose identical machines share one resolution (the shared part made once for
/// them): human_report(r, ctx) == human_report_machine(r, ctx.machine) +
/// human_report_shared(r, ctx, v).str(), and json_report(r, ctx) == parts.head.str() +
/// json_report_machine(r, ctx.machine) + parts.tail. The shared parts never read ctx.machine;
/// their verdicts come from `v`.
struct JsonReportParts {
  TextPieces head;   ///< "{" and every member before "machine", ending in ',"machine":'
  std::string tail;  ///< ',"policy":...}' and the newline
};
std::string human_report_machine(const resolve::Resolution& r, const machine::Machine& m);  ///< the "machine:" line
TextPieces human_report_shared(const resolve::Resolution& r, const ReportContext& ctx, VerdictTexts& v);
std::string json_report_machine(const resolve::Resolution& r, const machine::Machine& m);  ///< the "machine" value
JsonReportParts json_report_shared(const resolve::Resolution& r, const ReportContext& ctx, VerdictTexts& v);

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
