#pragma once
// Small text helpers shared by the parsers.

#include <cstddef>
#include <string>
#include <string_view>

namespace wheelfit::util {

/// The text of a single-line region given as 1-based (line, column) positions, where columns
/// count code points (UTF-8 continuation bytes are skipped), end exclusive; "" when the region
/// spans lines, is empty, or lies outside `text`. Used to quote a value as written ("3.10", not
/// the float 3.1) in error messages.
std::string source_span(std::string_view text, std::size_t begin_line, std::size_t begin_column, std::size_t end_line,
                        std::size_t end_column);

/// ASCII lower-casing (locale-independent).
std::string ascii_lower(std::string_view s);

}  // namespace wheelfit::util
