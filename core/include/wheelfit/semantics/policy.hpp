#pragma once
// A backend's policy: the data the resolver and explain judge against, plus the backend's
// device-target rules. The core knows no accelerator: everything accelerator-specific is either
// data in the backend's policy JSON (its notation, label grammar, driver rule, arch lists, the
// PyTorch matrix, the family table, fallback combos, the torch index pattern) or one of the few
// rules a table cannot hold (DeviceRules: the device-target grammar and the coverage rule),
// which the backend plugin supplies as functions (registry::make_policy wires them in).
//
// The core defines what a policy is: these types and the queries the resolver, explain and the
// advice read. The data format (policy JSON, format 2) and its parser are policies/'s
// (wheelfit::policies::register_format installs it as the reader, semantics/reader.hpp); nothing in
// the core includes them.
//
// What it holds (Policy::Tables; format 2 writes it as policies/README.md says):
//   - `backend`: the line's notation ("cuda" / "cu" / "CUDA"), the local-label templates naming
//     a combo ("cu{line:nodot}torch{torch}") and naming torch's own build ("cu{line:nodot}"),
//     the torch index pattern, the device section names, the driver rule and floors;
//   - target lists per accelerator line and farm platform ("linux", "windows", "linux_aarch64"),
//     the (line, torch-minor) exceptions (x86_64 and Windows only), per-package overrides;
//   - the PyTorch matrix of shipped cells: which (line, torch minor, Python) PyTorch publishes;
//   - the torch arch matrix: per platform, torch minor and line, the targets PyTorch built torch
//     itself for, with the source and date of each row (torch_archs);
//   - the torch family table (torch minor -> torchvision, torchaudio minors);
//   - the line PyTorch ships to PyPI per torch minor and platform;
//   - the fallback combo per CPU arch.
// Thread safety: a loaded Policy is immutable and may be shared between threads; DeviceRules
// implementations must be callable from several threads at once.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/model/platform.hpp"
#include "wheelfit/model/variant.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::semantics {

/// The backend's device-target grammar and coverage rule. Target lists and targets are text the
/// backend interprets ("7.5;8.0;9.0+PTX" and "9.0" for CUDA, "gfx90a;gfx1100" and "gfx90a:xnack-"
/// for ROCm); the core only stores and prints them.
class DeviceRules {
 public:
  virtual ~DeviceRules() = default;
  /// One device target as a user or a detection writes it -> its canonical text; an error
  /// (Errc::invalid_input) says why, without repeating the input.
  [[nodiscard]] virtual Expected<std::string> parse_target(std::string_view text) const = 0;
  /// A target list -> its canonical text; an error says why (naming the bad entry).
  [[nodiscard]] virtual Expected<std::string> parse_list(std::string_view text) const = 0;
  /// How a list's code runs on one canonical device target: not at all, natively, or by JIT
  /// (slow first launch); `via` is the list entry that serves it. An error for a malformed list
  /// or target.
  struct Match {
    enum class Kind { none, native, jit } kind = Kind::none;
    std::string via;
    [[nodiscard]] bool covers() const noexcept { return kind != Kind::none; }
  };
  [[nodiscard]] virtual Expected<Match> match(std::string_view list, std::string_view target) const = 0;
  /// The device code in one binary section the policy names (code_sections): a target list for
  /// match(), and the entries by kind as the backend names them ("sass": ["sm_90"], "ptx": [...]).
  /// Errc::unsupported when the backend reads no device code; Errc::invalid_input for bad bytes.
  struct DeviceCode {
    std::string list;
    std::vector<std::pair<std::string, std::vector<std::string>>> entries;
  };
  [[nodiscard]] virtual Expected<DeviceCode> read_code(std::string_view section, std::string_view bytes) const;
  /// Reads `length` bytes at `offset` of a section (0: its first byte) into `out`; the error
  /// says why they could not be read (naming the file and the offset).
  using SectionRead = std::function<Expected<void>(std::uint64_t offset, std::size_t length, unsigned char* out)>;
  /// read_code for a section of `size` bytes the caller does not hold (a library of gigabytes):
  /// the backend reads what it needs through `read` (its headers; plugin_abi.h
  /// read_device_code_at). This default reads the section whole through `read` and calls
  /// read_code. Errors: read_code's, and the first failed read's.
  [[nodiscard]] virtual Expected<DeviceCode> read_code_at(std::string_view section, std::uint64_t size,
                                                          const SectionRead& read) const;
  /// A target list described by kind, as read_code describes a section ("7.5;9.0+PTX" ->
  /// {"sass": ["sm_75", "sm_90"], "ptx": ["compute_90"]}); Errc::unsupported when the backend
  /// does not; Errc::invalid_input for a malformed list.
  [[nodiscard]] virtual Expected<DeviceCode> describe_list(std::string_view list) const;
  /// The backend's native PEP 825 variant provider (plugin_abi.h variant_properties): what the
  /// machine whose facts `facts_json` holds supports. Errc::unsupported when the backend
  /// provides no variant namespace; Errc::invalid_input when its answer is not the contract's.
  [[nodiscard]] virtual Expected<model::VariantSupport> variant_support(const std::string& facts_json) const;
};

