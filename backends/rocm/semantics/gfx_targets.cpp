// ROCm device targets: the gfx target-id grammar and the code-object-runs-on-device rule.
#include "wheelfit/backends/rocm_targets.hpp"

#include <algorithm>
#include <span>
#include <vector>

namespace wheelfit::backends::rocm {
namespace {

constexpr std::string_view kExample = "write a gfx target such as gfx90a or gfx90a:xnack-";
constexpr std::string_view kListExample = "write gfx targets such as gfx90a;gfx1100";
constexpr std::string_view kTriplePrefix = "amdgcn-amd-amdhsa--";
constexpr std::string_view kGenericSuffix = "-generic";
constexpr std::string_view kWhitespace = " \t\r\n\f\v";
constexpr std::string_view kListSeparators = "; \t\r\n\f\v";

// AMDGPUUsage "Generic processors" (table amdgpu-generic-processor-table): each generic
// processor and the processors its code objects run on. Taken from llvm/llvm-project
// llvm/docs/AMDGPUUsage.rst @ f5c8b0a9139b, plus gfx12-5-generic from ROCm/llvm-project
// llvm/docs/AMDGPUUsage.rst @ 056c6fbd9aa2. gfx940 and gfx941 are kept from the table as of
// llvmorg-20.1.0: they left it only because LLVM later dropped those processors altogether.
constexpr std::string_view kGfx9[] = {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"};
constexpr std::string_view kGfx9_4[] = {"gfx940", "gfx941", "gfx942", "gfx950"};
constexpr std::string_view kGfx10_1[] = {"gfx1010", "gfx1011", "gfx1012", "gfx1013"};
constexpr std::string_view kGfx10_3[] = {"gfx1030", "gfx1031", "gfx1032", "gfx1033",
                                         "gfx1034", "gfx1035", "gfx1036"};
constexpr std::string_view kGfx11[] = {"gfx1100", "gfx1101", "gfx1102", "gfx1103",
                                       "gfx1150", "gfx1151", "gfx1152", "gfx1153"};
constexpr std::string_view kGfx12[] = {"gfx1200", "gfx1201"};
constexpr std::string_view kGfx12_5[] = {"gfx1250", "gfx1251"};

struct Generic {
  std::string_view name;
  std::span<const std::string_view> members;
};
constexpr Generic kGenerics[] = {
    {"gfx9-generic", kGfx9},     {"gfx9-4-generic", kGfx9_4}, {"gfx10-1-generic", kGfx10_1},
    {"gfx10-3-generic", kGfx10_3}, {"gfx11-generic", kGfx11},   {"gfx12-generic", kGfx12},
    {"gfx12-5-generic", kGfx12_5},
};

// A feature's setting; `any` is "not named in the target id".
enum class Setting { any, on, off };

struct Target {
  std::string processor;
  bool generic = false;
  Setting sramecc = Setting::any;
  Setting xnack = Setting::any;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(kWhitespace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kWhitespace) - b + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string quoted(std::string_view s) { return '"' + std::string(s) + '"'; }

// "gfx" + 3-4 hex digits, the first a decimal digit: gfx803, gfx90a, gfx1100.
bool is_processor(std::string_view p) {
  if (!p.starts_with("gfx")) return false;
  const auto digits = p.substr(3);
  return (digits.size() == 3 || digits.size() == 4) && is_digit(digits[0]) &&
         std::all_of(digits.begin(), digits.end(), is_hex);
}

// "gfx" N ("-" N)* "-generic": gfx9-generic, gfx10-3-generic.
bool is_generic(std::string_view p) {
  if (!p.starts_with("gfx") || !p.ends_with(kGenericSuffix)) return false;
  const auto version = p.substr(3, p.size() - 3 - kGenericSuffix.size());  // "9", "10-3"
  bool after_digit = false;
  for (char c : version) {
    if (is_digit(c))
      after_digit = true;
    else if (c == '-' && after_digit)
      after_digit = false;
    else
      return false;
  }
  return after_digit;
}

const Generic* find_generic(std::string_view name) {
  for (const auto& g : kGenerics)
    if (g.name == name) return &g;
  return nullptr;
}

std::string canonical(const Target& t) {
  std::string out = t.processor;
  const auto add = [&out](std::string_view name, Setting s) {
    if (s == Setting::any) return;
    out += ':';
    out += name;
    out += s == Setting::on ? '+' : '-';
  };
  add("sramecc", t.sramecc);  // alphabetic order, as LLVM's canonical target id
  add("xnack", t.xnack);
  return out;
}

// One ":feature+" / ":feature-" component (without the ':') into `t`; false with `error` set.
bool parse_feature(std::string_view feature, Target& t, std::string& error) {
  if (feature.empty()) {
    error = "empty target feature";
    return false;
  }
  const char sign = feature.back();
  const auto name = feature.substr(0, feature.size() - 1);
  if (sign != '+' && sign != '-') {
    error = "target feature " + quoted(feature) + " needs \"+\" or \"-\"";
    return false;
  }
  Setting* slot = name == "sramecc" ? &t.sramecc : name == "xnack" ? &t.xnack : nullptr;
  if (slot == nullptr) {
    error = "unknown target feature " + quoted(name) + " (a target id names only sramecc and xnack)";
    return false;
  }
  if (*slot != Setting::any) {
    error = "target feature " + quoted(name) + " is given twice";
    return false;
  }
  *slot = sign == '+' ? Setting::on : Setting::off;
  return true;
}

// parse_target's work: the target into `t`, or false with `error` (with the example) set.
bool parse_one(std::string_view text, Target& t, std::string& error) {
  const auto raw = trim(text);
  const auto fail = [&](const std::string& what) {
    error = (raw.empty() ? what : quoted(raw) + ": " + what) + "; " + std::string(kExample);
    return false;
  };
  if (raw.empty()) return fail("no gfx target given");
  std::string id = lower(raw);
  if (id.starts_with(kTriplePrefix)) id.erase(0, kTriplePrefix.size());

  const auto colon = id.find(':');
  const std::string_view processor = std::string_view(id).substr(0, colon);
  t = Target{};
  t.processor = std::string(processor);
  t.generic = is_generic(processor);
  if (!t.generic && !is_processor(processor)) {
    if (!processor.starts_with("gfx")) return fail("not a gfx target");
    return fail("processor " + quoted(processor) +
                " is not a gfx processor (\"gfx\" and 3 or 4 hex digits, or a generic one such as gfx9-generic)");
  }
  if (colon == std::string::npos) return true;

  std::string_view rest = std::string_view(id).substr(colon + 1);
  while (true) {
    const auto next = rest.find(':');
    std::string what;
    if (!parse_feature(rest.substr(0, next), t, what)) return fail(what);
    if (next == std::string_view::npos) return true;
    rest.remove_prefix(next + 1);
  }
}

// parse_target_list's work: the distinct targets in input order, or false with `error` set.
bool parse_list(std::string_view text, std::vector<Target>& out, std::string& error) {
  out.clear();
  std::vector<std::string> seen;
  std::size_t index = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto end = std::min(text.find_first_of(kListSeparators, pos), text.size());
    const auto entry = text.substr(pos, end - pos);
    pos = end + 1;
    if (entry.empty()) continue;
    ++index;
    Target t;
    if (!parse_one(entry, t, error)) {
      error = "entry " + std::to_string(index) + " of the target list: " + error;
      return false;
    }
    auto c = canonical(t);
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(std::move(c));
    out.push_back(std::move(t));
  }
  if (out.empty()) {
    error = "empty target list; " + std::string(kListExample);
    return false;
  }
  return true;
}

// The feature half of the rule (AMDGPUUsage "Target Features", sramecc and xnack: "If
// specified, generate code that can only be loaded and executed in a process that has a
// matching setting"; unspecified, code object V4+ runs with either setting). A device setting
// that is not known matches only "any", as in clang's isCodeObjectCompatible.
bool features_fit(const Target& code, const Target& device) {
  const auto fits = [](Setting c, Setting d) { return c == Setting::any || c == d; };
  return fits(code.sramecc, device.sramecc) && fits(code.xnack, device.xnack);
}

bool generic_covers(const Target& code, const Target& device) {
  const Generic* g = code.generic ? find_generic(code.processor) : nullptr;
  return g != nullptr && std::find(g->members.begin(), g->members.end(), device.processor) != g->members.end();
}

}  // namespace

TargetParse parse_target(std::string_view text) {
  Target t;
  std::string error;
  if (!parse_one(text, t, error)) return {false, "", std::move(error)};
  return {true, canonical(t), ""};
}

TargetParse parse_target_list(std::string_view text) {
  std::vector<Target> targets;
  std::string error;
  if (!parse_list(text, targets, error)) return {false, "", std::move(error)};
  std::string joined;
  for (const auto& t : targets) {
    if (!joined.empty()) joined += ';';
    joined += canonical(t);
  }
  return {true, std::move(joined), ""};
}

// The processor half of the rule (AMDGPUUsage "Processors" and "Generic processors"): a code
// object runs on its own processor, and a generic one on each processor of its table row.
Match match(std::string_view list, std::string_view device) {
  std::vector<Target> entries;
  std::string error;
  if (!parse_list(list, entries, error)) return {-1, std::move(error)};
  Target dev;
  if (!parse_one(device, dev, error)) return {-1, "device: " + error};
  if (dev.generic)
    return {-1, "device: " + quoted(trim(device)) +
                    " is a generic processor; a device is a real processor such as gfx90a:sramecc+:xnack-"};

  const Target* via_generic = nullptr;
  for (const auto& e : entries) {
    if (!features_fit(e, dev)) continue;
    if (e.processor == dev.processor) return {1, canonical(e)};
    if (via_generic == nullptr && generic_covers(e, dev)) via_generic = &e;
  }
  if (via_generic != nullptr) return {1, canonical(*via_generic)};
  return {0, ""};
}

}  // namespace wheelfit::backends::rocm
