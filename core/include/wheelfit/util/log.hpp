#pragma once
// The library's thin logging facade. Libraries call log::warn / log::info / log::debug; the
// executable (or a test) installs the sink. With no sink installed, messages are dropped.
// Thread safety: set_sink is for start-up; emitting from several threads is safe.

#include <functional>
#include <string>
#include <string_view>

namespace wheelfit::log {

enum class Level { debug, info, warn };
using Sink = std::function<void(Level, std::string_view)>;

/// Installs `sink` and returns the previous one (so tests can restore it).
Sink set_sink(Sink sink);
void emit(Level level, std::string_view message);
inline void debug(std::string_view m) { emit(Level::debug, m); }
inline void info(std::string_view m) { emit(Level::info, m); }
inline void warn(std::string_view m) { emit(Level::warn, m); }

}  // namespace wheelfit::log
