// util::format_utc: one helper for UTC text on Linux (gmtime_r) and Windows (gmtime_s).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "wheelfit/util/utc_time.hpp"

using namespace std::chrono;
using wheelfit::util::format_utc;

TEST_CASE("format_utc: times and formats as the manifest, the mirror and the rate limits write them", "[util][utc]") {
  struct Row {
    const char* what;
    sys_seconds when;
    const char* format;
    const char* text;
  };
  const Row rows[] = {
      {"the epoch", sys_seconds{}, "%Y-%m-%dT%H:%M:%SZ", "1970-01-01T00:00:00Z"},
      {"a leap day, RFC 3339", sys_days{2024y / 2 / 29} + 23h + 59min + 59s, "%Y-%m-%dT%H:%M:%SZ", "2024-02-29T23:59:59Z"},
      {"a snapshot id", sys_days{2026y / 12 / 4} + 14h + 5min + 9s, "%Y%m%dT%H%M%SZ", "20261204T140509Z"},
      {"after 2038", sys_days{2040y / 1 / 1} + 1s, "%Y-%m-%dT%H:%M:%S", "2040-01-01T00:00:01"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    CHECK(format_utc(system_clock::time_point(r.when), r.format) == r.text);
  }
}

TEST_CASE("format_utc: a fraction of a second is dropped, not rounded up", "[util][utc]") {
  const auto t = system_clock::time_point(sys_days{2026y / 12 / 31} + 23h + 59min + 59s) + milliseconds(999);
  CHECK(format_utc(t, "%Y-%m-%dT%H:%M:%SZ") == "2026-12-31T23:59:59Z");
}

TEST_CASE("format_utc: an empty format, and text longer than the buffer, give \"\"", "[util][utc]") {
  CHECK(format_utc(system_clock::time_point{}, "").empty());
  const std::string long_format(80, 'x');
  CHECK(format_utc(system_clock::time_point{}, long_format.c_str()).empty());
}
