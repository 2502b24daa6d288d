// The CUDA backend's target functions (plugin_abi.h) and its descriptor.

#include <algorithm>
#include <cctype>

#include "wheelfit/backends/cuda_detect.hpp"
#include "wheelfit/backends/cuda_fatbin.hpp"
#include "wheelfit/backends/cuda_rules.hpp"
#include "wheelfit/backends/cuda_variants.hpp"
#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::backends::cuda {
namespace detail {
/// backends/cuda/data/policy.json, embedded at build time (backends/cuda/CMakeLists.txt).
std::string_view policy_json();
}  // namespace detail

namespace {

std::string trim_lower(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

plugin::Parsed target(std::string_view text) {
  auto cc = parse_compute_capability(text);
  if (!cc) return {false, cc.error().message};
  return {true, cc->str()};
}

plugin::Parsed target_list(std::string_view text) {
  auto list = ArchList::parse(text);
  if (!list) return {false, list.error().message};
  return {true, list->str()};
}

std::string device_code(std::string_view section, const unsigned char* bytes, std::size_t size) {
  return device_code_json(section, std::string_view(reinterpret_cast<const char*>(bytes), size));
}

// "7.5;9.0+PTX" -> {"list": "7.5;9.0+PTX", "entries": {"sass": ["sm_75", "sm_90"], "ptx": ["compute_90"]}}.
std::string describe(std::string_view list_text) {
  auto list = ArchList::parse(list_text);
  if (!list) return plugin::device_code_error(list.error().message);
  plugin::NamedLists entries{{"sass", {}}, {"ptx", {}}};
  for (const auto& t : list->targets()) {
    const std::string arch = std::to_string(t.cc.major() * 10 + t.cc.minor()) +
                             (t.variant ? std::string(1, t.variant) : std::string());
    if (t.sass) entries[0].second.push_back("sm_" + arch);
    if (t.ptx) entries[1].second.push_back("compute_" + arch);
  }
  return plugin::device_code_answer(list->str(), entries);
}

plugin::Coverage coverage(std::string_view list_text, std::string_view target_text) {
  auto list = ArchList::parse(list_text);
  if (!list) return {-1, list.error().message};
  auto cc = parse_compute_capability(target_text);
  if (!cc) return {-1, cc.error().message};
  const auto m = list->match(*cc);
  if (!m) return {0, ""};
  // The entry as CUDA's tools name it: "sm_90a SASS", "compute_90 PTX".
  const std::string arch = std::to_string(m->target.cc.major() * 10 + m->target.cc.minor()) +
                           (m->target.variant ? std::string(1, m->target.variant) : std::string());
  return {m->jit ? 2 : 1, m->jit ? "compute_" + arch + " PTX" : "sm_" + arch + " SASS"};
}

}  // namespace

Expected<model::NumericVersion> parse_compute_capability(std::string_view item) {
  const std::string s = trim_lower(item);
  auto bad = [&](const std::string& why) { return unexpected(Errc::invalid_input, "is not a compute capability: " + why); };
  if (s.empty()) return bad("it is empty");
  if (s.starts_with("sm")) {
    std::string_view digits = std::string_view(s).substr(2);
    if (digits.starts_with("_")) digits.remove_prefix(1);
    if (!all_digits(digits) || digits.size() < 2 || digits.size() > 3) {
      return bad("write sm_XY (such as sm_90) or X.Y (such as 9.0)");
    }
    const auto major = static_cast<std::uint32_t>(std::stoul(std::string(digits.substr(0, digits.size() - 1))));
    const auto minor = static_cast<std::uint32_t>(digits.back() - '0');
    return model::NumericVersion({major, minor});
  }
  auto v = model::NumericVersion::parse(s);
  if (!v) return bad("write X.Y (such as 9.0) or sm_XY (such as sm_90)");
  if (v->parts().size() != 2) return bad("write major.minor (such as 9.0)");
  return v->truncated(2);
}

const wheelfit_backend_v2* descriptor() {
  static const wheelfit_backend_v2 d = [] {
    auto b = plugin::descriptor_v2("cuda");
    b.description = "NVIDIA CUDA: wheels from the cuda-wheels farm; detection via NVML, libcuda, nvidia-smi, "
                    "/proc, /sys, WSL, PCI";
    b.index_url = "https://comfy-forge.github.io/cuda-wheels/";
    b.index_env = "COMFY_ENV_CUDA_WHEELS_INDEX";
    b.releases_repo = "Comfy-Forge/cuda-wheels";
    b.policy_json = detail::policy_json().data();  // a NUL-terminated static array
    b.detect = &plugin::detect_entry<&detect_json>;  // never throws; wrapped anyway
    plugin::set_target_functions<&target, &target_list, &coverage>(b);
    b.read_device_code = &plugin::device_code_entry<&device_code>;
    b.variant_properties = &plugin::variant_properties_entry<&variant_properties_json>;
    b.describe_target_list = &plugin::describe_list_entry<&describe>;
    b.read_device_code_at = &plugin::device_code_at_entry<&device_code_at_json>;
    return b;
  }();
  return &d;
}

}  // namespace wheelfit::backends::cuda
