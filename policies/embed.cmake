# Writes OUTPUT, a C++ file defining `std::string_view <NAMESPACE>::<FUNCTION>()` that returns
# the text of INPUT (a NUL-terminated static array, so `.data()` is also a C string). Run with
# `cmake -DINPUT=... -DOUTPUT=... [-DNAMESPACE=...] [-DFUNCTION=...] -P embed.cmake`; the
# defaults keep the policies library's own use: wheelfit::policies::detail::embedded_policy_json().
# Called through wheelfit_embed_text() (policies/CMakeLists.txt).
if(NOT DEFINED NAMESPACE OR NAMESPACE STREQUAL "")
  set(NAMESPACE "wheelfit::policies::detail")
endif()
if(NOT DEFINED FUNCTION OR FUNCTION STREQUAL "")
  set(FUNCTION "embedded_policy_json")
endif()
if(NOT NAMESPACE MATCHES "^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
  message(FATAL_ERROR "embed.cmake: NAMESPACE '${NAMESPACE}' is not a C++ namespace")
endif()
if(NOT FUNCTION MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
  message(FATAL_ERROR "embed.cmake: FUNCTION '${FUNCTION}' is not a C++ identifier")
endif()
file(READ "${INPUT}" _content)
string(FIND "${_content}" ")wheelfit_policy\"" _clash)
if(NOT _clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter")
endif()
get_filename_component(_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp" "// Generated from ${_name} by policies/embed.cmake. Do not edit.\n#include <string_view>\nnamespace ${NAMESPACE} {\nstd::string_view ${FUNCTION}();\nstd::string_view ${FUNCTION}() {\n  static constexpr const char text[] = R\"wheelfit_policy(${_content})wheelfit_policy\";\n  return {text, sizeof(text) - 1};\n}\n}  // namespace ${NAMESPACE}\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
