// The Acme NPU backend (made up; see README.md): a complete wheelfit backend plugin, ABI 2.
//
// Device targets: "acme-n<generation>" (any case, surrounding whitespace ignored; leading zeros
// dropped), canonical "acme-n3". A target list separates targets with ';' and/or whitespace;
// canonical: ';'-joined in input order, duplicates removed; an empty list is malformed.
// Coverage rule: code built for acme-nG runs natively on an acme-nG, and on an acme-n(G+1) by JIT
// (the NPU runtime retranslates it one generation forward, slowly on first launch); never on an
// older generation and never two generations forward.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/registry/plugin_support.hpp"

// policy.json, embedded by wheelfit_add_backend_plugin(... POLICY policy.json) (CMakeLists.txt).
std::string_view acme_npu_policy_json();

namespace {

namespace plugin = wheelfit::plugin;

constexpr std::string_view kPrefix = "acme-n";

std::string trim_lower(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string out;
  for (const char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One target's generation (1-999), or 0 with `why` set.
unsigned generation(std::string_view text, std::string& why) {
  const std::string t = trim_lower(text);
  const std::string_view digits = std::string_view(t).substr(t.starts_with(kPrefix) ? kPrefix.size() : 0);
  bool ok = t.starts_with(kPrefix) && !digits.empty() && digits.size() <= 3;
  for (const char c : digits) ok = ok && c >= '0' && c <= '9';
  const unsigned g = ok ? static_cast<unsigned>(std::stoul(std::string(digits))) : 0;
  if (g == 0) why = "is not an Acme NPU target (expected acme-n<generation>, such as acme-n3)";
  return g;
}

std::string name(unsigned g) { return std::string(kPrefix) + std::to_string(g); }

// The generations of a list, in order, without duplicates; empty with `why` set when malformed.
std::vector<unsigned> generations(std::string_view text, std::string& why) {
  std::vector<unsigned> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ';' || std::isspace(static_cast<unsigned char>(text[i])))) ++i;
    std::size_t end = i;
    while (end < text.size() && text[end] != ';' && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end == i) break;
    std::string item_why;
    const unsigned g = generation(text.substr(i, end - i), item_why);
    if (g == 0) {
      why = "'" + std::string(text.substr(i, end - i)) + "' " + item_why;
      return {};
    }
    bool seen = false;
    for (const unsigned h : out) seen = seen || h == g;
    if (!seen) out.push_back(g);
    i = end;
  }
  if (out.empty() && why.empty()) why = "the target list is empty";
  return out;
}

plugin::Parsed target(std::string_view text) {
  std::string why;
  const unsigned g = generation(text, why);
  if (g == 0) return {false, why};
  return {true, name(g)};
}

plugin::Parsed target_list(std::string_view text) {
  std::string why;
  const auto list = generations(text, why);
  if (list.empty()) return {false, why};
  std::string out;
  for (const unsigned g : list) out += (out.empty() ? "" : ";") + name(g);
  return {true, out};
}

plugin::Coverage coverage(std::string_view list_text, std::string_view device) {
  std::string why;
  const auto list = generations(list_text, why);
  if (list.empty()) return {-1, why};
  const unsigned d = generation(device, why);
  if (d == 0) return {-1, "'" + std::string(device) + "' " + why};
  for (const unsigned g : list) {
    if (g == d) return {1, name(g)};  // natively
  }
  for (const unsigned g : list) {
    if (g + 1 == d) return {2, name(g)};  // by JIT, one generation forward
  }
  return {0, ""};
}

// There is no Acme NPU to find: say so, the way a real backend reports a missing runtime.
std::string detect() {
  return R"({"present": false, "notes": ["acme npu: a made-up backend (examples/backend-plugin); there is no hardware to detect, give gpus = [\"acme-n3\"] in a machine profile"]})";
}

}  // namespace

WHEELFIT_BACKEND_PLUGIN_ENTRY {
  static const wheelfit_backend_v2 descriptor = [] {
    auto d = plugin::descriptor_v2("npu");
    d.description = "Acme NPU (made up: the out-of-tree example backend, examples/backend-plugin); no wheel index "
                    "is published (give one with --index or ACME_NPU_WHEELS_INDEX)";
    d.index_env = "ACME_NPU_WHEELS_INDEX";
    d.policy_json = acme_npu_policy_json().data();  // a NUL-terminated static array
    d.detect = &plugin::detect_entry<&detect>;
    plugin::set_target_functions<&target, &target_list, &coverage>(d);
    // read_device_code stays NULL: no device-code reader, so `explain` reports that demand as not checked.
    return d;
  }();
  return &descriptor;
}
