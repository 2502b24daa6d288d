// Policy queries and the built-in policy. Parsing lives in parse_policy.cpp, arch lists in
// arch_list.cpp.

#include "wheelfit/policies/policy.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "wheelfit/model/name.hpp"

namespace wheelfit::policies {

namespace detail {
/// Generated at build time from policies/data/policy.json by policies/embed.cmake.
std::string_view embedded_policy_json();
}  // namespace detail

namespace {

// Tables are keyed by major.minor, whatever precision the caller has ("12.8.1" -> "12.8").
std::string minor_key(const model::NumericVersion& v) { return v.truncated(2).str(); }

bool is_aarch64_platform(std::string_view platform) {
  return platform.find("aarch64") != std::string_view::npos;
}

}  // namespace

std::optional<ArchSource> Policy::arch_list(std::string_view package, const model::Combo& combo,
                                            std::string_view platform) const {
  const std::string cuda = minor_key(combo.cuda);
  const auto plat = arch_policy_.find(std::string(platform));
  if (plat == arch_policy_.end() || !plat->second.contains(cuda)) return std::nullopt;  // not built there

  const std::string name = model::normalize_name(package);
  if (const auto pkg = packages_.find(name); pkg != packages_.end()) {
    const bool arm = is_aarch64_platform(platform);
    const auto& by_cuda = arm ? pkg->second.by_cuda_aarch64 : pkg->second.by_cuda;
    if (const auto row = by_cuda.find(cuda); row != by_cuda.end()) {
      return ArchSource{row->second, "package " + name + ", cuda " + cuda + " (" +
                                         (arm ? "arch_list_by_cuda_aarch64" : "arch_list_by_cuda") + ")"};
    }
    const auto& all = arm ? pkg->second.all_aarch64 : pkg->second.all;
    if (all) {
      return ArchSource{*all, "package " + name + " (" + (arm ? "arch_list_aarch64" : "arch_list") + ")"};
    }
  }
  return platform_arch_list(combo, platform);
}

std::optional<ArchSource> Policy::platform_arch_list(const model::Combo& combo, std::string_view platform) const {
  const std::string cuda = minor_key(combo.cuda);
  const auto plat = arch_policy_.find(std::string(platform));
  if (plat == arch_policy_.end()) return std::nullopt;
  const auto row = plat->second.find(cuda);
  if (row == plat->second.end()) return std::nullopt;
  if (!is_aarch64_platform(platform)) {  // the farm never applies exceptions on ARM
    const std::string key = cuda + "/" + minor_key(combo.torch);
    if (const auto exc = arch_exceptions_.find(key); exc != arch_exceptions_.end()) {
      return ArchSource{exc->second, "exception " + key};
    }
  }
  return ArchSource{row->second, "farm policy " + cuda + " (" + std::string(platform) + ")"};
}

bool Policy::pytorch_shipped(const model::Combo& combo, const model::NumericVersion& python,
                             std::string_view platform) const {
  const auto cuda = combo.cuda.truncated(2), torch = combo.torch.truncated(2), py = python.truncated(2);
  // Both sides as (version, version, version, string_view): clang rejects comparing a tuple of
  // std::string& with one of std::string_view&.
  using Key = std::tuple<const model::NumericVersion&, const model::NumericVersion&, const model::NumericVersion&,
                         std::string_view>;
  const Key key{cuda, torch, py, platform};
  auto as_key = [](const Cell& c) { return Key{c.combo.cuda, c.combo.torch, c.python, c.platform}; };
  const auto it = std::lower_bound(cells_.begin(), cells_.end(), key,
                                   [&](const Cell& c, const auto& k) { return as_key(c) < k; });
  return it != cells_.end() && as_key(*it) == key;
}

std::optional<FamilyPins> Policy::torch_family(const model::NumericVersion& torch_minor) const {
  const auto it = family_.find(minor_key(torch_minor));
  if (it == family_.end()) return std::nullopt;
  return it->second;
}

std::optional<model::NumericVersion> Policy::pypi_cuda_line(const model::NumericVersion& torch_minor,
                                                            std::string_view platform) const {
  const auto plat = pypi_cuda_.find(std::string(platform));
  if (plat == pypi_cuda_.end()) return std::nullopt;
  const auto it = plat->second.find(minor_key(torch_minor));
  if (it == plat->second.end()) return std::nullopt;
  return it->second;
}

std::optional<MinDriver> Policy::min_driver(std::uint32_t cuda_major) const {
  const auto it = min_driver_.find(cuda_major);
  if (it == min_driver_.end()) return std::nullopt;
  return it->second;
}

std::optional<model::Combo> Policy::fallback_combo(std::string_view backend, std::string_view cpu_arch) const {
  const auto b = fallback_.find(std::string(backend));
  if (b == fallback_.end()) return std::nullopt;
  const auto it = b->second.find(model::normalize_cpu_arch(cpu_arch));
  if (it == b->second.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, model::Combo> Policy::fallback_combos(std::string_view backend) const {
  const auto b = fallback_.find(std::string(backend));
  return b == fallback_.end() ? std::map<std::string, model::Combo>{} : b->second;
}

std::string Policy::torch_index_url(const model::NumericVersion& cuda) const {
  static constexpr std::string_view kPlaceholder = "{cuda_nodot}";
  const std::string nodot = cuda.truncated(2).nodot();
  std::string out = torch_index_pattern_;
  for (auto pos = out.find(kPlaceholder); pos != std::string::npos; pos = out.find(kPlaceholder, pos + nodot.size())) {
    out.replace(pos, kPlaceholder.size(), nodot);
  }
  return out;
}

const Policy& builtin_policy() {
  // Parsed once, on first use; C++ guarantees the initialisation is thread-safe. A failure is a
  // build defect (data/policy.json is checked by the tests), hence an exception.
  static const Policy policy = [] {
    auto p = parse_policy_json(detail::embedded_policy_json(), "built-in");
    if (!p) throw std::logic_error("the built-in policy does not parse: " + p.error().message);
    return std::move(p).value();
  }();
  return policy;
}

}  // namespace wheelfit::policies