/// The run-time errors a user meets when a demand fails, as the backend's runtime words them
/// (policy data; empty when the backend names none).
struct BackendErrors {
  std::string no_kernel;       ///< no code for the GPU ("CUDA error: no kernel image is available ...")
  std::string no_device;       ///< no GPU at all
  std::string driver_too_old;  ///< the driver cannot run the runtime
  std::string wrong_torch;     ///< the extension loaded into a torch that is not this backend's build
};

/// How the backend writes its accelerator line: the key of the demand and of JSON objects
/// ("cuda"), the prefix in combo strings ("cu" -> "cu12.8/torch2.8") and the name in prose ("CUDA").
struct LineNotation {
  std::string key;
  std::string prefix;
  std::string name;
};

/// "cu12.8/torch2.8": the prefix, the line, "/torch", the torch minor; "torch2.8" without a line.
std::string combo_str(const LineNotation& notation, const model::Combo& combo);
/// The inverse of combo_str ("cu12.8/torch2.8", the prefix in any case; the torch as major.minor).
/// Errc::invalid_input naming the text and the form expected.
Expected<model::Combo> parse_combo_str(const LineNotation& notation, std::string_view text);

/// One local-label template: literal text (matched case-insensitively) with the placeholders
/// {line} ("6.3", dotted), {line:nodot} ("128" -> 12.8: the last digit is the minor), {torch}
/// ("2.8", or dot-less "28" / "210": the first digit is the major) and a trailing "*" (any rest).
class LabelTemplate {
 public:
  /// Errc::invalid_input for an unknown placeholder, two placeholders in a row, or a template
  /// naming neither {line} nor {torch}.
  static Expected<LabelTemplate> parse(std::string_view text);
  struct Parts {
    std::optional<model::NumericVersion> line, torch;
  };
  /// The parts of `label` (no leading '+'), or nullopt when it does not match.
  [[nodiscard]] std::optional<Parts> match(std::string_view label) const;
  /// The label this template names for `combo` ("cu{line:nodot}torch{torch}" -> "cu128torch2.8";
  /// a trailing "*" writes nothing).
  [[nodiscard]] std::string render(const model::Combo& combo) const;
  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  [[nodiscard]] bool has_line() const noexcept;
  [[nodiscard]] bool has_torch() const noexcept;

 private:
  enum class Kind { literal, line, line_nodot, torch, rest };
  struct Piece {
    Kind kind;
    std::string text;  ///< literal text, lower case
  };
  std::string text_;
  std::vector<Piece> pieces_;
};

/// An arch (target) list with where it came from ("farm policy 12.8 (linux)", "exception 12.8/2.8",
/// "package sageattention, cuda 12.8 (arch_list_by_line)"). `list` is canonical (DeviceRules).
struct ArchSource {
  std::string list;
  std::string provenance;
};

/// One row of the torch arch matrix: the device targets PyTorch built one torch minor for, on one
/// line and platform (what torch's own kernels cover). `list` is canonical (DeviceRules); `source`
/// names where the row was read (a build script at a tag, a release matrix, a library's bytes)
/// and `date` when ("2026-08-22").
struct TorchArchRow {
  std::string list;
  std::string source;
  std::string date;
};

struct FamilyPins {
  model::NumericVersion torchvision;  ///< minor, e.g. 0.23
  model::NumericVersion torchaudio;   ///< minor, e.g. 2.8
};

struct MinDriver {
  model::NumericVersion linux_;
  model::NumericVersion windows;
};

/// Whether a machine's driver can run an accelerator line, as data.
enum class DriverRule {
  same_major,  ///< the driver's highest line must reach the line's major (minor-version compatibility)
  at_least,    ///< the driver's highest line must be >= the line
  unknown,     ///< the backend cannot tell: reported as not checked
};

