#include "wheelfit/util/text.hpp"

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

}  // namespace wheelfit::util
