#pragma once
// Header-only help for backend plugin authors (C++). Nothing here is used by the core; a plugin
// needs this header, plugin_abi.h and Boost's config headers, and links none of the core.
//
//   #include "wheelfit/registry/plugin_support.hpp"
//
//   namespace { std::string detect() { ... return R"({"present": false})"; } }
//
//   WHEELFIT_BACKEND_PLUGIN_ENTRY {
//     static const wheelfit_backend_v2 descriptor = [] {
//       auto d = wheelfit::plugin::descriptor_v2("fake");
//       d.index_url = "https://example.test/wheels/";
//       d.policy_json = my_policy_json;  // the backend's semantics as data (policies/README.md)
//       d.detect = &wheelfit::plugin::detect_entry<&detect>;
//       wheelfit::plugin::set_target_functions<&target, &target_list, &coverage>(d);
//       return d;
//     }();
//     return &descriptor;
//   }
//
// The rules the helpers keep (plugin_abi.h): nothing C++ crosses the boundary. detect_entry
// wraps a `std::string detect()` into the C shape `const char* (*)(void)`: every exception
// (std::exception or anything else) is caught inside the plugin and turned into
// {"present": false, "error": "<what>"}; the text lives in a thread_local buffer until the next
// call on the same thread. The entry is exported with `extern "C" WHEELFIT_PLUGIN_EXPORT`
// (plugin_abi.h: default visibility in a -fvisibility=hidden build, dllexport on Windows), so it
// is the only symbol the plugin exports.

#include <boost/config.hpp>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelfit/registry/plugin_abi.h"

namespace wheelfit::plugin {

/// `text` as the body of a JSON string (quotes, backslashes and control characters escaped;
/// other bytes, UTF-8 included, are copied).
inline std::string json_escape(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 2);
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += hex[(static_cast<unsigned char>(c) >> 4) & 0xf];
          out += hex[static_cast<unsigned char>(c) & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out;
}

/// `items` as a JSON array of strings: ["a", "b"].
inline std::string json_string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", \"" : "\"") + json_escape(items[i]) + "\"";
  return out + "]";
}

/// Named lists of strings, in an order that the JSON object keeps.
using NamedLists = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// `lists` as a JSON object in their order: {"<name>": ["<item>", ...], ...}.
inline std::string json_named_lists(const NamedLists& lists) {
  std::string out = "{";
  for (std::size_t k = 0; k < lists.size(); ++k) {
    out += (k ? ", \"" : "\"") + json_escape(lists[k].first) + "\": " + json_string_array(lists[k].second);
  }
  return out + "}";
}

/// The JSON read_device_code answers (plugin_abi.h): {"list": "<list>", "entries": {"<kind>":
/// ["<entry>", ...], ...}} with the kinds in the order given.
inline std::string device_code_answer(std::string_view list, const NamedLists& entries) {
  return "{\"list\": \"" + json_escape(list) + "\", \"entries\": " + json_named_lists(entries) + "}";
}

/// The answer of read_device_code for bytes it cannot read: {"error": "<what>"}.
inline std::string device_code_error(std::string_view what) { return "{\"error\": \"" + json_escape(what) + "\"}"; }

/// One feature of a backend's variant namespace as variant_properties reports it (plugin_abi.h).
struct VariantFeature {
  std::string name;                 ///< "sm_arch"
  std::vector<std::string> values;  ///< the values this machine supports, best first
  NamedLists devices;               ///< per device target, the values that serve that one device; empty: none given
};

