// Policy queries. Parsing lives in parse_policy.cpp, label templates in label_template.cpp; the
// device rules are the backend's (registry::make_policy).

#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/text.hpp"

#include <algorithm>
#include <tuple>

#include "wheelfit/model/name.hpp"

namespace wheelfit::semantics {
namespace {

// Tables are keyed by major.minor, whatever precision the caller has ("12.8.1" -> "12.8").
std::string minor_key(const model::NumericVersion& v) { return v.truncated(2).str(); }

}  // namespace

std::string line_key(const model::NumericVersion& v) {
  std::vector<std::uint32_t> parts = v.parts();
  while (parts.size() > 2 && parts.back() == 0) parts.pop_back();
  if (parts.size() < 2) parts.resize(2, 0);
  return model::NumericVersion(std::move(parts)).str();
}

namespace {

bool is_aarch64_platform(std::string_view platform) {
  return platform.find("aarch64") != std::string_view::npos;
}

void replace_all(std::string& s, std::string_view what, const std::string& with) {
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + with.size())) {
    s.replace(pos, what.size(), with);
  }
}

}  // namespace

std::string combo_str(const LineNotation& notation, const model::Combo& combo) {
  const std::string torch = "torch" + combo.torch.str();
  if (combo.line.empty()) return torch;
  return notation.prefix + combo.line.str() + "/" + torch;
}

