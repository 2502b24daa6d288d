// The ROCm backend's descriptor: no wheel index is published yet (configuring one is data:
// WHEELFIT_ROCM_WHEELS_INDEX or --index), its policy data (data/policy.json, sources in
// data/SOURCES.md), gfx target rules, the .hip_fatbin reader, KFD detection and the native
// variant provider (the `amd` namespace, rocm_variants.hpp).

#include "wheelfit/backends/rocm_backend.hpp"
#include "wheelfit/backends/rocm_detect.hpp"
#include "wheelfit/backends/rocm_offload.hpp"
#include "wheelfit/backends/rocm_targets.hpp"
#include "wheelfit/backends/rocm_variants.hpp"
#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::backends::rocm {
namespace detail {
/// backends/rocm/data/policy.json, embedded at build time (backends/rocm/CMakeLists.txt).
std::string_view policy_json();
}  // namespace detail

namespace {

plugin::Parsed target(std::string_view text) {
  auto r = parse_target(text);
  if (!r.ok) return {false, "is not a gfx target: " + r.error};
  return {true, r.canonical};
}

plugin::Parsed target_list(std::string_view text) {
  auto r = parse_target_list(text);
  if (!r.ok) return {false, r.error};
  return {true, r.canonical};
}

plugin::Coverage coverage(std::string_view list, std::string_view device) {
  auto m = match(list, device);
  return {m.how, m.via};
}

std::string device_code(std::string_view, const unsigned char* bytes, std::size_t size) {
  const auto scan = scan_offload_bundles(bytes, size);
  if (!scan.ok) return plugin::device_code_error(scan.error);
  std::string list;
  for (const auto& t : scan.targets) list += (list.empty() ? "" : ";") + t;
  return plugin::device_code_answer(list, {{"code_objects", scan.targets}});
}

}  // namespace

const wheelfit_backend_v2* descriptor() {
  static const wheelfit_backend_v2 d = [] {
    auto b = plugin::descriptor_v2("rocm");
    b.description = "AMD ROCm: gfx targets from the KFD topology; no wheel index is published yet (give one with "
                    "--index or WHEELFIT_ROCM_WHEELS_INDEX)";
    b.index_env = "WHEELFIT_ROCM_WHEELS_INDEX";
    b.policy_json = detail::policy_json().data();  // a NUL-terminated static array
    b.detect = &plugin::detect_entry<&detect_json>;
    plugin::set_target_functions<&target, &target_list, &coverage>(b);
    b.read_device_code = &plugin::device_code_entry<&device_code>;
    b.variant_properties = &plugin::variant_properties_entry<&variant_properties_json>;
    return b;
  }();
  return &d;
}

}  // namespace wheelfit::backends::rocm