/// The JSON variant_properties answers (plugin_abi.h) for the namespace `ns`: {"properties":
/// {"<ns>": {"<feature>": [...], ...}}, "devices": {"<ns> :: <feature>": {"<target>": [...]}},
/// "notes": [...]}, the features in the order given (their priority; JSON key order is kept).
/// No feature is {"properties": {"<ns>": {}}, ...}: the namespace is known, nothing supported.
inline std::string variant_properties_answer(std::string_view ns, const std::vector<VariantFeature>& features,
                                             const std::vector<std::string>& notes) {
  NamedLists properties;
  std::string devices;
  for (const auto& f : features) {
    properties.emplace_back(f.name, f.values);
    if (f.devices.empty()) continue;
    devices += (devices.empty() ? "\"" : ", \"") + json_escape(std::string(ns) + " :: " + f.name) + "\": " + json_named_lists(f.devices);
  }
  return "{\"properties\": {\"" + json_escape(ns) + "\": " + json_named_lists(properties) + "}, \"devices\": {" + devices +
         "}, \"notes\": " + json_string_array(notes) + "}";
}

/// The detection result for "detection itself failed": {"present": false, "error": "<what>"}.
inline std::string detection_error_json(std::string_view what) {
  return "{\"present\": false, \"error\": \"" + json_escape(what) + "\"}";
}

/// A descriptor with the version, the size and `name` set, every other string "" (none) and no
/// functions; set the rest field by field (policy_json and the three target functions are
/// required: see plugin_abi.h).
constexpr wheelfit_backend_v2 descriptor_v2(const char* name) noexcept {
  wheelfit_backend_v2 d{};
  d.abi_version = WHEELFIT_BACKEND_ABI_VERSION;
  d.size = static_cast<uint32_t>(sizeof(wheelfit_backend_v2));
  d.name = name;
  d.description = "";
  d.index_url = "";
  d.index_env = "";
  d.releases_repo = "";
  d.policy_json = "";
  d.detect = nullptr;
  d.parse_target = nullptr;
  d.parse_target_list = nullptr;
  d.match_targets = nullptr;
  d.read_device_code = nullptr;
  d.variant_properties = nullptr;
  d.describe_target_list = nullptr;
  d.read_device_code_at = nullptr;
  return d;
}

/// What a C++ grammar function returns: the canonical text, or why the input is not one.
struct Parsed {
  bool ok = false;
  std::string text;
};

/// The C shape `const char* (*)(const char*, int*)` for `Fn` (parse_target, parse_target_list).
/// Never throws: an exception becomes *ok = 0 with its text.
template <Parsed (*Fn)(std::string_view)>
const char* parse_entry(const char* text, int* ok) noexcept {
  static thread_local std::string buffer;
  *ok = 0;
  try {
    Parsed r = Fn(text ? std::string_view(text) : std::string_view());
    buffer = std::move(r.text);
    *ok = r.ok ? 1 : 0;
  } catch (...) {
    return "the backend failed to parse it (an exception)";
  }
  return buffer.c_str();
}

/// What a C++ coverage function returns: 1 native, 2 JIT, 0 not covered, -1 malformed; `via`
/// is the serving entry or the reason.
struct Coverage {
  int how = 0;
  std::string via;
};

/// The C shape of match_targets for `Fn`. Never throws: an exception becomes -1.
template <Coverage (*Fn)(std::string_view list, std::string_view target)>
int match_entry(const char* list, const char* target, const char** via) noexcept {
  static thread_local std::string buffer;
  try {
    Coverage r = Fn(list ? std::string_view(list) : std::string_view(), target ? std::string_view(target) : std::string_view());
    buffer = std::move(r.via);
    *via = buffer.c_str();
    return r.how;
  } catch (...) {
    *via = "the backend failed to judge coverage (an exception)";
    return -1;
  }
}

/// Sets the three required target functions from their C++ forms: parse_target (`Target`),
/// parse_target_list (`List`) and match_targets (`Match`).
template <Parsed (*Target)(std::string_view), Parsed (*List)(std::string_view),
          Coverage (*Match)(std::string_view, std::string_view)>
constexpr void set_target_functions(wheelfit_backend_v2& d) noexcept {
  d.parse_target = &parse_entry<Target>;
  d.parse_target_list = &parse_entry<List>;
  d.match_targets = &match_entry<Match>;
}

