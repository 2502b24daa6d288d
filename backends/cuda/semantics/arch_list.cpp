// ArchList: TORCH_CUDA_ARCH_LIST syntax and the CUDA coverage rule (policies/README.md); compute
// capabilities as device targets.

#include <algorithm>
#include <cctype>

#include "wheelfit/backends/cuda_rules.hpp"

namespace wheelfit::backends::cuda {
namespace {

bool is_separator(char c) { return c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// "8.6", "9.0+PTX", "9.0a", "10.0f+ptx".
Expected<ArchTarget> parse_target(std::string_view token, std::string_view list) {
  auto bad = [&](std::string_view why) {
    return unexpected(Errc::invalid_input, "'" + std::string(token) + "' is not an arch target (" + std::string(why) +
                                               ") in arch list '" + std::string(list) + "'");
  };
  ArchTarget t;
  std::string_view cc = token;
  if (cc.size() > 3 && iequals(cc.substr(cc.size() - 3), "ptx") && cc[cc.size() - 4] != '+') {  // "8.0ptx": PTX alone
    t.ptx = true;
    t.sass = false;
    cc.remove_suffix(3);
  } else if (auto plus = token.find('+'); plus != std::string_view::npos) {
    if (!iequals(token.substr(plus), "+PTX")) return bad("the only suffix is +PTX");
    t.ptx = true;
    cc = token.substr(0, plus);
  }
  if (!cc.empty() && (cc.back() == 'a' || cc.back() == 'f' || cc.back() == 'A' || cc.back() == 'F')) {
    t.variant = static_cast<char>(std::tolower(static_cast<unsigned char>(cc.back())));
    cc.remove_suffix(1);
  }
  if (cc.empty()) return bad("expected X.Y");
  auto v = model::NumericVersion::parse(cc);
  if (!v || v->parts().size() != 2) return bad("expected X.Y, a compute capability such as 8.6");
  if (v->major() == 0 || v->major() > 99 || v->minor() > 9) return bad("not a compute capability");
  t.cc = v->truncated(2);  // canonical spelling: "08.0" is 8.0
  return t;
}

// Whether the code of `t` (SASS, or PTX when `jit`) runs on `gpu` (major.minor).
bool runs_on(const ArchTarget& t, const model::NumericVersion& gpu, bool jit) {
  switch (t.variant) {
    case 'a':  // arch-specific: exactly that cc, PTX included
      return t.cc == gpu;
    case 'f':  // family-specific: same major, minor >= (PTX included: it never JITs forward)
      return t.cc.major() == gpu.major() && t.cc.minor() <= gpu.minor();
    default:
      return jit ? t.cc <= gpu : (t.cc.major() == gpu.major() && t.cc.minor() <= gpu.minor());
  }
}

}  // namespace

Expected<ArchList> ArchList::parse(std::string_view text) {
  std::vector<ArchTarget> targets;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_separator(text[i])) {
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < text.size() && !is_separator(text[i])) ++i;
    auto t = parse_target(text.substr(start, i - start), text);
    if (!t) return t.error();
    targets.push_back(std::move(*t));
  }
  if (targets.empty()) {
    return unexpected(Errc::invalid_input, "arch list '" + std::string(text) + "' names no target");
  }
  return ArchList(std::move(targets));
}

std::optional<ArchMatch> ArchList::match(const model::NumericVersion& gpu_cc) const {
  const model::NumericVersion gpu = gpu_cc.truncated(2);
  std::optional<ArchMatch> sass, ptx;
  for (const auto& t : targets_) {
    if (t.sass && runs_on(t, gpu, false) && (!sass || sass->target.cc < t.cc)) sass = ArchMatch{t, false};
    if (t.ptx && runs_on(t, gpu, true) && (!ptx || ptx->target.cc < t.cc)) ptx = ArchMatch{t, true};
  }
  return sass ? sass : ptx;
}

std::string ArchList::str() const {
  std::string out;
  for (const auto& t : targets_) {
    if (!out.empty()) out += ';';
    out += t.cc.str();
    if (t.variant != '\0') out += t.variant;
    if (t.ptx) out += t.sass ? "+PTX" : "ptx";
  }
  return out;
}

}  // namespace wheelfit::backends::cuda
