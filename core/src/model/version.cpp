// PEP 440 parsing and ordering, by hand (no std::regex): this runs on every wheel name of an
// index. The scanner follows packaging's VERSION_PATTERN group by group; each optional group is
// tried greedily and rolled back as a whole when its label does not match, which accepts
// exactly the strings the regular expression accepts.

#include "wheelfit/model/version.hpp"

#include <algorithm>

#include "wheelfit/util/text.hpp"

namespace wheelfit::model {
namespace {

constexpr std::size_t kMaxDigits = 18;  // significant digits; 10^18 - 1 fits in uint64

using util::ascii::all_digits;
using util::ascii::is_alnum;
using util::ascii::is_digit;
using util::ascii::is_sep;
using util::ascii::to_lower;

class Scanner {
 public:
  explicit Scanner(std::string_view s) noexcept : s_(s) {}

  [[nodiscard]] bool at_end() const noexcept { return i_ == s_.size(); }
  [[nodiscard]] char peek(std::size_t ahead = 0) const noexcept {
    return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0';
  }
  [[nodiscard]] std::size_t pos() const noexcept { return i_; }
  void reset(std::size_t p) noexcept { i_ = p; }
  void advance() noexcept { ++i_; }

  bool skip_sep() noexcept {
    if (i_ < s_.size() && is_sep(s_[i_])) {
      ++i_;
      return true;
    }
    return false;
  }

  /// Consumes `word` (lower-case) case-insensitively.
  bool word(std::string_view w) noexcept {
    if (s_.size() - i_ < w.size()) return false;
    for (std::size_t k = 0; k < w.size(); ++k) {
      if (to_lower(s_[i_ + k]) != w[k]) return false;
    }
    i_ += w.size();
    return true;
  }