/// Runs `make` (returning a JSON answer of plugin_abi.h) into `buffer` and returns it. Never
/// throws: an exception becomes {"error": "<prefix><what>"}, or `fixed` when even that fails.
template <class Make>
const char* guarded_answer(std::string& buffer, Make&& make, const char* prefix, const char* fixed) noexcept {
  try {
    buffer = make();
  } catch (const std::exception& e) {
    try {
      buffer = device_code_error(std::string(prefix) + e.what());
    } catch (...) {
      return R"({"error": "out of memory"})";
    }
  } catch (...) {
    return fixed;
  }
  return buffer.c_str();
}

/// The C shape of read_device_code for `Fn` (returning the JSON object of plugin_abi.h). Never
/// throws: an exception becomes {"error": "<what>"}.
template <std::string (*Fn)(std::string_view section, const unsigned char* bytes, std::size_t size)>
const char* device_code_entry(const char* section, const unsigned char* bytes, std::size_t size) noexcept {
  static thread_local std::string buffer;
  return guarded_answer(
      buffer, [&] { return Fn(section ? std::string_view(section) : std::string_view(), bytes, size); }, "",
      R"x({"error": "the backend failed to read the device code (an exception)"})x");
}

/// The C shape of read_device_code_at for `Fn` (the section's size and the core's read function
/// in, the plugin_abi.h JSON out). Never throws: an exception becomes {"error": "<what>"}.
template <std::string (*Fn)(std::string_view section, std::uint64_t size, wheelfit_section_read_fn read, void* ctx)>
const char* device_code_at_entry(const char* section, std::uint64_t size, wheelfit_section_read_fn read, void* ctx) noexcept {
  static thread_local std::string buffer;
  return guarded_answer(
      buffer, [&] { return Fn(section ? std::string_view(section) : std::string_view(), size, read, ctx); }, "",
      R"x({"error": "the backend failed to read the device code (an exception)"})x");
}

/// The C shape of describe_target_list for `Fn` (a list in, the read_device_code JSON out). Never
/// throws: an exception becomes {"error": "<what>"}.
template <std::string (*Fn)(std::string_view list)>
const char* describe_list_entry(const char* list) noexcept {
  static thread_local std::string buffer;
  return guarded_answer(
      buffer, [&] { return Fn(list ? std::string_view(list) : std::string_view()); }, "",
      R"x({"error": "the backend failed to describe a target list (an exception)"})x");
}

/// The C shape of variant_properties for `Fn` (the facts JSON in, the plugin_abi.h JSON out).
/// Never throws: an exception becomes {"error": "<what>"}.
template <std::string (*Fn)(std::string_view facts_json)>
const char* variant_properties_entry(const char* facts_json) noexcept {
  static thread_local std::string buffer;
  return guarded_answer(
      buffer, [&] { return Fn(facts_json ? std::string_view(facts_json) : std::string_view("{}")); },
      "variant properties: ", R"x({"error": "the backend failed to compute its variant properties (an exception)"})x");
}

/// The C detect function for `Detect` (a `std::string()` returning the plugin_abi.h JSON).
/// Never throws: an exception from Detect becomes {"present": false, "error": "<what>"}; if
/// even that cannot be built (out of memory), a fixed text is returned.
template <std::string (*Detect)()>
const char* detect_entry() noexcept {
  static thread_local std::string buffer;
  static constexpr const char* kOutOfMemory = R"({"present": false, "error": "out of memory while reporting a detection error"})";
  try {
    try {
      buffer = Detect();
    } catch (const std::exception& e) {
      buffer = detection_error_json(std::string("detection failed: ") + e.what());
    } catch (...) {
      buffer = detection_error_json("detection failed: an exception that is not a std::exception");
    }
  } catch (...) {
    return kOutOfMemory;
  }
  return buffer.c_str();
}

}  // namespace wheelfit::plugin

/// Opens the definition of the plugin's exported entry point; follow it with the body, which
/// returns a pointer to a descriptor that lives as long as the library (a function-local static).
#define WHEELFIT_BACKEND_PLUGIN_ENTRY \
  extern "C" WHEELFIT_PLUGIN_EXPORT const wheelfit_backend_v2* wheelfit_backend_entry(void) noexcept