class Policy {
 public:
  // --- the backend's notation and grammar
  [[nodiscard]] const LineNotation& notation() const noexcept { return t_.notation; }
  /// semantics::combo_str with this backend's notation.
  [[nodiscard]] std::string combo_str(const model::Combo& combo) const { return semantics::combo_str(t_.notation, combo); }
  /// The combo a wheel's local label names (a leading '+' is optional; case-insensitive), by
  /// the first combo template that matches; nullopt when it names none.
  [[nodiscard]] std::optional<model::Combo> parse_combo_label(std::string_view local_label) const;
  /// The line a torch build's own label names ("+cu128" -> 12.8, "+rocm6.3" -> 6.3), by the
  /// first torch-label template that matches; nullopt when the label is not this backend's.
  [[nodiscard]] std::optional<model::NumericVersion> parse_torch_label(std::string_view local_label) const;
  /// The combo templates and torch-label templates, as written (for listings).
  [[nodiscard]] const std::vector<LabelTemplate>& combo_labels() const noexcept { return t_.combo_labels; }
  [[nodiscard]] const std::vector<LabelTemplate>& torch_labels() const noexcept { return t_.torch_labels; }
  /// What a device target is called in prose ("GPU arch", "gfx target"), and what precedes the
  /// machine's targets in a verdict ("sm " -> "sm 8.6"; "" -> "gfx803").
  [[nodiscard]] const std::string& device_name() const noexcept { return t_.device_name; }
  [[nodiscard]] const std::string& device_prefix() const noexcept { return t_.device_prefix; }
  /// The ELF/PE sections holding device code (".nv_fatbin"); empty when the backend names none.
  [[nodiscard]] const std::vector<std::string>& code_sections() const noexcept { return t_.code_sections; }
  /// The backend's runtime library a binary links, as DT_NEEDED patterns ("libcudart.so.{major}").
  [[nodiscard]] const std::vector<std::string>& runtime_libraries() const noexcept { return t_.runtime_libraries; }
  /// The line major a DT_NEEDED name links by those patterns ("libcudart.so.12" -> 12); nullopt
  /// when it is not the backend's runtime.
  [[nodiscard]] std::optional<std::uint32_t> runtime_major(std::string_view needed) const;
  [[nodiscard]] const BackendErrors& errors() const noexcept { return t_.errors; }
  /// The device rules; nullptr when the policy was read without them (lists are then kept as
  /// written and gpu coverage cannot be judged).
  [[nodiscard]] const DeviceRules* rules() const noexcept { return t_.rules.get(); }

  // --- the driver
  [[nodiscard]] DriverRule driver_rule() const noexcept { return t_.driver_rule; }
  /// Why the driver cannot be judged (DriverRule::unknown), as the policy says it.
  [[nodiscard]] const std::string& driver_why() const noexcept { return t_.driver_why; }
  /// Minimum driver for a line's major; nullopt when unknown.
  [[nodiscard]] std::optional<MinDriver> min_driver(std::uint32_t line_major) const;

  // --- target lists
  /// The list the farm built `package` (PEP 503 name) with for `combo` on `platform` (farm
  /// key). Order: the package's override for that line and platform family, the package's
  /// override for all lines, the (line/torch-minor) exception (not on aarch64), the platform's
  /// row. nullopt when the policy has no row (not built there).
  [[nodiscard]] std::optional<ArchSource> arch_list(std::string_view package, const model::Combo& combo,
                                                    std::string_view platform) const;
  /// The farm's default list for the combo, without package overrides (used to judge a fallback
  /// combo): the (line/torch-minor) exception (not on aarch64), else the platform's row.
  [[nodiscard]] std::optional<ArchSource> platform_arch_list(const model::Combo& combo,
                                                             std::string_view platform) const;

