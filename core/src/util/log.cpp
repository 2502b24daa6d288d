#include "wheelfit/util/log.hpp"

#include <mutex>

namespace wheelfit::log {
namespace {
std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
Sink& current() {
  static Sink s;
  return s;
}
}  // namespace

Sink set_sink(Sink sink) {
  std::lock_guard lock(sink_mutex());
  Sink old = std::move(current());
  current() = std::move(sink);
  return old;
}

void emit(Level level, std::string_view message) {
  std::lock_guard lock(sink_mutex());
  if (current()) current()(level, message);
}
}  // namespace wheelfit::log
