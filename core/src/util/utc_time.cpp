// UTC text of a time (utc_time.hpp).
#include "wheelfit/util/utc_time.hpp"

#include <ctime>

namespace wheelfit::util {

std::string format_utc(std::chrono::system_clock::time_point when, const char* format) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(when));
  std::tm tm{};
#ifdef _WIN32
  if (::gmtime_s(&tm, &t) != 0) return {};
#else
  if (::gmtime_r(&t, &tm) == nullptr) return {};
#endif
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

}  // namespace wheelfit::util