  enum class Num { none, ok, overflow };
  /// Consumes a run of digits. Leading zeros do not count towards the 18-digit limit.
  Num number(std::uint64_t& out) noexcept {
    if (!is_digit(peek())) return Num::none;
    std::uint64_t n = 0;
    std::size_t significant = 0;
    while (i_ < s_.size() && is_digit(s_[i_])) {
      if (n != 0 || s_[i_] != '0') ++significant;
      if (significant > kMaxDigits) return Num::overflow;
      n = n * 10 + static_cast<std::uint64_t>(s_[i_] - '0');
      ++i_;
    }
    out = n;
    return Num::ok;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

// Numeric local segments compare as integers of any length, without converting them.
std::strong_ordering compare_digits(std::string_view a, std::string_view b) noexcept {
  while (a.size() > 1 && a.front() == '0') a.remove_prefix(1);
  while (b.size() > 1 && b.front() == '0') b.remove_prefix(1);
  if (auto c = a.size() <=> b.size(); c != 0) return c;
  const int r = a.compare(b);
  return r < 0 ? std::strong_ordering::less : r > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
}

std::string_view next_segment(std::string_view& rest) noexcept {
  const auto dot = rest.find('.');
  std::string_view seg = rest.substr(0, dot);
  rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  return seg;
}

// packaging: numeric segments are (int, ""), others (-inf, str); a missing label is -inf.
std::strong_ordering compare_local(std::string_view a, std::string_view b) noexcept {
  if (a.empty() || b.empty()) return !a.empty() <=> !b.empty();
  while (!a.empty() && !b.empty()) {
    const std::string_view sa = next_segment(a);
    const std::string_view sb = next_segment(b);
    const bool na = all_digits(sa);
    const bool nb = all_digits(sb);
    std::strong_ordering c = std::strong_ordering::equal;
    if (na && nb) {
      c = compare_digits(sa, sb);
    } else if (na != nb) {
      c = na ? std::strong_ordering::greater : std::strong_ordering::less;
    } else {
      const int r = sa.compare(sb);
      c = r < 0 ? std::strong_ordering::less : r > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
    }
    if (c != 0) return c;
  }
  return !a.empty() <=> !b.empty();  // the shorter label (a prefix of the other) sorts first
}

// Numeric local segments are integers: "+01.0abc" normalises to "+1.0abc", as packaging does.
std::string strip_numeric_zeros(std::string_view label) {
  std::string out;
  out.reserve(label.size());
  while (!label.empty()) {
    std::string_view seg = next_segment(label);
    if (all_digits(seg)) {
      while (seg.size() > 1 && seg.front() == '0') seg.remove_prefix(1);
    }
    if (!out.empty()) out += '.';
    out += seg;
  }
  return out;
}

std::string too_long() { return "a number has more than " + std::to_string(kMaxDigits) + " digits"; }

// Epoch and release: (N!)? N(.N)*. Why the text is not a version, or "".
std::string read_release(Scanner& sc, std::uint64_t& epoch, std::vector<std::uint64_t>& release) {
  std::uint64_t n = 0;
  switch (sc.number(n)) {
    case Scanner::Num::none: return "it does not start with a release number";
    case Scanner::Num::overflow: return too_long();
    case Scanner::Num::ok: break;
  }
  if (sc.peek() == '!') {
    sc.advance();
    epoch = n;
    switch (sc.number(n)) {
      case Scanner::Num::none: return "expected a release number after the epoch '!'";
      case Scanner::Num::overflow: return too_long();
      case Scanner::Num::ok: break;
    }
  }
  release.push_back(n);
  while (sc.peek() == '.' && is_digit(sc.peek(1))) {
    sc.advance();
    if (sc.number(n) == Scanner::Num::overflow) return too_long();
    release.push_back(n);
  }
  return "";
}

// Pre-release: [-_.]? (alpha|a|beta|b|preview|pre|c|rc) [-_.]? N?
std::string read_pre(Scanner& sc, std::optional<Version::Pre>& pre) {
  const std::size_t start = sc.pos();
  sc.skip_sep();
  std::optional<Version::PreKind> kind;
  if (sc.word("alpha") || sc.word("a")) kind = Version::PreKind::a;
  else if (sc.word("beta") || sc.word("b")) kind = Version::PreKind::b;
  else if (sc.word("preview") || sc.word("pre") || sc.word("c") || sc.word("rc")) kind = Version::PreKind::rc;
  if (!kind) {
    sc.reset(start);
    return "";
  }
  sc.skip_sep();
  std::uint64_t num = 0;
  if (sc.number(num) == Scanner::Num::overflow) return too_long();
  pre = Version::Pre{*kind, num};
  return "";
}

// Post-release: -N | [-_.]? (post|rev|r) [-_.]? N?
std::string read_post(Scanner& sc, std::optional<std::uint64_t>& post) {
  const std::size_t start = sc.pos();
  std::uint64_t num = 0;
  if (sc.peek() == '-' && is_digit(sc.peek(1))) {
    sc.advance();
    if (sc.number(num) == Scanner::Num::overflow) return too_long();
    post = num;
    return "";
  }
  sc.skip_sep();
  if (!(sc.word("post") || sc.word("rev") || sc.word("r"))) {
    sc.reset(start);
    return "";
  }
  sc.skip_sep();
  if (sc.number(num) == Scanner::Num::overflow) return too_long();
  post = num;
  return "";
}

// Dev release: [-_.]? dev [-_.]? N?
std::string read_dev(Scanner& sc, std::optional<std::uint64_t>& dev) {
  const std::size_t start = sc.pos();
  sc.skip_sep();
  if (!sc.word("dev")) {
    sc.reset(start);
    return "";
  }
  sc.skip_sep();
  std::uint64_t num = 0;
  if (sc.number(num) == Scanner::Num::overflow) return too_long();
  dev = num;
  return "";
}

// Local label: + [a-z0-9]+ ([-_.][a-z0-9]+)*, normalised to lower case and '.'.
std::string read_local(Scanner& sc, std::string& local) {
  if (sc.peek() != '+') return "";
  sc.advance();
  if (sc.at_end()) return "the local label after '+' is empty";
  bool need_alnum = true;
  while (!sc.at_end()) {
    const char c = sc.peek();
    if (is_alnum(c)) {
      local += to_lower(c);
      need_alnum = false;
    } else if (is_sep(c)) {
      if (need_alnum) return "the local label has an empty segment at offset " + std::to_string(sc.pos());
      local += '.';
      need_alnum = true;
    } else {
      return "the local label may hold only letters, digits and '.', '-', '_'; found '" + std::string(1, c) +
             "' at offset " + std::to_string(sc.pos());
    }
    sc.advance();
  }
  if (need_alnum) return "the local label ends with a separator";
  local = strip_numeric_zeros(local);
  return "";
}

}  // namespace

Expected<Version> Version::parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return unexpected(Errc::invalid_input, "'" + std::string(text) + "' is not a valid PEP 440 version: " + why);
  };
  const std::string_view s = util::trim(text);
  if (s.empty()) return bad(text.empty() ? "it is empty" : "it is only whitespace");

