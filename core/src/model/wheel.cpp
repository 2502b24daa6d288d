// PEP 427 wheel names, PEP 425 python/abi ranking (pip's order for CPython) and PEP 600 /
// PEP 656 platform tags. Hand-written scanning: this runs on every anchor of an index.

#include "wheelfit/model/wheel.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <utility>

#include "wheelfit/model/name.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::model {
namespace {

using util::ascii::all_digits;
using util::ascii::is_alpha;
using util::ascii::is_digit;
using util::ascii::to_lower;
constexpr bool is_tag_char(char c) noexcept { return is_digit(c) || is_alpha(c) || c == '_'; }
constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Splits on `sep`, keeping empty pieces.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto at = s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

// "2_28_x86_64" -> (2.28, "x86_64"): the floor and arch of manylinux_/musllinux_/macosx_ tags.
struct FloorArch {
  NumericVersion floor;
  std::string_view arch;
};
std::optional<FloorArch> parse_floor_arch(std::string_view rest) {
  const auto u1 = rest.find('_');
  if (u1 == std::string_view::npos) return std::nullopt;
  const auto u2 = rest.find('_', u1 + 1);
  if (u2 == std::string_view::npos) return std::nullopt;
  const std::string_view major = rest.substr(0, u1);
  const std::string_view minor = rest.substr(u1 + 1, u2 - u1 - 1);
  const std::string_view arch = rest.substr(u2 + 1);
  if (!all_digits(major) || !all_digits(minor) || arch.empty()) return std::nullopt;
  auto v = NumericVersion::parse(std::string(major) + "." + std::string(minor));
  if (!v) return std::nullopt;
  return FloorArch{std::move(*v), arch};
}

// Every arch spelling in a tag is lower-case letters, digits and '_' (checked by the caller).
bool valid_arch(std::string_view arch) noexcept {
  return !arch.empty() && std::all_of(arch.begin(), arch.end(), [](char c) { return is_tag_char(c); });
}

// macOS multi-arch tags and the CPUs they carry code for (packaging's _mac_binary_formats).
bool mac_arch_runs_on(std::string_view wheel_arch, std::string_view cpu) noexcept {
  if (wheel_arch == cpu) return true;
  struct Row {
    std::string_view fat;
    std::array<std::string_view, 3> cpus;
  };
  static constexpr std::array<Row, 6> rows{{
      {"universal2", {"x86_64", "aarch64", ""}},
      {"intel", {"x86_64", "i386", "i686"}},
      {"fat64", {"x86_64", "ppc64", ""}},
      {"fat32", {"i386", "i686", "ppc"}},
      {"fat3", {"x86_64", "i386", "i686"}},
      {"universal", {"x86_64", "i386", "i686"}},
  }};
  for (const auto& r : rows) {
    if (r.fat != wheel_arch) continue;
    return std::find(r.cpus.begin(), r.cpus.end(), cpu) != r.cpus.end() && !cpu.empty();
  }
  return false;
}

// Ranks (0 = best). Only their order matters; they are comparable within one target.
constexpr int kWindowsRank = 0;
constexpr int kFloorRankBase = 100000;           // manylinux/musllinux/macOS: base - floor key
constexpr int kLinuxPlainRank = kFloorRankBase + 1;  // below every manylinux tag
constexpr int kMacRankBase = 2 * kFloorRankBase + 2;
constexpr int kAnyRank = 1000000;
constexpr int kUnknownRank = 2000000;

// A higher floor ranks better: 2.28 -> base - 2028, 2.5 -> base - 2005.
int floor_rank(const NumericVersion& floor) noexcept {
  const int key = static_cast<int>(std::min<std::uint32_t>(floor.major(), 99) * 1000 + std::min<std::uint32_t>(floor.minor(), 999));
  return kFloorRankBase - key;
}

}  // namespace

