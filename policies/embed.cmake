# Writes OUTPUT, a C++ file defining wheelfit::policies::detail::embedded_policy_json(), from INPUT.
file(READ "${INPUT}" _content)
string(FIND "${_content}" ")wheelfit_policy\"" _clash)
if(NOT _clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter")
endif()
file(WRITE "${OUTPUT}.tmp" "// Generated from policies/data/policy.json by policies/embed.cmake. Do not edit.\n#include <string_view>\nnamespace wheelfit::policies::detail {\nstd::string_view embedded_policy_json() {\n  static constexpr const char text[] = R\"wheelfit_policy(${_content})wheelfit_policy\";\n  return {text, sizeof(text) - 1};\n}\n}  // namespace wheelfit::policies::detail\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
