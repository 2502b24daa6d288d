// The `amd` variant namespace, computed as AMD's provider does (rocm_variants.hpp).

#include <algorithm>
#include <cctype>

#include "wheelfit/backends/rocm_targets.hpp"
#include "wheelfit/backends/rocm_variants.hpp"
#include "wheelfit/util/variant_facts.hpp"

namespace wheelfit::backends::rocm {

namespace {

/// AMD's provider's gfx_arch catalog (plugin.py get_all_configs; detect_rocm.py GFX_CODE). Its
/// rocminfo detection drops a list with a processor outside it, and its rocm_agent_enumerator
/// fallback then reports that processor anyway, so it is reported here too, with a note.
constexpr std::string_view kGfxCatalog[] = {"gfx900",  "gfx906",  "gfx908",  "gfx90a",  "gfx942", "gfx1030",
                                            "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"};

/// "6.2.4" -> "6.2", "7" -> "7.0" (AMD's ROCmVersion: major, minor, patch defaulting to 0;
/// rocm_version is f"{major}.{minor}"); nullopt when `line` is not numbers separated by dots.
std::optional<std::string> major_minor(std::string_view line) {
  std::vector<unsigned long> parts;
  while (true) {
    const auto dot = line.find('.');
    const std::string_view part = line.substr(0, dot);
    const bool digits = !part.empty() && part.size() <= 9 &&
                        std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (!digits) return std::nullopt;
    parts.push_back(std::stoul(std::string(part)));
    if (dot == std::string_view::npos) break;
    line.remove_prefix(dot + 1);
  }
  return std::to_string(parts[0]) + "." + std::to_string(parts.size() > 1 ? parts[1] : 0);
}

}  // namespace

AmdVariants amd_variants(const std::optional<std::string>& rocm_line, const std::optional<std::vector<std::string>>& gpus) {
  AmdVariants r;
  std::optional<std::string> version;
  if (rocm_line && !(version = major_minor(*rocm_line))) {
    r.error = "the facts' driver_line \"" + *rocm_line + "\" is not a ROCm version (write major.minor, such as 6.4)";
    return r;
  }
  // Priority 1 (plugin.py): gfx_arch, every GPU's processor, sorted(set(...)).
  plugin::VariantFeature gfx{"gfx_arch", {}, {}};
  bool dropped_features = false;
  for (const auto& text : gpus.value_or(std::vector<std::string>{})) {
    const auto t = parse_target(text);
    if (!t.ok) {
      r.error = "the facts' gpus item \"" + text + "\" is not a gfx target: " + t.error;
      return r;
    }
    const std::string processor = t.canonical.substr(0, t.canonical.find(':'));
    if (processor.ends_with("-generic")) {
      r.error = "the facts' gpus item \"" + text + "\" is a generic processor, not a device's";
      return r;
    }
    dropped_features = dropped_features || processor != t.canonical;
    if (std::none_of(gfx.devices.begin(), gfx.devices.end(), [&](const auto& d) { return d.first == t.canonical; })) {
      gfx.devices.emplace_back(t.canonical, std::vector<std::string>{processor});
    }
    if (std::find(gfx.values.begin(), gfx.values.end(), processor) != gfx.values.end()) continue;
    gfx.values.push_back(processor);
    if (std::find(std::begin(kGfxCatalog), std::end(kGfxCatalog), processor) == std::end(kGfxCatalog)) {
      r.notes.push_back(processor + " is not in AMD's provider's gfx_arch catalog; reported as its rocm_agent_enumerator "
                                    "detection reports it");
    }
  }
  std::sort(gfx.values.begin(), gfx.values.end());
  if (!gpus) {
    r.notes.push_back("gpus are unknown: gfx_arch left out");
  } else if (gfx.values.empty()) {
    r.notes.push_back("no GPU: gfx_arch left out");
  } else {
    if (dropped_features) r.notes.push_back("gfx_arch names the processor only, as AMD's provider does (gfx90a:xnack- is gfx90a)");
    r.features.push_back(std::move(gfx));
  }
  // Priority 2: rocm_version, the line's major.minor alone.
  if (version) {
    r.features.push_back({"rocm_version", {*version}, {}});
  } else {
    r.notes.push_back("driver_line (the ROCm line) is unknown: rocm_version left out");
  }
  return r;
}

std::string variant_properties_json(std::string_view facts_json) {
  auto facts = util::read_variant_facts(facts_json);
  if (!facts) return plugin::device_code_error(facts.error().message);
  auto r = amd_variants(facts->driver_line, facts->gpus);
  if (!r.error.empty()) return plugin::device_code_error(r.error);
  if (!facts->driver_line && facts->driver_version) {
    r.notes.push_back("driver_version " + *facts->driver_version + " (the amdgpu module's) is not the ROCm line");
  }
  return plugin::variant_properties_answer("amd", r.features, r.notes);
}

}  // namespace wheelfit::backends::rocm
