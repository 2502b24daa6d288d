#pragma once
// Child processes in tests: whether one has ended, and children that SIGKILL cannot end (through
// util/subprocess.hpp's signal seam), standing for a probe stuck in uninterruptible sleep.

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/util/subprocess.hpp"

namespace wheelfit::test {

/// Whether process `pid` has ended: gone, or a zombie nobody reaped yet (an orphan whose
/// adopter does not reap, as in some containers).
inline bool ended(int pid) {
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  std::error_code ec;
  if (!std::filesystem::exists(stat, ec)) return ::kill(pid, 0) != 0;
  const std::string text = read_file(stat);
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

/// Whether `pid` ends within `limit`.
inline bool ends_within(int pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ended(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

/// Makes util's SIGKILL ineffective for its lifetime (it records what it was asked and signals
/// nothing); then kills for real what was asked. Only the main thread starts children meanwhile.
class UnkillableChildren {
 public:
  UnkillableChildren() {
    const std::lock_guard lock(mu());
    asked_pids().clear();
    previous_ = util::detail::set_signal_function(&record);
  }
  ~UnkillableChildren() {
    util::detail::set_signal_function(previous_);
    const std::lock_guard lock(mu());
    for (int pid : asked_pids()) ::kill(pid, SIGKILL);
  }
  UnkillableChildren(const UnkillableChildren&) = delete;
  UnkillableChildren& operator=(const UnkillableChildren&) = delete;
  /// Every pid the code under test tried to signal (-pgid for a group), in order.
  [[nodiscard]] std::vector<int> asked() const {
    const std::lock_guard lock(mu());
    return asked_pids();
  }

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::vector<int>& asked_pids() {
    static std::vector<int> v;
    return v;
  }
  static int record(int pid, int) {
    const std::lock_guard lock(mu());
    asked_pids().push_back(pid);
    return 0;
  }
  util::detail::SignalFunction previous_ = nullptr;
};

/// Calls util::reap_abandoned() until nothing is left or `limit` passes; returns what is left.
inline std::size_t reap_all(std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  std::size_t left = util::reap_abandoned();
  while (left > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    left = util::reap_abandoned();
  }
  return left;
}

}  // namespace wheelfit::test
