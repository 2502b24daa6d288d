#include "wheelfit/util/log.hpp"

#include "wheelfit/util/secrets.hpp"

#include <mutex>
#include <utility>

namespace wheelfit::log {
namespace {

std::mutex& process_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<const Sink>& process_sink() {
  static std::shared_ptr<const Sink> s;
  return s;
}
thread_local std::shared_ptr<const Sink> t_call_sink;
thread_local bool t_in_sink = false;

}  // namespace

Sink set_sink(Sink sink) {
  auto next = sink ? std::make_shared<const Sink>(std::move(sink)) : nullptr;
  std::shared_ptr<const Sink> old;
  {
    std::lock_guard lock(process_mutex());
    old = std::exchange(process_sink(), std::move(next));
  }
  return old ? *old : Sink{};
}

std::shared_ptr<const Sink> thread_sink() { return t_call_sink; }

ScopedSink::ScopedSink(Sink sink) : ScopedSink(sink ? std::make_shared<const Sink>(std::move(sink)) : nullptr) {}

ScopedSink::ScopedSink(std::shared_ptr<const Sink> sink) {
  if (!sink || !*sink) return;
  previous_ = std::exchange(t_call_sink, std::move(sink));
  installed_ = true;
}

ScopedSink::~ScopedSink() {
  if (installed_) t_call_sink = std::move(previous_);
}

void emit(Level level, std::string_view message) {
  if (t_in_sink) return;  // logged by a sink: it would only reach that sink again
  std::shared_ptr<const Sink> sink = t_call_sink;
  if (!sink) {
    std::lock_guard lock(process_mutex());
    sink = process_sink();
  }
  if (!sink || !*sink) return;
  t_in_sink = true;
  try {
    // The last line of defence: whatever a caller forgot to redact does not reach a sink.
    (*sink)(level, util::redact(message));
  } catch (...) {
    // A sink that throws loses its message; the work that logged it goes on.
  }
  t_in_sink = false;
}

}  // namespace wheelfit::log
