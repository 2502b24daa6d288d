// util::too_deep_toml_line (util/toml_depth.hpp): dots counted per line outside strings and
// comments, multi-line strings tracked across lines, table-driven.
#include <catch2/catch.hpp>

#include <string>

#include "wheelfit/util/toml_depth.hpp"

using wheelfit::util::too_deep_toml_line;

TEST_CASE("too_deep_toml_line: dotted keys past the limit, and what does not count", "[util][toml]") {
  struct Row {
    const char* what;
    std::string text;
    std::optional<std::size_t> line;
  };
  const std::string four = "a.b.c.d.e = 1";  // 4 dots: over a limit of 3
  const Row rows[] = {
      {"a key within the limit", "a.b.c = 1\n", std::nullopt},
      {"a key past it, on line 2", "x = 1\n" + four + "\n", 2},
      {"a table header past it", "[a.b.c.d.e]\n", 1},
      {"dots in a basic string", "x = \"a.b.c.d.e\"\n", std::nullopt},
      {"an escaped quote keeps the string open", "x = \"\\\".a.b.c.d\"\n", std::nullopt},
      {"dots in a literal string", "x = 'a.b.c.d.e'\n", std::nullopt},
      {"dots in a comment", "x = 1 # a.b.c.d.e\n", std::nullopt},
      {"a multi-line basic string spans lines", "x = \"\"\"\na.b.c.d.e\n\"\"\"\n" + four + "\n", 4},
      {"a multi-line literal string spans lines", "x = '''\na.b.c.d.e\n'''\n", std::nullopt},
      {"the count starts again on each line", "a.b.c = 1\nd.e.f = 2\n", std::nullopt},
      {"a string that never closes ends with its line", "x = \"a.b\n" + four + "\n", 2},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what, row.text);
    CHECK(too_deep_toml_line(row.text, 3) == row.line);
  }
  CHECK_FALSE(too_deep_toml_line(""));
  CHECK(too_deep_toml_line(std::string(1001, '.')) == 1u);
}