  // --- PyTorch
  /// Whether PyTorch published torch `combo.torch` (any patch release) for line `combo.line`,
  /// CPython `python` (major.minor) and farm platform `platform`.
  [[nodiscard]] bool pytorch_shipped(const model::Combo& combo, const model::NumericVersion& python,
                                     std::string_view platform) const;
  /// Every cell PyTorch shipped, as (combo, python, platform), sorted by line, torch minor,
  /// Python, then platform. For tools (the farm generator).
  struct Cell {
    model::Combo combo;
    model::NumericVersion python;
    std::string platform;
  };
  [[nodiscard]] const std::vector<Cell>& shipped_cells() const noexcept { return t_.cells; }
  /// The torch arch matrix: the targets PyTorch built torch `torch` (its minor is used) for, on
  /// `line` and farm platform `platform`, with where that came from; nullopt when no source gives
  /// the row (unknown: never guessed from a neighbour).
  [[nodiscard]] std::optional<TorchArchRow> torch_archs(const model::NumericVersion& torch,
                                                        const model::NumericVersion& line,
                                                        std::string_view platform) const;
  /// Every row, keyed platform -> torch minor -> line key (for listings and tools).
  using TorchArchTable = std::map<std::string, std::map<std::string, std::map<std::string, TorchArchRow>>>;
  [[nodiscard]] const TorchArchTable& torch_arch_table() const noexcept { return t_.torch_archs; }
  /// torchvision / torchaudio minors for a torch minor; nullopt when the table lacks it.
  [[nodiscard]] std::optional<FamilyPins> torch_family(const model::NumericVersion& torch_minor) const;
  /// The line of the torch build PyPI serves for `torch_minor` on `platform`; nullopt when
  /// unknown or when PyPI's build there is not this backend's.
  [[nodiscard]] std::optional<model::NumericVersion> pypi_line(const model::NumericVersion& torch_minor,
                                                               std::string_view platform) const;
  /// The fallback combo for a CPU arch ("x86_64", "aarch64"); nullopt when none.
  [[nodiscard]] std::optional<model::Combo> fallback_combo(std::string_view cpu_arch) const;
  /// Every fallback combo, keyed by normalised CPU arch ("aarch64", "x86_64").
  [[nodiscard]] const std::map<std::string, model::Combo>& fallback_combos() const noexcept { return t_.fallback; }
  /// The PyTorch index for a line: the pattern with {line} ("6.3") and {line_nodot} ("128")
  /// (expand_torch_index).
  [[nodiscard]] std::string torch_index_url(const model::NumericVersion& line) const;
  [[nodiscard]] const std::string& torch_index_pattern() const noexcept { return t_.torch_index_pattern; }

  /// Where this policy came from ("<plugin> (built-in policy)", or the file path) and its
  /// "version" field.
  [[nodiscard]] const std::string& source() const noexcept { return t_.source; }
  [[nodiscard]] const std::string& version() const noexcept { return t_.version; }

  /// One package's own target lists (the policy's `packages` section).
  struct PackageOverride {
    std::optional<std::string> all;                    ///< arch_list (x86_64 + Windows)
    std::optional<std::string> all_aarch64;            ///< arch_list_aarch64
    std::map<std::string, std::string> by_line;        ///< arch_list_by_line (x86_64 + Windows)
    std::map<std::string, std::string> by_line_aarch64;
  };
  /// What a policy holds, as a reader of the policy format fills it (policies/: format 2, whose
  /// parser also checks the tables against each other). A Policy is built from it once and never
  /// changes.
  struct Tables {
    std::string source, version;
    LineNotation notation;
    std::vector<LabelTemplate> combo_labels, torch_labels;
    std::string device_name, device_prefix;
    std::vector<std::string> code_sections, runtime_libraries;
    BackendErrors errors;
    std::shared_ptr<const DeviceRules> rules;
    DriverRule driver_rule = DriverRule::unknown;
    std::string driver_why;
    std::map<std::uint32_t, MinDriver> min_driver;
    std::map<std::string, std::map<std::string, std::string>> arch_policy;  ///< platform -> line -> list
    std::map<std::string, std::string> arch_exceptions;                      ///< "12.8/2.8" -> list
    std::map<std::string, PackageOverride> packages;
    std::vector<Cell> cells;
    std::map<std::string, FamilyPins> family;                                 ///< "2.8" -> pins
    /// platform -> torch minor ("2.8") -> line key ("12.8") -> row; optional in the format.
    std::map<std::string, std::map<std::string, std::map<std::string, TorchArchRow>>> torch_archs;
    std::map<std::string, std::map<std::string, model::NumericVersion>> pypi_line;  ///< platform -> torch -> line
    std::map<std::string, model::Combo> fallback;                             ///< arch -> combo
    std::string torch_index_pattern;
  };
  explicit Policy(Tables tables) : t_(std::move(tables)) {}
  [[nodiscard]] const Tables& tables() const noexcept { return t_; }

 private:
  Tables t_;
};

/// The key of an accelerator line in the tables: its components, at least major.minor, without
/// trailing zeros past the minor ("12.8", "6.2.4"; 12.8.0 is "12.8").
std::string line_key(const model::NumericVersion& line);

/// A torch index URL pattern (the policy's, or `mirror --torch-index`) for `line`: {line} ("12.8")
/// and {line_nodot} ("128") replaced.
[[nodiscard]] std::string expand_torch_index(std::string pattern, const model::NumericVersion& line);

}  // namespace wheelfit::semantics
