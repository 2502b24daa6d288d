#pragma once
// ROCm device targets: the gfx target-id grammar and the rule for "does this code object run on
// this device". Source: LLVM's AMDGPUUsage (llvm/docs/AMDGPUUsage.rst), sections "Target ID",
// "Target Features" and "Generic processors"; the same feature rule as clang's
// isCodeObjectCompatible (clang/lib/Driver/OffloadBundler.cpp).
//
// Grammar accepted by parse_target (any case, surrounding whitespace ignored):
//   [amdgcn-amd-amdhsa--] processor ( ":" feature ("+" | "-") )*
//   processor := "gfx" 3-4 hex digits, the first a decimal digit      gfx803, gfx90a, gfx1100
//              | "gfx" N ("-" N)* "-generic"  (N decimal)               gfx9-generic, gfx9-4-generic
//   feature   := "sramecc" | "xnack", each at most once
// The canonical form is lower case, without the triple, features in LLVM's alphabetic order:
// "gfx90a:sramecc+:xnack-". A processor is checked for its shape only, so newer processors
// parse; which features a processor supports is not checked.
//
// Everything here is a pure function over its arguments: reentrant and thread-safe. Bad input is
// reported in the result, never thrown; only std::bad_alloc can escape.

#include <string>
#include <string_view>

namespace wheelfit::backends::rocm {

/// The result of parsing one target or a list of them.
struct TargetParse {
  bool ok = false;
  std::string canonical;  ///< "gfx90a:sramecc+:xnack-"; a list is ';'-joined. "" when !ok.
  std::string error;      ///< what is wrong, with an example of a good target. "" when ok.
};

/// One gfx target id (see the grammar above), e.g. "gfx90a", "GFX942:xnack-",
/// " amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack- ".
[[nodiscard]] TargetParse parse_target(std::string_view text);

/// Targets separated by ';' and/or whitespace ("gfx90a;gfx942 gfx1100"); empty entries between
/// separators are skipped. Canonical: the canonical targets ';'-joined in input order, duplicates
/// (after canonicalisation) removed. An empty list, or any bad entry (named in the error), fails.
[[nodiscard]] TargetParse parse_target_list(std::string_view text);

/// The answer of match().
struct Match {
  int how = -1;     ///< 1: some code object runs on the device; 0: none does; -1: malformed input
  std::string via;  ///< how == 1: the chosen entry (canonical); 0: ""; -1: the parse error
};

/// Whether some code object of `list` (parse_target_list) runs on `device` (parse_target; a
/// real processor, not a generic one). An entry runs on the device when
///   - its processor is the device's, or it is a generic processor whose supported processors
///     (AMDGPUUsage "Generic processors" table) include the device's; and
///   - for sramecc and xnack each: the entry leaves the feature unspecified ("any", runs with
///     either setting), or it specifies the same setting as the device. A device that does not
///     state a setting ("gfx90a") is matched only by entries that leave it unspecified: its
///     real setting is unknown, so "gfx90a:xnack-" is not claimed to run on it.
/// `via` prefers an exact-processor entry over a generic one, then the first in list order.
/// Not checked: a generic code object's version (ELF e_flags, not part of a target id), which
/// must be at least the version that added the device to the generic processor.
[[nodiscard]] Match match(std::string_view list, std::string_view device);

}  // namespace wheelfit::backends::rocm