PlatformTag parse_platform_tag(std::string_view tag) {
  PlatformTag out;
  out.tag = std::string(tag);
  const std::string t = util::ascii_lower(tag);
  const std::string_view v(t);
  if (!valid_arch(v)) return out;  // empty, or characters no platform tag has
  if (v == "any") {
    out.kind = PlatformTag::Kind::any;
    return out;
  }

  struct Legacy {
    std::string_view prefix;
    std::uint32_t minor;
  };
  static constexpr std::array<Legacy, 3> legacy{{
      {"manylinux1_", 5},
      {"manylinux2010_", 12},
      {"manylinux2014_", 17},
  }};
  for (const auto& l : legacy) {
    if (v.starts_with(l.prefix) && v.size() > l.prefix.size()) {
      out.kind = PlatformTag::Kind::manylinux;
      out.os = Os::linux_;
      out.cpu_arch = normalize_cpu_arch(v.substr(l.prefix.size()));
      out.libc = NumericVersion({2, l.minor});
      return out;
    }
  }

  if (v.starts_with("manylinux_") || v.starts_with("musllinux_")) {
    auto fa = parse_floor_arch(v.substr(10));
    if (!fa) return out;
    out.kind = v.starts_with("manylinux_") ? PlatformTag::Kind::manylinux : PlatformTag::Kind::musllinux;
    out.os = Os::linux_;
    out.cpu_arch = normalize_cpu_arch(fa->arch);
    out.libc = std::move(fa->floor);
    return out;
  }
  if (v.starts_with("macosx_")) {
    auto fa = parse_floor_arch(v.substr(7));
    if (!fa) return out;
    out.kind = PlatformTag::Kind::macos;
    out.os = Os::macos;
    out.cpu_arch = normalize_cpu_arch(fa->arch);
    out.libc = std::move(fa->floor);
    return out;
  }
  // The tags with no floor: an OS and a CPU arch.
  const auto plain = [&out](PlatformTag::Kind kind, Os os, std::string cpu_arch) {
    out.kind = kind;
    out.os = os;
    out.cpu_arch = std::move(cpu_arch);
    return out;
  };
  if (v.starts_with("linux_") && v.size() > 6) return plain(PlatformTag::Kind::linux_plain, Os::linux_, normalize_cpu_arch(v.substr(6)));
  if (v == "win32") return plain(PlatformTag::Kind::windows, Os::windows, "i686");
  if (v.starts_with("win_") && v.size() > 4) return plain(PlatformTag::Kind::windows, Os::windows, normalize_cpu_arch(v.substr(4)));
  return out;
}

PythonTag parse_python_tag(std::string_view tag) {
  PythonTag out;
  out.tag = std::string(tag);
  std::size_t i = 0;
  while (i < tag.size() && is_alpha(tag[i])) ++i;
  out.impl = util::ascii_lower(tag.substr(0, i));
  const std::string_view digits = tag.substr(i);
  if (out.impl.empty() || !all_digits(digits)) return out;
  // The first digit is the major: "cp312" -> 3.12, "cp31" -> 3.1, "py3" -> 3.
  std::string dotted(1, digits[0]);
  if (digits.size() > 1) {
    dotted += '.';
    dotted += digits.substr(1);
  }
  if (auto v = NumericVersion::parse(dotted)) out.version = std::move(*v);
  return out;
}

