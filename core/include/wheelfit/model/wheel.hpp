#pragma once
// PEP 427 wheel file names and PEP 425 / PEP 600 tag compatibility.
//
//   {distribution}-{version}(-{build})?-{python}-{abi}-{platform}(-{variant label})?.whl
// (the variant label: PEP 825, ^[0-9a-z_.]{1,16}$, "null" for the variant without properties).
// Each tag field may be a compressed set joined by '.' ("manylinux_2_24_x86_64.manylinux_2_28_x86_64",
// "py2.py3"); the expanded tag set is the cartesian product.

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/model/platform.hpp"
#include "wheelfit/model/version.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::model {

/// One platform tag, understood.
struct PlatformTag {
  enum class Kind {
    any,          ///< "any"
    manylinux,    ///< manylinux_X_Y_arch, and legacy manylinux1 (2.5), manylinux2010 (2.12), manylinux2014 (2.17)
    musllinux,    ///< musllinux_X_Y_arch
    linux_plain,  ///< linux_arch: an unrepaired build, accepted on Linux but ranked below manylinux
    windows,      ///< win_amd64, win_arm64, win32
    macos,        ///< macosx_X_Y_arch
    unknown,      ///< anything else (kept, never compatible)
  };
  std::string tag;                      ///< as written
  Kind kind = Kind::unknown;
  std::optional<Os> os;                 ///< nullopt for any/unknown
  std::string cpu_arch;                 ///< canonical ("x86_64", "aarch64", "i686", "universal2"...); empty for any
  std::optional<NumericVersion> libc;   ///< glibc floor (manylinux) or musl floor (musllinux) or macOS floor
};

/// Understands one platform tag. Never fails: unknown shapes come back as Kind::unknown.
PlatformTag parse_platform_tag(std::string_view tag);

/// One python tag ("cp312", "cp313t" is not valid here: free-threading is an ABI flag, see AbiTag).
struct PythonTag {
  std::string tag;           ///< as written: "cp312", "py3", "py312"
  std::string impl;          ///< "cp", "py", "pp", ...
  std::optional<NumericVersion> version;  ///< 3.12 for "cp312", 3 for "py3"; nullopt if unparseable
};
PythonTag parse_python_tag(std::string_view tag);

struct WheelName {
  std::string filename;                 ///< as given
  std::string distribution;             ///< as written in the file name ("flash_attn")
  std::string name;                     ///< PEP 503 normalised ("flash-attn")
  Version version;                      ///< local label included
  std::optional<std::string> build;     ///< build tag, when present
  std::vector<std::string> python_tags; ///< expanded ("py2.py3" -> {"py2","py3"})
  std::vector<std::string> abi_tags;    ///< expanded ("cp312", "abi3", "none", "cp313t")
  std::vector<PlatformTag> platforms;   ///< expanded, in file-name order
  std::optional<std::string> variant_label;  ///< PEP 825: "cu128", "null"; nullopt for a non-variant wheel

  /// Parses a wheel file name (a basename; URL-decoded by the caller). Six '-' fields are a build
  /// tag when the third starts with a digit, else a variant label; seven are both. Errors are
  /// Errc::invalid_input quoting the name: not ending in ".whl", wrong number of '-' fields,
  /// an invalid distribution name, an invalid PEP 440 version, a build tag not starting with a
  /// digit, an empty tag field, a variant label outside ^[0-9a-z_.]{1,16}$.
  static Expected<WheelName> parse(std::string_view filename);
};

/// The suffix of a package version's PEP 825 variants file, "{name}-{version}-variants.json".
inline constexpr std::string_view kVariantsFileSuffix = "-variants.json";
/// "{name}-{version}-variants.json" -> (normalised name, version); nullopt for another shape.
std::optional<std::pair<std::string, Version>> variants_file_name(std::string_view filename);

/// The longest variant label PEP 825 allows.
inline constexpr std::size_t kMaxVariantLabel = 16;
/// Why `label` is not a PEP 825 variant label (^[0-9a-z_.]{1,16}$), naming it; empty when it is one.
std::string variant_label_error(std::string_view label);

/// PEP 427's order of build tags, the tie-breaker between files equal in all else: a file without
/// one sorts first (an empty tuple), then (the leading digits as a number, the rest as a string),
/// so "1" < "1a" < "2" < "10". Digits of any length compare as numbers ("01" == "1").
[[nodiscard]] std::strong_ordering compare_build_tags(const std::optional<std::string>& a,
                                                      const std::optional<std::string>& b) noexcept;

/// The interpreter a wheel must load into.
struct PythonTarget {
  NumericVersion version;      ///< major.minor, e.g. 3.12
  bool free_threaded = false;  ///< a "3.13t" build
  /// "cp312" / "cp313t".
  [[nodiscard]] std::string tag() const;
};

/// PEP 425 for CPython: the rank (0 = best) of the best (python, abi) pair the wheel offers that
/// the target supports, in pip's order (packaging.tags.cpython_tags, then compatible_tags):
///   cpXY-cpXY[t] (cpXYm before 3.8), cpXY-abi3, cpXY-none, cpX(Y-1)-abi3 .. cp32-abi3, pyXY-none,
///   pyX-none, pyX(Y-1)..pyX0-none; abi3 never for free-threaded targets. nullopt when none is
///   supported. Wheels for other implementations (pp, ip) never match. Tags compare
///   case-insensitively; "cp31" is Python 3.1, never 3.10.
std::optional<int> python_rank(const WheelName& wheel, const PythonTarget& target);

/// The machine facts the platform demands are judged against.
struct PlatformTarget {
  Os os;
  std::string cpu_arch;                  ///< canonical
  std::optional<NumericVersion> glibc;   ///< nullopt = unknown (the floor is then not checked)
};

/// Which platform demand a tag fails, or its rank when it fits.
struct PlatformFit {
  bool os_ok = false;
  bool cpu_ok = false;
  bool glibc_ok = false;    ///< true also when the floor is unknown or irrelevant
  /// The libc demand was judged against a known machine fact. A musllinux tag always fails
  /// (glibc_ok false, glibc_checked true): wheelfit's Linux targets are glibc machines.
  bool glibc_checked = false;
  /// 0 is best. Among manylinux tags a higher glibc floor ranks better (pip's order);
  /// linux_plain ranks below every manylinux tag; "any" ranks last. Ranks only order the tags
  /// of one target; their values mean nothing else.
  int rank = 0;
  /// Which of the wheel's platform tags this fit describes (set by best_platform_fit; nullptr
  /// for a wheel without platform tags). Points into the WheelName judged.
  const PlatformTag* tag = nullptr;
  [[nodiscard]] bool ok() const noexcept { return os_ok && cpu_ok && glibc_ok; }
};

/// Judges one platform tag against the target.
PlatformFit platform_fit(const PlatformTag& tag, const PlatformTarget& target);

/// The best fit among the wheel's platform tags (an ok() fit wins, then lower rank); for a wheel
/// that fits nowhere, the fit of the tag that failed the fewest demands (so reports can say
/// what failed).
PlatformFit best_platform_fit(const WheelName& wheel, const PlatformTarget& target);

}  // namespace wheelfit::model
