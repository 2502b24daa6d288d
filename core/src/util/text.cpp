#include "wheelfit/util/text.hpp"

namespace wheelfit::util {

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
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace wheelfit::util
