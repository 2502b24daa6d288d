#pragma once
// A time as UTC text (strftime's formats), the same on Linux and Windows: gmtime_r there,
// gmtime_s here (MSVCRT has no gmtime_r).
//
// Thread safety: reentrant.
#include <chrono>
#include <string>

namespace wheelfit::util {

/// `when` (whole seconds, rounded down) in `format` as UTC, e.g. format_utc(t, "%Y-%m-%dT%H:%M:%SZ")
/// -> "2026-12-04T14:55:00Z". At most 63 bytes of text; "" for a format longer than that.
[[nodiscard]] std::string format_utc(std::chrono::system_clock::time_point when, const char* format);

}  // namespace wheelfit::util
