#include "progress.hpp"

#include <cstdio>
#include <ostream>

#include "wheelfit/util/text.hpp"

namespace wheelfit::cli {

ProgressView::ProgressView(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {}

std::string ProgressView::bytes(std::uint64_t n) { return util::human_bytes(n, 0); }

std::string ProgressView::eta(std::uint64_t left, double rate) {
  if (rate <= 0) return "ETA --";
  const auto s = static_cast<unsigned long long>(static_cast<double>(left) / rate + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "ETA %lluh%02llum", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "ETA %llum%02llus", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "ETA %llus", s);
  return buf;
}

void ProgressView::on(const deliver::Progress& p) {
  if (p.index >= files_.size()) files_.resize(p.index + 1);
  File& f = files_[p.index];
  // The name comes from the index (or the Releases API): escaped whole, on one line, as every
  // line drawn here is (the redraw's own escape sequences are written after).
  if (!p.filename.empty()) f.name = util::escape_controls(p.filename, util::ControlEscape::line);
  if (p.kind == deliver::Progress::Kind::started) {
    f.active = true;
    first_done_ += p.done;
  }
  f.done = p.done;
  if (p.total) f.total = p.total;
  if (p.kind == deliver::Progress::Kind::finished) {
    f.active = false;
    f.finished = true;
    if (!terminal_) {
      switch (p.outcome) {
        case deliver::Delivered::Status::fetched: out_ << "downloaded " << f.name << " (" << bytes(f.done) << ")\n"; break;
        case deliver::Delivered::Status::present: out_ << "already there " << f.name << " (" << bytes(f.done) << ")\n"; break;
        case deliver::Delivered::Status::failed: out_ << "failed " << f.name << "\n"; break;
      }
    }
  }
  if (terminal_) draw(p.kind != deliver::Progress::Kind::bytes);
}

void ProgressView::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string text;
  if (drawn_ > 0) text += "\x1b[" + std::to_string(drawn_) + "F";  // to the first line drawn
  std::size_t lines = 0;
  std::uint64_t done = 0, total = 0;
  bool totals_known = true;
  std::size_t finished = 0;
  for (const auto& f : files_) {
    done += f.done;
    if (f.total) total += *f.total;
    else totals_known = false;
    if (f.finished) ++finished;
    if (!f.active) continue;
    text += "\x1b[2K  " + f.name + "  " + bytes(f.done) + (f.total ? " / " + bytes(*f.total) : std::string()) + "\n";
    ++lines;
  }
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done - std::min(done, first_done_)) / seconds : 0;
  text += "\x1b[2K" + std::to_string(finished) + "/" + std::to_string(files_.size()) + " files  " + bytes(done) +
          (totals_known ? " / " + bytes(total) : std::string()) + "  " + bytes(static_cast<std::uint64_t>(rate)) + "/s" +
          (totals_known && total > done ? "  " + eta(total - done, rate) : std::string()) + "\n";
  ++lines;
  for (std::size_t i = lines; i < drawn_; ++i) text += "\x1b[2K\n";  // clear what the last draw left below
  const std::size_t printed = std::max(lines, drawn_);
  out_ << text << std::flush;
  drawn_ = printed;
}

void ProgressView::finish() {
  if (terminal_ && drawn_ > 0) draw(true);
}

}  // namespace wheelfit::cli
