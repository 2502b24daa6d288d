#pragma once
// The library's thin logging facade. Libraries call log::warn / log::info / log::debug; the
// messages go to this thread's call sink (a ScopedSink: the façade installs a request's log_sink
// for the length of the call) when there is one, else to the process sink (set_sink: the
// executable's, or a test's), else nowhere.
//
// Thread safety: emitting from several threads is safe, and set_sink may run while others emit
// (a sink already running finishes with the old one). A sink runs outside every lock: a sink
// that itself logs does not deadlock; what it logs is dropped (it would only reach itself). An
// exception thrown by a sink is swallowed: logging never fails a resolve.
//
// Every message reaches its sink redacted (util::redact: URL passwords, credential headers and
// query values, token shapes), whatever the caller passed.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace wheelfit::log {

enum class Level { debug, info, warn };
using Sink = std::function<void(Level, std::string_view)>;

/// Installs `sink` as the process sink and returns the previous one (so tests can restore it).
Sink set_sink(Sink sink);

/// This thread's call sink (nullptr when none): what a helper thread started for the call carries
/// over with `ScopedSink carried(sink)`.
std::shared_ptr<const Sink> thread_sink();

/// For its lifetime, messages emitted on this thread go to `sink` (then to the previous call
/// sink again). An empty sink changes nothing.
class ScopedSink {
 public:
  explicit ScopedSink(Sink sink);
  explicit ScopedSink(std::shared_ptr<const Sink> sink);
  ~ScopedSink();
  ScopedSink(const ScopedSink&) = delete;
  ScopedSink& operator=(const ScopedSink&) = delete;

 private:
  bool installed_ = false;
  std::shared_ptr<const Sink> previous_;
};

void emit(Level level, std::string_view message);
inline void debug(std::string_view m) { emit(Level::debug, m); }
inline void info(std::string_view m) { emit(Level::info, m); }
inline void warn(std::string_view m) { emit(Level::warn, m); }

}  // namespace wheelfit::log
