#pragma once
// `wheelfit doctor`: every installed distribution of an interpreter's site folders whose RECORD
// lists compiled modules (*.so, *.so.N, *.pyd), judged on the seven demands by the same engine
// as `wheelfit explain`: the tags come from the dist-info's WHEEL file (its Tag lines), the
// combo from the version's local label (METADATA), and the binaries from the installed files.
// Thread safety: reentrant; it only reads files.

#include <cstdint>
#include <string>
#include <vector>

#include "wheelfit/inspect/explain.hpp"

namespace wheelfit::inspect {

struct DoctorOptions {
  /// Files above this size are not read whole: torch's own libtorch_cuda.so is gigabytes. Their
  /// headers and device code are read by offset (library.hpp: a few kilobytes), and a note says
  /// what was not read (their libraries, symbols, glibc floor).
  std::uint64_t max_file = 512ull << 20;
};

/// One installed distribution with compiled files.
struct DistReport {
  std::string name;       ///< PEP 503 normalised ("flash-attn")
  std::string version;    ///< as its METADATA says ("2.8.3+cu128torch2.8")
  std::string dist_info;  ///< the .dist-info folder
  std::string site_dir;   ///< the site folder holding it
  std::vector<std::string> modules;  ///< the compiled files judged, as RECORD names them
  Explanation explanation;           ///< all seven demands; files, warnings
  [[nodiscard]] bool fits() const { return explanation.fits(); }
};

struct DoctorReport {
  std::vector<std::string> site_dirs;  ///< the folders walked, in order
  std::size_t distributions = 0;       ///< dist-info folders seen (with or without compiled files)
  std::vector<DistReport> dists;       ///< those with compiled files, by site dir then name
  std::vector<std::string> notes;      ///< a RECORD missing or unreadable, a file skipped, a shadowed copy
  [[nodiscard]] bool ok() const;       ///< no distribution fails a demand
};

/// Walks `site_dirs` (*.dist-info/RECORD; a distribution found in an earlier folder shadows the
/// same name in a later one, as imports do). A site folder that does not exist is a note;
/// Errc::not_found when none of them exists.
Expected<DoctorReport> doctor(const std::vector<std::string>& site_dirs, const machine::Machine& machine,
                              const semantics::Policy& policy, const DoctorOptions& options = {});

}  // namespace wheelfit::inspect
