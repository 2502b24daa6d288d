#pragma once
// A guard before toml++: it nests one table per part of a dotted key ("a.b.c = 1", "[a.b.c]") and
// recurses that deep when it parses and frees them, so a key of tens of thousands of parts
// overflows the stack. Every TOML reader (comfy-env.toml, machine profiles, lock files) asks this
// first and refuses such a line with an error naming it.
//
// Thread safety: a pure function.
#include <cstddef>
#include <optional>
#include <string_view>

namespace wheelfit::util {

/// The most dotted key parts a TOML line may hold (a real file's lines have a few).
inline constexpr std::size_t kMaxTomlKeyDots = 1000;

/// The 1-based line of the first line with more than `max_dots` dots outside strings and
/// comments, or nullopt. One pass; multi-line strings are tracked across lines.
std::optional<std::size_t> too_deep_toml_line(std::string_view text, std::size_t max_dots = kMaxTomlKeyDots);

}  // namespace wheelfit::util