  Scanner sc(s);
  Version v;
  if (sc.peek() == 'v' || sc.peek() == 'V') sc.advance();
  std::string why = read_release(sc, v.epoch_, v.release_);
  if (why.empty()) why = read_pre(sc, v.pre_);
  if (why.empty()) why = read_post(sc, v.post_);
  if (why.empty()) why = read_dev(sc, v.dev_);
  if (why.empty()) why = read_local(sc, v.local_);
  if (!why.empty()) return bad(why);
  if (!sc.at_end()) {
    return bad("unexpected '" + std::string(1, sc.peek()) + "' at offset " + std::to_string(sc.pos()) +
               " of the trimmed text");
  }
  return v;
}

Version Version::public_version() const {
  Version out = *this;
  out.local_.clear();
  return out;
}

std::string Version::str() const {
  std::string out;
  out.reserve(16 + local_.size());
  if (epoch_ != 0) out += std::to_string(epoch_) + "!";
  for (std::size_t i = 0; i < release_.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(release_[i]);
  }
  if (pre_) {
    switch (pre_->kind) {
      case PreKind::a: out += 'a'; break;
      case PreKind::b: out += 'b'; break;
      case PreKind::rc: out += "rc"; break;
    }
    out += std::to_string(pre_->number);
  }
  if (post_) out += ".post" + std::to_string(*post_);
  if (dev_) out += ".dev" + std::to_string(*dev_);
  if (!local_.empty()) out += "+" + local_;
  return out;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  if (auto c = a.epoch_ <=> b.epoch_; c != 0) return c;

  const std::size_t n = std::max(a.release_.size(), b.release_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = i < a.release_.size() ? a.release_[i] : 0;
    const std::uint64_t y = i < b.release_.size() ? b.release_[i] : 0;
    if (auto c = x <=> y; c != 0) return c;
  }

  // Pre: a dev-only release ("1.0.dev0") sorts before every pre-release; no pre sorts after all.
  auto pre_class = [](const Version& v) {
    if (!v.pre_ && !v.post_ && v.dev_) return 0;
    return v.pre_ ? 1 : 2;
  };
  const int pa = pre_class(a);
  const int pb = pre_class(b);
  if (auto c = pa <=> pb; c != 0) return c;
  if (pa == 1) {
    if (auto c = static_cast<int>(a.pre_->kind) <=> static_cast<int>(b.pre_->kind); c != 0) return c;
    if (auto c = a.pre_->number <=> b.pre_->number; c != 0) return c;
  }

  // Post: none sorts first.
  if (auto c = a.post_.has_value() <=> b.post_.has_value(); c != 0) return c;
  if (a.post_) {
    if (auto c = *a.post_ <=> *b.post_; c != 0) return c;
  }

  // Dev: none sorts last.
  if (auto c = b.dev_.has_value() <=> a.dev_.has_value(); c != 0) return c;
  if (a.dev_) {
    if (auto c = *a.dev_ <=> *b.dev_; c != 0) return c;
  }

  return compare_local(a.local_, b.local_);
}

}  // namespace wheelfit::model
