#include "wheelfit/util/text.hpp"

#include <cstdio>

namespace wheelfit::util {
namespace {

constexpr char to_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string source_span(std::string_view text, std::size_t begin_line, std::size_t begin_column, std::size_t end_line,
                        std::size_t end_column) {
  if (begin_line == 0 || begin_column == 0 || begin_line != end_line || end_column <= begin_column) return {};
  std::size_t pos = 0;
  for (std::size_t line = 1; line < begin_line; ++line) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  auto advance = [&](std::size_t from, std::size_t columns) {
    std::size_t p = from;
    for (std::size_t c = 0; c < columns && p < text.size() && text[p] != '\n'; ++c) {
      ++p;
      while (p < text.size() && (static_cast<unsigned char>(text[p]) & 0xC0u) == 0x80u) ++p;
    }
    return p;
  };
  const std::size_t b = advance(pos, begin_column - 1);
  const std::size_t e = advance(b, end_column - begin_column);
  return std::string(text.substr(b, e - b));
}

std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = to_lower(c);
  return out;
}

std::string_view trim(std::string_view s) noexcept {
  constexpr std::string_view ws = " \t\r\n\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool starts_with_ci(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

bool is_http_url(std::string_view url) noexcept {
  return starts_with_ci(url, "http://") || starts_with_ci(url, "https://");
}

std::string human_bytes(std::uint64_t n, int kib_digits) {
  char buf[40];
  const auto in = [n](std::uint64_t unit) { return static_cast<double>(n) / static_cast<double>(unit); };
  if (n >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", in(1ull << 30));
  else if (n >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", in(1ull << 20));
  else if (n >= 1024) std::snprintf(buf, sizeof buf, "%.*f KiB", kib_digits, in(1024));
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_controls(std::string_view text, ControlEscape mode) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escaped = [&out, &kHex](unsigned char b) {
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = static_cast<unsigned char>(i + 1 < text.size() ? text[i + 1] : 0);
    if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // a C1 control in UTF-8: both bytes
      escaped(c);
      escaped(next);
      ++i;
    } else if ((c < 0x20 || c == 0x7f) && !(mode == ControlEscape::text && (c == '\n' || c == '\t'))) {
      escaped(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

Expected<std::uint64_t> parse_size(std::string_view text) {
  const std::string_view s = trim(text);
  auto bad = [&](std::string_view why) {
    return unexpected(Errc::invalid_input, "'" + std::string(text) + "' is not a size (" + std::string(why) +
                                               "; a number with an optional unit, such as 500M, 2G or 1GiB: K M G T are "
                                               "powers of 1000, Ki Mi Gi Ti of 1024)");
  };
  std::size_t i = 0;
  std::uint64_t whole = 0;
  constexpr std::uint64_t max = UINT64_MAX;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const auto digit = static_cast<std::uint64_t>(s[i] - '0');
    if (whole > (max - digit) / 10) return bad("too large");
    whole = whole * 10 + digit;
  }
  if (i == 0) return bad("no number");
  std::uint64_t fraction = 0, scale = 1;  // fraction / scale, at most 6 digits kept
  if (i < s.size() && s[i] == '.') {
    const std::size_t first = ++i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (scale < 1'000'000) {
        fraction = fraction * 10 + static_cast<std::uint64_t>(s[i] - '0');
        scale *= 10;
      }
    }
    if (i == first) return bad("no digits after the point");
  }
  std::string unit = ascii_lower(s.substr(i));
  if (unit == "b") unit.clear();
  else if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();  // "MB", "GiB": the B is optional
  struct Unit {
    std::string_view name;
    std::uint64_t factor;
  };
  static constexpr Unit units[] = {{"", 1},
                                   {"k", 1'000},
                                   {"m", 1'000'000},
                                   {"g", 1'000'000'000},
                                   {"t", 1'000'000'000'000},
                                   {"ki", std::uint64_t{1} << 10},
                                   {"mi", std::uint64_t{1} << 20},
                                   {"gi", std::uint64_t{1} << 30},
                                   {"ti", std::uint64_t{1} << 40}};
  const Unit* u = nullptr;
  for (const auto& candidate : units) {
    if (candidate.name == unit) u = &candidate;
  }
  if (u == nullptr) return bad("unknown unit '" + std::string(s.substr(i)) + "'");
  if (whole > max / u->factor) return bad("too large");
  if (u->factor == 1 && fraction != 0) return bad("a fraction of a byte");
  const std::uint64_t part = fraction * u->factor / scale;  // fraction < 1e6, factor <= 1e12: no overflow; rounded down
  if (whole * u->factor > max - part) return bad("too large");
  return whole * u->factor + part;
}

}  // namespace wheelfit::util
