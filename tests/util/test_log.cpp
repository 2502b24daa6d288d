// log: the process sink, a call's ScopedSink (nested, per thread, carried to a helper thread), a
// sink that logs (no deadlock, its message dropped) and a sink that throws (swallowed).
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "wheelfit/util/log.hpp"

using namespace wheelfit;

namespace {

// Restores the process sink it replaced.
struct ProcessSink {
  std::vector<std::string> seen;
  log::Sink previous;
  ProcessSink() : previous(log::set_sink([this](log::Level, std::string_view m) { seen.emplace_back(m); })) {}
  ~ProcessSink() { log::set_sink(previous); }
};

log::Sink collect(std::vector<std::string>& into) {
  return [&into](log::Level, std::string_view m) { into.emplace_back(m); };
}

}  // namespace

TEST_CASE("log: a call sink takes this thread's messages while it lives; then the process sink again", "[util][log]") {
  ProcessSink process;
  std::vector<std::string> outer, inner;
  log::warn("before");
  {
    const log::ScopedSink a(collect(outer));
    log::warn("in a");
    {
      const log::ScopedSink b(collect(inner));
      log::info("in b");
      const log::ScopedSink none{log::Sink{}};  // an empty sink changes nothing
      log::debug("still b");
    }
    log::warn("a again");
  }
  log::warn("after");
  CHECK(process.seen == std::vector<std::string>{"before", "after"});
  CHECK(outer == std::vector<std::string>{"in a", "a again"});
  CHECK(inner == std::vector<std::string>{"in b", "still b"});
}

TEST_CASE("log: each thread's call sink sees that thread's messages only; a helper carries it", "[util][log]") {
  ProcessSink process;
  std::vector<std::string> first, second, helper;
  std::thread t1([&] {
    const log::ScopedSink s(collect(first));
    for (int i = 0; i < 100; ++i) log::warn("one");
  });
  std::thread t2([&] {
    const log::ScopedSink s(collect(second));
    for (int i = 0; i < 100; ++i) log::warn("two");
  });
  t1.join();
  t2.join();
  CHECK(first == std::vector<std::string>(100, "one"));
  CHECK(second == std::vector<std::string>(100, "two"));
  {
    const log::ScopedSink s(collect(helper));
    std::async(std::launch::async, [sink = log::thread_sink()] {
      const log::ScopedSink carried(sink);
      log::warn("from the helper");
    }).get();
    std::async(std::launch::async, [] { log::warn("not carried"); }).get();
  }
  CHECK(helper == std::vector<std::string>{"from the helper"});
  CHECK(process.seen == std::vector<std::string>{"not carried"});
  CHECK_FALSE(log::thread_sink());
}

TEST_CASE("log: a sink that logs neither deadlocks nor loops; a sink that throws loses only its message", "[util][log]") {
  std::vector<std::string> seen;
  log::Sink previous = log::set_sink([&seen](log::Level, std::string_view m) {
    seen.emplace_back(m);
    log::warn("from inside the sink");  // dropped: it would only reach this sink again
  });
  log::warn("first");
  log::warn("second");
  log::set_sink(previous);
  CHECK(seen == std::vector<std::string>{"first", "second"});

  std::vector<std::string> call;
  {
    const log::ScopedSink s([&call](log::Level, std::string_view m) {
      if (m == "boom") throw std::runtime_error("sink failed");
      call.emplace_back(m);
    });
    CHECK_NOTHROW(log::warn("boom"));
    log::warn("after the throw");
  }
  CHECK(call == std::vector<std::string>{"after the throw"});
}

TEST_CASE("log: set_sink while another thread emits: every message reaches exactly one sink", "[util][log]") {
  std::atomic<int> a{0}, b{0}, emitted{0};
  log::Sink previous = log::set_sink([&a](log::Level, std::string_view) { ++a; });
  std::atomic<bool> stop{false};
  std::thread emitter([&] {
    while (!stop) {
      log::debug("x");
      ++emitted;
    }
  });
  while (emitted == 0) std::this_thread::yield();
  for (int i = 0; i < 200; ++i) {
    log::set_sink([&b](log::Level, std::string_view) { ++b; });
    log::set_sink([&a](log::Level, std::string_view) { ++a; });
  }
  stop = true;
  emitter.join();
  log::set_sink(previous);
  CHECK(emitted > 0);
  CHECK(a + b == emitted);
}
