#pragma once
// The download progress of `wheelfit download` and `wheelfit mirror` on stderr: on a terminal, one
// line per file in flight and a total (bytes, rate, ETA), redrawn in place at most ten times a
// second; otherwise one plain log line per file as it finishes.
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/deliver/download.hpp"

namespace wheelfit::cli {

class ProgressView {
 public:
  /// `terminal`: redraw in place (else log lines). The files are learnt from the events.
  ProgressView(std::ostream& out, bool terminal);
  /// The hook for DownloadRequest::progress / MirrorRequest::progress.
  void on(const deliver::Progress& p);
  /// The last redraw (a terminal), leaving the lines on screen.
  void finish();

  /// "12.3 MiB", "870 KiB"; "1.5 MiB/s"; "ETA 1m05s" (for tests).
  static std::string bytes(std::uint64_t n);
  static std::string eta(std::uint64_t left, double rate);

 private:
  struct File {
    std::string name = {};
    std::uint64_t done = 0;
    std::optional<std::uint64_t> total = {};
    bool active = false, finished = false;
  };
  void draw(bool force);

  std::ostream& out_;
  std::vector<File> files_;
  bool terminal_;
  std::size_t drawn_ = 0;  ///< lines drawn last time (moved up over on the next redraw)
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
  std::uint64_t first_done_ = 0;  ///< bytes already on disk when each file started (resumed parts)
};

}  // namespace wheelfit::cli
