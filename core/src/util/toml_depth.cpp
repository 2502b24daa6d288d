// The guard before toml++ (util/toml_depth.hpp).
#include "wheelfit/util/toml_depth.hpp"

namespace wheelfit::util {

std::optional<std::size_t> too_deep_toml_line(std::string_view text, std::size_t max_dots) {
  enum class In { code, basic, literal, basic_lines, literal_lines, comment } in = In::code;
  std::size_t dots = 0;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const std::string_view rest = text.substr(i);
    if (c == '\n') {
      ++line;
      dots = 0;
      if (in == In::comment || in == In::basic || in == In::literal) in = In::code;  // they end with their line
      continue;
    }
    switch (in) {
      case In::code:
        if (c == '.' && ++dots > max_dots) return line;
        if (c == '#') in = In::comment;
        else if (rest.starts_with(R"(""")")) in = In::basic_lines, i += 2;
        else if (rest.starts_with("'''")) in = In::literal_lines, i += 2;
        else if (c == '"') in = In::basic;
        else if (c == '\'') in = In::literal;
        break;
      case In::basic:
      case In::basic_lines:
        if (c == '\\') ++i;  // an escape: the next byte belongs to the string
        else if (in == In::basic && c == '"') in = In::code;
        else if (in == In::basic_lines && rest.starts_with(R"(""")")) in = In::code, i += 2;
        break;
      case In::literal:
        if (c == '\'') in = In::code;
        break;
      case In::literal_lines:
        if (rest.starts_with("'''")) in = In::code, i += 2;
        break;
      case In::comment: break;
    }
  }
  return std::nullopt;
}

}  // namespace wheelfit::util
