#pragma once
// Header-only help for backend plugin authors (C++). Nothing here is used by the core; a plugin
// needs this header, plugin_abi.h and Boost's config headers, and links none of the core.
//
//   #include "wheelfit/registry/plugin_support.hpp"
//
//   namespace { std::string detect() { ... return R"({"present": false})"; } }
//
//   WHEELFIT_BACKEND_PLUGIN_ENTRY {
//     static const wheelfit_backend_v1 descriptor = [] {
//       auto d = wheelfit::plugin::descriptor_v1("fake");
//       d.index_url = "https://example.test/wheels/";
//       d.detect = &wheelfit::plugin::detect_entry<&detect>;
//       return d;
//     }();
//     return &descriptor;
//   }
//
// The rules the helpers keep (plugin_abi.h): nothing C++ crosses the boundary. detect_entry
// wraps a `std::string detect()` into the C shape `const char* (*)(void)`: every exception
// (std::exception or anything else) is caught inside the plugin and turned into
// {"present": false, "error": "<what>"}; the text lives in a thread_local buffer until the next
// call on the same thread. The entry is exported with `extern "C" BOOST_SYMBOL_EXPORT` (the
// project builds with -fvisibility=hidden, so it is the only symbol the plugin exports).

#include <boost/config.hpp>
#include <exception>
#include <string>
#include <string_view>

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

/// The detection result for "detection itself failed": {"present": false, "error": "<what>"}.
inline std::string detection_error_json(std::string_view what) {
  return "{\"present\": false, \"error\": \"" + json_escape(what) + "\"}";
}

/// A descriptor with the version, the size and `name` set and every other string "" (none) and
/// no detection; set the rest field by field.
constexpr wheelfit_backend_v1 descriptor_v1(const char* name) noexcept {
  wheelfit_backend_v1 d{};
  d.abi_version = WHEELFIT_BACKEND_ABI_VERSION;
  d.size = static_cast<uint32_t>(sizeof(wheelfit_backend_v1));
  d.name = name;
  d.description = "";
  d.index_url = "";
  d.index_env = "";
  d.releases_repo = "";
  d.torch_label = "";
  d.torch_index_pattern = "";
  d.policy_json = "";
  d.detect = nullptr;
  return d;
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
  extern "C" BOOST_SYMBOL_EXPORT const wheelfit_backend_v1* wheelfit_backend_entry(void) noexcept
