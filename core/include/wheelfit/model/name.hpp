#pragma once
// PEP 503 project-name normalisation and validation.

#include <string>
#include <string_view>

namespace wheelfit::model {

/// Lower-cases and collapses every run of '-', '_', '.' to one '-': "Foo_Bar.baz" -> "foo-bar-baz".
std::string normalize_name(std::string_view name);

/// PEP 508 name syntax: ASCII letters/digits, with '-', '_', '.' only between them; 1..200 chars.
bool is_valid_name(std::string_view name) noexcept;

}  // namespace wheelfit::model
