# Writes OUTPUT, a C++ file defining wheelfit::farmgen::detail::embedded_packages_json(), from
# INPUT (scripts/farmgen/data/farm_packages.json) as a raw string literal, so the generator needs no
# data path at run time. Written to OUTPUT.tmp and renamed, so a failed run leaves no half file.
file(READ "${INPUT}" _content)
string(FIND "${_content}" ")wheelfit_farm\"" _clash)
if(NOT _clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter")
endif()
file(WRITE "${OUTPUT}.tmp" "// Generated from scripts/farmgen/data/farm_packages.json by scripts/farmgen/embed.cmake. Do not edit.\n#include <string_view>\nnamespace wheelfit::farmgen::detail {\nstd::string_view embedded_packages_json() {\n  static constexpr const char text[] = R\"wheelfit_farm(${_content})wheelfit_farm\";\n  return {text, sizeof(text) - 1};\n}\n}  // namespace wheelfit::farmgen::detail\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
