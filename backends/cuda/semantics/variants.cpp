// The `nvidia` variant namespace, computed as NVIDIA's provider does (cuda_variants.hpp).

#include <algorithm>

#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/backends/cuda_variants.hpp"
#include "wheelfit/util/variant_facts.hpp"

namespace wheelfit::backends::cuda {

namespace {

using model::NumericVersion;

/// Appends `major`'s versions from `from_minor` down to `to_minor` ("12.7" ... "12.0") as NVIDIA's
/// provider spells them, then, when `whole_major`, the major alone ("12").
void add_major(std::vector<std::string>& out, unsigned major, unsigned from_minor, unsigned to_minor, bool whole_major) {
  for (unsigned minor = from_minor + 1; minor-- > to_minor;) out.push_back(std::to_string(major) + "." + std::to_string(minor));
  if (whole_major) out.push_back(std::to_string(major));
}

std::string sm_name(const NumericVersion& cc) { return "sm " + cc.truncated(2).str(); }

}  // namespace

std::vector<std::string> cuda_lower_bound_values(const NumericVersion& line) {
  // plugin.py, "Priority 1 - UMD Lower Bound": the driver's major from its minor down, then
  // every older major of the range from minor 20 down, each closed by the major alone.
  std::vector<std::string> out;
  for (unsigned major = line.major() + 1; major-- > kNvidiaMinMajor;) {
    add_major(out, major, major == line.major() ? line.minor() : kNvidiaMaxMinor, 0, true);
  }
  return out;
}

std::vector<std::string> cuda_upper_bound_values(const NumericVersion& line) {
  // plugin.py, "Priority 2 - UMD Higher Bound (excluded)": every newer major of the range from
  // minor 20 down, each closed by the major alone, then the driver's major from minor 20 down
  // to the one above the driver's, without the major alone.
  std::vector<std::string> out;
  for (unsigned major = kNvidiaMaxMajor + 1; major-- > line.major();) {
    if (major == line.major()) {
      if (line.minor() < kNvidiaMaxMinor) add_major(out, major, kNvidiaMaxMinor, line.minor() + 1, false);
    } else {
      add_major(out, major, kNvidiaMaxMinor, 0, true);
    }
  }
  return out;
}

std::vector<std::string> sm_arch_values(const NumericVersion& cc) {
  // plugin.py, "Priority 3 - NVIDIA SM Arch Compatibility": the real (SASS) archs of cc's major
  // from cc's minor down, then the major's first virtual (PTX) arch.
  if (cc.major() < kNvidiaMinSmMajor) return {};
  std::vector<std::string> out;
  const std::string major = std::to_string(cc.major());
  for (unsigned minor = cc.minor() + 1; minor-- > 0;) out.push_back(major + std::to_string(minor) + "_real");
  out.push_back(major + "0_virtual");
  return out;
}

NvidiaVariants nvidia_variants(const std::optional<NumericVersion>& driver_line,
                               const std::optional<std::vector<NumericVersion>>& gpus) {
  NvidiaVariants r;
  if (!driver_line) {
    r.notes.push_back("driver_line (the CUDA version the driver supports) is unknown: NVIDIA's provider supports no "
                      "nvidia property without it, sm_arch included");
    return r;
  }
  const NumericVersion lowest({kNvidiaMinMajor, 0});
  const NumericVersion highest_line({kNvidiaMaxMajor, kNvidiaMaxMinor});
  if (*driver_line < lowest || *driver_line > highest_line) {
    r.notes.push_back("driver_line " + driver_line->str() + " is outside NVIDIA's provider's range (" + lowest.str() + " to " +
                      highest_line.str() + "): it supports no nvidia property then, sm_arch included");
    return r;
  }
  // A bound without values is left out (plugin.py: `if umd_values_low:`): at 15.20 no version
  // of the range is above the driver's.
  for (auto [name, values] : {std::pair{"cuda_version_lower_bound", cuda_lower_bound_values(*driver_line)},
                              std::pair{"cuda_version_upper_bound", cuda_upper_bound_values(*driver_line)}}) {
    if (!values.empty()) r.features.push_back({name, std::move(values), {}});
  }
  if (!gpus) {
    r.notes.push_back("gpus are unknown: sm_arch left out");
    return r;
  }
  if (gpus->empty()) {
    r.notes.push_back("no GPU: sm_arch left out");
    return r;
  }
  // NVIDIA's provider looks at the highest GPU only (sorted descending, the first).
  const NumericVersion top = *std::max_element(gpus->begin(), gpus->end());
  plugin::VariantFeature sm{"sm_arch", sm_arch_values(top), {}};
  if (sm.values.empty()) {
    r.notes.push_back("the highest GPU (" + sm_name(top) + ") is below sm " + std::to_string(kNvidiaMinSmMajor) +
                      ".0, the lowest NVIDIA's provider gives values for: sm_arch left out, as NVIDIA's provider does");
    return r;
  }
  for (const auto& gpu : *gpus) {
    const std::string target = gpu.truncated(2).str();
    const bool seen = std::any_of(sm.devices.begin(), sm.devices.end(), [&](const auto& d) { return d.first == target; });
    if (seen) continue;
    sm.devices.emplace_back(target, sm_arch_values(gpu));
    if (sm.devices.back().second.empty()) {
      r.notes.push_back("the GPU " + sm_name(gpu) + " is below sm " + std::to_string(kNvidiaMinSmMajor) +
                        ".0: no sm_arch value serves it");
    }
  }
  if (sm.devices.size() > 1) {
    r.notes.push_back("sm_arch from the highest GPU (" + sm_name(top) +
                      "), as NVIDIA's provider computes it; wheelfit also requires every GPU to be served");
  }
  if (top.major() > kNvidiaMaxSmMajor) {
    r.notes.push_back(sm_name(top) + " is beyond NVIDIA's sm_arch catalog (majors " + std::to_string(kNvidiaMinSmMajor) +
                      " to " + std::to_string(kNvidiaMaxSmMajor) + "): its values follow the same rule, as NVIDIA's provider gives them");
  }
  r.features.push_back(std::move(sm));
  return r;
}

std::string variant_properties_json(std::string_view facts_json) {
  auto facts = util::read_variant_facts(facts_json);
  if (!facts) return plugin::device_code_error(facts.error().message);
  std::optional<NumericVersion> line;
  if (facts->driver_line) {
    auto v = NumericVersion::parse(*facts->driver_line);
    if (!v) {
      return plugin::device_code_error("the facts' driver_line \"" + *facts->driver_line +
                                       "\" is not a CUDA version (write major.minor, such as 12.8)");
    }
    line = *v;
  }
  std::optional<std::vector<NumericVersion>> gpus;
  if (facts->gpus) {
    gpus.emplace();
    for (const auto& text : *facts->gpus) {
      auto cc = parse_compute_capability(text);
      if (!cc) return plugin::device_code_error("the facts' gpus item \"" + text + "\" " + cc.error().message);
      gpus->push_back(*cc);
    }
  }
  auto r = nvidia_variants(line, gpus);
  if (!line && facts->driver_version) {
    r.notes.push_back("driver_version " + *facts->driver_version + " is known, but no CUDA version is derived from it here");
  }
  return plugin::variant_properties_answer("nvidia", r.features, r.notes);
}

}  // namespace wheelfit::backends::cuda