std::string variant_label_error(std::string_view label) {
  const std::string quoted = "the variant label '" + std::string(label) + "'";
  if (label.empty()) return "the variant label is empty";
  if (label.size() > kMaxVariantLabel) return quoted + " is longer than 16 characters";
  if (!std::all_of(label.begin(), label.end(), [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' || c == '.'; })) {
    return quoted + " holds characters other than 0-9, a-z, '_', '.'";
  }
  return {};
}

Expected<WheelName> WheelName::parse(std::string_view filename) {
  auto bad = [&](const std::string& why) {
    return unexpected(Errc::invalid_input, "'" + std::string(filename) + "' is not a valid wheel file name: " + why);
  };
  constexpr std::string_view kSuffix = ".whl";
  if (!filename.ends_with(kSuffix)) return bad("it does not end in \".whl\"");
  const std::string_view stem = filename.substr(0, filename.size() - kSuffix.size());

  const auto fields = split(stem, '-');
  if (fields.size() < 5 || fields.size() > 7) {
    return bad("it has " + std::to_string(fields.size()) +
               " '-'-separated fields; expected 5 to 7 (name-version[-build]-python-abi-platform[-variant label])");
  }

  WheelName w;
  w.filename = std::string(filename);
  const std::string_view dist = fields[0];
  if (dist.empty()) return bad("the distribution name is empty");
  if (!is_valid_name(dist)) return bad("invalid distribution name '" + std::string(dist) + "'");
  w.distribution = std::string(dist);
  w.name = normalize_name(dist);

  const std::string_view version = fields[1];
  if (version.empty()) return bad("the version is empty");
  if (std::any_of(version.begin(), version.end(), [](char c) { return is_space(c); })) {
    return bad("the version '" + std::string(version) + "' contains whitespace");
  }
  auto parsed = Version::parse(version);
  if (!parsed) return bad("invalid version: " + parsed.error().message);
  w.version = std::move(*parsed);

  // PEP 825: six fields are a build tag when the third starts with a digit (a python tag never
  // does; an empty one is read as an empty build tag), else a variant label after the platform;
  // seven are both.
  const bool has_build = fields.size() == 7 || (fields.size() == 6 && (fields[2].empty() || is_digit(fields[2].front())));
  const bool has_label = fields.size() == 7 || (fields.size() == 6 && !has_build);
  std::size_t next = 2;
  if (has_build) {
    const std::string_view build = fields[2];
    if (build.empty()) return bad("the build tag is empty");
    if (!is_digit(build.front())) return bad("the build tag '" + std::string(build) + "' does not start with a digit");
    if (!std::all_of(build.begin(), build.end(), [](char c) { return is_tag_char(c) || c == '.'; })) {
      return bad("the build tag '" + std::string(build) + "' holds characters other than letters, digits, '_', '.'");
    }
    w.build = std::string(build);
    next = 3;
  }
  if (has_label) {
    const std::string_view label = fields.back();
    if (auto why = variant_label_error(label); !why.empty()) return bad(why);
    w.variant_label = std::string(label);
  }

  static constexpr std::array<std::string_view, 3> kWhat{"python", "abi", "platform"};
  std::array<std::vector<std::string>, 3> tags;
  for (std::size_t f = 0; f < 3; ++f) {
    const std::string_view field = fields[next + f];
    const std::string what(kWhat[f]);
    if (field.empty()) return bad("the " + what + " tag field is empty");
    for (const std::string_view t : split(field, '.')) {
      if (t.empty()) return bad("the " + what + " tag set '" + std::string(field) + "' has an empty tag");
      if (!std::all_of(t.begin(), t.end(), [](char c) { return is_tag_char(c); })) {
        return bad("the " + what + " tag '" + std::string(t) + "' holds characters other than letters, digits, '_'");
      }
      tags[f].emplace_back(t);
    }
  }
  w.python_tags = std::move(tags[0]);
  w.abi_tags = std::move(tags[1]);
  w.platforms.reserve(tags[2].size());
  for (const auto& p : tags[2]) w.platforms.push_back(parse_platform_tag(p));
  return w;
}

std::strong_ordering compare_build_tags(const std::optional<std::string>& a, const std::optional<std::string>& b) noexcept {
  if (!a || !b) return a.has_value() <=> b.has_value();
  // (leading digits, rest): the digits compared as numbers without converting them.
  auto split_build = [](std::string_view s) {
    const auto d = static_cast<std::size_t>(std::find_if_not(s.begin(), s.end(), [](char c) { return is_digit(c); }) - s.begin());
    std::string_view digits = s.substr(0, d);
    while (!digits.empty() && digits.front() == '0') digits.remove_prefix(1);
    return std::pair{digits, s.substr(d)};
  };
  const auto [da, ra] = split_build(*a);
  const auto [db, rb] = split_build(*b);
  if (da.size() != db.size()) return da.size() <=> db.size();
  if (const auto c = da <=> db; c != 0) return c;
  return ra <=> rb;
}

std::string PythonTarget::tag() const {
  return "cp" + std::to_string(version.major()) + std::to_string(version.minor()) + (free_threaded ? "t" : "");
}

namespace {

// A python tag's implementation and version as python_rank needs them, read without allocating
// for the common forms ("cp312", "py3", "cp39"); the rest go through parse_python_tag.
struct TagVersion {
  bool cp = false, py = false;
  std::uint32_t major = 0, minor = 0;
  std::size_t parts = 0;  ///< 0: no version
};

TagVersion tag_version(std::string_view tag) {
  std::size_t i = 0;
  while (i < tag.size() && is_alpha(tag[i])) ++i;
  const std::string_view impl = tag.substr(0, i), digits = tag.substr(i);
  TagVersion out;
  if (i > 0 && !digits.empty() && digits.size() <= 4 && all_digits(digits) && (digits.size() <= 2 || digits[1] != '0')) {
    out.cp = util::iequals(impl, "cp");
    out.py = util::iequals(impl, "py");
    out.major = static_cast<std::uint32_t>(digits[0] - '0');
    for (const char c : digits.substr(1)) out.minor = out.minor * 10 + static_cast<std::uint32_t>(c - '0');
    out.parts = digits.size() > 1 ? 2 : 1;
    return out;
  }
  const PythonTag pt = parse_python_tag(tag);
  if (!pt.version) return out;
  out.cp = pt.impl == "cp";
  out.py = pt.impl == "py";
  out.major = pt.version->major();
  out.minor = pt.version->minor();
  out.parts = pt.version->parts().size();
  return out;
}

}  // namespace

std::optional<int> python_rank(const WheelName& wheel, const PythonTarget& target) {
  const std::uint32_t x = target.version.major();
  const std::uint32_t y = target.version.minor();
  const bool ft = target.free_threaded;
  // packaging.tags._abi3_applies: CPython >= 3.2, not free-threaded.
  const bool abi3 = (x > 3 || (x == 3 && y >= 2)) && !ft;
  // The interpreter's own ABI: "cp312", "cp313t", and "cp37m" before 3.8 (pymalloc).
  char own_buf[32];
  const int own_len = std::snprintf(own_buf, sizeof own_buf, "cp%u%u%s", x, y, ft ? "t" : (x == 3 && y < 8) ? "m" : "");
  const std::string_view own_abi(own_buf, static_cast<std::size_t>(std::max(0, own_len)));

  // Ranks, in pip's order (packaging.tags.cpython_tags then compatible_tags):
  //   0 cpXY-cpXY[t|m], 1 cpXY-abi3, 2 cpXY-none, 3.. cpX(Y-1)-abi3 .. cpX2-abi3,
  //   then pyXY-none, pyX-none, pyX(Y-1)-none .. pyX0-none.
  const std::int64_t yy = std::min<std::uint32_t>(y, 100000);
  const std::int64_t py_base = 3 + yy;
  std::optional<std::int64_t> best;
  auto offer = [&](std::int64_t r) {
    if (!best || r < *best) best = r;
  };

  for (const auto& py : wheel.python_tags) {
    const TagVersion pt = tag_version(py);
    if (pt.parts == 0) continue;
    const std::uint32_t vx = pt.major;
    const std::uint32_t vy = pt.minor;
    if (vx != x) continue;
    for (const auto& abi : wheel.abi_tags) {
      if (pt.cp) {
        if (pt.parts != 2) continue;  // "cp3" names no interpreter
        if (vy == y) {
          if (util::iequals(abi, own_abi)) offer(0);
          else if (abi3 && util::iequals(abi, "abi3")) offer(1);
          else if (util::iequals(abi, "none")) offer(2);
        } else if (abi3 && vy < y && vy >= 2 && util::iequals(abi, "abi3")) {
          offer(3 + (yy - 1 - static_cast<std::int64_t>(vy)));
        }
      } else if (pt.py) {
        if (!util::iequals(abi, "none")) continue;
        if (pt.parts == 1) offer(py_base + 1);
        else if (pt.parts == 2 && vy == y) offer(py_base);
        else if (pt.parts == 2 && vy < y) offer(py_base + 2 + (yy - 1 - static_cast<std::int64_t>(vy)));
      }
    }
  }
  if (!best) return std::nullopt;
  return static_cast<int>(std::min<std::int64_t>(*best, std::numeric_limits<int>::max()));
}

namespace {

// platform_fit with the target's CPU arch already normalised (best_platform_fit does it once).
PlatformFit fit_of(const PlatformTag& tag, const PlatformTarget& target, const std::string& cpu) {
  PlatformFit fit;
  static const NumericVersion kNoFloor;
  const NumericVersion& floor = tag.libc ? *tag.libc : kNoFloor;
  // The glibc floor of a manylinux tag: unknown on the machine means not checked, not failed.
  auto judge_glibc = [&] {
    if (!target.glibc) {
      fit.glibc_ok = true;
      fit.glibc_checked = false;
    } else {
      fit.glibc_ok = *target.glibc >= floor;
      fit.glibc_checked = true;
    }
  };

  // A tag that names an OS and a CPU arch: both judged, no libc floor unless the kind has one.
  auto names = [&](Os os) {
    fit.os_ok = target.os == os;
    fit.cpu_ok = tag.cpu_arch == cpu;
    fit.glibc_ok = true;
  };

  switch (tag.kind) {
    case PlatformTag::Kind::any:
      fit.os_ok = fit.cpu_ok = fit.glibc_ok = true;
      fit.rank = kAnyRank;
      return fit;
    case PlatformTag::Kind::unknown:
      fit.glibc_ok = true;  // irrelevant: the tag already fails os and cpu
      fit.rank = kUnknownRank;
      return fit;
    case PlatformTag::Kind::manylinux:
      names(Os::linux_);
      judge_glibc();
      fit.rank = floor_rank(floor);
      return fit;
    case PlatformTag::Kind::musllinux:
      // Needs musl; wheelfit's targets are glibc machines, so this demand always fails.
      names(Os::linux_);
      fit.glibc_ok = false;
      fit.glibc_checked = true;
      fit.rank = floor_rank(floor);
      return fit;
    case PlatformTag::Kind::linux_plain:
      names(Os::linux_);
      fit.rank = kLinuxPlainRank;
      return fit;
    case PlatformTag::Kind::windows:
      names(Os::windows);
      fit.rank = kWindowsRank;
      return fit;
    case PlatformTag::Kind::macos: {
      names(Os::macos);  // the machine's macOS version is not a fact we hold: no floor judged
      fit.cpu_ok = mac_arch_runs_on(tag.cpu_arch, cpu);
      const bool exact = tag.cpu_arch == cpu;
      fit.rank = kMacRankBase + 2 * floor_rank(floor) + (exact ? 0 : 1);
      return fit;
    }
  }
  return fit;
}

}  // namespace

PlatformFit platform_fit(const PlatformTag& tag, const PlatformTarget& target) {
  return fit_of(tag, target, normalize_cpu_arch(target.cpu_arch));
}

PlatformFit best_platform_fit(const WheelName& wheel, const PlatformTarget& target) {
  std::optional<PlatformFit> best;
  auto failures = [](const PlatformFit& f) { return int{!f.os_ok} + int{!f.cpu_ok} + int{!f.glibc_ok}; };
  const std::string cpu = normalize_cpu_arch(target.cpu_arch);
  for (const auto& tag : wheel.platforms) {
    PlatformFit f = fit_of(tag, target, cpu);
    f.tag = &tag;
    if (!best) {
      best = f;
      continue;
    }
    if (f.ok() != best->ok()) {
      if (f.ok()) best = f;
      continue;
    }
    if (!f.ok()) {
      const int ff = failures(f);
      const int bf = failures(*best);
      if (ff != bf) {
        if (ff < bf) best = f;
        continue;
      }
    }
    if (f.rank < best->rank) best = f;  // ties keep the earlier tag (file-name order)
  }
  return best.value_or(PlatformFit{});
}

std::optional<std::pair<std::string, Version>> variants_file_name(std::string_view filename) {
  if (!filename.ends_with(kVariantsFileSuffix)) return std::nullopt;
  const std::string_view stem = filename.substr(0, filename.size() - kVariantsFileSuffix.size());
  const auto dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  auto version = Version::parse(stem.substr(dash + 1));
  if (!version) return std::nullopt;
  return std::pair{normalize_name(stem.substr(0, dash)), std::move(*version)};
}

}  // namespace wheelfit::model
