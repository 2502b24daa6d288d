#pragma once
// What every test plugin shares (ABI 2): a small valid format-2 policy and trivial target
// functions, so each case file states only what makes it that case. Header-only; a plugin links
// none of the core. test_registry.cpp uses it in-process too.
//
// The target grammar: a target is any non-empty text without ';' or spaces inside, canonicalised
// by trimming and lower-casing ("  FK1 " -> "fk1"); a list is targets separated by ';' (empty
// entries and surrounding spaces dropped; an empty list is malformed). A list covers a target
// natively when it holds it, by JIT when it holds "<target>+jit"; 0 otherwise.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/registry/plugin_support.hpp"

namespace wheelfit::test_plugin {

/// A minimal format-2 policy: the notation, the label grammar, the torch index, the device name
/// and the driver rule; every table empty, no fallback.
inline constexpr const char* kMinimalPolicy = R"({
  "format": 2,
  "version": "test-1",
  "backend": {
    "line": {"key": "test", "prefix": "ts", "name": "Test"},
    "combo_labels": ["ts{line:nodot}torch{torch}"],
    "torch_labels": ["ts{line:nodot}"],
    "torch_index": "https://example.test/torch/ts{line_nodot}",
    "device": {"name": "test target"},
    "driver": {"rule": "unknown", "why": "a test backend"}
  },
  "arch_policy": {},
  "arch_exceptions": {},
  "packages": {},
  "pytorch_matrix": {},
  "torch_family": {},
  "pypi_line": {},
  "fallback": {}
})";

inline std::string trim_lower(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string out;
  for (const char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline plugin::Parsed target(std::string_view text) {
  const std::string t = trim_lower(text);
  if (t.empty()) return {false, "is not a test target: it is empty"};
  for (const char c : t) {
    if (c == ';' || std::isspace(static_cast<unsigned char>(c))) {
      return {false, "is not a test target: it holds ';' or a space"};
    }
  }
  return {true, t};
}

/// The canonical entries of a list, or an empty vector with `why` set.
inline std::vector<std::string> entries(std::string_view text, std::string& why) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    start = end + 1;
    if (trim_lower(item).empty()) continue;
    auto t = target(item);
    if (!t.ok) {
      why = "'" + std::string(item) + "' " + t.text;
      return {};
    }
    out.push_back(std::move(t.text));
  }
  if (out.empty()) why = "the target list is empty";
  return out;
}

inline plugin::Parsed target_list(std::string_view text) {
  std::string why;
  const auto list = entries(text, why);
  if (list.empty()) return {false, why};
  std::string out;
  for (const auto& e : list) out += (out.empty() ? "" : ";") + e;
  return {true, out};
}

inline plugin::Coverage coverage(std::string_view list_text, std::string_view target_text) {
  std::string why;
  const auto list = entries(list_text, why);
  if (list.empty()) return {-1, why};
  const auto t = target(target_text);
  if (!t.ok) return {-1, t.text};
  for (const auto& e : list) {
    if (e == t.text) return {1, e};
  }
  for (const auto& e : list) {
    if (e == t.text + "+jit") return {2, e};
  }
  return {0, ""};
}

/// descriptor_v2(name) with `policy` and the three required target functions set.
inline wheelfit_backend_v2 descriptor(const char* name, const char* policy = kMinimalPolicy) noexcept {
  auto d = plugin::descriptor_v2(name);
  d.policy_json = policy;
  d.parse_target = &plugin::parse_entry<&target>;
  d.parse_target_list = &plugin::parse_entry<&target_list>;
  d.match_targets = &plugin::match_entry<&coverage>;
  return d;
}

}  // namespace wheelfit::test_plugin
