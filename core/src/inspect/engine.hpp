#pragma once
// The judging engine shared by explain (a wheel: its name and its members) and doctor (an
// installed distribution: its dist-info and its files). Private to the inspect component.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/model/combo.hpp"
#include "wheelfit/model/wheel.hpp"

namespace wheelfit::inspect::detail {

/// What is judged: the tags (a wheel name, or one rebuilt from an installed WHEEL file), the
/// combo of the local label, and the binaries read.
struct Subject {
  std::string display;                   ///< the wheel file name, or "name version"
  std::string package;                   ///< PEP 503 name (for the policy's per-package arch lists)
  std::optional<model::WheelName> wheel; ///< nullopt: no tags known
  std::optional<model::Combo> combo;     ///< from the local version label
  std::optional<model::NumericVersion> label_line;  ///< a label naming only a line, by the torch-label grammar
  std::vector<FileReport> files;
  bool binaries_read = false;
  /// A variant wheel's properties (PEP 825): its *.dist-info/variant.json, or the index's
  /// variants file; nullptr with the reason when neither was read.
  std::shared_ptr<const model::VariantsFile> variants = {};
  std::string variants_problem = {};
};

/// Reads each parsed file's device sections with the policy's backend (FileReport::device); a
/// section it cannot read is a warning.
void read_device_code(std::vector<FileReport>& files, const semantics::Policy& policy, std::vector<std::string>& warnings);

/// Adds one section's device code to `into`: its list after the lists before it (';'), its
/// entries after theirs, each once.
void add_device_code(semantics::DeviceRules::DeviceCode& into, semantics::DeviceRules::DeviceCode code);

/// Judges all seven demands (and variant, for a variant wheel), in resolve::all_demands() order, and collects the warnings.
Explanation judge(Subject subject, const machine::Machine& machine, const semantics::Policy& policy);

/// The subject of a wheel name (no binaries yet).
Subject subject_from_name(model::WheelName wheel, const semantics::Policy& policy);

/// True for a member or file judged as a binary: "*.so", "*.so.N..." and "*.pyd".
bool is_binary_member(std::string_view path);

/// The last component of a member path ("pkg/_C.so" -> "_C.so"; '/' or '\\').
std::string basename(std::string_view path);

}  // namespace wheelfit::inspect::detail