Expected<model::Combo> parse_combo_str(const LineNotation& notation, std::string_view text) {
  const std::string example = notation.prefix + "12.8/torch2.8";
  auto bad = [&](const std::string& why) {
    return unexpected(Errc::invalid_input, "'" + std::string(text) + "' " + why + ": write the combo as " +
                                               (notation.prefix.empty() ? "LINE/torchX.Y" : notation.prefix + "LINE/torchX.Y") +
                                               " (" + notation.name + "), e.g. " + example);
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return bad("has no '/'");
  std::string_view line = text.substr(0, slash), torch = text.substr(slash + 1);
  if (line.size() < notation.prefix.size() || !util::iequals(line.substr(0, notation.prefix.size()), notation.prefix)) {
    return bad("does not start with '" + notation.prefix + "'");
  }
  line.remove_prefix(notation.prefix.size());
  if (torch.size() < 5 || !util::iequals(torch.substr(0, 5), "torch")) return bad("has no 'torch' after the '/'");
  torch.remove_prefix(5);
  auto l = model::NumericVersion::parse(line);
  if (!l) return bad("names no line ('" + std::string(line) + "')");
  auto t = model::NumericVersion::parse(torch);
  if (!t || t->parts().size() != 2) return bad("names no torch major.minor ('" + std::string(torch) + "')");
  return model::Combo{*l, *t};
}

std::optional<model::Combo> Policy::parse_combo_label(std::string_view local_label) const {
  if (local_label.starts_with('+')) local_label.remove_prefix(1);  // "+cu128torch2.8" as printed
  for (const auto& t : t_.combo_labels) {
    if (auto parts = t.match(local_label); parts && parts->torch) {
      return model::Combo{parts->line.value_or(model::NumericVersion{}), *parts->torch};
    }
  }
  return std::nullopt;
}

std::optional<model::NumericVersion> Policy::parse_torch_label(std::string_view local_label) const {
  if (local_label.starts_with('+')) local_label.remove_prefix(1);  // "+cu128" as printed after a version
  for (const auto& t : t_.torch_labels) {
    if (auto parts = t.match(local_label); parts && parts->line) return parts->line;
  }
  return std::nullopt;
}

Expected<DeviceRules::DeviceCode> DeviceRules::read_code(std::string_view, std::string_view) const {
  return unexpected(Errc::unsupported, "the backend reads no device code");
}

Expected<DeviceRules::DeviceCode> DeviceRules::read_code_at(std::string_view section, std::uint64_t size,
                                                            const SectionRead& read) const {
  if (size > std::string().max_size()) {
    return unexpected(Errc::too_large, std::string(section) + ": " + std::to_string(size) + " bytes cannot be held in memory");
  }
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (auto r = read(0, bytes.size(), reinterpret_cast<unsigned char*>(bytes.data())); !r) return r.error();
  return read_code(section, bytes);
}

Expected<DeviceRules::DeviceCode> DeviceRules::describe_list(std::string_view) const {
  return unexpected(Errc::unsupported, "the backend does not describe its target lists by kind");
}

Expected<model::VariantSupport> DeviceRules::variant_support(const std::string&) const {
  return unexpected(Errc::unsupported, "the backend provides no variant namespace");
}

std::optional<std::uint32_t> Policy::runtime_major(std::string_view needed) const {
  static constexpr std::string_view kMajor = "{major}";
  for (const auto& pattern : t_.runtime_libraries) {
    const auto at = pattern.find(kMajor);
    if (at == std::string::npos) continue;
    const std::string_view before = std::string_view(pattern).substr(0, at);
    const std::string_view after = std::string_view(pattern).substr(at + kMajor.size());
    if (!needed.starts_with(before) || needed.size() < before.size() + after.size()) continue;
    std::string_view rest = needed.substr(before.size());
    std::size_t digits = 0;
    std::uint32_t major = 0;
    while (digits < rest.size() && digits < 4 && rest[digits] >= '0' && rest[digits] <= '9') {
      major = major * 10 + static_cast<std::uint32_t>(rest[digits++] - '0');
    }
    if (digits == 0) continue;
    rest.remove_prefix(digits);
    // What follows the major: the pattern's tail, or (for "lib.so.{major}") a further ".minor".
    if (rest == after || (after.empty() && rest.starts_with('.'))) return major;
  }
  return std::nullopt;
}

std::optional<MinDriver> Policy::min_driver(std::uint32_t line_major) const {
  const auto it = t_.min_driver.find(line_major);
  if (it == t_.min_driver.end()) return std::nullopt;
  return it->second;
}

std::optional<ArchSource> Policy::arch_list(std::string_view package, const model::Combo& combo,
                                            std::string_view platform) const {
  const std::string line = line_key(combo.line);
  const auto plat = t_.arch_policy.find(std::string(platform));
  if (plat == t_.arch_policy.end() || !plat->second.contains(line)) return std::nullopt;  // not built there

  const std::string name = model::normalize_name(package);
  if (const auto pkg = t_.packages.find(name); pkg != t_.packages.end()) {
    const bool arm = is_aarch64_platform(platform);
    const auto& by_line = arm ? pkg->second.by_line_aarch64 : pkg->second.by_line;
    if (const auto row = by_line.find(line); row != by_line.end()) {
      return ArchSource{row->second, "package " + name + ", " + t_.notation.key + " " + line + " (" +
                                         (arm ? "arch_list_by_line_aarch64" : "arch_list_by_line") + ")"};
    }
    const auto& all = arm ? pkg->second.all_aarch64 : pkg->second.all;
    if (all) {
      return ArchSource{*all, "package " + name + " (" + (arm ? "arch_list_aarch64" : "arch_list") + ")"};
    }
  }
  return platform_arch_list(combo, platform);
}

std::optional<ArchSource> Policy::platform_arch_list(const model::Combo& combo, std::string_view platform) const {
  const std::string line = line_key(combo.line);
  const auto plat = t_.arch_policy.find(std::string(platform));
  if (plat == t_.arch_policy.end()) return std::nullopt;
  const auto row = plat->second.find(line);
  if (row == plat->second.end()) return std::nullopt;
  if (!is_aarch64_platform(platform)) {  // the farm never applies exceptions on ARM
    const std::string key = line + "/" + minor_key(combo.torch);
    if (const auto exc = t_.arch_exceptions.find(key); exc != t_.arch_exceptions.end()) {
      return ArchSource{exc->second, "exception " + key};
    }
  }
  return ArchSource{row->second, "farm policy " + line + " (" + std::string(platform) + ")"};
}

std::optional<TorchArchRow> Policy::torch_archs(const model::NumericVersion& torch, const model::NumericVersion& line,
                                                std::string_view platform) const {
  const auto plat = t_.torch_archs.find(std::string(platform));
  if (plat == t_.torch_archs.end()) return std::nullopt;
  const auto minor = plat->second.find(minor_key(torch));
  if (minor == plat->second.end()) return std::nullopt;
  const auto row = minor->second.find(line_key(line));
  if (row == minor->second.end()) return std::nullopt;
  return row->second;
}

bool Policy::pytorch_shipped(const model::Combo& combo, const model::NumericVersion& python,
                             std::string_view platform) const {
  const auto& line = combo.line;
  const auto torch = combo.torch.truncated(2);
  const auto py = python.truncated(2);
  // Both sides as (version, version, version, string_view): clang rejects comparing a tuple of
  // std::string& with one of std::string_view&.
  using Key = std::tuple<const model::NumericVersion&, const model::NumericVersion&, const model::NumericVersion&,
                         std::string_view>;
  const Key key{line, torch, py, platform};
  auto as_key = [](const Cell& c) { return Key{c.combo.line, c.combo.torch, c.python, c.platform}; };
  const auto it = std::lower_bound(t_.cells.begin(), t_.cells.end(), key,
                                   [&](const Cell& c, const auto& k) { return as_key(c) < k; });
  return it != t_.cells.end() && as_key(*it) == key;
}

std::optional<FamilyPins> Policy::torch_family(const model::NumericVersion& torch_minor) const {
  const auto it = t_.family.find(minor_key(torch_minor));
  if (it == t_.family.end()) return std::nullopt;
  return it->second;
}

std::optional<model::NumericVersion> Policy::pypi_line(const model::NumericVersion& torch_minor,
                                                       std::string_view platform) const {
  const auto plat = t_.pypi_line.find(std::string(platform));
  if (plat == t_.pypi_line.end()) return std::nullopt;
  const auto it = plat->second.find(minor_key(torch_minor));
  if (it == plat->second.end()) return std::nullopt;
  return it->second;
}

std::optional<model::Combo> Policy::fallback_combo(std::string_view cpu_arch) const {
  const auto it = t_.fallback.find(model::normalize_cpu_arch(cpu_arch));
  if (it == t_.fallback.end()) return std::nullopt;
  return it->second;
}

std::string Policy::torch_index_url(const model::NumericVersion& line) const {
  return expand_torch_index(t_.torch_index_pattern, line);
}

std::string expand_torch_index(std::string pattern, const model::NumericVersion& line) {
  replace_all(pattern, "{line_nodot}", line.truncated(2).nodot());
  replace_all(pattern, "{line}", line.str());
  return pattern;
}

}  // namespace wheelfit::semantics
