#pragma once
// `wheelfit explain` and `wheelfit doctor`: the seven demands judged from a wheel's name AND its
// binaries (zip -> extension modules -> ELF/PE -> fatbinaries), against one machine. Coverage of
// GPU archs follows the backend's coverage rule (CUDA's: SASS sm_XY runs on sm_XZ, Z >= Y, same major; PTX
// compute_XY JIT-compiles for any later arch; arch-specific a/f variants never move forward).
// Each failed demand carries the error the user would otherwise meet at run time.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/inspect/binary.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"

namespace wheelfit::inspect {

enum class Verdict { ok, fails, unknown };
std::string_view to_string(Verdict v) noexcept;

struct DemandReport {
  std::string name;        ///< the demand's name as the backend calls it ("cuda" for Demand::line)
  resolve::Demand demand;
  std::string wheel;    ///< what the wheel requires, from its name and binaries ("sm_80, sm_90 (SASS), compute_90 (PTX)")
  std::string machine;  ///< what the machine has ("sm_120 (RTX 5090)" / "glibc 2.31")
  Verdict verdict = Verdict::unknown;
  std::string detail;   ///< why; when it fails, the run-time error ("no kernel image is available for execution on the device")
};

struct FileReport {
  std::string path;                  ///< the member's path in the wheel, or the installed file
  std::optional<BinaryInfo> info;    ///< when it parsed
  std::string error;                 ///< when it did not
  std::optional<ExtensionSuffix> suffix;
  /// Its device code as the backend read it (info's device sections): the target list ("" for
  /// none) and the entries by kind ({"sass": ["sm_90"], "ptx": [...]} for CUDA).
  semantics::DeviceRules::DeviceCode device;
};

struct Explanation {
  std::string wheel;                   ///< the wheel's file name
  std::vector<DemandReport> demands;   ///< all seven in resolve::all_demands() order, and variant for a variant wheel (PEP 825)
  std::vector<FileReport> files;       ///< one per extension module read
  std::vector<std::string> warnings;   ///< the tag claims less than the binary needs, ...
  bool binaries_read = false;          ///< false: judged on the name alone
  std::uint64_t bytes_fetched = 0, wheel_size = 0;
  bool downloaded_whole = false;
  /// A variant wheel's properties as its own *.dist-info/variant.json gives its label
  /// ("ns :: feature :: value"); nullopt when that file was not read or does not list the label.
  std::optional<std::vector<std::string>> variant_properties;
  [[nodiscard]] bool fits() const;     ///< no demand fails
  /// What was read, in words: "a local wheel of 846 bytes" (`remote` false: a local source counts
  /// every read, the same bytes again too, so no share of the file is claimed); "12345 of 98765
  /// bytes fetched"; "the whole 846-byte wheel fetched" (all of it, or the server ignored Range).
  [[nodiscard]] std::string read_text(bool remote) const;
};

/// Judges the file name alone (a bare wheel name). Errc::invalid_input for a bad wheel name.
Expected<Explanation> explain_name(std::string_view filename, const machine::Machine& machine,
                                   const semantics::Policy& policy);

/// Reads the wheel's central directory and every extension module (*.so, *.pyd; members of
/// other kinds are not fetched), then judges name + binaries. Errors: the zip reader's.
Expected<Explanation> explain_wheel(ByteSource& source, std::string_view filename, const machine::Machine& machine,
                                    const semantics::Policy& policy, const ZipLimits& limits = {});

}  // namespace wheelfit::inspect
